#!/bin/bash
# pcollect -a shares what it reads of a file between the processes that
# map it (one ELF descriptor, one symbol table, one name per address; the
# unwinders place the file where each process has it).  Two processes of
# one PIE executable, one at the fixed base setarch -R gives and one where
# ASLR puts it, are each named right: their own root (pfold --pid), with
# main;spin_round;spin_hot, 9 in 10 samples in spin_hot or spin_cold.  Both spin (t65-spin.c), so each has ~100
# samples in 3 s at -F 199 even with 8 busy processes on 2 CPUs: the test
# needs one.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" != 0 ] && [ "$par" -gt 0 ]; then
	skip "pcollect -a, one file at two bases" "not root and kernel.perf_event_paranoid is $par"
	exit 0
fi
if ! setarch -R true 2> /dev/null; then skip "pcollect -a, one file at two bases" "setarch -R cannot run here"; exit 0; fi
t6_build spin t65-spin.c -O2 -g -fPIE -pie || exit 0
pids=()
trap 'kill "${pids[@]}" 2> /dev/null; sp_cleanup' EXIT
t6_spawn "$T/fixed.ready" setarch -R "$T/spin" && pids+=($TPID) && F=$TPID
t6_spawn "$T/aslr.ready" "$T/spin" && pids+=($TPID) && R=$TPID
if [ -z "$F" ] || [ -z "$R" ]; then notok "the two spinners did not start"; exit 0; fi
base() { awk -v f="$T/spin" '$6 == f { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps"; }
bf=$(base "$F") br=$(base "$R")
if [ -n "$bf" ] && [ -n "$br" ] && [ "$bf" != "$br" ]; then ok "one file at two bases ($bf, $br)"
else notok "one file at two bases: $bf and $br"; fi

pcollect -a -F 199 -d 3 -o "$T/a.sp" 2> "$T/a.err"; rc=$?
expect_rc "pcollect -a -d 3: exit 0" 0 $rc
pfold --pid --weight=count "$T/a.sp" > "$T/a.folded" 2> "$T/fold.err"
for p in "$F" "$R"; do
	# spin_cold is spin_round's tail call: main;spin_cold; kernel frames
	# (an interrupt) may sit below either
	n=$(grep -E "^spin-$p;.*main;(spin_round;)?spin_(hot|cold)[; ]" "$T/a.folded" | awk '{ s += $NF } END { print s + 0 }')
	all=$(grep "^spin-$p;" "$T/a.folded" | awk '{ s += $NF } END { print s + 0 }')
	if grep -qE "^spin-$p;.*main;spin_round;spin_hot [0-9]+$" "$T/a.folded" && [ "$n" -ge $((all * 9 / 10)) ]; then
		ok "spin $p (base $([ "$p" = "$F" ] && echo "$bf" || echo "$br")): main;spin_round;spin_hot, $n of its $all samples in spin_hot or spin_cold"
	else
		notok "spin $p: $n of $all samples in spin_hot or spin_cold"
		grep "^spin-$p;" "$T/a.folded" | sort -t' ' -k2 -rn | head -5 | sed 's/^/  /'
	fi
done
