#!/bin/bash
# `make demo`: the pipeline on a bundled real perf recording
# (share/demo/perf-demo.txt.gz, recorded from share/demo/demo-prog.c with
# `perf record -g`; share/demo/record.sh re-records it).  Outputs go to
# ./demo-out/.  Later stages (SVG, live collection) are added when their
# commands exist.
set -e
cd "$(dirname "$0")/../.."
out=demo-out
mkdir -p "$out"
in=share/demo/perf-demo.txt.gz

echo "== perf script output (gzip) | pfold > $out/demo.folded"
bin/pfold "$in" > "$out/demo.folded"
echo "   $(wc -l < "$out/demo.folded") distinct stacks, $(awk '{s+=$NF} END {print s}' "$out/demo.folded") ns of cpu-clock"
echo
echo "== the 10 heaviest stacks"
sort -t' ' -k2,2nr "$out/demo.folded" | head -10 | sed 's/^/   /'
echo
echo "== pfold -b: the lossless binary stream ($out/demo.sp)"
bin/pfold -b "$in" > "$out/demo.sp"
echo "   $(wc -c < "$out/demo.sp") bytes (perf script text: $(gzip -dc "$in" | wc -c) bytes); first samples:"
bin/sp-dump "$out/demo.sp" | sed -n '2,4p' | cut -c1-150 | sed 's/^/   /'
echo
echo "== per thread (pfold --tid)"
bin/pfold --tid "$in" | awk '{split($1, f, ";"); w[f[1]] += $NF} END {for (t in w) printf "   %-24s %d\n", t, w[t]}' | sort
if [ -x bin/psvg ]; then
	echo
	echo "== pfold | psvg > $out/demo.svg"
	bin/pfold "$in" | bin/psvg --title "stackpipe demo" > "$out/demo.svg"
	echo "   open $PWD/$out/demo.svg in a browser"
fi
echo
echo "Outputs are in $PWD/$out/"
