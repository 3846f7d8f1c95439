#!/bin/bash
# trace-bench.sh — what pcollect --trace costs, measured, never asserted.
#
#  1. Cost per hit: tests/progs/t62-bench.c calls tick() back to back,
#     alone and under pcollect -F 0 --trace with an entry probe only
#     (tick:entry), entry + return (tick), entry + return with values
#     (tick(arg1,arg2,ret)) and a point probe inside (tick+OFF, the second
#     instruction); the difference per call is the cost of the hits of
#     one call.  Next to perf probe -x BIN tick + perf record -e
#     probe_BIN:tick when perf probe works here (it needs tracefs).
#     And --stacks --weight arg1 (an allocation profile's probe: a 4 KiB
#     stack copy per hit, unwound by pcollect) on tick:entry.
#  2. Slowdown at 1k and 10k hits/s: fixed CPU work calling tick() at that
#     rate, its CPU time under each configuration over its CPU time alone.
#
#   RUNS=5 CALLS=20000 SECONDS_OF_WORK=1 PCOLLECT=bin/pcollect (environment)
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-5}
CALLS=${CALLS:-20000}
SW=${SECONDS_OF_WORK:-1}
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
say() { printf '%s\n' "$*"; }

gcc -O2 -g -fomit-frame-pointer -o "$W/tb" tests/progs/t62-bench.c
if ! "$PC" -q -F 0 --trace tick -o "$W/probe.sp" -- "$W/tb" cost 10 > /dev/null 2> "$W/e"; then
	say "trace-bench: skipped: $(head -1 "$W/e")"; exit 0; fi
# the second instruction of tick, for the point probe
off=$(objdump -d --no-show-raw-insn "$W/tb" | awk '/<tick>:/ { f = 1; next } f && /^ *[0-9a-f]+:/ { n++; if (n == 2) { sub(":", "", $1); print $1; exit } }')
start=$(objdump -d "$W/tb" | awk '/<tick>:/ { print $1; exit }')
point=$(printf 'tick+%d' $((0x$off - 0x$start)))
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# perf probe mounts tracefs when it is not: leave the machine as found.
traced_before=0
mountpoint -q /sys/kernel/tracing 2> /dev/null && traced_before=1
have_perf=0
if command -v perf > /dev/null && perf probe -q -x "$W/tb" tick > /dev/null 2> "$W/perf.err"; then
	have_perf=1
	ev=$(perf probe -l 2> /dev/null | awk '/tick/ { print $1; exit }')
else
	why=$(head -1 "$W/perf.err" 2>/dev/null || true)
fi
cleanup_perf() {
	[ $have_perf = 1 ] && perf probe -q -d "${ev:-probe_tb:tick}" > /dev/null 2>&1
	[ $traced_before = 0 ] && mountpoint -q /sys/kernel/tracing 2> /dev/null && umount /sys/kernel/tracing 2> /dev/null
	true
}
trap 'cleanup_perf; rm -rf "$W"' EXIT

run() { # run NAME MODE ARGS... -> median of the program's numbers
	local name=$1; shift
	local i
	for i in $(seq "$RUNS"); do
		case $name in
		alone) "$W/tb" "$@" ;;
		entry) "$PC" -q -F 0 --trace tick:entry -o "$W/x.sp" -- "$W/tb" "$@" ;;
		call) "$PC" -q -F 0 --trace tick -o "$W/x.sp" -- "$W/tb" "$@" ;;
		values) "$PC" -q -F 0 --trace 'tick(arg1,arg2,ret)' -o "$W/x.sp" -- "$W/tb" "$@" ;;
		point) "$PC" -q -F 0 --trace "$point" -o "$W/x.sp" -- "$W/tb" "$@" ;;
		stacks) "$PC" -q --trace 'tick:entry(arg1)' --stacks --weight arg1 -o "$W/x.sp" -- "$W/tb" "$@" ;;
		perf) perf record -q -e "$ev" -o "$W/p.data" -- "$W/tb" "$@" ;;
		esac 2> /dev/null
	done
}

say "== pcollect --trace: cost per hit (CPU time of $CALLS back-to-back calls of tick(), median of $RUNS)"
base=$(run alone cost "$CALLS" | sed -n 's/^cost \([0-9.]*\).*/\1/p' | median)
say "$(printf '  %-34s %9.1f ns per call' 'no probe' "$base")"
names="entry call values point stacks"
[ $have_perf = 1 ] && names="$names perf"
for n in $names; do
	c=$(run $n cost "$CALLS" | sed -n 's/^cost \([0-9.]*\).*/\1/p' | median)
	case $n in
	entry) label="tick:entry (1 hit per call)"; hits=1 ;;
	call) label="tick (entry + return: 2 hits)"; hits=2 ;;
	values) label="tick(arg1,arg2,ret) (2 hits)"; hits=2 ;;
	point) label="$point (point, 1 hit)"; hits=1 ;;
	stacks) label="tick:entry --stacks --weight (1 hit)"; hits=1 ;;
	perf) label="perf probe + perf record (1 hit)"; hits=1 ;;
	esac
	say "$(awk -v l="$label" -v c="$c" -v b="$base" -v h=$hits 'BEGIN { printf "  %-34s %9.1f ns per call, %.2f us per hit\n", l, c, (c - b) / h / 1000 }')"
done
[ $have_perf = 1 ] || say "  perf probe: not measured here (${why:-perf probe failed}); it needs tracefs"

for hz in 1000 10000; do
	say "== slowdown at $hz calls/s (fixed work, CPU time over the run alone, median of $RUNS)"
	b=$(run alone rate $hz "$SW" | sed -n 's/.*cpu \([0-9.]*\).*/\1/p' | median)
	for n in $names; do
		c=$(run $n rate $hz "$SW" | sed -n 's/.*cpu \([0-9.]*\).*/\1/p' | median)
		say "$(awk -v n=$n -v c="$c" -v b="$b" 'BEGIN { printf "  %-8s %.3f s CPU, x%.3f\n", n, c, c / b }')"
	done
done
