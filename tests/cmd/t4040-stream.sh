#!/bin/bash
# Binary-stream features no recording here produces, on streams written by
# tests/progs/t4gen.c: calls from trace events (exact entry/exit) for
# --slow/--fast and pdiff --split, and pmerge --tag from "host" metadata.
. "$(dirname "$0")/../lib.sh"

LIB=$SP_TOP/build/libstackpipe.a
if [ ! -f "$LIB" ]; then skip "t4gen streams" "$LIB not built"; exit 0; fi
PKGS="libdw libelf libxxhash libcjson zlib"
if ! cc -std=gnu11 -D_GNU_SOURCE $(printf -- "-I%s " "$SP_TOP"/lib/*/ "$SP_TOP/formats") $(pkg-config --cflags $PKGS) -o "$T/t4gen" \
	"$SP_TOP/tests/progs/t4gen.c" "$LIB" $(pkg-config --libs $PKGS) -lpthread -lm 2> "$T/cc"; then
	notok "build tests/progs/t4gen.c"; sed 's/^/  /' "$T/cc" | head -5; exit 0
fi
"$T/t4gen" hostA trace > "$T/a.sp" && "$T/t4gen" hostB trace > "$T/b.sp" && "$T/t4gen" hostA notrace > "$T/n.sp" || { notok "t4gen"; exit 0; }

# 20 calls, 2 of them (10%) slow: traces give exact calls
pfilter --slow handle_request:90 "$T/a.sp" 2> "$T/e" | pfold > "$T/o"
printf 'srv;main;handle_request;work_slow 20\n' > "$T/w"
expect_eq "traced --slow :90 keeps exactly the 2 slow calls" "$T/w" "$T/o"
expect_grep "traced: 20 calls from trace events, threshold 10 ms" 'handle_request: 20 calls \(from trace events\), p50 2 ms, p95 10 ms, p99 10 ms; threshold 10 ms' "$T/e"
pfilter --fast handle_request:90 "$T/a.sp" 2> /dev/null | pfold > "$T/o"
printf 'srv;main;handle_request;work_fast 36\n' > "$T/w"
expect_eq "traced --fast :90 keeps the 18 fast calls" "$T/w" "$T/o"
pfilter -q --slow handle_request:90 "$T/a.sp" 2> "$T/e" > /dev/null
if [ ! -s "$T/e" ]; then ok "-q: no statistics"; else notok "-q printed: $(head -1 "$T/e")"; fi
pfilter --slow handle_request:90 "$T/a.sp" 2>/dev/null | sp-dump | grep -c '^trace' > "$T/o"; echo 40 > "$T/w"
expect_eq "trace events pass through to the binary output" "$T/w" "$T/o"
# the same samples without traces: back-to-back calls read as one (the documented limit)
pfilter --slow handle_request:90 "$T/n.sp" 2> "$T/e" > /dev/null
expect_grep "without traces, back-to-back calls read as one call" 'handle_request: 1 calls \(inferred' "$T/e"
pdiff --split handle_request:90 "$T/a.sp" 2> /dev/null | pfold > "$T/o"
printf 'srv;main;handle_request;work_fast 20 0\nsrv;main;handle_request;work_slow 0 20\n' > "$T/w"
expect_eq "traced pdiff --split: a (normalised to 20) = fast calls, b = slow" "$T/w" "$T/o"

# pmerge --tag: the stream's host metadata names the tower
pmerge --tag "$T/a.sp" "$T/b.sp" | pfold > "$T/o"
printf 'hostA;srv;main;handle_request;work_fast 36\nhostA;srv;main;handle_request;work_slow 20\nhostB;srv;main;handle_request;work_fast 36\nhostB;srv;main;handle_request;work_slow 20\n' > "$T/w"
expect_eq "pmerge --tag: a root frame per host (host metadata), above the thread's" "$T/w" "$T/o"
pmerge "$T/a.sp" "$T/b.sp" | sp-dump | grep -c '^meta host=' > "$T/o"; echo 2 > "$T/w"
expect_eq "pmerge keeps every input's metadata" "$T/w" "$T/o"
pfilter --stats -e work_slow "$T/a.sp" 2> "$T/e" > /dev/null
expect_grep "--stats: samples read and written" '^pfilter: 56 samples read, 20 written$' "$T/e"
