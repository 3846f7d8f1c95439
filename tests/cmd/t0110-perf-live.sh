#!/bin/bash
# pfold on real `perf script` output recorded here, with the field selections
# people use: every line must parse, and the folded total must equal the sum
# of the sample periods perf reports.
. "$(dirname "$0")/../lib.sh"

if ! command -v perf >/dev/null; then skip perf-live "perf is not installed"; exit 0; fi
gcc -O2 -g -pthread -o "$T/burn" "$SP_TOP/tests/progs/burn.c" || { notok "build tests/progs/burn.c"; exit 0; }
if ! perf record -e cpu-clock -F 999 -g -o "$T/fp.data" "$T/burn" > /dev/null 2> "$T/err"; then
	skip perf-live "perf record is not permitted here: $(tail -1 "$T/err")"; exit 0
fi
perf record -e cpu-clock -F 999 --call-graph dwarf -o "$T/dw.data" "$T/burn" > /dev/null 2>&1
perf record -e cpu-clock -F 999 -o "$T/nocg.data" "$T/burn" > /dev/null 2>&1

check() { # name data weight perf-script-args...  (weight: period or count)
	local name=$1 data=$2 weight=$3; shift 3
	perf script -i "$data" "$@" > "$T/s.txt" 2>/dev/null
	if [ ! -s "$T/s.txt" ]; then skip "$name" "perf script $* printed nothing here"; return; fi
	pfold "$T/s.txt" > "$T/o" 2> "$T/e"; rc=$?
	local want got
	if [ "$weight" = period ]; then
		want=$(perf script -i "$data" -F period 2>/dev/null | awk '{s+=$1} END {printf "%.0f\n", s}')
	else
		want=$(perf script -i "$data" -F period 2>/dev/null | wc -l)
	fi
	got=$(awk '{s+=$NF} END {printf "%.0f\n", s}' "$T/o")
	if [ $rc = 0 ] && ! grep -q 'bad line' "$T/e" && [ "$want" = "$got" ]; then
		ok "$name: every line parsed, total $got = perf's ${weight}s"
	else
		notok "$name (exit $rc, total $got, want $want)"; head -3 "$T/e" | sed 's/^/  /'
	fi
}
check "perf script (defaults), frame pointers" "$T/fp.data" period
check "perf script, dwarf unwinding with (inlined) frames" "$T/dw.data" period
check "perf script -F comm,pid,tid,time,period,event,ip,sym,dso" "$T/fp.data" period -F comm,pid,tid,time,period,event,ip,sym,dso
check "perf script -F +srcline" "$T/dw.data" period -F +srcline
check "perf script -F comm,tid,event,ip,sym,dso,symoff (no period: counts)" "$T/fp.data" count -F comm,tid,event,ip,sym,dso,symoff
check "perf script -F comm,pid,tid,time,ip,sym (no dso)" "$T/fp.data" count -F comm,pid,tid,time,ip,sym
check "perf script -F comm,tid,time,period,event,ip,sym,dso (no callchains: one line per sample)" "$T/nocg.data" period -F comm,tid,time,period,event,ip,sym,dso

# Without a period field every sample counts 1.
perf script -i "$T/fp.data" -F comm,tid,ip,sym,dso > "$T/s.txt" 2>/dev/null
n=$(grep -c '^[^ 	]' "$T/s.txt")
got=$(pfold "$T/s.txt" 2>/dev/null | awk '{s+=$NF} END {printf "%.0f\n", s}')
if [ "$n" = "$got" ] && [ "$n" -gt 0 ]; then ok "-F comm,tid,ip,sym,dso (no event, no time): $n samples"; else notok "-F comm,tid,ip,sym,dso: $got, want $n"; fi

# The inlined function shows up (perf resolves it with DWARF) and leaf sits under mid.
perf script -i "$T/dw.data" > "$T/s.txt" 2>/dev/null
pfold "$T/s.txt" > "$T/o" 2>/dev/null
expect_grep "dwarf: inlined frame inl sits between mid and leaf" ';mid;inl;leaf ' "$T/o"
