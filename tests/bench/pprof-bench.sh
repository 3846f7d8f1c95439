#!/bin/bash
# Speed and memory of pprof out and in: a binary stream of BENCH_PP_SAMPLES
# samples over BENCH_PP_STACKS distinct stacks (20 frames of 2,000 functions,
# 8 threads), written with pfold -O pprof and folded back from the pprof.
# Memory should follow the distinct (stack, thread) pairs, not the samples:
# the run with a tenth of the samples and the same stacks shows it.  Prints
# wall time and peak RSS (medians of BENCH_RUNS runs); never fails on
# slowness, only when a command fails or the round trip differs.
#
#   BENCH_PP_SAMPLES=5000000   samples in the large input
#   BENCH_PP_STACKS=200000     distinct stacks
#   BENCH_RUNS=3
set -euo pipefail
cd "$(dirname "$0")/../.."
W=tests/bench/work/pprof
mkdir -p "$W"
N=${BENCH_PP_SAMPLES:-5000000}
S=${BENCH_PP_STACKS:-200000}
RUNS=${BENCH_RUNS:-3}
[ -x /usr/bin/time ] || { echo "pprof-bench: /usr/bin/time is needed (apt-get install time)"; exit 2; }
[ -x bin/pfold ] || { echo "pprof-bench: run make first"; exit 2; }

# perf-script-like text: one sample per block, S distinct stacks, N samples
gen() { # samples file
	[ -s "$2" ] && return
	echo "pprof-bench: generating $2 ($1 samples, $S stacks)"
	awk -v n="$1" -v s="$S" 'BEGIN {
		srand(7);
		for (i = 0; i < n; i++) {
			k = i % s; t = k % 8;
			printf "worker-%d %d/%d %d.%06d: 1001001 cpu-clock:\n", t, 1000, 1000 + t, 100 + int(i / 1000), i % 1000000;
			x = k * 2654435761 % 4294967296;
			for (d = 0; d < 20; d++) { x = (x * 1103515245 + 12345) % 2147483648; printf "\t%x fn_%d+0x10 (/usr/bin/app)\n", d * 4096 + 16, x % 2000 }
			printf "\n";
		}
	}' | bin/pfold -b > "$2"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() { # label command...
	local label=$1; shift
	local i t=() m=()
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f '%e %M' -o "$W/time" "$@" > /dev/null
		t+=("$(cut -d' ' -f1 "$W/time")"); m+=("$(cut -d' ' -f2 "$W/time")")
	done
	printf 'pprof-bench: %-44s %6.2f s  %7d kB max RSS\n' "$label" \
		"$(printf '%s\n' "${t[@]}" | median)" "$(printf '%s\n' "${m[@]}" | median)"
}
for n in $((N / 10)) "$N"; do
	gen "$n" "$W/in-$n.sp"
	bin/pfold -O pprof "$W/in-$n.sp" > "$W/out-$n.pb.gz"
	bin/pfold --tid "$W/in-$n.sp" > "$W/a"; bin/pfold --tid "$W/out-$n.pb.gz" > "$W/b"
	cmp -s "$W/a" "$W/b" || { echo "pprof-bench: MISMATCH: pprof read back differs from the stream ($n samples)"; exit 1; }
	echo "pprof-bench: $n samples: stream $(stat -c %s "$W/in-$n.sp") B, pprof $(stat -c %s "$W/out-$n.pb.gz") B"
	measure "pfold -O pprof, $n samples" bin/pfold -O pprof -o "$W/o.pb.gz" "$W/in-$n.sp"
	measure "pfold of the pprof, $n samples" bin/pfold "$W/out-$n.pb.gz"
done
