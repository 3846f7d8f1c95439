#!/bin/bash
# One meaning for --weight (issue 28 item 5): a value column's name in psvg,
# preport, pspeedscope, plive, pfold, pfilter (--min-share) and pdiff, with
# "count" for "samples"; an unknown name is an error naming the columns the
# input has (exit 2) and never destroys a file the user had.  Input: a real
# perf recording of a 3-thread program (tests/data/t5-perf-threads.txt.gz,
# cpu-clock) as a stream: columns samples and period (ns).
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1
pfold -b "$SP_TOP/tests/data/t5-perf-threads.txt.gz" > mt.sp
pfold "$SP_TOP/tests/data/t5-perf-threads.txt.gz" > mt.folded
nsamp=$(sp-dump mt.sp | grep -c '^sample ')
cols='samples, period'

# ---- unknown names: exit 2, the columns listed, no output ----
bad() { # NAME CMD... (the input is the last argument)
	local name=$1; shift
	"$@" > o 2> e; local rc=$?
	if [ $rc = 2 ] && grep -q -- "--weight=bogus: the input has no such value column (its columns: $cols)" e; then
		ok "$name --weight=bogus: exit 2, names the columns ($cols)"
	else notok "$name --weight=bogus (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
}
bad psvg psvg --weight=bogus mt.sp
bad preport preport --weight=bogus mt.sp
bad pspeedscope pspeedscope --weight=bogus mt.sp
bad plive plive --once --speed 0 --weight=bogus mt.sp
bad pfold pfold --weight=bogus mt.sp
bad pfilter pfilter --min-share=1 --weight=bogus mt.sp
bad pdiff pdiff --weight=bogus mt.sp mt.sp
bad "pdiff --report" pdiff --report --weight=bogus mt.sp mt.sp
cols=value
bad "psvg (folded input)" psvg --weight=bogus mt.folded
# a difference of two profiles (columns a and b, both drawn or kept): the
# name is still checked, with the same error (psvg and pfilter ignored it)
pdiff mt.sp mt.sp > md.sp 2> /dev/null
cols='a, b'
bad "psvg (pdiff's output)" psvg --weight=bogus md.sp
bad "pfilter (pdiff's output)" pfilter --min-share=1 --weight=bogus md.sp
bad "pfold (pdiff's output)" pfold --weight=bogus md.sp
bad "preport (pdiff's output)" preport --weight=bogus md.sp
# pfold --value: the same function, its own option named
for in in mt.sp md.sp; do
	pfold --value=bogus $in > o 2> e; rc=$?
	c='samples, period'; [ $in = md.sp ] && c='a, b'
	if [ $rc = 2 ] && grep -q -- "^pfold: --value=bogus: the input has no such value column (its columns: $c)" e; then
		ok "pfold --value=bogus $in: exit 2, names the columns ($c)"
	else notok "pfold --value=bogus $in (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
done
# an index: the column at that place; past the last, the same error
pfold --weight=0 mt.sp > a 2> e; pfold --weight=samples mt.sp > b
expect_eq "pfold --weight=0 = --weight=samples (index 0 is the first column)" a b
preport --weight=1 mt.sp > a 2> e; preport --weight=period mt.sp > b
expect_eq "preport --weight=1 = --weight=period" a b
cols='samples, period'
psvg --weight=2 mt.sp > o 2> e; rc=$?
if [ $rc = 2 ] && grep -q -- "--weight=2: the input has no such value column (its columns: $cols)" e; then
	ok "psvg --weight=2 (past the last column): exit 2, names the columns"
else notok "psvg --weight=2 (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
# pspeedscope's old words: auto is documented, period a column of the stream
# but not of folded text
pspeedscope --weight=period mt.folded > o 2> e; rc=$?
if [ $rc = 2 ] && grep -q -- "--weight=period: the input has no such value column (its columns: value)" e; then
	ok "pspeedscope --weight=period of folded text: no such column, exit 2"
else notok "pspeedscope --weight=period of folded text (exit $rc)"; cat e; fi
pfilter --weight=samples mt.sp > o 2> e; rc=$?
if [ $rc = 2 ] && grep -q -- '--weight is for --min-share' e; then ok "pfilter --weight without --min-share: usage error"; else notok "pfilter --weight alone (exit $rc)"; cat e; fi
echo keep > old.svg
psvg --weight=bogus -o old.svg mt.sp 2> /dev/null
if [ "$(cat old.svg)" = keep ]; then ok "psvg -o FILE --weight=bogus: FILE left as it was"; else notok "psvg --weight=bogus replaced FILE"; fi

# ---- names that exist: the column drawn/counted ----
preport --weight=samples mt.sp > r 2> e
n3=$(echo "$nsamp" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
expect_grep "preport --weight=samples: 'total $n3 samples' (sp-dump counts $nsamp samples)" "^total $n3 samples, " r
preport --weight=count mt.sp > r2 2> e
expect_eq "preport --weight=count = --weight=samples" r r2
preport mt.sp > r 2> e; preport --weight=period mt.sp > r2 2> e
expect_eq "preport: period is the default" r r2
expect_grep "preport --weight=period: time" '^total [0-9.]+ (s|ms), ' r2
pfold --weight=count mt.sp > a; pfold --weight=samples mt.sp > b
expect_eq "pfold --weight=count = --weight=samples" a b
if [ "$(awk '{ s += $NF } END { print s }' a)" = "$nsamp" ]; then ok "pfold --weight=samples: the counts add up to $nsamp"; else notok "pfold --weight=samples: $(awk '{ s += $NF } END { print s }' a), want $nsamp"; fi
psvg --weight=count mt.sp > o.svg 2> e
expect_grep "psvg --weight=count: samples" 'unit:"samples"' o.svg
psvg mt.sp > o.svg 2> e
expect_grep "psvg (default period of cpu-clock): time" 'unit:"ns"' o.svg
pspeedscope --weight=samples mt.sp > o.json 2> e
if grep -q '"unit":"none"' o.json && ! grep -q '"unit":"nanoseconds"' o.json; then ok "pspeedscope --weight=samples: unit none"; else notok "pspeedscope --weight=samples"; grep -o '"unit":"[^"]*"' o.json | sort | uniq -c; fi
pspeedscope --weight=count mt.sp > o2.json 2> e
expect_eq "pspeedscope --weight=count = --weight=samples (documented alias)" o.json o2.json
pspeedscope --weight=period mt.sp > o.json 2> e
expect_grep "pspeedscope --weight=period: nanoseconds" '"unit":"nanoseconds"' o.json
pspeedscope mt.sp > o.json; pspeedscope --weight=auto mt.sp > o2.json
expect_eq "pspeedscope --weight=auto is the default" o.json o2.json
plive --once --speed 0 --weight=samples mt.sp > p 2> e
expect_grep "plive --weight=samples: counts (Own/Total)" '^ +%Own +%Total +Own +Total  ' p
plive --once --speed 0 mt.sp > p 2> e
expect_grep "plive (default period): OwnTime/TotalTime" '^ +%Own +%Total +OwnTime +TotalTime  ' p
pdiff --report --weight=samples mt.sp mt.sp > r 2> e
expect_grep "pdiff --report --weight=samples: a and b in samples" "^a: $n3 samples, b: $n3 samples;" r
pdiff --report mt.sp mt.sp > r 2> e
expect_grep "pdiff --report (default period): a and b in s/ms" '^a: [0-9.]+ (s|ms), b: [0-9.]+ (s|ms);' r
# pfilter --min-share by samples or by period: the same threshold on another column
pfilter --min-share=2 --weight=samples mt.sp | pfold --weight=samples > a 2> e; rc=$?
expect_rc "pfilter --min-share=2 --weight=samples: exit 0" 0 $rc
tot=$nsamp
if awk -v t="$tot" '{ if ($NF * 100 < 2 * t) bad = 1 } END { exit bad }' a && [ -s a ]; then ok "pfilter --min-share=2 --weight=samples: every stack kept has >= 2 % of the samples"
else notok "pfilter --min-share --weight=samples kept a stack under 2 %"; fi

# ---- a program no one here wrote: xz (pcollect), its stream and its folded text ----
head -c 2000000 /dev/urandom > rnd
if ! command -v xz > /dev/null; then skip "xz under pcollect" "xz is not installed"
elif ! pcollect -q -F 499 -o xz.sp -- xz -6 -T1 -c rnd > /dev/null 2> perr || [ ! -s xz.sp ]; then
	skip "xz under pcollect" "pcollect could not sample here: $(tail -1 perr)"
else
	n=$(sp-dump xz.sp | grep -c '^sample ')
	n3=$(echo "$n" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
	preport --weight=count xz.sp > r 2> e
	expect_grep "xz: preport --weight=count: 'total $n3 samples' ($n sample records)" "^total $n3 samples, " r
	preport xz.sp > r 2> e
	expect_grep "xz: preport (period): time" '^total [0-9.]+ (s|ms), ' r
	psvg --weight=samples xz.sp > o.svg 2> e
	expect_grep "xz: psvg --weight=samples: samples" 'unit:"samples"' o.svg
	pspeedscope --weight=bogus xz.sp > o 2> e; rc=$?
	if [ $rc = 2 ] && grep -q -- "--weight=bogus: the input has no such value column (its columns: samples, period)" e; then
		ok "xz: pspeedscope --weight=bogus: exit 2, the columns named"; else notok "xz: pspeedscope --weight=bogus (exit $rc)"; cat e; fi
	pfold xz.sp > xz.folded 2> /dev/null
	pmerge xz.sp xz.folded | preport --weight=count > r 2> e
	expect_grep "xz: pmerge xz.sp xz.folded: the sample count is the stream's alone" "^total $n3 samples, " r
fi
