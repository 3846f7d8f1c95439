#!/bin/bash
# python-bench.sh — what Python-aware sampling costs, measured, never asserted.
#
#  1. Target slowdown at 99 Hz: tests/progs/t61-bench.py (fixed CPU-bound
#     Python work, its own CPU and elapsed time) alone, under `pcollect -F 99`
#     in its two Python modes -- exact (the default at 99 Hz: each sampled
#     thread is stopped while its stack and Python frames are read) and
#     --python-sampling=nonblocking (read after the sample, never stopped) --
#     and with --python=off (native frames only); interleaved, medians of
#     RUNS; the target pinned to the last CPU, the collector to the first.
#     Printed as ratios to the run alone, of the target's CPU time and of its
#     elapsed time (targets: exact <= 1.05, non-blocking <= 1.01), and for
#     exact how long each stop took (interrupt to resume, median of the runs'
#     means) and the share of the elapsed time the target spent stopped.
#  2. Collector: pcollect's CPU time per sample in both modes at 99 Hz and
#     999 Hz, and so the samples per second one CPU of collector sustains;
#     the disagreement counts (samples whose Python frames do not match the
#     native stack: see pcollect(1), PYTHON).
#
#     The per-sample cost is the difference between the two rates' runs
#     (collector CPU and samples), so the start-up (symbols) cancels out.
#
#   RUNS=7 N=12000 PY=python3 PCOLLECT=bin/pcollect NICE=0   (environment)
#   NICE=-15 (root): the target and the collector run at that nice level,
#   so that on a shared, loaded machine the other work disturbs them less.
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-7}
N=${N:-12000}
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')} # the interpreter, not pyenv's shim
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
say() { printf '%s\n' "$*"; }
ncpu=$(nproc)
NICE=${NICE:-0}
pin_t() { if [ "$ncpu" -gt 1 ]; then nice -n "$NICE" taskset -c $((ncpu - 1)) "$@"; else nice -n "$NICE" "$@"; fi; }
pin_c() { if [ "$ncpu" -gt 1 ]; then nice -n "$NICE" taskset -c 0 "$@"; else nice -n "$NICE" "$@"; fi; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

prog=$top/tests/progs/t61-bench.py
ver=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
say "python-bench: $PY ($ver), N=$N, $RUNS runs each, interleaved, nice $NICE, load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$W/alone" ; : > "$W/exact" ; : > "$W/nonblocking" ; : > "$W/off" ; : > "$W/stops"
for r in $(seq "$RUNS"); do
	pin_t "$PY" "$prog" "$N" > "$W/o" && cat "$W/o" >> "$W/alone"
	pin_c "$PC" -v -F 99 -o "$W/m.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > "$W/o" 2> "$W/v" && grep elapsed "$W/o" >> "$W/exact"
	sed -nE 's/.*exact: ([0-9]+) samples from stopped.*stopped ([0-9.]+) us on average.*/n \1 \2/p' "$W/v" | tr '\n' ' ' >> "$W/stops"
	echo "$(awk '{print $2}' "$W/o")" >> "$W/stops"
	pin_c "$PC" -q -F 99 --python-sampling=nonblocking -o "$W/n.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > "$W/o" 2>&1 && grep elapsed "$W/o" >> "$W/nonblocking"
	pin_c "$PC" -q -F 99 --python=off -o "$W/f.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > "$W/o" 2>&1 && grep elapsed "$W/o" >> "$W/off"
done
for k in alone exact nonblocking off; do
	e=$(awk '{print $2}' "$W/$k" | median) c=$(awk '{print $4}' "$W/$k" | median)
	eval "e_$k=$e c_$k=$c"
done
say "$(printf '  %-36s cpu %6.3f s  elapsed %6.3f s' alone "$c_alone" "$e_alone")"
for k in exact nonblocking off; do
	eval "c=\$c_$k e=\$e_$k"
	label="pcollect -F 99 ($k)"
	[ $k = off ] && label="pcollect -F 99 --python=off"
	say "$(printf '  %-36s cpu %6.3f s (x%.3f)  elapsed %6.3f s (x%.3f)' "$label" "$c" \
		"$(echo "$c / $c_alone" | bc -l)" "$e" "$(echo "$e / $e_alone" | bc -l)")"
done
# each line of stops: "n SAMPLES MEAN_US ELAPSED"
st=$(awk 'NF == 4 {print $3}' "$W/stops" | median)
sh=$(awk 'NF == 4 && $4 > 0 {print 100 * $2 * $3 / 1e6 / $4}' "$W/stops" | median)
say "$(printf '  exact: a stop takes %.0f us (median of the runs'"'"' means); the target was stopped %.2f %% of its elapsed time' "${st:-0}" "${sh:-0}")"
for mode in exact nonblocking; do
	for hz in 99 999; do
		pin_c "$PC" -v -F $hz --python-sampling=$mode -o "$W/c.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > /dev/null 2> "$W/v" || true
		smp=$(sed -n 's/^pcollect: \([0-9]*\) samples of.*/\1/p' "$W/v")
		cpu=$(sed -n 's/.*collector CPU \([0-9.]*\) s.*/\1/p' "$W/v")
		dis=$(sed -n 's/.*Python frames, \([0-9]*\) of them.*/\1/p' "$W/v")
		eval "smp_$hz=${smp:-0} cpu_$hz=${cpu:-0}"
		say "$(printf '  collector, %-11s at %4d Hz: %s samples, %.3f s CPU (with start-up), %s disagree' \
			"$mode" "$hz" "${smp:-0}" "${cpu:-0}" "${dis:-?}")"
	done
	us=$(echo "($cpu_999 - $cpu_99) * 1000000 / ($smp_999 - $smp_99 + 0.000001)" | bc -l)
	say "$(printf '  collector, %-11s: %.0f us of CPU per sample, so %.0f samples/s per CPU sustained' "$mode" "$us" \
		"$(echo "1000000 / ($us + 0.000001)" | bc -l)")"
done
