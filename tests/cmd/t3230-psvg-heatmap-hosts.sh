#!/bin/bash
# psvg --heatmap=hosts: a row per host, a column per --bucket.  Without a
# store: rows are the hosts pmerge --tag puts at the root of real
# recordings (xz and gzip by pcollect), or the threads of perf script text;
# every cell's weight equals the sum, per host and bucket, of the samples
# sp-dump lists (computed here with awk, not by psvg).  Hostile names stay
# data; usage errors; the default is the sub-second map for anything but
# pfleet get's streams; a map too large is refused, nothing written.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
cells() { python3 "$SP_TOP/tests/cmd/t323-cells.py" "$@" | LC_ALL=C sort; }
if ! command -v python3 > /dev/null; then skip "psvg --heatmap=hosts" "python3 is not installed (it reads the SVG's cells)"; exit 0; fi

# perf script text: 4 threads (the rows), 3 minutes, hostile names
{
	printf 'web-2 10 [000] 1.000000: 100 cpu-clock:\n\t1000 work (/bin/x)\n\t3000 main (/bin/x)\n\n'
	printf 'web-2 10 [000] 2.000000: 50 cpu-clock:\n\t3000 main (/bin/x)\n\n'
	printf 'web-2 10 [000] 61.000000: 10 cpu-clock:\n\t3000 main (/bin/x)\n\n'
	printf 'web-10 11 [000] 1.500000: 7 cpu-clock:\n\t1000 work (/bin/x)\n\t3000 main (/bin/x)\n\n'
	printf 'web-10 11 [000] 130.000000: 1000 cpu-clock:\n\t1000 work (/bin/x)\n\t3000 main (/bin/x)\n\n'
	printf '<script>x 12 [000] 70.000000: 3 cpu-clock:\n\t1000 </text><script>alert(1)</script> (/bin/x)\n\n'
	printf 'a]]>b\377 13 [000] 125.000000: 5 cpu-clock:\n\t1000 work (/bin/x)\n\n'
} > "$T/p.txt"
pfold -b "$T/p.txt" > "$T/p.sp" 2> "$T/e" || { notok "pfold -b of the text"; cat "$T/e"; }
psvg --heatmap=hosts "$T/p.sp" > "$T/p.svg" 2> "$T/e"; rc=$?
expect_rc "psvg --heatmap=hosts of perf script text: exit 0" 0 $rc
printf '<script>x 60 3\na]]>b\357\277\275 120 5\nweb-10 0 7\nweb-10 120 1000\nweb-2 0 150\nweb-2 60 10\n' | LC_ALL=C sort > "$T/want"
cells "$T/p.svg" > "$T/got"
expect_eq "a cell per thread and minute holding the sum of its periods (hostile names decoded)" "$T/want" "$T/got"
printf '<script>x 60 3 0\na]]>b\357\277\275 120 5 5\nweb-10 0 7 7\nweb-10 120 1000 1000\nweb-2 0 150 100\nweb-2 60 10 0\n' | LC_ALL=C sort > "$T/want"
psvg --heatmap=hosts --function=work "$T/p.sp" > "$T/f.svg" 2> "$T/e"
cells "$T/f.svg" work > "$T/got"
expect_eq "--function=work: per cell, the weight of the stacks holding work" "$T/want" "$T/got"
# colours: the cell with the largest share of work is the reddest (#ff0000), empty cells white
grep -q '^var spheat={v:1,mode:"hosts",.*max:1,' "$T/f.svg" && [ "$(grep -c 'fill="#ff0000"' "$T/f.svg")" = 3 ] &&
	ok "--function: the colour is the share (the three cells all in work are the reddest)" || notok "--function colours"
grep -q 'rowNames:\["\\u003cscript\\u003ex","a]]\\u003eb\\ufffd","web-2","web-10"\]' "$T/p.svg" &&
	ok "rows by name, web-2 before web-10; names escaped in the script data" || { notok "row names"; grep -o 'rowNames:[^]]*]' "$T/p.svg"; }
grep -q '>&lt;script&gt;x</text>' "$T/p.svg" && grep -q $'>a]]&gt;b\xef\xbf\xbd</text>' "$T/p.svg" && [ "$(grep -c '<script' "$T/p.svg")" = 2 ] &&
	ok "row labels are escaped text (no markup, U+FFFD for invalid UTF-8)" || notok "row labels"
if command -v xmllint > /dev/null; then
	if xmllint --noout "$T/p.svg" 2> "$T/x"; then ok "the SVG is well-formed XML"; else notok "well-formed"; head -3 "$T/x"; fi
else skip "well-formed" "xmllint is not installed (apt-get install libxml2-utils)"; fi
if ! grep -v 'xmlns' "$T/p.svg" | grep -qE '(href|src)="?https?:'; then ok "standalone: nothing loaded from outside"; else notok "standalone"; fi
grep -q '>+0s</text>' "$T/p.svg" && grep -q '>+60s</text>' "$T/p.svg" && grep -q '4 hosts x 3 buckets of 60 s' "$T/p.svg" &&
	ok "bucket labels from the first bucket (+0s, +60s: not a wall clock), the help line counts hosts and buckets" || notok "labels"
psvg --heatmap=hosts --bucket 30 "$T/p.sp" > "$T/b.svg" 2> "$T/e"
grep -q '4 hosts x 5 buckets of 30 s' "$T/b.svg" && ok "--bucket 30: 5 buckets" || notok "--bucket 30"

# usage errors and refusals
for a in "--heatmap=minutes" "--bucket 60" "--function=f" "--heatmap=seconds --function=f" "--heatmap=hosts --slices 10" "--heatmap=hosts --bucket 0"; do
	psvg $a "$T/p.sp" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q '^psvg: ' "$T/e" && [ ! -s "$T/o" ]; then ok "psvg $a: usage error, exit 2"; else notok "psvg $a (exit $rc)"; cat "$T/e"; fi
done
pfold "$T/p.txt" > "$T/p.folded" 2> /dev/null
psvg --heatmap=hosts -o "$T/none.svg" "$T/p.folded" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "the input has no timestamps.*pfleet get --by time" "$T/e" && [ ! -e "$T/none.svg" ]; then
	ok "folded text: no timestamps, says where they come from, exit 2, no file"; else notok "folded text (exit $rc)"; cat "$T/e"; fi
printf 'w 1 [000] 1.000000: 1 cpu-clock:\n\t1 main (/bin/x)\n\nw 1 [000] 90000.000000: 1 cpu-clock:\n\t1 main (/bin/x)\n\n' | pfold -b > "$T/long.sp"
psvg --heatmap=hosts --bucket 1 -o "$T/none.svg" "$T/long.sp" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "90000 buckets of 1 s for 1 hosts is too large a map: give a larger --bucket" "$T/e" && [ ! -e "$T/none.svg" ]; then
	ok "a map of 90000 buckets: refused in one sentence, exit 2, no file"; else notok "too large (exit $rc)"; cat "$T/e"; fi

# real programs nobody here wrote, as hosts: xz and gzip by pcollect, pmerge --tag
t6_probe || exit 0
head -c 3000000 /usr/bin/perl > "$T/blob" 2> /dev/null || head -c 3000000 /bin/bash > "$T/blob"
pcollect -q -F 499 -o "$T/xz.sp" -- xz -6 -T1 -c "$T/blob" > /dev/null 2> "$T/e" &&
	pcollect -q -F 499 -o "$T/gzip.sp" -- gzip -9 -c "$T/blob" > /dev/null 2>> "$T/e" || { notok "pcollect of xz and gzip"; cat "$T/e"; exit 0; }
pmerge --tag "$T/xz.sp" "$T/gzip.sp" > "$T/m.sp" 2> /dev/null
psvg --heatmap "$T/xz.sp" > "$T/auto.svg" 2> "$T/e"
grep -q '^var spheat={v:1,mode:"seconds",' "$T/auto.svg" && ok "--heatmap of a pcollect stream: the sub-second map (the default but for pfleet)" || notok "auto: seconds"
psvg --heatmap=hosts --bucket 1 --weight=samples "$T/m.sp" > "$T/m.svg" 2> "$T/e"; rc=$?
expect_rc "psvg --heatmap=hosts --bucket 1 of pmerge --tag xz gzip: exit 0" 0 $rc
# independently: sp-dump's samples, summed per root frame (the tag) and second
sp-dump "$T/m.sp" | awk '/^sample / {
	t = ""; v = ""; h = ""
	for (i = 2; i <= NF; i++) { if ($i ~ /^t=/) t = substr($i, 3); if ($i ~ /^values=/) { split(substr($i, 8), a, ","); v = a[1] } }
	s = $0; sub(/.* stack=/, "", s); sub(/ \[.*/, "", s); h = s
	sec = substr(t, 1, length(t) - 9) + 0
	w[h " " sec] += v
} END { for (k in w) print k, w[k] }' | LC_ALL=C sort > "$T/want"
cells "$T/m.svg" > "$T/got"
n=$(wc -l < "$T/want")
if [ "$n" -ge 2 ] && cmp -s "$T/want" "$T/got"; then ok "xz and gzip: $n cells (host x second), each = sp-dump's samples of that host and second"; else
	notok "xz and gzip cells ($n)"; diff "$T/want" "$T/got" | head -10; fi
grep -q 'rowNames:\["[^"]*gzip[^"]*","[^"]*xz[^"]*"\]' "$T/m.svg" && ok "rows: the two tags (gzip's, xz's)" || { notok "rows of pmerge --tag"; grep -o 'rowNames:[^]]*]' "$T/m.svg"; }
