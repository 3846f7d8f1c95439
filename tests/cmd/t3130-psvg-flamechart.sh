#!/bin/bash
# psvg --flamechart against flamegraph.pl --flamechart's rule (a sample's
# frames merge with the previous sample's over their common prefix only),
# read through the SVG's own API in Chromium: a function under alternating
# parents, and a real 3-thread perf recording (tests/data/t5-perf-threads,
# grouped by thread, each in time order) where every thread must be visible.
. "$(dirname "$0")/../lib.sh"

D=$SP_TOP/tests/data
# the text of the SVG: the same rule, without a browser
printf 'a;s 1\nb;s 1\n' > "$T/alt.folded"
psvg --flamechart "$T/alt.folded" > "$T/alt.svg" 2> "$T/err"
expect_rc "psvg --flamechart on alternating parents" 0 $?
if [ "$(grep -c '<text[^>]*>s</text>' "$T/alt.svg")" = 2 ] && grep -q '>b</text>' "$T/alt.svg"; then
	ok "a;s then b;s: b and two s frames are drawn"
else
	notok "a;s then b;s: b and two s frames are drawn"; grep '<rect x' "$T/alt.svg" | sed 's/^/  /'
fi
printf 'main;a;s 2\nmain;b;s;t 1\nmain;a;s 1\nmain;a;s;u 3\nmain;b 1\nmain;a;s 1\n' > "$T/mix.folded"
psvg --flamechart "$T/mix.folded" > "$T/mix.svg"

# the recording's samples in the chart's order: by thread (first seen
# first), then time; the thread's root frame as psvg --tid names it
pfold -b "$D/t5-perf-threads.txt.gz" | sp-dump > "$T/t5.dump"
awk '$1 == "sample" {
	t = substr($2, 3); split($3, th, "[=/]"); nm = $4; gsub(/"/, "", nm)
	label = nm "-" th[2] "/" th[3]
	if (!(label in first)) first[label] = ++nlabels
	v = $6; sub(/^values=[^,]*,/, "", v)
	s = $0; sub(/.* stack=/, "", s); gsub(/ \[[^;]*/, "", s)
	printf "%d %s %d %s;%s %s\n", first[label], t, NR, label, s, v
}' "$T/t5.dump" | sort -k1,1n -k2,2n -k3,3n | cut -d' ' -f4- > "$T/t5.folded"
labels=$(cut -d';' -f1 "$T/t5.folded" | awk '!seen[$0]++' | paste -sd,)
if [ "$(echo "$labels" | tr , '\n' | wc -l)" = 3 ]; then ok "the recording has 3 threads ($labels)"; else
	notok "the recording has 3 threads ($labels)"; fi
psvg --flamechart --tid "$D/t5-perf-threads.txt.gz" > "$T/t5.svg" 2> "$T/err"
expect_rc "psvg --flamechart --tid on a 3-thread recording" 0 $?

browser_ready "psvg --flamechart in Chromium" || exit 0
(cd "$SP_TOP/tests/browser" && timeout 300 node flamechart.test.js "alternating:$T/alt.svg:$T/alt.folded:" \
	"mixed:$T/mix.svg:$T/mix.folded:" "3 threads:$T/t5.svg:$T/t5.folded:$labels") 2>&1
[ $? = 124 ] && notok "psvg --flamechart browser checks timed out"
exit 0
