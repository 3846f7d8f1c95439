#!/bin/bash
# psvg's frame tree (issue 13): built from the profile's own stack nodes when
# every frame has a name of its own, else by merging frames by display name;
# both must give the graph the input describes.  The SVG's frame data is
# decoded back into folded stacks by t3000's reader.
. "$(dirname "$0")/../lib.sh"

if ! command -v python3 > /dev/null; then
	skip "psvg tree" "python3 is needed to decode the SVG's data (apt-get install python3)"
	exit 0
fi
# t3000's decoder, taken from that file so there is one copy of it
sed -n "/^cat > \"\$T\/chk.py\" <<'PY'\$/,/^PY\$/p" "$SP_TOP/tests/cmd/t3000-psvg.sh" | sed '1d;$d' > "$T/chk.py"
if ! grep -q "def folded" "$T/chk.py"; then
	notok "psvg tree: t3000's SVG decoder not found"
	exit 0
fi
back() { python3 "$T/chk.py" folded "$1"; }

# Two frames of one display name ("f_[w]" is shown as "f") merge.
printf 'a;f_[w] 1\na;f 2\na;g 4\nb 1\n' > "$T/merge.folded"
"$SP_BIN/psvg" "$T/merge.folded" > "$T/merge.svg"
printf 'a;f 3\na;g 4\nb 1\n' > "$T/merge.want"
back "$T/merge.svg" > "$T/merge.got"
expect_eq "frames of one display name merge" "$T/merge.want" "$T/merge.got"
expect_eq "merged graph: 5 frames" <(echo 5.0) <(python3 "$T/chk.py" get "$T/merge.svg" n)

# Input order does not change a byte of the SVG (lines sorted, reversed, shuffled).
awk 'BEGIN { s = 7; for (i = 0; i < 3000; i++) { s = (s * 16807) % 2147483647; d = 1 + s % 9; l = "main";
	for (j = 0; j < d; j++) { s = (s * 16807) % 2147483647; l = l ";fn" (s % 13) } print l, 1 + s % 50 } }' > "$T/r.folded"
sort "$T/r.folded" > "$T/sorted.folded"
sort -r "$T/r.folded" > "$T/rev.folded"
"$SP_BIN/psvg" "$T/sorted.folded" > "$T/sorted.svg"
"$SP_BIN/psvg" "$T/rev.folded" > "$T/rev.svg"
"$SP_BIN/psvg" "$T/r.folded" > "$T/r.svg"
expect_eq "reversed input, same SVG" "$T/sorted.svg" "$T/rev.svg"
expect_eq "shuffled input, same SVG" "$T/sorted.svg" "$T/r.svg"
"$SP_BIN/pfold" "$T/r.folded" > "$T/r.want"
back "$T/r.svg" | LC_ALL=C sort > "$T/r.got"
LC_ALL=C sort -o "$T/r.want" "$T/r.want"
expect_eq "repeated stacks summed as pfold sums them" "$T/r.want" "$T/r.got"

# Samples with threads (a root frame per thread: the merging path) and
# without (--no-comm: the profile's nodes) both give pfold's stacks.
for opt in "" --no-comm; do
	"$SP_BIN/pfold" $opt "$SP_TOP/tests/data/t5-perf-threads.txt.gz" | LC_ALL=C sort > "$T/th.want"
	"$SP_BIN/psvg" $opt "$SP_TOP/tests/data/t5-perf-threads.txt.gz" > "$T/th.svg"
	back "$T/th.svg" | LC_ALL=C sort > "$T/th.got"
	expect_eq "threaded samples ${opt:-with comm roots}: pfold's stacks" "$T/th.want" "$T/th.got"
done

# A stack of weight 0 keeps its frames; fractions pick a scale, integers none.
printf 'a;b 0\na 3\n' > "$T/zero.folded"
"$SP_BIN/psvg" "$T/zero.folded" > "$T/zero.svg"
expect_eq "a zero-weight stack keeps its frame" <(echo 3.0) <(python3 "$T/chk.py" get "$T/zero.svg" n)
expect_eq "integer values: scale 1" <(echo 1.0) <(python3 "$T/chk.py" get "$T/zero.svg" scale)
printf 'a 0.5\nb 1\n' > "$T/frac.folded"
"$SP_BIN/psvg" "$T/frac.folded" > "$T/frac.svg"
printf 'a 0.5\nb 1\n' > "$T/frac.want"
back "$T/frac.svg" > "$T/frac.got"
expect_eq "fractional values survive" "$T/frac.want" "$T/frac.got"
