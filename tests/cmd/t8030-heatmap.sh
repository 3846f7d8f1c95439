#!/bin/bash
# psvg --heatmap: flamescope's sub-second heat map in one offline SVG.  A
# recording by pcollect of a program with a CPU burst every 2 s, in headless
# Chromium (tests/browser/heatmap.test.js): hot cells in the burst rows, a
# selected range's flame graph holds exactly its samples, zoom, search, no
# script errors.  Here too: folded text is refused in one sentence, hostile
# names stay data, the file is well-formed and refers to nothing outside.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

# hostile names in a timestamped input (perf script text, as a stream)
printf 'prog 100 [000] 1.000000: 1 cpu-clock:\n\t1000 <script>alert(1)</script> (/bin/x)\n\t2000 a]]>b\377\376 (/bin/x)\n\t3000 main (/bin/x)\n\nprog 100 [000] 1.500000: 1 cpu-clock:\n\t3000 main (/bin/x)\n\n' > "$T/hostile.txt"
pfold -b "$T/hostile.txt" > "$T/hostile.sp" 2> "$T/e"
psvg --heatmap "$T/hostile.sp" > "$T/h.svg" 2> "$T/e"; rc=$?
expect_rc "psvg --heatmap: exit 0" 0 $rc
if command -v xmllint > /dev/null; then
	if xmllint --noout "$T/h.svg" 2> "$T/x"; then ok "the SVG is well-formed XML"; else notok "well-formed"; head -3 "$T/x"; fi
else skip "well-formed" "xmllint is not installed (apt-get install libxml2-utils)"; fi
n=$(grep -c '<script' "$T/h.svg")
if [ "$n" = 2 ] && grep -q '\\u003cscript\\u003ealert' "$T/h.svg" && grep -q 'a]]\\u003eb\\ufffd\\ufffd' "$T/h.svg"; then
	ok "hostile names are escaped data (no markup, no CDATA end, invalid UTF-8 as U+FFFD)"; else notok "hostile names ($n script elements)"; fi
if ! grep -v 'xmlns' "$T/h.svg" | grep -qE '(href|src)="?https?:'; then ok "standalone: nothing loaded from outside"; else notok "standalone"; fi
grep -q '<rect x="[0-9.]*" y="[0-9.]*" width="[0-9.]*" height="[0-9.]*" fill="#ff' "$T/h.svg" && ok "cells are drawn in the file (visible without the script)" || notok "cells in the file"
psvg --heatmap --slices 10 "$T/hostile.sp" > "$T/h10.svg" 2>&1
grep -q 'rows:10,' "$T/h10.svg" && [ "$(grep -c '^<rect x=.* fill="#ff' "$T/h10.svg")" = 10 ] && ok "--slices 10: 10 rows (1 column)" || notok "--slices 10"

# folded text: one sentence, exit 2, nothing written
pfold "$T/hostile.txt" > "$T/h.folded" 2>/dev/null
psvg --heatmap -o "$T/none.svg" "$T/h.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$T/e")" = 1 ] && grep -q "^psvg: $T/h.folded: the input has no timestamps: the heat map" "$T/e" && [ ! -e "$T/none.svg" ]; then
	ok "folded text: one sentence, exit 2, no file"; else notok "folded text (exit $rc)"; cat "$T/e"; fi
psvg --heatmap --flamechart "$T/hostile.sp" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "--heatmap --flamechart: usage error" 2 $rc

# the browser: a real recording
B=$SP_TOP/tests/browser
if ! command -v node > /dev/null; then skip "heatmap browser tests" "node is not installed (make deps runs tests/browser/setup.sh)"; exit 0; fi
if [ ! -x /usr/bin/chromium ]; then skip "heatmap browser tests" "/usr/bin/chromium is not installed (make deps)"; exit 0; fi
if [ ! -d "$B/node_modules/playwright-core" ]; then skip "heatmap browser tests" "playwright-core is not installed (make deps runs tests/browser/setup.sh: npm ci)"; exit 0; fi
t6_build phases t80-phases.c -O2 -g || exit 0
t6_probe || exit 0
pcollect -q -F 499 -o "$T/bursts.sp" -- "$T/phases" bursts 7 > /dev/null 2> "$T/e"; rc=$?
expect_rc "pcollect of the burst program: exit 0" 0 $rc
(cd "$B" && timeout 300 node heatmap.test.js "$SP_BIN/psvg" "$SP_BIN/sp-dump" "$T/bursts.sp" ${SP_HEATMAP_PNG:+"$SP_HEATMAP_PNG"}) 2>&1
rc=$?
[ $rc = 124 ] && notok "heatmap browser tests timed out"
exit 0
