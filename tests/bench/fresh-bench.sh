#!/bin/bash
# fresh-bench.sh — pfold and psvg on fresh real data (issue 13): >= 100 MB of
# `perf script` text from distinct recordings, nothing repeated
# (tests/bench/fresh-data.sh makes and caches it), beside the same size of
# one recording repeated (which favours pfold's whole-sample cache), and the
# reference figures of inferno 0.11.21 measured side by side on this machine
# kind with the same kind of input (inferno is not installed here: its
# figures are quoted from issue 13, and the ratio is ours / theirs).
#
# Every row is the median of BENCH_RUNS (5) runs; the rows are run in turn,
# round after round (alternating), so a burst of load on this shared machine
# hits them all alike.  Wall time is what a user waits; CPU is user + system
# seconds of every process of the row (the machine's load shows in wall
# time, not in CPU time).  Peak RSS is the largest process's.  Never fails
# on slowness; exits non-zero when a command fails or when outputs that must
# be identical differ.
#
#   BENCH_RUNS=5   BENCH_FRESH_MB=100   BENCH_FRESH_DIR=build/bench-fresh
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
B=$top/bin
RUNS=${BENCH_RUNS:-5}
say() { printf 'fresh-bench: %s\n' "$*" >&2; }
[ -x /usr/bin/time ] || { say "/usr/bin/time is needed (apt-get install time)"; exit 2; }
for c in pfold psvg pfilter; do [ -x "$B/$c" ] || { say "$B/$c not built (run: make)"; exit 2; }; done
F=$(bash tests/bench/fresh-data.sh)
D=$(dirname "$F")
W=$D/work
mkdir -p "$W"
size=$(stat -c %s "$F")

# The repeated input: the first recording, repeated to the same size.
R=$D/repeated.txt
if [ ! -s "$R" ] || [ "$(stat -c %s "$R")" -lt "$size" ]; then
	one=$(ls "$D"/rec/*.txt | head -1)
	: > "$R.tmp"
	while [ "$(stat -c %s "$R.tmp")" -lt "$size" ]; do cat "$one" >> "$R.tmp"; done
	mv "$R.tmp" "$R"
fi
cat "$F" "$R" > /dev/null # page cache

# Identity first: every -j, pipe and file give the same folded text.
"$B/pfold" -j1 "$F" > "$W/ref.folded"
for v in "-j2 $F" "-j2 -" "-j1 -"; do
	set -- $v
	if [ "$2" = - ]; then cat "$F" | "$B/pfold" "$1" > "$W/o.folded"; else "$B/pfold" "$1" "$2" > "$W/o.folded"; fi
	cmp -s "$W/ref.folded" "$W/o.folded" || { echo "MISMATCH: pfold $v differs from pfold -j1 FILE"; exit 1; }
done
"$B/pfilter" -v idle "$W/ref.folded" > "$W/noidle.folded"
cat "$F" | "$B/pfold" -b | "$B/pfilter" -v idle | "$B/pfold" > "$W/o.folded"
cmp -s "$W/noidle.folded" "$W/o.folded" || { echo "MISMATCH: the binary path folds differently from the text path"; exit 1; }

# rows: label@bytes@ref MB/s or s@target@command (run by bash -c)
rows=(
	"wc -l FILE (the line-scan floor)@$size@-@-@wc -l '$F'"
	"cat FILE | wc -l (the pipe's floor)@$size@-@-@cat '$F' | wc -l"
	"pfold < pipe, -j2 (perf script | pfold)@$size@220@880@cat '$F' | '$B/pfold' -j2"
	"pfold FILE, -j2@$size@220@880@'$B/pfold' -j2 '$F'"
	"pfold FILE, -j1 (one core)@$size@-@-@taskset -c 0 '$B/pfold' -j1 '$F'"
	"pfold < pipe, -j2, REPEATED input@$size@-@-@cat '$R' | '$B/pfold' -j2"
	"psvg on the folded result@0@0.12@0.06@'$B/psvg' '$W/ref.folded'"
	"text path: pfold | pfilter -v idle | psvg@$size@-@-@cat '$F' | '$B/pfold' -j2 | '$B/pfilter' -v idle | '$B/psvg'"
	"binary path: pfold -b | pfilter -v idle | psvg@$size@-@-@cat '$F' | '$B/pfold' -b | '$B/pfilter' -v idle | '$B/psvg'"
)
say "$(uptime | sed 's/.*load/load/') at the start; $RUNS rounds of ${#rows[@]} rows"
TIMEFORMAT='%3R %3U %3S'
for i in "${!rows[@]}"; do : > "$W/t.$i"; done
for r in $(seq "$RUNS"); do
	for i in "${!rows[@]}"; do
		IFS='@' read -r label bytes ref target cmd <<< "${rows[$i]}"
		# bash's time: wall, user and system seconds to the millisecond
		# (of every process of the row); /usr/bin/time: the peak RSS
		{ time /usr/bin/time -f '%M' -o "$W/rss" bash -c "$cmd" > /dev/null 2> "$W/err"; } 2> "$W/time" ||
			{ cat "$W/err" >&2; say "failed: $cmd"; exit 2; }
		echo "$(tail -1 "$W/time") $(tail -1 "$W/rss")" >> "$W/t.$i"
	done
done
load_end=$(uptime | sed 's/.*load average: //')

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo
echo "fresh data: $F"
echo "  $(awk -v s="$size" 'BEGIN {printf "%.1f", s / 1e6}') MB of perf script text from $(ls "$D"/rec/*.txt | wc -l) distinct recordings, nothing repeated; $(wc -l < "$W/ref.folded") distinct stacks"
echo "repeated input: $R (the first recording repeated to the same size)"
wc_t=$(awk '{print $1}' "$W/t.0" | median)
printf '%-48s %7s %7s %7s %9s %7s %7s %9s %8s %9s\n' row "wall s" "CPU s" "MB/s" "MB/CPU-s" "x wc-l" "RSS MB" inferno "ours/inf" target
for i in "${!rows[@]}"; do
	IFS='@' read -r label bytes ref target cmd <<< "${rows[$i]}"
	t=$(awk '{print $1}' "$W/t.$i" | median)
	cpu=$(awk '{print $2 + $3}' "$W/t.$i" | median)
	rss=$(awk '{print $4}' "$W/t.$i" | median)
	awk -v l="$label" -v t="$t" -v c="$cpu" -v r="$rss" -v b="$bytes" -v ref="$ref" -v tg="$target" -v wt="$wc_t" -v sz="$size" 'BEGIN {
		xwc = (b > 0 && t > 0 && wt > 0) ? sprintf("%.3f", (b / t) / (sz / wt)) : "-"
		mbs = (b > 0 && t > 0) ? sprintf("%.0f", b / 1e6 / t) : "-"
		mbc = (b > 0 && c > 0) ? sprintf("%.0f", b / 1e6 / c) : "-"
		if (ref == "-") { rs = "-"; ratio = "-"; tgs = "-" }
		else if (b > 0) { rs = ref " MB/s"; ratio = sprintf("%.2fx", (b / 1e6 / t) / ref); tgs = ">=" tg }
		else { rs = ref " s"; ratio = sprintf("%.2fx", ref / t); tgs = "<=" tg " s" }
		printf "%-48s %7.3f %7.3f %7s %9s %7s %7.1f %9s %8s %9s\n", l, t, c, mbs, mbc, xwc, r / 1024, rs, ratio, tgs }'
done
txt=$(awk '{print $1}' "$W/t.7" | median); bin=$(awk '{print $1}' "$W/t.8" | median)
awk -v a="$txt" -v b="$bin" 'BEGIN {printf "binary path / text path: %.2fx wall (target <= 1.5x)\n", b / a}'
cat <<EOF
(medians of $RUNS alternating runs on $(nproc) CPUs; load average $load_end at the end: wall
 times are inflated by whatever else runs on this shared machine, CPU times much less;
 MB/CPU-s = bytes per CPU second of all the row's processes, the figure load hides least;
 x wc-l = throughput / wc -l's on the same file in the same rounds (wc -l reads ~4000 MB/s
 on an idle machine of this kind, so x wc-l * 4000 estimates the idle-machine MB/s);
 cat FILE | wc -l = the bytes moved through a pipe and only counted: no reader of a
 pipe is faster, and its CPU s (both ends' copies) is part of every pipe row's CPU s;
 inferno = inferno 0.11.21 measured side by side on the same kind of input (issue 13):
 inferno-collapse-perf 0.45 s = 220 MB/s with 2 threads, 33 MB; inferno-flamegraph
 0.12 s, 22 MB, on a 12.9 MB folded file of 104,043 frames (it drops narrow frames, psvg
 keeps every one); ours/inf = our throughput / inferno's, or inferno's s / ours)
EOF

# Where the time goes: each tool's own run, sampled by pcollect, as a
# flame graph kept beside these figures (tests/bench/work/self/).
. "$(dirname "$0")/self-flame.sh"
self_flame pfold-pipe-fresh bash -c 'cat "$1" | "$2" -j2' _ "$F" "$B/pfold"
self_flame psvg-fresh "$B/psvg" "$W/ref.folded"

# The SVG of the fresh data in headless Chromium: load and every zoom (the
# 300k-frame synthetic graph is timed by psvg-bench.sh below).
if command -v node > /dev/null && [ -x /usr/bin/chromium ] && [ -d tests/browser/node_modules/playwright-core ]; then
	"$B/psvg" "$W/ref.folded" > "$W/fresh.svg"
	echo "the fresh data's SVG in headless Chromium (targets: load < 500 ms, every zoom < 100 ms):"
	(cd tests/browser && node bench.js "$W/fresh.svg" "$RUNS") | sed 's/^/  /'
else
	echo "skip: Chromium timings need node, /usr/bin/chromium and tests/browser/node_modules (make deps)"
fi
