#!/bin/bash
# pfilter: grep equivalence on real folded data, every stack option on a
# small golden input, the peers' recursion fixture, threads and time
# windows on a real binary recording (share/demo), errors.
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
EX=$CONF/inferno/perf-example-perf-stacks/input.txt.gz
if [ ! -f "$EX" ]; then skip pfilter "fixtures not found at $CONF"; exit 0; fi

# usage errors, missing files (--help and the man page: t0161)
pfilter --no-such < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '^usage: pfilter' "$T/e" && [ ! -s "$T/o" ]; then ok "unknown option: exit 2, synopsis on stderr"; else notok "unknown option (exit $rc)"; fi
pfilter -v < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'need a PATTERN' "$T/e"; then ok "-v without a pattern: usage error"; else notok "-v without a pattern (exit $rc)"; fi
pfilter -e 'a(' < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfilter: -e: bad regular expression 'a('" "$T/e"; then ok "bad regex: named, exit 2"; else notok "bad regex (exit $rc)"; cat "$T/e"; fi
pfilter --replace 'x/a/b/' < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'expected s/REGEX/REPLACEMENT' "$T/e"; then ok "bad --replace: exit 2"; else notok "bad --replace (exit $rc)"; fi
pfilter -e x "$T/missing" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfilter: $T/missing: No such file or directory" "$T/e"; then ok "missing file: clear error, exit 2"; else notok "missing file (exit $rc)"; cat "$T/e"; fi

# pfold | pfilter -v PAT == pfold | grep -v PAT, on real data
pfold "$EX" > "$T/ex.folded" 2>/dev/null
pfold "$DEMO" > "$T/demo.folded" 2>/dev/null
for f in ex demo; do
	for pat in idle read java 'sys_[a-z]+' 'Interpreter' '\[unknown\]' checksum compress; do
		pfilter -v "$pat" "$T/$f.folded" > "$T/o"; grep -vE -- "$pat" "$T/$f.folded" > "$T/w"
		expect_eq "$f: pfilter -v '$pat' equals grep -v" "$T/w" "$T/o"
		pfilter "$pat" < "$T/$f.folded" > "$T/o"; grep -E -- "$pat" "$T/$f.folded" > "$T/w"
		expect_eq "$f: pfilter '$pat' equals grep" "$T/w" "$T/o"
	done
done
pfilter -i -e IDLE -e 'READ' "$T/ex.folded" > "$T/o"; grep -iE 'idle|read' "$T/ex.folded" > "$T/w"
expect_eq "-i with two -e equals grep -i -e -e" "$T/w" "$T/o"
pfilter -F '[unknown]' "$T/ex.folded" > "$T/o"; grep -F '[unknown]' "$T/ex.folded" > "$T/w"
expect_eq "-F: fixed string" "$T/w" "$T/o"
n=$(wc -l < "$T/w"); [ "$n" -ge 3 ] && ok "-F matched $n lines (not a vacuous comparison)" || notok "-F matched only $n lines"

# the peers' fixture: recursion collapsing (byte-exact; their file has no final newline)
R=$CONF/inferno/recursive-basic
if [ -d "$R" ]; then
	pfilter --collapse-recursive "$R/input.folded" > "$T/o"
	{ cat "$R/expected.folded"; [ -n "$(tail -c1 "$R/expected.folded")" ] && echo; } > "$T/w"
	expect_eq "conformance inferno/recursive-basic (--collapse-recursive)" "$T/w" "$T/o"
else skip "conformance recursive-basic" "not in $CONF"; fi

# every stack option on a small input
cat > "$T/s.folded" <<'X'
main;a;b;c 1
main;a;b;b;b;d 2
main;x;idle 3
main;a;c;a;c;e 4
other;[unknown];f 5
X
golden() { # name expected-text pfilter-args...
	local name=$1 want=$2; shift 2
	printf '%s' "$want" > "$T/w"
	pfilter "$@" "$T/s.folded" > "$T/o" 2> "$T/e"
	expect_eq "$name" "$T/w" "$T/o"
}
golden "--focus: the match becomes the root" $'b;b;b;d 2\nb;c 1\n' --focus '^b$'
golden "--exclude drops samples through a match" $'main;a;b;b;b;d 2\nmain;a;b;c 1\nmain;a;c;a;c;e 4\nother;[unknown];f 5\n' --exclude idle
golden "--hide removes frames, stacks merge" $'main;a;c 1\nmain;a;c;a;c;e 4\nmain;a;d 2\nmain;x;idle 3\nother;f 5\n' --hide '^\[unknown\]$' --hide '^b$'
golden "--prune-below cuts the callees" $'main;a;b 3\nmain;a;c;a;c;e 4\nmain;x;idle 3\nother;[unknown];f 5\n' --prune-below '^b$'
golden "--replace with groups and g, in order" $'R;Xa;Xb;Xb;Xb;d 2\nR;Xa;Xb;Xc 1\nR;Xa;Xc;Xa;Xc;e 4\nR;[unknown];f 5\nR;x;idle 3\n' --replace 's/^([a-c])$/X\1/' --replace 's/main|other/R/g'
golden "--replace: equal names merge" $'main;F 3\nmain;a;b;b;b;d 2\nmain;a;b;c 1\nmain;a;c;a;c;F 4\nother;[unknown];F 5\n' --replace 's/^(idle|x;idle|e|f)$/F/' --hide '^x$'
golden "--max-depth" $'main;a 7\nmain;x 3\nother;[unknown] 5\n' --max-depth 2
golden "--invert: leaf first" $'c;b;a;main 1\nd;b;b;b;a;main 2\ne;c;a;c;a;main 4\nf;[unknown];other 5\nidle;x;main 3\n' --invert
golden "--collapse-recursion (direct)" $'main;a;b;c 1\nmain;a;b;d 2\nmain;a;c;a;c;e 4\nmain;x;idle 3\nother;[unknown];f 5\n' --collapse-recursion
golden "--collapse-recursion=all (indirect)" $'main;a;b;c 1\nmain;a;b;d 2\nmain;a;c;e 4\nmain;x;idle 3\nother;[unknown];f 5\n' --collapse-recursion=all
golden "--min-share 20 (of 15)" $'main;a;c;a;c;e 4\nmain;x;idle 3\nother;[unknown];f 5\n' --min-share 20
golden "-v with --focus" $'a;b;b;b;d 2\na;b;c 1\na;c;a;c;e 4\n' -v idle --focus '^a$'
cat "$T/s.folded" | pfilter --min-share 20 > "$T/o"
printf 'main;a;c;a;c;e 4\nmain;x;idle 3\nother;[unknown];f 5\n' > "$T/w"
expect_eq "--min-share on standard input (read twice through a temporary file)" "$T/w" "$T/o"
pfilter --hide . "$T/s.folded" > "$T/o"
if [ ! -s "$T/o" ]; then ok "stacks left empty are dropped"; else notok "stacks left empty are dropped"; fi

# threads in folded text: pfold --tid root frames
pfold --tid "$DEMO" > "$T/tid.folded" 2>/dev/null
pfilter --thread '^worker-1$' "$T/tid.folded" > "$T/o"; grep -E '^worker-1-[0-9]+/[0-9]+;' "$T/tid.folded" > "$T/w"
expect_eq "--thread on comm-PID/TID root frames" "$T/w" "$T/o"
tid=$(head -1 "$T/w" | sed 's/^[^/]*\/\([0-9]*\);.*/\1/')
pfilter --tid "$tid" "$T/tid.folded" > "$T/o"
expect_eq "--tid on comm-PID/TID root frames" "$T/w" "$T/o"

# binary in, binary out; the same selection as on folded text
if pfold -b "$DEMO" > "$T/demo.sp" 2>/dev/null && [ -s "$T/demo.sp" ]; then
	pfilter -v checksum "$T/demo.sp" > "$T/o.sp"
	if head -c4 "$T/o.sp" | od -c | grep -q 'S   P   S'; then ok "binary input gives binary output"; else notok "binary input gives binary output"; fi
	pfold "$T/o.sp" > "$T/o"; pfilter -v checksum "$T/demo.folded" > "$T/w"
	expect_eq "binary: pfilter -v then fold equals fold then pfilter -v" "$T/w" "$T/o"
	pfilter --thread 'worker' --folded "$T/demo.sp" > "$T/o"; grep '^worker' "$T/demo.folded" > "$T/w"
	expect_eq "binary: --thread selects by thread name (--folded output)" "$T/w" "$T/o"
	pid=$(bin=; sp-dump "$T/demo.sp" | grep -m1 -o 'thread=[0-9]*' | cut -d= -f2)
	pfilter --pid "$pid" --folded "$T/demo.sp" > "$T/o"
	expect_eq "binary: --pid keeps the one process" "$T/demo.folded" "$T/o"
	pfilter --pid 1 --folded "$T/demo.sp" > "$T/o"
	if [ ! -s "$T/o" ]; then ok "binary: --pid of another process keeps nothing"; else notok "--pid 1 kept samples"; fi
	pfilter --replace 's/^(checksum|compress)$/CC/' --folded "$T/demo.sp" > "$T/o"
	pfilter --replace 's/^(checksum|compress)$/CC/' "$T/demo.folded" > "$T/w"
	expect_eq "binary: --replace merges renamed frames as in folded text" "$T/w" "$T/o"
	# time windows: count samples by their timestamps
	sp-dump "$T/demo.sp" | grep -o '^sample t=[0-9]*' | cut -d= -f2 > "$T/times"
	t0=$(head -1 "$T/times")
	for w in "0.5 1.5" "0 0.25" "2 100"; do
		set -- $w
		want=$(awk -v t0="$t0" -v a="$1" -v b="$2" '{ d=($1-t0)/1e9; if (d>=a && d<b) n++ } END {print n+0}' "$T/times")
		got=$(pfilter --from +$1 --to +$2 "$T/demo.sp" | sp-dump | grep -c '^sample')
		if [ "$want" = "$got" ] && [ "$got" -gt 0 ]; then ok "--from +$1 --to +$2: $got samples, as their timestamps say"; else notok "--from +$1 --to +$2: $got samples, want $want"; fi
	done
	tmax=$(sort -n "$T/times" | tail -1)
	want=$(awk -v t="$tmax" '{ if ($1 >= t - 0.5e9) n++ } END {print n+0}' "$T/times")
	got=$(pfilter --last 0.5 "$T/demo.sp" | sp-dump | grep -c '^sample')
	if [ "$want" = "$got" ] && [ "$got" -gt 0 ]; then ok "--last 0.5: $got samples"; else notok "--last 0.5: $got samples, want $want"; fi
	abs=$(awk -v t="$t0" 'BEGIN { printf "%.6f", t/1e9 + 1 }')
	a=$(pfilter --from "$abs" "$T/demo.sp" | sp-dump | grep -c '^sample')
	b=$(pfilter --from +1 "$T/demo.sp" | sp-dump | grep -c '^sample')
	if [ "$a" = "$b" ] && [ "$a" -gt 0 ]; then ok "--from in absolute seconds (as perf script prints them)"; else notok "--from absolute: $a vs relative $b"; fi
	cat "$T/demo.sp" | pfilter --last 0.5 | sp-dump | grep -c '^sample' > "$T/o"; echo "$want" > "$T/w"
	expect_eq "--last on standard input" "$T/w" "$T/o"
	pfilter --min-share 5 "$T/demo.sp" | pfold > "$T/o"; pfilter --min-share 5 "$T/demo.folded" > "$T/w"
	expect_eq "binary: --min-share as in folded text" "$T/w" "$T/o"
	if [ -s "$T/w" ] && [ "$(wc -l < "$T/w")" -lt "$(wc -l < "$T/demo.folded")" ]; then ok "--min-share 5 dropped some stacks and kept some"; else notok "--min-share 5 is vacuous"; fi
else
	skip "binary stream tests" "pfold -b failed (stream writer missing?)"
fi

# no timestamps in folded text: a clear error
pfilter --last 1 "$T/s.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfilter: $T/s.folded: the input has no timestamps" "$T/e" && [ ! -s "$T/o" ]; then ok "--last on folded text: error naming the file, exit 2"; else notok "--last on folded text (exit $rc)"; cat "$T/e"; fi
pfilter --from 1 "$T/s.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'no timestamps' "$T/e"; then ok "--from on folded text: error, exit 2"; else notok "--from on folded text (exit $rc)"; fi

# bad lines are reported and counted, like pfold
printf 'a;b 1\nno count here\na;c 2\n' > "$T/bad.folded"
pfilter -v c "$T/bad.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q "^pfilter: $T/bad.folded:2: " "$T/e" && grep -q '1 bad line skipped' "$T/e" && [ "$(cat "$T/o")" = "a;b 1" ]; then
	ok "bad line: FILE:LINE, skipped, counted"; else notok "bad line handling (exit $rc)"; cat "$T/e"; fi
if [ -w /dev/full ]; then
	pfilter -v idle "$T/ex.folded" > /dev/full 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'write error' "$T/e"; then ok "disk full: write error, exit 2"; else notok "disk full (exit $rc)"; fi
else skip "disk full" "/dev/full not writable"; fi
