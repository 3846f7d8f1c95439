#!/bin/bash
# The folded reader's whole-line cache turns itself off when lines do not
# repeat (after 8192 lines with under 1/16 hits): the sums stay exact when
# lines repeat after that point, and psvg/pfold agree with awk's sums.
. "$(dirname "$0")/../lib.sh"

# 12000 distinct stacks sharing prefixes, then 3000 of them again, shuffled
awk 'BEGIN { for (i = 0; i < 12000; i++) printf "main;f%d;g%d;h%d %d\n", i % 37, i % 401, i, i % 7 + 1
	     for (i = 0; i < 3000; i++) printf "main;f%d;g%d;h%d %d\n", (i * 7) % 37, (i * 7) % 401, i * 7 % 12000, 5 }' > "$T/in.folded"
# the reference: awk's sum per stack, sorted by bytes
awk '{ n = $NF; k = $0; sub(/ [0-9]+$/, "", k); s[k] += n } END { for (k in s) print k " " s[k] }' "$T/in.folded" |
	LC_ALL=C sort > "$T/want"
pfold "$T/in.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/e" ] && cmp -s "$T/want" "$T/o"; then
	ok "15000 folded lines (12000 distinct, then repeats past the cache's cut-off) sum exactly"
else
	notok "folded sums past the line cache's cut-off (exit $rc)"; diff "$T/want" "$T/o" | head -5 | sed 's/^/  /'
fi
tac "$T/in.folded" | pfold > "$T/o2"
expect_eq "the same in reverse order" "$T/want" "$T/o2"
psvg "$T/in.folded" > "$T/a.svg" && psvg "$T/want" > "$T/b.svg"
if [ -s "$T/a.svg" ] && cmp -s "$T/a.svg" "$T/b.svg"; then ok "psvg draws the same graph from the raw and the summed lines"
else notok "psvg differs between raw and summed folded input"; fi
