#!/bin/bash
# pcollect --trace, the compact records (bpfhit.h): with the BPF recorder
# a probe that needs no stack copy writes only the registers its hits use
# (SP, the arguments of its values, rax at a return, the return address
# at an entry).  Checked against the program's own arithmetic: tick(acc,
# i) of t62-bench.c returns acc + i, so call i (from 0) has arg2 = i,
# arg1 = i(i-1)/2 and returns i(i+1)/2; entry-only probes (the smallest
# record, SP alone), and the same trace with every register
# (SP_BPFHIT_FULL=1: the record before) gives the same events.  300 calls.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build tb t62-bench.c -O2 -fomit-frame-pointer || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --trace compact records" "$T/tb" cost 1 || exit 0
N=300
same() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$3', want '$2'"; fi; }
pcollect -v -F 0 --trace-budget=none --trace 'tick(arg1,arg2,ret)' -o "$T/c.sp" -- "$T/tb" cost $N > /dev/null 2> "$T/c.err"
if ! grep -q 'a BPF program records the hits' "$T/c.err"; then
	skip "pcollect --trace compact records" "no BPF recorder here: $(grep -m1 -i 'bpf\|per thread' "$T/c.err" || echo 'pcollect -v does not say')"
	exit 0
fi
sp-dump "$T/c.sp" > "$T/c.dump"
# truth N DUMP: the number of entries and exits that break the arithmetic
truth() {
	awk -v n="$1" '
		/^trace entry/ && /frame=tick / { e++; i = e - 1
			if ($0 !~ ("arg1=" i * (i - 1) / 2 "( |$)") || $0 !~ ("arg2=" i "( |$)")) bad++ }
		/^trace exit/ && /frame=tick / { x++; i = x - 1
			if ($0 !~ ("ret=" i * (i + 1) / 2 "( |$)")) bad++ }
		END { printf "%d entries, %d exits, %d wrong\n", e, x, bad + 0 }' "$2"
}
same "compact: every call's arg1, arg2 and ret as the program computed them" \
	"$N entries, $N exits, 0 wrong" "$(truth $N "$T/c.dump")"
same "compact: no hit lost" "" "$(grep 'hits lost' "$T/c.err")"

SP_BPFHIT_FULL=1 pcollect -q -F 0 --trace-budget=none --trace 'tick(arg1,arg2,ret)' -o "$T/f.sp" -- "$T/tb" cost $N > /dev/null 2>&1
sp-dump "$T/f.sp" > "$T/f.dump"
events() { grep '^trace' "$1" | sed 's/ t=[0-9]*//; s/thread=[0-9]*\/[0-9]*//'; }
if [ "$(events "$T/c.dump" | md5sum)" = "$(events "$T/f.dump" | md5sum)" ] && [ -n "$(events "$T/f.dump")" ]; then
	ok "compact and every-register records: the same $(events "$T/f.dump" | wc -l) events"
else
	notok "compact and every-register records differ"; diff <(events "$T/c.dump") <(events "$T/f.dump") | head -5 | sed 's/^/  /'
fi

# entry only: a record of SP alone
pcollect -v -F 0 --trace-budget=none --trace 'tick:entry(arg2)' -o "$T/e.sp" -- "$T/tb" cost $N > /dev/null 2> "$T/e.err"
got=$(sp-dump "$T/e.sp" | awk '/^trace entry/ && /frame=tick / { i = e++; if ($0 !~ ("arg2=" i "( |$)")) bad++ } /^trace exit/ { x++ }
	END { printf "%d entries, %d exits, %d wrong\n", e, x, bad + 0 }')
same "entry only: each call's arg2, no exit" "$N entries, 0 exits, 0 wrong" "$got"
pcollect -v -F 0 --trace-budget=none --trace 'tick:entry' -o "$T/s.sp" -- "$T/tb" cost $N > /dev/null 2> "$T/s.err"
same "entry only, no value (SP alone): every hit read" "$N" "$(sp-dump "$T/s.sp" | grep -c '^trace entry.*frame=tick ')"
