#!/bin/bash
# pdiff: the peers' diff-folded fixtures (as line sets), two-value output
# of folded and binary inputs, --report, --exit-code, errors.
. "$(dirname "$0")/../lib.sh"

D=$CONF/inferno
if [ ! -d "$D/diff-default" ]; then skip pdiff "fixtures not found at $CONF"; exit 0; fi

pdiff only-one > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'two inputs' "$T/e" && grep -q '^usage: pdiff' "$T/e"; then ok "one input without --split: usage error, exit 2"; else notok "one input (exit $rc)"; fi
pdiff "$T/missing" "$D/diff-default/input2.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pdiff: $T/missing: No such file" "$T/e" && [ ! -s "$T/o" ]; then ok "missing input: error, exit 2, no output"; else notok "missing input (exit $rc)"; fi

# conformance: compare as sets of lines (the peers print in hash order)
for c in diff-default diff-normalize diff-strip-hex; do
	args=$(sed 's/--normalize/-n/; s/--strip-hex/-s/' "$D/$c/args")
	pdiff $args "$D/$c/input1.folded" "$D/$c/input2.folded" 2> "$T/e" | sort > "$T/o"
	sort "$D/$c/expected.folded" > "$T/w"
	expect_eq "conformance inferno/$c (line set)" "$T/w" "$T/o"
done
pdiff --normalize --strip-hex "$D/diff-default/input1.folded" "$D/diff-default/input2.folded" > /dev/null 2>&1 && ok "the peers' long options --normalize, --strip-hex" || notok "long options"
# diff-fractionals: inferno truncates fractional counts, difffolded.pl keeps
# them; so do we (as pfold does).  Same stacks, counts kept.
c=diff-fractionals
pdiff "$D/$c/input1.folded" "$D/$c/input2.folded" 2> "$T/e" > "$T/o"
sed 's/ [0-9.]* [0-9.]*$//' "$D/$c/expected.folded" | sort > "$T/w"; sed 's/ [0-9.]* [0-9.]*$//' "$T/o" | sort > "$T/o2"
expect_eq "diff-fractionals: the same stacks as inferno" "$T/w" "$T/o2"
expect_grep "diff-fractionals: fractional counts kept (as difffolded.pl)" '^dd;\[unknown\];read 14\.23439832487228[0-9]* 13$' "$T/o"
# diff-bad-line: one clear diagnostic naming FILE:LINE, the rest compared
c=diff-bad-line
pdiff "$D/$c/input1.folded" "$D/$c/input2.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "^pdiff: $D/$c/input1.folded:3: " "$T/e")" = 1 ] && [ -s "$T/o" ]; then ok "diff-bad-line: one warning with FILE:LINE, exit 0"; else notok "diff-bad-line (exit $rc)"; cat "$T/e"; fi

# two-value output is what pfold and psvg read; a + b sum to the inputs
A=$D/diff-default/input1.folded B=$D/diff-default/input2.folded
pdiff "$A" "$B" > "$T/ab"
sa=$(awk '{s+=$(NF-1)} END {print s}' "$T/ab"); sb=$(awk '{s+=$NF} END {print s}' "$T/ab")
ta=$(awk '{s+=$NF} END {print s}' "$A"); tb=$(awk '{s+=$NF} END {print s}' "$B")
if [ "$sa" = "$ta" ] && [ "$sb" = "$tb" ]; then ok "column totals equal the input totals ($sa, $sb)"; else notok "totals $sa/$sb, want $ta/$tb"; fi
pfold "$T/ab" > "$T/o"; sort "$T/ab" > "$T/w"
expect_eq "two-value output reads back through pfold unchanged" "$T/w" "$T/o"
pdiff "$A" "$A" | awk '$(NF-1) != $NF' > "$T/o"
if [ ! -s "$T/o" ]; then ok "a profile against itself: a == b on every line"; else notok "self-diff differs"; fi

# binary in, two-value binary out
DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
if pfold -b "$DEMO" > "$T/d.sp" 2>/dev/null; then
	pfold "$DEMO" > "$T/d.folded" 2>/dev/null
	pfilter -v checksum "$T/d.sp" > "$T/d2.sp"
	pfilter -v checksum "$T/d.folded" > "$T/d2.folded"
	pdiff "$T/d.sp" "$T/d2.sp" > "$T/o.sp"
	if sp-dump "$T/o.sp" | head -1 | grep -q '^values a,b'; then ok "binary inputs: two-value binary output (values a,b)"; else notok "binary diff output"; sp-dump "$T/o.sp" | head -2; fi
	pfold "$T/o.sp" > "$T/o"; pdiff "$T/d.folded" "$T/d2.folded" > "$T/w"
	expect_eq "binary diff folds to the folded diff" "$T/w" "$T/o"
	grep -c ';checksum [0-9]* 0$' "$T/o" > "$T/n"
	if [ "$(cat "$T/n")" -gt 0 ]; then ok "dropped stacks show as 'a 0'"; else notok "no 'a 0' lines"; fi
	# --report
	pdiff --report "$T/d.folded" "$T/d2.folded" > "$T/r"
	# folded text has no unit: bare totals, never called samples
	expect_grep "--report: header with both totals (folded: no unit)" '^a: [0-9,]+, b: [0-9,]+;' "$T/r"
	sed -n 3p "$T/r" > "$T/first"
	expect_grep "--report: checksum changed most, self share to 0" '^ *[0-9.]+% +0\.00% +-[0-9.]+ .* checksum$' "$T/first"
	pdiff --report=tsv --top 3 "$T/d.folded" "$T/d2.folded" > "$T/r"
	if [ "$(wc -l < "$T/r")" = 4 ] && head -1 "$T/r" | grep -q '^self_a_pct	'; then ok "--report=tsv --top 3: header and 3 rows"; else notok "--report=tsv"; cat "$T/r"; fi
	pdiff --report=json "$T/d.folded" "$T/d2.folded" > "$T/r"
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["functions"][0]["name"]=="checksum"' "$T/r" 2>/dev/null; then ok "--report=json parses, checksum first"; else
		if command -v python3 >/dev/null; then notok "--report=json"; head -c 300 "$T/r"; else skip "--report=json" "python3 missing"; fi; fi
	# --exit-code
	pdiff --exit-code "$T/d.folded" "$T/d.folded" > /dev/null; rc=$?
	expect_rc "--exit-code: same profile, exit 0" 0 $rc
	pdiff --exit-code "$T/d.folded" "$T/d2.folded" > /dev/null; rc=$?
	expect_rc "--exit-code: different profiles, exit 1" 1 $rc
	pdiff --exit-code --threshold 90 "$T/d.folded" "$T/d2.folded" > /dev/null; rc=$?
	expect_rc "--exit-code --threshold 90: within, exit 0" 0 $rc
	pdiff --exit-code "$T/d.folded" "$T/missing" > /dev/null 2>&1; rc=$?
	expect_rc "--exit-code: trouble is exit 2" 2 $rc
else
	skip "pdiff binary" "pfold -b failed"
fi
printf 'main;a;b 1 2\nmain;a;c 3 4\nmain;d 0 5\n' > "$T/two.folded"
pdiff "$T/two.folded" "$A" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'already a two-value' "$T/e"; then ok "a two-value input is refused, exit 2"; else notok "two-value input (exit $rc)"; cat "$T/e"; fi
pdiff --split f "$A" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'no timestamps' "$T/e"; then ok "--split on folded text: no timestamps, exit 2"; else notok "--split on folded (exit $rc)"; cat "$T/e"; fi
