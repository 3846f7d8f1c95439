#!/bin/bash
# pcollect-bench.sh — what sampling costs, measured, never asserted.
#
#  1. Target slowdown: tests/progs/t6-bench.c (fixed work, -O2
#     -fomit-frame-pointer, its own CPU and elapsed time) alone, under
#     `pcollect -F HZ` and under `perf record --call-graph dwarf -F HZ`, at
#     99 and 999 Hz.  The target is pinned to the last CPU and the collector
#     to the first (when there are two), runs are interleaved, medians of
#     RUNS; the ratio to the run alone is printed, of CPU time (steady on a
#     shared machine: sampling's kernel time is charged to the target) and
#     of elapsed time (noisy when other work shares the CPUs).
#  2. Collector cost: pcollect's own CPU time per sample at 999 Hz and at
#     10 kHz (both threads of t6-shares), i.e. samples unwound and
#     symbolised per CPU-second, next to `perf report --call-graph dwarf`
#     unwinding perf's recording of the same run.
#  3. Size: stream bytes per sample next to perf.data bytes per sample.
#
#   RUNS=7 ITERS=3000 PCOLLECT=bin/pcollect   (environment)
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-7}
ITERS=${ITERS:-3000}
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
say() { printf '%s\n' "$*"; }

gcc -O2 -g -fomit-frame-pointer -o "$W/bench" tests/progs/t6-bench.c
gcc -O2 -g -fomit-frame-pointer -pthread -o "$W/shares" tests/progs/t6-shares.c
ncpu=$(nproc)
tcpu=$((ncpu - 1)) ccpu=0
pin_t() { if [ "$ncpu" -gt 1 ]; then taskset -c $tcpu "$@"; else "$@"; fi; }
pin_c() { if [ "$ncpu" -gt 1 ]; then taskset -c $ccpu "$@"; else "$@"; fi; }
have_perf=0
if command -v perf > /dev/null && perf record -q -o "$W/p.data" -e cpu-clock true > /dev/null 2>&1; then have_perf=1; fi

elapsed() { sed -n 's/.*elapsed \([0-9.]*\) cpu \([0-9.]*\).*/\2 \1/p' "$1"; }
median() { # column
	awk -v c="$1" '{print $c}' | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'
}

say "# pcollect benchmark: $(uname -r), $ncpu CPUs, target pinned to CPU $tcpu, collector to CPU $ccpu, median of $RUNS"
say ""
say "## 1. target slowdown (t6-bench $ITERS: its own CPU and elapsed time)"
: > "$W/base"
for hz in 99 999; do : > "$W/pc$hz"; : > "$W/perf$hz"; done
for r in $(seq "$RUNS"); do
	pin_t "$W/bench" "$ITERS" 2> "$W/o" && elapsed "$W/o" >> "$W/base"
	for hz in 99 999; do
		pin_c "$PC" -q -F $hz -o "$W/s.sp" -- taskset -c $tcpu "$W/bench" "$ITERS" 2> "$W/o"
		elapsed "$W/o" >> "$W/pc$hz"
		if [ $have_perf = 1 ]; then
			pin_c perf record -q -e cpu-clock -F $hz --call-graph dwarf -o "$W/p.data" -- \
				taskset -c $tcpu "$W/bench" "$ITERS" 2> "$W/o" > /dev/null
			elapsed "$W/o" >> "$W/perf$hz"
		fi
	done
done
bc=$(median 1 < "$W/base") be=$(median 2 < "$W/base")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }
row() { # name file
	local c e
	c=$(median 1 < "$2") e=$(median 2 < "$2")
	printf '| %-38s | %7.3f | %6s | %9.3f | %6s |\n' "$1" "$c" "$(ratio "$c" "$bc")" "$e" "$(ratio "$e" "$be")"
}
printf '| %-38s | %7s | %6s | %9s | %6s |\n' "run" "CPU s" "ratio" "elapsed s" "ratio"
row "alone" "$W/base"
for hz in 99 999; do
	row "pcollect -F $hz" "$W/pc$hz"
	[ $have_perf = 1 ] && row "perf record --call-graph dwarf -F $hz" "$W/perf$hz"
done
say "(runs alone: CPU $(awk '{print $1}' "$W/base" | sort -n | sed -n '1p;$p' | paste -sd-) s, elapsed $(awk '{print $2}' "$W/base" | sort -n | sed -n '1p;$p' | paste -sd-) s)"

say ""
say "## 2. collector CPU per sample (t6-shares, two threads, 2 s of CPU)"
printf '| %-44s | %8s | %9s | %12s |\n' "run" "samples" "CPU s" "samples/CPU-s"
for hz in 999 10000; do
	pin_c "$PC" -v -F $hz -o "$W/s$hz.sp" -- "$W/shares" 2 2> "$W/v"
	n=$(sed -n 's/.*: \([0-9]*\) samples of.*/\1/p' "$W/v")
	cpu=$(sed -n 's/.*collector CPU \([0-9.]*\) s.*/\1/p' "$W/v")
	printf '| %-44s | %8s | %9s | %12.0f |\n' "pcollect -F $hz (unwind + symbols + stream)" "$n" "$cpu" \
		"$(awk -v n="$n" -v c="$cpu" 'BEGIN{print (c > 0 ? n/c : 0)}')"
	lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$W/v")
	[ "${lost:-0}" = 0 ] || say "  (pcollect -F $hz lost $lost samples)"
	eval "n$hz=$n cpu$hz=$cpu"
done
# The start-up (reading kallsyms, the first DWARF) is the same in both runs:
# the difference is what each further sample costs.
printf '| %-44s | %8s | %9s | %12.0f |\n' "pcollect, each further sample (10k - 999 Hz)" "$((n10000 - n999))" \
	"$(awk -v a="$cpu10000" -v b="$cpu999" 'BEGIN{printf "%.3f", a-b}')" \
	"$(awk -v n=$((n10000 - n999)) -v a="$cpu10000" -v b="$cpu999" 'BEGIN{print (a > b ? n/(a-b) : 0)}')"
if [ $have_perf = 1 ]; then
	perf record -q -e cpu-clock -F 10000 --call-graph dwarf -o "$W/p10k.data" -- "$W/shares" 2 > /dev/null 2>&1
	pn=$(perf script -i "$W/p10k.data" -F period 2>/dev/null | wc -l)
	t0=$(date +%s.%N)
	pin_c perf report -i "$W/p10k.data" --stdio --call-graph=callee > /dev/null 2>&1
	t1=$(date +%s.%N)
	pt=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
	printf '| %-44s | %8s | %9s | %12.0f |\n' "perf report --call-graph dwarf (wall)" "$pn" "$pt" \
		"$(awk -v n="$pn" -v c="$pt" 'BEGIN{print (c > 0 ? n/c : 0)}')"
fi

say ""
say "## 3. bytes per sample (same run: t6-shares 2 at 999 Hz)"
n=$("$top/bin/sp-dump" "$W/s999.sp" | grep -c '^sample')
sz=$(stat -c %s "$W/s999.sp")
printf '| %-36s | %10s | %8s | %10s |\n' "file" "bytes" "samples" "bytes/sample"
printf '| %-36s | %10s | %8s | %10.1f |\n' "pcollect stream" "$sz" "$n" "$(awk -v a="$sz" -v b="$n" 'BEGIN{print a/b}')"
if [ $have_perf = 1 ]; then
	perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$W/p999.data" -- "$W/shares" 2 > /dev/null 2>&1
	pn=$(perf script -i "$W/p999.data" -F period 2>/dev/null | wc -l)
	psz=$(stat -c %s "$W/p999.data")
	printf '| %-36s | %10s | %8s | %10.1f |\n' "perf.data (--call-graph dwarf)" "$psz" "$pn" \
		"$(awk -v a="$psz" -v b="$pn" 'BEGIN{print a/b}')"
else
	say "(perf is not installed or not permitted: no perf columns)"
fi
