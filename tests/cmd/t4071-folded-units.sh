#!/bin/bash
# Folded text has one value of unknown unit (issue 28 items 10, 11).  Mixed
# into a stream (pmerge mt.sp v1.folded) it adds to the stream's weight
# column (period) and never to its sample count, and the merge says so; read
# alone it is shown as a bare number (psvg, preport, pdiff --report), never
# "samples" unless psvg --countname says so; pfold perf.data | psvg against
# psvg perf.data on a recording made here; the README's pipelines between
# our commands keep the stream.
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1
THREADS=$SP_TOP/tests/data/t5-perf-threads.txt.gz DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
pfold -b "$THREADS" > mt.sp          # samples, period (cpu-clock: ns)
pfold "$DEMO" > v1.folded            # pfold's default: the period, as a bare number
sum() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$@"; }
col() { # STREAM N: the sum of value column N over sp-dump's samples
	sp-dump "$1" | awk -v n="$2" '/^sample / && match($0, / values=[^ ]*/) {
		split(substr($0, RSTART + 8, RLENGTH - 8), v, ","); s += v[n] } END { printf "%.0f\n", s }'
}

# ---- item 10: pmerge mt.sp v1.folded ----
pmerge mt.sp v1.folded > m.sp 2> e; rc=$?
expect_rc "pmerge mt.sp v1.folded: exit 0" 0 $rc
expect_grep "pmerge: the merge of unlike units is said (folded values into period, ns)" \
	"^pmerge: v1.folded: folded text has no unit: its values are added to column 'period' \(ns\) as they are; the other columns get 0 for its lines$" e
s0=$(col mt.sp 1) s1=$(col m.sp 1)
if [ -n "$s0" ] && [ "$s0" = "$s1" ] && [ "$s0" -gt 0 ]; then ok "pmerge: the samples column is the stream's alone ($s1)"
else notok "pmerge: samples column $s1, the stream's is $s0 (folded values went into it)"; fi
p0=$(col mt.sp 2) f=$(sum v1.folded) p1=$(col m.sp 2)
if [ "$p1" = $((p0 + f)) ]; then ok "pmerge: period = the stream's + the folded text's ($p0 + $f)"
else notok "pmerge: period $p1, want $p0 + $f"; fi
preport --weight samples m.sp > r 2> e
n3=$(echo "$s0" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
expect_grep "preport --weight samples of the merge: 'total $n3 samples'" "^total $n3 samples, " r
pspeedscope m.sp > m.json 2> e
if grep -q '"unit":"nanoseconds"' m.json && ! grep -q '"unit":"none"' m.json; then ok "pspeedscope of the merge: nanoseconds for every thread"
else notok "pspeedscope of the merge"; grep -o '"unit":"[^"]*"' m.json | sort | uniq -c | sed 's/^/  /'; fi
# the other order: the folded text's column, the stream's period into it, said
pmerge v1.folded mt.sp > m2 2> e; rc=$?
expect_rc "pmerge v1.folded mt.sp: exit 0" 0 $rc
expect_grep "pmerge folded then stream: said too" "^pmerge: mt.sp: its column 'period' \(ns\) is added to the unitless values of the folded text before it; its other columns are not read$" e
if [ "$(sum m2)" = $((p0 + f)) ]; then ok "pmerge folded then stream: the sum is the period's + the folded text's"; else notok "pmerge folded then stream: $(sum m2), want $((p0 + f))"; fi
# folded with folded: nothing to say
pmerge v1.folded v1.folded > m3 2> e
if [ ! -s e ] && [ "$(sum m3)" = $((2 * f)) ]; then ok "pmerge of two folded files: no note, the sum doubles"; else notok "pmerge folded folded"; cat e; fi

# speedscope JSON (weights in ns) into the stream: its period, not its count
pspeedscope mt.sp > mt.json 2> /dev/null
pmerge mt.sp mt.json > mj.sp 2> /dev/null
if [ "$(col mj.sp 1)" = "$s0" ] && [ "$(col mj.sp 2)" = $((2 * p0)) ]; then ok "pmerge mt.sp its speedscope JSON: samples the stream's ($s0), period doubled"
else notok "pmerge mt.sp mt.json: samples $(col mj.sp 1) (want $s0), period $(col mj.sp 2) (want $((2 * p0)))"; fi

# folded text, then perf script text: its period fills the folded column
# (not its sample count), folded by one thread or several
zcat "$DEMO" > demo.txt
for j in 1 2; do
	pfold -j$j v1.folded demo.txt > o 2> e
	if [ "$(sum o)" = $((2 * f)) ]; then ok "pfold -j$j v1.folded perf.txt: the perf text's period adds to the folded values ($((2 * f)))"
	else notok "pfold -j$j v1.folded perf.txt: $(sum o), want $((2 * f))"; fi
done

# two streams whose period columns differ in unit (cpu-clock ns; the same
# recording's text with its event renamed cycles: events) are said to
pfold -b demo.txt > ns.sp; sed 's/ cpu-clock:/ cycles:/' demo.txt | pfold -b > ev.sp
pmerge ns.sp ev.sp > o 2> e; rc=$?
if [ $rc = 0 ] && grep -qx "pmerge: ev.sp: its column 'period' (events) is added to the earlier input's (ns) as it is" e; then
	ok "pmerge of unlike periods (ns, events): said"; else notok "pmerge ns.sp ev.sp (exit $rc)"; cat e; fi
pmerge ns.sp ns.sp > o 2> e
if [ ! -s e ]; then ok "pmerge of like streams: nothing said"; else notok "pmerge ns.sp ns.sp said something"; cat e; fi

# ---- item 11: a value of unknown unit is never called samples ----
preport v1.folded > r 2> e
if grep -qE '^total [0-9,]+, [0-9]+ functions$' r; then ok "preport of folded text: a bare total ($(head -1 r))"; else notok "preport of folded text: '$(head -1 r)'"; fi
pdiff --report v1.folded v1.folded > r 2> e
if grep -qE '^a: [0-9,]+, b: [0-9,]+; ' r; then ok "pdiff --report of folded text: bare totals"; else notok "pdiff --report folded: '$(head -1 r)'"; fi
pdiff v1.folded v1.folded | psvg > d.svg 2> e
expect_grep "psvg of a folded diff: no unit" 'unit:""' d.svg
psvg v1.folded > o.svg 2> e
expect_grep "psvg of folded text: no unit" 'unit:""' o.svg
psvg --countname=ns v1.folded > o.svg 2> e
expect_grep "psvg --countname=ns of folded text: time (as flamegraph.pl's --countname names it)" 'unit:"ns"' o.svg
pfold -b v1.folded | sp-dump > d
if head -2 d | tr '\n' ' ' | grep -qx 'values value units  '; then ok "the stream of folded text: one column 'value', unit unknown"; else notok "stream of folded text"; head -2 d; fi
pfold -b v1.folded | psvg > o.svg 2> e
expect_grep "... and read back: still no unit" 'unit:""' o.svg

# pfold perf.data | psvg against psvg perf.data, on a recording made here
if gcc -O2 -g -pthread -o burn "$SP_TOP/tests/progs/burn.c" 2> cerr &&
	perf record -e cpu-clock -F 999 -g -o burn.data ./burn > /dev/null 2> perr && [ -s burn.data ]; then
	psvg burn.data > a.svg 2> e
	expect_grep "psvg perf.data: time (ms/s)" 'unit:"ns"' a.svg
	pfold burn.data 2> /dev/null | psvg > b.svg 2> e
	expect_grep "pfold perf.data | psvg: no unit, not 'samples'" 'unit:""' b.svg
	pfold -b burn.data 2> /dev/null | psvg > c.svg 2> e
	expect_grep "pfold -b perf.data | psvg: the stream keeps the time" 'unit:"ns"' c.svg
	pfold burn.data > b.folded 2> /dev/null
	pmerge v1.folded burn.data > o 2> e
	if [ "$(sum o)" = $((f + $(sum b.folded))) ]; then ok "pmerge v1.folded perf.data: its period adds to the folded values"
	else notok "pmerge v1.folded perf.data: $(sum o), want $f + $(sum b.folded)"; fi
else
	skip "perf.data recorded here" "$(tail -1 cerr perr 2> /dev/null | tail -1)"
fi

# the README's pipelines (its indented command lines) from our collector
# or perf.data into a renderer do not pass through folded text (which
# would drop the unit)
grep -nE '^    [^#]*((pcollect|perf\.data|pfilter)[^#]*\| *pfold *\| *(psvg|preport|pspeedscope|plive)|pfold +perf\.data *\| *(psvg|preport))' \
	"$SP_TOP/README.md" > lint
if [ ! -s lint ]; then ok "README: collector and perf.data pipelines keep the stream"; else notok "README pipelines through folded text"; cat lint; fi
