#!/bin/bash
# What the commands share is said the same way by each (issue 31, item 3;
# the code is in lib/cli/cmd.c and formats/format.c): -f with a format no
# reader has, -O with an encoding no writer has, and the summary of the bad
# lines skipped.  (An unknown --weight column, the same error everywhere:
# t4070-weight.sh.)  Input: perf script text of a real 3-thread program
# (tests/data/t5-perf-threads.txt.gz) folded by pfold, with one bad line.
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1
known='perf, folded, pyspy, stream, speedscope, perf.data, pprof, cprofile, du'
pfold "$SP_TOP/tests/data/t5-perf-threads.txt.gz" > good.folded 2> e || notok "pfold of the test data"
{ head -3 good.folded; echo 'this line has no count'; tail -n +4 good.folded; } > bad.folded

# ---- -f NAME that no reader has: a usage error, exit 2, the names listed ----
for c in pfold psvg preport pspeedscope ptimeline pfilter pdiff pmerge plive "pfleet put"; do
	$c -f nosuch good.folded good.folded > o 2> e < /dev/null; rc=$?
	cmd=${c%% *}
	if [ $rc = 2 ] && [ ! -s o ] && grep -qxF "$cmd: unknown format 'nosuch' (known: $known)" e && grep -q "^Try '$cmd --help'" e; then
		ok "$c -f nosuch: exit 2, the known formats listed"
	else notok "$c -f nosuch (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
done
preport -f json good.folded > o 2> e; rc=$?
if [ $rc = 2 ] && grep -qF "unknown format 'json' (known: $known; the report's format is -O)" e; then ok "preport -f json: the hint that -O picks the report's format"
else notok "preport -f json (exit $rc)"; head -3 e | sed 's/^/  /'; fi

# ---- -O ENCODING: folded or stream (pfold: or pprof) ----
for c in pfilter pdiff pmerge; do
	$c -O svg good.folded good.folded > o 2> e; rc=$?
	if [ $rc = 2 ] && [ ! -s o ] && grep -qxF "$c: -O: output format is folded or stream, not 'svg'" e; then ok "$c -O svg: exit 2, the encodings named"
	else notok "$c -O svg (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
done
pfold -O svg good.folded > o 2> e; rc=$?
if [ $rc = 2 ] && grep -qxF "pfold: -O: output format is folded, stream or pprof, not 'svg'" e; then ok "pfold -O svg: exit 2, pprof named too"
else notok "pfold -O svg (exit $rc, want 2)"; head -3 e | sed 's/^/  /'; fi
for c in "pfilter --max-depth=99" pmerge pfold; do
	$c -O stream good.folded > o.sp 2> e; rc=$?
	if [ $rc = 0 ] && sp-dump o.sp > d 2>&1 && grep -q '^sample ' d; then ok "$c -O stream: a binary stream"; else notok "$c -O stream (exit $rc)"; head -3 e d | sed 's/^/  /'; fi
	$c -O folded o.sp > o 2> e; rc=$?
	if [ $rc = 0 ] && cmp -s <(sort o) <(sort good.folded); then ok "$c -O folded of that stream: the folded text again"; else notok "$c -O folded (exit $rc)"; fi
done

# ---- the bad-line summary: the line named, then one count, exit 0 ----
for c in pfold psvg preport pspeedscope "pfilter --max-depth=99" pmerge "plive --once --speed 0" "pdiff bad.folded"; do
	$c bad.folded > o 2> e; rc=$?
	cmd=${c%% *}
	if [ $rc = 0 ] && [ -s o ] && grep -q "^$cmd: bad.folded:4: " e && [ "$(tail -1 e)" = "$cmd: $( [ "$cmd" = pdiff ] && echo 2 || echo 1) bad line$( [ "$cmd" = pdiff ] && echo s) skipped" ]; then
		ok "$c: the bad line at bad.folded:4, then the summary"
	else notok "$c of a bad line (exit $rc)"; head -3 e | sed 's/^/  /'; fi
done

# ---- -t PATTERN: one compile and one message (sp_thread_regex) ----
for m in "" "--snapshot -p $$"; do
	if [ -z "$m" ]; then pcollect -t '(' -d 1 -- true > o 2> e; else pcollect $m -t '(' > o 2> e; fi; rc=$?
	if [ $rc = 2 ] && [ "$(head -1 e)" = "pcollect: -t '(': Unmatched ( or \\(" ]; then ok "pcollect ${m:+--snapshot }-t '(': the usage error names the pattern, exit 2"
	else notok "pcollect ${m:+--snapshot }-t '(' (exit $rc): $(head -1 e)"; fi
done
