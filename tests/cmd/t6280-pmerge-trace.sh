#!/bin/bash
# pmerge of two pcollect --trace streams keeps every field of the trace
# events (call id, flags, recorded values) through its time-ordered merge:
# the merged stream's trace events are the inputs' own, and
# `pmerge a.sp b.sp | preport --latency --by arg1` equals preport over both
# inputs.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t62 t62-trace.c -O2 -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pmerge of traces" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi
for x in a b; do
	if ! pcollect -q -F 499 --trace 'work(arg1)' -o "$T/$x.sp" -- "$T/t62" durations 200 > /dev/null 2> "$T/$x.err"; then
		if grep -qE 'needs (system-wide )?uprobe events' "$T/$x.err"; then
			skip "pmerge of traces" "$(head -1 "$T/$x.err")"; exit 0; fi
		notok "pcollect --trace work ($x): failed"; sed 's/^/  /' "$T/$x.err"; exit 0
	fi
done
pmerge "$T/a.sp" "$T/b.sp" > "$T/m.sp" 2> "$T/m.err"; rc=$?
expect_rc "pmerge of two traced recordings: exit 0" 0 $rc
# trace events: kind, time, thread, frame, call id, flags and values, as sp-dump prints them
tr_lines() { for f in "$@"; do sp-dump "$f"; done | grep '^trace ' | sort; }
tr_lines "$T/a.sp" "$T/b.sp" > "$T/want.tr"
tr_lines "$T/m.sp" > "$T/got.tr"
n=$(grep -c 'call=[1-9].* arg1=' "$T/want.tr")
if [ "$n" -ge 400 ]; then ok "the inputs hold $n trace events with a call id and arg1"; else
	notok "the inputs hold only ${n:-0} trace events with a call id and arg1"; fi
expect_eq "merged: the same trace events, every field kept" "$T/want.tr" "$T/got.tr"
preport --latency --by arg1 --json "$T/a.sp" "$T/b.sp" > "$T/want.json" 2>&1
preport --latency --by arg1 --json "$T/m.sp" > "$T/got.json" 2>&1
expect_grep "preport --by arg1 over the inputs: groups by arg1" '"by": "arg1"' "$T/want.json"
expect_eq "pmerge a b | preport --latency --by arg1 = preport --latency --by arg1 a b" "$T/want.json" "$T/got.json"
# samples still merged by time beside them
times() { for f in "$@"; do sp-dump "$f"; done | sed -n 's/^\(sample\|trace entry\|trace exit\) t=\([0-9]*\) .*/\2/p'; }
times "$T/m.sp" > "$T/t"
times "$T/a.sp" "$T/b.sp" | sort -n > "$T/t0"
if awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' "$T/t"; then
	ok "merged: samples and trace events in time order ($(wc -l < "$T/t") records)"
else notok "merged: records out of time order"; fi
expect_eq "merged: exactly the inputs' sample and trace times" "$T/t0" "$T/t"
exit 0
