#!/bin/bash
# Speed and memory of pspeedscope (and of reading its output back) on a large
# input: the real three-thread perf recording tests/data/t5-perf-threads.txt.gz
# repeated with each copy shifted later in time, so the result is one long,
# time-ordered recording of BENCH_SS_SAMPLES samples (default 10 million),
# as a binary stream.  Prints wall time and peak RSS (medians of
# BENCH_RUNS runs); never fails on slowness, only when a command fails.
#
#   BENCH_SS_SAMPLES=10000000   samples in the large input (a tenth is run too)
#   BENCH_RUNS=3                runs per measurement
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
W=$top/tests/bench/work/speedscope
mkdir -p "$W"
N=${BENCH_SS_SAMPLES:-10000000}
RUNS=${BENCH_RUNS:-3}
[ -x /usr/bin/time ] || { echo "speedscope-bench: /usr/bin/time is needed (apt-get install time)"; exit 2; }
[ -x bin/pspeedscope ] && [ -x bin/pfold ] || { echo "speedscope-bench: run make first"; exit 2; }

fixture=tests/data/t5-perf-threads.txt.gz
per=$(zcat "$fixture" | grep -c 'cpu-clock:')

# stream N FILE: a binary stream of about N samples, copies 2 s apart.
stream() {
	local n=$1 out=$2 copies
	copies=$(( (n + per - 1) / per ))
	[ -s "$out" ] && return
	echo "speedscope-bench: building $out ($copies copies of $per samples)"
	zcat "$fixture" > "$W/one.txt"
	awk -v copies="$copies" '
		FNR == 1 { k++ }
		k > 1 && /^#/ { next }
		/^[^\t#]/ && match($0, /[0-9]+\.[0-9]+: /) {
			t = substr($0, RSTART, RLENGTH - 2) + 2 * (k - 1)
			$0 = substr($0, 1, RSTART - 1) sprintf("%.6f: ", t) substr($0, RSTART + RLENGTH)
		}
		{ print }
	' $(for i in $(seq "$copies"); do printf '%s ' "$W/one.txt"; done) | bin/pfold -b > "$out.tmp"
	mv "$out.tmp" "$out"
	rm -f "$W/one.txt"
}
small=$((N / 10))
stream "$N" "$W/big-$N.sp"
stream "$small" "$W/small-$small.sp"

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# measure LABEL OUT CMD...: prints label, median wall s, median peak RSS MB, output MB
measure() {
	local label=$1 out=$2; shift 2
	: > "$W/t"; : > "$W/m"
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$W/time.out" "$@" > "$out" 2> "$W/err" ||
			{ echo "speedscope-bench: $label failed:"; cat "$W/err"; exit 1; }
		read -r s kb < "$W/time.out"
		echo "$s" >> "$W/t"; echo "$kb" >> "$W/m"
	done
	printf '%-48s %9s %10s %10s\n' "$label" "$(median < "$W/t")" \
		"$(( $(median < "$W/m" | cut -d. -f1) / 1024 ))" "$(( $(stat -c %s "$out") >> 20 ))"
}
printf '%-48s %9s %10s %10s\n' "command (median of $RUNS)" "wall s" "peak RSS MB" "output MB"
for f in "$W/small-$small.sp" "$W/big-$N.sp"; do
	n=$(( $(basename "$f" .sp | sed 's/.*-//') ))
	measure "pfold (reads the stream, $n samples)" "$W/out.folded" bin/pfold "$f"
	measure "pspeedscope ($n samples)" "$W/out.json" env TMPDIR="$W" bin/pspeedscope "$f"
	measure "pfold of that speedscope JSON" "$W/out2.folded" bin/pfold "$W/out.json"
	cmp -s "$W/out.folded" "$W/out2.folded" || { echo "speedscope-bench: round trip differs"; exit 1; }
done
echo "input: $(( $(stat -c %s "$W/big-$N.sp") >> 20 )) MB stream; the round trip's folded text is identical"
rm -f "$W/out.json" "$W/out.folded" "$W/out2.folded" "$W/t" "$W/m" "$W/err" "$W/time.out"
