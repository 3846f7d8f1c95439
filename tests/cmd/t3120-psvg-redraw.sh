#!/bin/bash
# psvg (issue 13): the heap prepared for a large input changes no byte (file,
# pipe and a small file of the same stacks agree), and flame.js draws each
# view after a walk through others exactly as a fresh page draws it
# (tests/browser/redraw.test.js, headless Chromium).
. "$(dirname "$0")/../lib.sh"

# ~3 MB of folded text: psvg prepares its heap (sp_heap_prepare) for a file
# this large (>= 2 MB) and for any pipe.
awk 'BEGIN { s = 11; for (i = 0; i < 40000; i++) { s = (s * 16807) % 2147483647; d = 2 + s % 14; l = "main";
	for (j = 0; j < d; j++) { s = (s * 16807) % 2147483647; l = l ";fn" (s % 23) "_" (j % 5) } print l, 1 + s % 90 } }' > "$T/big.folded"
size=$(wc -c < "$T/big.folded")
if [ "$size" -lt 2200000 ]; then
	notok "psvg heap: the input is only $size bytes, too small to prepare the heap"
fi
"$SP_BIN/pfold" "$T/big.folded" > "$T/small.folded"   # same stacks, fewer bytes (summed)
"$SP_BIN/psvg" "$T/big.folded" > "$T/file.svg"
"$SP_BIN/psvg" < "$T/big.folded" > "$T/pipe.svg"
cat "$T/big.folded" | "$SP_BIN/psvg" > "$T/cat.svg"
"$SP_BIN/psvg" "$T/small.folded" > "$T/small.svg"
expect_eq "psvg heap: a large file and the same file from stdin give the same SVG" "$T/file.svg" "$T/pipe.svg"
expect_eq "psvg heap: ... and from a pipe" "$T/file.svg" "$T/cat.svg"
expect_eq "psvg heap: ... and its stacks summed in a small file (heap left alone)" "$T/file.svg" "$T/small.svg"
if grep -q '^n:[0-9]' "$T/file.svg" && [ "$(grep -o '^n:[0-9]*' "$T/file.svg" | cut -d: -f2)" -gt 10000 ]; then
	ok "psvg heap: the large graph has all its frames"
else
	notok "psvg heap: the large graph has all its frames"
fi

B=$SP_TOP/tests/browser
browser_ready "psvg redraw" || exit 0
(cd "$B" && timeout 300 node redraw.test.js "$T/file.svg") 2>&1
[ $? = 124 ] && notok "psvg redraw: the browser run timed out"
exit 0
