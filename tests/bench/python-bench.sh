#!/bin/bash
# python-bench.sh — what Python-aware sampling costs, measured, never asserted.
#
#  1. Target slowdown: tests/progs/t61-bench.py (fixed CPU-bound Python work,
#     its own CPU and elapsed time) alone, under `pcollect -F 99` with Python
#     frames merged (the default), and under `pcollect -F 99 --python=off`
#     (native frames only), interleaved, medians of RUNS; the target pinned
#     to the last CPU, the collector to the first.  Printed as ratios to the
#     run alone, of the target's CPU time and of its elapsed time.
#  2. Collector: pcollect's CPU time per sample with Python frames merged,
#     at 99 Hz and 999 Hz, and the disagreement count (samples whose Python
#     frames were read after the thread moved on: see pcollect(1), PYTHON).
#
#   RUNS=7 N=12000 PY=python3 PCOLLECT=bin/pcollect   (environment)
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
pin_t() { if [ "$ncpu" -gt 1 ]; then taskset -c $((ncpu - 1)) "$@"; else "$@"; fi; }
pin_c() { if [ "$ncpu" -gt 1 ]; then taskset -c 0 "$@"; else "$@"; fi; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

prog=$top/tests/progs/t61-bench.py
ver=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
say "python-bench: $PY ($ver), N=$N, $RUNS runs each, interleaved"
: > "$W/alone" ; : > "$W/merged" ; : > "$W/off"
for r in $(seq "$RUNS"); do
	pin_t "$PY" "$prog" "$N" > "$W/o" && cat "$W/o" >> "$W/alone"
	pin_c "$PC" -q -F 99 -o "$W/m.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > "$W/o" 2>&1 && grep elapsed "$W/o" >> "$W/merged"
	pin_c "$PC" -q -F 99 --python=off -o "$W/f.sp" -- taskset -c $((ncpu - 1)) "$PY" "$prog" "$N" > "$W/o" 2>&1 && grep elapsed "$W/o" >> "$W/off"
done
for k in alone merged off; do
	e=$(awk '{print $2}' "$W/$k" | median) c=$(awk '{print $4}' "$W/$k" | median)
	eval "e_$k=$e c_$k=$c"
done
say "$(printf '  %-28s cpu %6.3f s  elapsed %6.3f s' alone "$c_alone" "$e_alone")"
for k in merged off; do
	eval "c=\$c_$k e=\$e_$k"
	say "$(printf '  %-28s cpu %6.3f s (x%.3f)  elapsed %6.3f s (x%.3f)' "pcollect -F 99 ($k)" "$c" \
		"$(echo "$c / $c_alone" | bc -l)" "$e" "$(echo "$e / $e_alone" | bc -l)")"
done
for hz in 99 999; do
	"$PC" -v -F $hz -o "$W/c.sp" -- "$PY" "$prog" "$N" > /dev/null 2> "$W/v" || true
	smp=$(sed -n 's/^pcollect: \([0-9]*\) samples of.*/\1/p' "$W/v")
	cpu=$(sed -n 's/.*collector CPU \([0-9.]*\) s.*/\1/p' "$W/v")
	dis=$(sed -n 's/.*Python frames, \([0-9]*\) of them.*/\1/p' "$W/v")
	say "$(printf '  collector at %4d Hz: %s samples, %.3f s CPU, %.0f us per sample, %s disagree' "$hz" "${smp:-0}" \
		"${cpu:-0}" "$(echo "${cpu:-0} * 1000000 / (${smp:-0} + 0.000001)" | bc -l)" "${dis:-?}")"
done
