#!/bin/bash
# Issue 11, names a user can trust: perf script lines perf writes for odd
# tasks, frames whose names end in a space, frames without a symbol named by
# their module, units, C++/Rust/kernel names, file:line, profiles of one
# program from two sources compared cleanly.  Real recordings made here
# where perf allows.
. "$(dirname "$0")/../lib.sh"

have_perf=1
if ! command -v perf >/dev/null; then have_perf=0; why="perf is not installed"; fi
if [ $have_perf = 1 ]; then
	gcc -O2 -g -pthread -o "$T/burn" "$SP_TOP/tests/progs/burn.c" || { notok "build tests/progs/burn.c"; exit 0; }
	if ! perf record -e cpu-clock -F 999 -g -o "$T/fp.data" "$T/burn" > /dev/null 2> "$T/err"; then
		have_perf=0; why="perf record is not permitted here: $(tail -1 "$T/err")"
	else
		perf script -i "$T/fp.data" > "$T/fp.txt" 2>/dev/null
	fi
fi

# --- item 9a: a task that exited before perf knew it: comm ":-1", pid -1.
# The event line is from a real system-wide recording (perf 6.1); it is
# weighed by its period, like stackcollapse-perf.pl does, not counted 1.
cat > "$T/exit.txt" <<'X'
:-1    -1 [000]  2053.660405:    2004008 cpu-clock: 
	ffffffff81e1d8c4 _raw_spin_unlock_irqrestore+0x14 ([kernel.kallsyms])
	ffffffff81123456 do_exit+0x2a6 ([kernel.kallsyms])

sleep  1234 [000]  2053.661405:    1000 cpu-clock: 
	          401126 main+0x6 (/usr/bin/sleep)

X
pfold "$T/exit.txt" > "$T/o" 2> "$T/e"
printf '%s\n' ':-1;do_exit;_raw_spin_unlock_irqrestore 2004008' 'sleep;main 1000' > "$T/w"
expect_eq "9a: exiting task (pid -1) weighs its period, comm ':-1'" "$T/w" "$T/o"
pfold -b "$T/exit.txt" | sp-dump > "$T/o"
expect_grep "9a: ... and keeps its timestamp and pid -1 in the stream" '^sample t=2053660405000 thread=-1/-1 ":-1" event=cpu-clock values=1,2004008 ' "$T/o"
if [ $have_perf = 1 ]; then
	# the same line spliced into a real recording: totals still add up
	{ cat "$T/fp.txt"; echo; cat "$T/exit.txt"; } > "$T/mix.txt"
	want=$(( $(perf script -i "$T/fp.data" -F period 2>/dev/null | awk '{s+=$1} END {print s+0}') + 2004008 + 1000 ))
	got=$(pfold "$T/mix.txt" 2>/dev/null | awk '{s+=$NF} END {print s}')
	[ "$want" = "$got" ] && ok "9a: real recording + exiting task: total $got = sum of periods" || notok "9a: total $got, want $want"
else skip "9a: real recording + exiting task" "$why"; fi

# --- item 9b: a frame that ends in a space ("[unknown] ", as
# stackcollapse-perf.pl writes it for some perf output) keeps it: exactly one
# blank separates stack and count.  Filters must act like grep on the text.
{
	if [ $have_perf = 1 ]; then pfold "$T/fp.txt" 2>/dev/null; fi
	printf '%s\n' 'python3;_start;[unknown] ;[unknown]  2004008' 'python3;_start;[unknown] ;idle  7' 'python3;main;[unknown];[unknown] 3'
} > "$T/sp.folded"
pfilter -v idle "$T/sp.folded" > "$T/o"; grep -v idle "$T/sp.folded" > "$T/w"
expect_eq "9b: pfilter -v idle equals grep -v idle (trailing-space frames)" "$T/w" "$T/o"
pfilter unknown "$T/sp.folded" > "$T/o"; grep unknown "$T/sp.folded" > "$T/w"
expect_eq "9b: pfilter unknown equals grep unknown" "$T/w" "$T/o"
sort "$T/sp.folded" > "$T/w"
pmerge "$T/sp.folded" > "$T/o"
expect_eq "9b: pmerge of one input reproduces it (stack identity kept)" "$T/w" "$T/o"
pdiff "$T/sp.folded" "$T/sp.folded" > "$T/o"
awk '{n=$NF; sub(/ [0-9.]+$/, ""); print $0 " " n " " n}' "$T/w" > "$T/w2"
expect_eq "9b: pdiff A A: each stack once, its text unchanged" "$T/w2" "$T/o"
pdiff "$T/sp.folded" "$T/sp.folded" | pfilter -v idle > "$T/o"; grep -v idle "$T/w2" > "$T/w3"
expect_eq "9b: pfilter on pdiff output keeps the space too" "$T/w3" "$T/o"
