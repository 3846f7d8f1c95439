#!/bin/bash
# offcpu-bench.sh — how to follow context switches for pcollect --off-cpu:
# measured, never asserted.  The issue asked to compare
#   (a) the context-switch software event (a sample, with the stack copy,
#       at each switch out) + PERF_RECORD_SWITCH records (out and in),
#       what pcollect uses, and
#   (b) the sched:sched_switch and sched:sched_wakeup tracepoints (tracefs).
# Target: tests/progs/t63-block.c, two threads passing a byte over pipes
# (each round trip: two switches out, two wake-ups), which prints its
# elapsed and CPU time per round trip.  Each configuration runs it RUNS
# times; printed: the medians of its round trip and CPU per round trip,
# and the recorder's own CPU per round trip (the recorder's and the
# target's CPU from /usr/bin/time, less the target's own).
#   pcollect --off-cpu (dwarf stacks, and fp)             (a), ours
#   perf record -e cs -c 1 --switch-events                 (a), perf as the recorder
#   perf record -a -e cs -c 1 --switch-events              (a), system-wide: per-CPU
#       events are not switched in and out with the task, per-task ones are
#   perf record -e sched:sched_switch,sched:sched_wakeup   (b), per task
#   perf record -a -e sched:sched_switch,sched:sched_wakeup (b), system-wide:
#       what (b) needs to see a thread come back (its switch in is recorded
#       in the context of the task it replaces)
# The perf lines use one recorder for both kinds of event, so their
# difference is the kernel's; perf is skipped when it is missing.
#   RUNS=5 N=20000 PCOLLECT=bin/pcollect (environment)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-5}
N=${N:-20000}
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
# perf mounts tracefs for tracepoints when it is not: leave the machine as found.
traced_before=0
mountpoint -q /sys/kernel/tracing 2> /dev/null && traced_before=1
cleanup() {
	[ $traced_before = 0 ] && mountpoint -q /sys/kernel/tracing 2> /dev/null && umount /sys/kernel/tracing 2> /dev/null
	rm -rf "$W"
}
trap cleanup EXIT
say() { printf '%s\n' "$*"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

gcc -O2 -g -pthread -o "$W/blk" tests/progs/t63-block.c
if ! "$PC" -q --off-cpu -o "$W/x.sp" -- true 2> "$W/e"; then
	say "offcpu-bench: skipped: $(head -1 "$W/e")"; exit 0; fi
have_perf=0
command -v perf > /dev/null && perf record -q -e cs -c 1 -o "$W/p.data" -- true > /dev/null 2>&1 && have_perf=1

one() { # one NAME: a run -> "ROUNDTRIP_US CPU_US TOTAL_CPU_S"
	local tm="/usr/bin/time -f %U+%S -o $W/t"
	case $1 in
	alone) $tm "$W/blk" "$N" ;;
	pc-dwarf) $tm "$PC" -q --off-cpu -o "$W/x.sp" -- "$W/blk" "$N" ;;
	pc-fp) $tm "$PC" -q --off-cpu --call-graph fp -o "$W/x.sp" -- "$W/blk" "$N" ;;
	perf-switch) $tm perf record -q -e cs -c 1 --switch-events --call-graph dwarf,16384 -o "$W/p.data" -- "$W/blk" "$N" ;;
	perf-switch-all) $tm perf record -q -a -e cs -c 1 --switch-events --call-graph dwarf,16384 -o "$W/p.data" -- \
		"$W/blk" "$N" ;;
	perf-tp) $tm perf record -q -e sched:sched_switch -e sched:sched_wakeup -c 1 --call-graph dwarf,16384 \
		-o "$W/p.data" -- "$W/blk" "$N" ;;
	perf-tp-all) $tm perf record -q -a -e sched:sched_switch -e sched:sched_wakeup -c 1 \
		--call-graph dwarf,16384 -o "$W/p.data" -- "$W/blk" "$N" ;;
	esac 2> /dev/null | sed -n 's/^roundtrip \([0-9.]*\) us cpu \([0-9.]*\) us$/\1 \2/p' | tr '\n' ' '
	awk -F+ '{ print $1 + $2 }' "$W/t"
	rm -f "$W/p.data"
}

say "== off-CPU recording: $N pipe round trips between two threads (4 switches each), median of $RUNS"
say "$(uptime)"
names="alone pc-dwarf pc-fp"
[ $have_perf = 1 ] && names="$names perf-switch perf-switch-all perf-tp perf-tp-all"
for n in $names; do
	for i in $(seq "$RUNS"); do one $n; done > "$W/r.$n"
	rt=$(awk '{ print $1 }' "$W/r.$n" | median)
	cpu=$(awk '{ print $2 }' "$W/r.$n" | median)
	rec=$(awk -v n="$N" '{ print ($3 * 1e6 - $2 * n) / n }' "$W/r.$n" | median)
	case $n in
	alone) label="no recorder" ;;
	pc-dwarf) label="pcollect --off-cpu (switch records)" ;;
	pc-fp) label="pcollect --off-cpu --call-graph fp" ;;
	perf-switch) label="perf: cs event + switch records" ;;
	perf-switch-all) label="perf: cs event + switch records, -a" ;;
	perf-tp) label="perf: sched tracepoints, per task" ;;
	perf-tp-all) label="perf: sched tracepoints, system-wide" ;;
	esac
	if [ $n = alone ]; then
		say "$(printf '  %-38s %8.1f us per round trip, target CPU %6.1f us' "$label" "$rt" "$cpu")"
	else
		say "$(printf '  %-38s %8.1f us per round trip, target CPU %6.1f us, recorder CPU %6.1f us' "$label" "$rt" "$cpu" "$rec")"
	fi
done
[ $have_perf = 1 ] || say "  perf: not measured here (perf record failed or is missing)"
