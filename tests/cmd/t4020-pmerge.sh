#!/bin/bash
# pmerge: sums of folded and binary inputs (mixed), --tag by file name and
# by the stream's host metadata, errors.
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
D=$CONF/inferno/diff-default
if [ ! -d "$D" ]; then skip pmerge "fixtures not found at $CONF"; exit 0; fi
A=$D/input1.folded B=$D/input2.folded

pmerge > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'no input files' "$T/e"; then ok "no inputs: usage error, exit 2"; else notok "no inputs (exit $rc)"; fi
pmerge "$A" "$T/missing" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pmerge: $T/missing: No such file" "$T/e" && [ ! -s "$T/o" ]; then ok "missing input: error, exit 2, no output"; else notok "missing input (exit $rc)"; fi

# the sum equals folding both together
pmerge "$A" "$B" > "$T/o"; pfold "$A" "$B" > "$T/w"
expect_eq "folded inputs: the sum, as pfold of both" "$T/w" "$T/o"
gzip -c "$B" > "$T/b.gz"
pmerge "$A" "$T/b.gz" > "$T/o"; expect_eq "gzip input" "$T/w" "$T/o"
pmerge --tag "$A" "$B" > "$T/o"
{ sed "s|^|$A;|" "$A"; sed "s|^|$B;|" "$B"; } | pfold > "$T/w"
expect_eq "--tag: a root frame per input (file name)" "$T/w" "$T/o"

if pfold -b "$DEMO" > "$T/d.sp" 2>/dev/null; then
	pfold "$DEMO" > "$T/d.folded" 2>/dev/null
	pmerge "$T/d.sp" "$T/d.sp" > "$T/o.sp"
	if sp-dump "$T/o.sp" > /dev/null 2>&1 && head -c4 "$T/o.sp" | od -c | grep -q 'S   P   S'; then ok "binary inputs: binary output"; else notok "binary output"; fi
	pfold "$T/o.sp" > "$T/o"; pfold "$T/d.folded" "$T/d.folded" > "$T/w"
	expect_eq "binary + binary: the sum" "$T/w" "$T/o"
	n1=$(sp-dump "$T/d.sp" | grep -c '^sample'); n2=$(sp-dump "$T/o.sp" | grep -c '^sample')
	if [ "$n2" = $((2 * n1)) ]; then ok "binary: every sample kept ($n2), timestamps and threads with them"; else notok "binary: $n2 samples, want $((2 * n1))"; fi
	pmerge "$T/d.sp" "$T/d.folded" | pfold > "$T/o"
	expect_eq "mixed binary and folded inputs" "$T/w" "$T/o"
	pmerge --tag --folded "$T/d.sp" "$T/d.folded" > "$T/o"
	if grep -q "^$T/d.sp;worker-N;start_thread" "$T/o" || grep -q "^worker-N;$T/d.sp;" "$T/o"; then ok "--tag on a binary input: its file name when it has no host metadata"; else notok "--tag binary"; head -2 "$T/o"; fi
	if grep -q "^$T/d.folded;worker-N;start_thread" "$T/o"; then ok "--tag: folded input tagged by file name"; else notok "--tag folded"; fi
else
	skip "pmerge binary" "pfold -b failed"
fi
