#!/bin/bash
# Speed, memory and size of ptimeline on a million traced calls with two
# samples inside each (tests/progs/tlgen.c bench: 4 threads, 8-frame
# stacks, each call with arg1 and ret), the size of a long trace without
# its 10 minutes of recording.  Beside it, preport --latency on the same
# stream (it reads the same events, writes a few lines): the difference is
# the writing.  Prints median wall time, peak RSS, output size and bytes
# per call; never fails on slowness, only when a command fails.
#
#   BENCH_TL_CALLS=1000000   calls
#   BENCH_RUNS=3             runs per measurement
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
W=$top/tests/bench/work/timeline
mkdir -p "$W"
N=${BENCH_TL_CALLS:-1000000}
RUNS=${BENCH_RUNS:-3}
[ -x /usr/bin/time ] || { echo "timeline-bench: /usr/bin/time is needed (apt-get install time)"; exit 2; }
[ -x bin/ptimeline ] && [ -f build/libstackpipe.a ] || { echo "timeline-bench: run make first"; exit 2; }
PKGS="libdw libelf libxxhash libcjson zlib"
cc -O2 -std=gnu11 -D_GNU_SOURCE $(printf -- "-I%s " lib/*/ formats) $(pkg-config --cflags $PKGS) -o "$W/tlgen" \
	tests/progs/tlgen.c build/libstackpipe.a $(pkg-config --libs $PKGS) -lpthread -lm
[ -s "$W/calls-$N.sp" ] || "$W/tlgen" bench "$N" > "$W/calls-$N.sp"

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# measure LABEL OUT CMD...: label, median wall s, median CPU s (user + system:
# what a loaded machine does not inflate), median peak RSS MB, output bytes,
# bytes per call
measure() {
	local label=$1 out=$2; shift 2
	: > "$W/t"; : > "$W/m"; : > "$W/c"
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M %U %S" -o "$W/time.out" "$@" > "$out" 2> "$W/err" ||
			{ echo "timeline-bench: $label failed:"; cat "$W/err"; exit 1; }
		read -r s kb us ss < "$W/time.out"
		echo "$s" >> "$W/t"; echo "$kb" >> "$W/m"; awk -v u="$us" -v s="$ss" 'BEGIN { print u + s }' >> "$W/c"
	done
	local b
	b=$(stat -c %s "$out")
	printf '%-44s %8s %8s %8s %12s %10s\n' "$label" "$(median < "$W/t")" "$(median < "$W/c")" \
		"$(( $(median < "$W/m" | cut -d. -f1) / 1024 ))" "$b" "$(awk -v b="$b" -v n="$N" 'BEGIN { printf "%.1f", b / n }')"
}
echo "timeline-bench: $N calls, $((2 * N)) samples, input $(stat -c %s "$W/calls-$N.sp") bytes ($(awk -v b="$(stat -c %s "$W/calls-$N.sp")" -v n="$N" 'BEGIN { printf "%.1f", b / n }') per call)"
printf '%-44s %8s %8s %8s %12s %10s\n' "command" "wall s" "CPU s" "RSS MB" "out bytes" "B/call"
measure "preport --latency (reads the same)" "$W/lat.txt" bin/preport --latency "$W/calls-$N.sp"
measure "ptimeline" "$W/t.json" bin/ptimeline "$W/calls-$N.sp"
measure "ptimeline --no-samples" "$W/ns.json" bin/ptimeline --no-samples "$W/calls-$N.sp"
measure "ptimeline -z" "$W/t.json.gz" bin/ptimeline -z "$W/calls-$N.sp"
measure "ptimeline --sample-slices" "$W/sl.json" bin/ptimeline --sample-slices "$W/calls-$N.sp"
measure "ptimeline --slowest 100" "$W/s.json" bin/ptimeline --slowest 100 "$W/calls-$N.sp"
