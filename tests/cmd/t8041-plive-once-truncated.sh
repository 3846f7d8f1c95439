#!/bin/bash
# plive --once on a FILE replayed in real time prints its table after the
# first interval, then reads the rest of the file at once: a truncated
# stream is said (as pfold, preport, psvg say it) and the exit is 2;
# --partial warns and exits 0; a whole file exits 0 quietly.
# Timing: the demo recording spans 2.5 s; the table comes at 1 s.
. "$(dirname "$0")/../lib.sh"

pfold -b "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/d.sp" 2> /dev/null || { notok "pfold -b of the demo"; exit 0; }
n=$(stat -c %s "$T/d.sp")
head -c $((n * 9 / 10)) "$T/d.sp" > "$T/cut.sp"
preport "$T/cut.sp" > /dev/null 2> "$T/pr.err"
plive --once -n 3 "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "plive --once on a stream cut at 90%: exit 2" 2 $rc
expect_grep "plive --once: the table of the first second" '^plive  \[last 10 s\] t=0.0.{1,3}1.0 s' "$T/o"
want=$(sed 's/^preport: //' "$T/pr.err")
if [ -n "$want" ] && [ "$(cat "$T/e")" = "plive: $want" ]; then ok "plive --once: the truncation said as preport says it"; else
	notok "plive --once: the truncation said as preport says it"; cat "$T/pr.err" "$T/e" | sed 's/^/  /'; fi
plive --once --partial -n 3 "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q 'using the [0-9]* samples before the cut (--partial)' "$T/e"; then ok "plive --once --partial: warns, exit 0"; else
	notok "plive --once --partial (exit $rc)"; cat "$T/e"; fi
plive --once -n 3 "$T/d.sp" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/e" ]; then ok "plive --once on the whole file: exit 0, nothing said"; else notok "plive --once whole file (exit $rc)"; cat "$T/e"; fi
exit 0
