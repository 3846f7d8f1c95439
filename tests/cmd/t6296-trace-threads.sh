#!/bin/bash
# pcollect --trace on a target with many threads, and on a hot loop
# (tests/progs/t62-many.c, which counts its own calls):
#  - 200 threads, each calling tick() then sleeping 50 ms (4,000 calls/s in
#    all: a bounded load), and a thread born and dying every 20 ms, so
#    threads are created and exit while pcollect attaches and stops.  -p PID
#    -d 1: the attach and detach times pcollect -v prints are shown, and the
#    detach is bounded (as root each probe is one tracefs uprobe shared by
#    every thread's events: the kernel's grace period is waited once per
#    probe, not once per event: 127 s before, for this target; and by a
#    keeper process after pcollect exits, lib/capture/keeper.h, which then
#    deletes the definitions and ends); the target runs on and its own
#    count goes on.  As root the perf events do not
#    grow with the threads (one per probe and process, one per CPU for the
#    output: lib/capture/bpfhit.h).  Launched (every thread held until
#    its probes are open): the calls traced are the program's own count,
#    also with the per-thread events of the fallback (SP_UPROBE_PERTHREAD).
#  - a hot loop calling tick(): its progress per half second alone and
#    traced for 4 s, run side by side at the same time (the same load for
#    both); over the default --trace-budget the probe is stopped,
#    said, and preport --latency marks its count INCOMPLETE; after 2 s the
#    loop keeps at least half of its untraced progress (median of the half
#    seconds); --trace-budget=none leaves the probe on.
#  - a CPU-bound target, alone and traced side by side: -v's estimate of
#    the share of its time the probes took is within 25 % of what its own
#    CPU time says.
# Nothing is timed except the detach bound (10x the goal, 1/40 of before).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build many t62-many.c -O2 -g -pthread || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --trace (many threads)" "$T/many" hot 0.1 || exit 0

# ---- 200 threads, attached: attach and detach times
if ! t6_start many many 200 50 8; then notok "the 200-thread target did not start"; exit 0; fi
pcollect -v -F 0 --trace tick -p "$TPID" -d 1 -o "$T/p.sp" 2> "$T/p.err"; rc=$?
expect_rc "-p 200 threads -d 1: exit 0" 0 $rc
att=$(sed -n 's/^pcollect: probes attached in \([0-9.]*\) s: \([0-9]*\) events in \([0-9]*\) threads, \(.*\)/\1 \2 \3/p' "$T/p.err")
det=$(sed -n 's/^pcollect: probes detached \([0-9.]*\) s after tracing ended.*/\1/p' "$T/p.err")
read -r at ev th <<< "$att"
echo "# 200 threads: attached in ${at:-?} s ($ev events in $th threads), detached ${det:-?} s after tracing ended"
if [ -n "$at" ] && [ "${th:-0}" -ge 200 ]; then ok "-v says the attach: $ev events in $th threads in $at s"; else
	notok "-v says the attach time and the threads"; sed 's/^/  /' "$T/p.err" | head -5; fi
# the events do not grow with the threads: as root two per probe and
# process, one per probe on the keeper process (it carries the program)
# and one per CPU for the output (a BPF program records every thread's
# hits: 8 here on 2 CPUs, 824 per thread and CPU before)
ncpu=$(getconf _NPROCESSORS_CONF)
if grep -q "a BPF program records every thread's hits" "$T/p.err"; then
	if [ -n "$ev" ] && [ "$ev" -le $((8 + 2 * ncpu)) ]; then ok "200 threads: $ev perf events (at most 2 probes x (3 anchors + 1 on the keeper) + 2 x $ncpu CPUs), not threads x CPUs"; else
		notok "200 threads: $ev perf events (want at most $((8 + 2 * ncpu)): not per thread)"; fi
else
	skip "events independent of the threads" "$(sed -n 's/^pcollect: probes per thread: //p' "$T/p.err" | head -1) (per-thread events here)"
fi
if grep -q "sharing one tracefs uprobe per probe" "$T/p.err"; then
	if awk -v d="$det" 'BEGIN { exit !(d != "" && d < 3) }'; then ok "detached in $det s (bounded: under 3 s; 127 s before tracefs)"; else
		notok "detached in '$det' s (bounded: under 3 s)"; fi
else
	skip "detach bound" "the probes are uprobe-PMU events here (not root, or no tracefs): closing waits per event"
fi
calls=$(preport --latency "$T/p.sp" 2> /dev/null | sed -n 's/^tick: \([0-9]*\) calls.*/\1/p')
if [ "${calls:-0}" -gt 0 ]; then ok "-p: tick's calls traced ($calls in 1 s)"; else notok "-p: tick's calls traced"; fi
# the target runs on after the detach, and ends by itself with its count
for _ in $(seq 150); do grep -q '^calls ' "$T/many.ready" && break; sleep 0.1; done
if grep -q '^calls [0-9]' "$T/many.ready"; then ok "the target ran on and ended ($(grep '^calls' "$T/many.ready"))"; else
	notok "the target ran on and ended"; fi
# the keeper process deletes the definitions once it has closed the last
# events (the kernel's grace periods), after pcollect exited
ue=/sys/kernel/tracing/uprobe_events
for _ in $(seq 30); do [ -r $ue ] && grep -q "$T/many" $ue || break; sleep 0.1; done
if [ -r $ue ] && grep -q "$T/many" $ue; then
	notok "no uprobe definition left in tracefs (3 s after pcollect exited)"; else ok "no uprobe definition left in tracefs"; fi
if grep -q "ended by a keeper process" "$T/p.err"; then
	for _ in $(seq 30); do pgrep -f -- "--trace tick -p $TPID -d 1" > /dev/null || break; sleep 0.1; done
	if ! pgrep -f -- "--trace tick -p $TPID -d 1" > /dev/null; then ok "the keeper process has ended"; else notok "the keeper process has ended"; fi
fi

# ---- a pcollect killed (SIGKILL) leaves its tracefs definitions: the next
# one removes them (their PID is gone)
ue=/sys/kernel/tracing/uprobe_events
if [ -w "$ue" ] && grep -q "sharing one tracefs uprobe per probe" "$T/p.err"; then
	pcollect -q -F 0 --trace tick -o "$T/k.sp" -- "$T/many" many 2 50 30 > /dev/null 2>&1 & kp=$!
	for _ in $(seq 100); do grep -q "stackpipe_$kp/" "$ue" && break; sleep 0.1; done
	child=$(pgrep -P $kp)
	kill -9 $kp; wait $kp 2> /dev/null; [ -n "$child" ] && kill $child 2> /dev/null
	if grep -q "stackpipe_$kp/" "$ue"; then ok "SIGKILL: its definitions are left ($(grep -c "stackpipe_$kp/" "$ue"))"; else
		notok "SIGKILL: its definitions are left"; fi
	pcollect -q -F 0 --trace tick -o "$T/k2.sp" -- "$T/many" hot 0.1 > /dev/null 2>&1
	if ! grep -q "stackpipe_$kp/" "$ue"; then ok "the next pcollect removed them"; else notok "the next pcollect removed them"; grep stackpipe "$ue" | sed 's/^/  /'; fi
else
	skip "definitions left by a killed pcollect" "no writable $ue, or the probes are uprobe-PMU events here"
fi

# ---- launched: every call traced, against the program's own count
pcollect -v -F 0 --trace tick -o "$T/l.sp" -- "$T/many" many 200 50 1.5 > "$T/l.out" 2> "$T/l.err"; rc=$?
expect_rc "launched, 200 threads: exit 0" 0 $rc
# same_count LABEL X: tick's calls in $T/X.sp against the program's own
# count ($T/X.out); a loss said by pcollect ($T/X.err) is a skip with it
same_count() {
	local own got lost
	own=$(sed -n 's/^calls //p' "$T/$2.out")
	got=$(preport --latency "$T/$2.sp" 2> /dev/null | sed -n 's/^tick: \([0-9]*\) calls.*/\1/p')
	lost=$(sed -n 's/^pcollect: probe tick: \([0-9]*\) of its .*/\1/p' "$T/$2.err")
	if [ -n "$own" ] && [ "$got" = "$own" ]; then ok "$1: tick's calls traced = the program's own count ($own)"; elif [ -n "$lost" ]; then
		skip "$1: calls = the program's count" "$lost hits lost (said: a full ring on this loaded machine); traced $got of $own"
	else notok "$1: tick's calls traced ($got) = the program's own count ($own)"; sed 's/^/  /' "$T/$2.err" | head -5; fi
}
echo "# launched: $(grep -E 'attached|detached' "$T/l.err" | sed 's/^pcollect: //' | tr '\n' ';')"
same_count launched l

# ---- the fallback (not root, or a kernel that refuses the BPF program):
# events per thread and CPU, forced here; the same count
SP_UPROBE_PERTHREAD=1 pcollect -v -F 0 --trace tick -o "$T/f.sp" -- "$T/many" many 50 50 1 > "$T/f.out" 2> "$T/f.err"; rc=$?
expect_rc "per-thread events (SP_UPROBE_PERTHREAD=1), launched, 50 threads: exit 0" 0 $rc
echo "# per-thread events: $(grep -o '[0-9]* perf events at most ([^)]*)' "$T/f.err")"
same_count "per-thread events" f
expect_grep "per-thread events: -v says so" 'perf events at most \(per thread, CPU and probe\)' "$T/f.err"

# ---- a main thread that exits (pthread_exit) while 3 threads go on
# calling tick(): the probes stay in the process (as root the kernel keeps
# a breakpoint in the process of a living thread with an event on it: the
# anchors are on three threads, replaced when one exits; one anchor on the
# main thread traced 168 of 900 calls)
pcollect -v -F 0 --trace tick -o "$T/e.sp" -- "$T/many" leader 3 100 > "$T/e.out" 2> "$T/e.err"; rc=$?
expect_rc "main thread exits first: exit 0" 0 $rc
own=$(sed -n 's/^calls //p' "$T/e.out")
got=$(preport --latency "$T/e.sp" 2> /dev/null | sed -n 's/^tick: \([0-9]*\) calls.*/\1/p')
if [ "$own" = 300 ] && [ "$got" = "$own" ]; then ok "main thread exits first: every call traced ($got of $own)"; else
	notok "main thread exits first: $got calls traced of ${own:-?}"; sed 's/^/  /' "$T/e.err" | head -5; fi

# ---- the hot loop: untraced and traced (default budget) side by side, at
# the same time, on the same CPU (CFS shares it evenly between them; on
# two CPUs of a loaded machine their shares differed 3-fold from one half
# second to the next)
pin=; command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ] && pin="taskset -c 1"
$pin "$T/many" hot 4 > "$T/h0.out" & h0=$!
$pin "$SP_BIN/pcollect" -F 0 --trace tick -o "$T/h.sp" -- "$T/many" hot 4 > "$T/h1.out" 2> "$T/h.err"; rc=$?
wait $h0
expect_rc "hot loop traced: exit 0" 0 $rc
med() { awk '$1 == "progress" && $2 > 2.2 { print $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
m0=$(med "$T/h0.out"); m1=$(med "$T/h1.out")
# their calls after 2 s, traced over untraced
ratio=$(awk '$1 == "progress" && $2 > 2.2 { s[FILENAME == ARGV[1]] += $3 } END { printf "%.2f", s[0] ? s[1] / s[0] : 0 }' "$T/h1.out" "$T/h0.out")
echo "# hot loop, calls per half second after 2 s (median): alone $m0, traced $m1; traced/alone after 2 s $ratio${pin:+ (both on CPU 1)}"
if grep -qE '^pcollect: probe tick stopped at [0-9.]+ s: tracing took [0-9]+% of a traced thread.s time for [0-9.]+ s, above the 50% budget \([0-9]+ hits/s read' "$T/h.err"; then
	ok "over the budget the probe is stopped, said with when and the cost"; else notok "the probe stopped over the budget"; sed 's/^/  /' "$T/h.err" | head -5; fi
if awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5) }'; then ok "the hot loop keeps >= 50 % of its progress after 2 s (x$ratio of the untraced copy's)"; else
	notok "the hot loop keeps >= 50 % of its progress after 2 s (x$ratio of the untraced copy's; medians $m1 vs $m0 per 0.5 s)"; sed 's/^/  /' "$T/h.err" | grep -v moved | head -3; fi
preport --latency "$T/h.sp" > "$T/h.lat" 2> /dev/null
expect_grep "preport --latency: the stopped probe's count is a lower bound" '^tick: [0-9]+ calls.* \(INCOMPLETE: the probe was stopped at [0-9.]+ s, over its cost budget: a lower bound\)' "$T/h.lat"
sp-dump "$T/h.sp" > "$T/h.txt" 2> /dev/null
expect_grep "the stream's metadata says when" '^meta trace-stopped=tick [0-9.]+$' "$T/h.txt"
ptimeline --no-samples "$T/h.sp" > "$T/h.json" 2> /dev/null
expect_grep "ptimeline marks the stopped probe" '"name":"probe stopped: tick at [0-9.]+ s of the trace, over its cost budget' "$T/h.json"
# ---- the cost estimate against a CPU-bound target's own slowdown: the
# same work (40,000 loop iterations before each of 20,000 tick() calls:
# 40,000 hits in ~0.5 s of traps) alone and traced, at the same time on
# the same CPU (the same contention for both; alone, the same work's CPU
# time moved by 30 % between runs here); measured: the share of the
# traced run's CPU time the probes took (1 - alone/traced); pcollect -v's
# estimate for the busiest thread must be within 25 % of it (median of 3
# pairs).  Seen here: 0.50-0.62 measured, estimates 0.50-0.56.
for r in 1 2 3; do
	$pin "$T/many" work 40000 20000 > "$T/wa$r.out" & wa=$!
	$pin "$SP_BIN/pcollect" -v -F 0 --trace tick --trace-budget=none -o "$T/w.sp" -- "$T/many" work 40000 20000 \
		> "$T/wt$r.out" 2> "$T/w$r.err"
	wait $wa
	a=$(awk '$1 == "cpu" { print $2 }' "$T/wa$r.out"); b=$(awk '$1 == "cpu" { print $2 }' "$T/wt$r.out")
	e=$(sed -n "s/^pcollect: tracing took \([0-9]*\)% of the busiest traced thread's time.*/\1/p" "$T/w$r.err")
	awk -v a="$a" -v b="$b" -v e="$e" 'BEGIN { if (a > 0 && b > 0 && e != "") printf "%.3f %.3f\n", 1 - a / b, e / 100 }'
done > "$T/cost"
med_col() { awk -v k="$1" '{ print $k }' "$T/cost" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "" }'; }
meas=$(med_col 1); est=$(med_col 2)
echo "# CPU-bound target, share of its time the probes took: measured $(cut -d' ' -f1 "$T/cost" | tr '\n' ' ')(median $meas), pcollect's estimate $(cut -d' ' -f2 "$T/cost" | tr '\n' ' ')(median $est)"
if [ "$(wc -l < "$T/cost")" -lt 3 ]; then notok "cost estimate: 3 paired runs with the program's CPU time and -v's estimate"; sed 's/^/  /' "$T/w1.err" | head -5
elif awk -v m="$meas" -v e="$est" 'BEGIN { d = e - m; if (d < 0) d = -d; exit !(m > 0.1 && d <= 0.25 * m) }'; then
	ok "the cost estimate ($est of the busiest thread's time) is within 25 % of the target's measured slowdown ($meas)"
elif [[ $SP_BIN == *asan* ]]; then
	# pcollect runs pinned with the target (taskset -c 1): an ASan
	# pcollect's own CPU there slows the untraced copy too (a rehearsal:
	# estimate 0.540, measured 0.346); the plain pass asserts it
	echo "#   gap: under ASan the cost estimate ($est) is not within 25 % of the measured slowdown ($meas): the ASan pcollect shares the pinned CPU (asserted in the plain pass)"
else notok "the cost estimate ($est) within 25 % of the target's measured slowdown ($meas)"; fi

# ---- the target is free once pcollect has exited, while its keeper still
# holds the uprobes (3 s more here: SP_KEEPER_HOLD_MS): the hot loop's
# calls per half second after pcollect's exit against before the trace
# (and, to show the probe trapped, the fewest while traced)
if grep -q "ended by a keeper process" "$T/l.err"; then
	s0=$(date +%s.%N)
	"$T/many" hot 6 > "$T/k.out" & kp=$!
	sleep 1.2
	SP_KEEPER_HOLD_MS=3000 pcollect -q -F 0 --trace tick --trace-budget=none -p $kp -d 1.5 -o "$T/k.sp" 2> "$T/k.err"
	te=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	held=0; [ -r "$ue" ] && grep -q "$T/many" "$ue" && held=1
	wait $kp
	read -r before traced after <<< "$(awk -v te="$te" '$1 == "progress" { if ($2 <= 1.0) b[nb++] = $3
		else if ($2 > 1.7 && $2 <= te - 0.2) { if (min == "" || $3 < min) min = $3 }
		else if ($2 > te + 0.3 && $2 <= te + 2.3) a[na++] = $3 }
		function med(v, n,   i, j, t) { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return n ? v[int((n - 1) / 2)] : 0 }
		END { print med(b, nb), (min == "" ? -1 : min), med(a, na) }' "$T/k.out")"
	echo "# hot loop per 0.5 s: before the trace $before (median), fewest while traced $traced, after pcollect exited at $te s $after (median; the keeper held the uprobes: $held)"
	if [ "$held" = 1 ] && awk -v b="$before" -v t="$traced" -v a="$after" 'BEGIN { exit !(b > 0 && t >= 0 && t < 0.1 * b && a >= 0.25 * b) }'; then
		ok "the target runs free once pcollect exited, while the keeper holds the uprobes ($after calls per 0.5 s, $before before, $traced traced)"
	else notok "the target runs free once pcollect exited (before $before, traced $traced, after $after per 0.5 s; keeper held: $held)"; sed 's/^/  /' "$T/k.err" | head -3; fi
fi

# none: no limit (1.5 s: the probe would be stopped after 1 s over)
pcollect -F 0 --trace tick --trace-budget=none -o "$T/n.sp" -- "$T/many" hot 1.5 > /dev/null 2> "$T/n.err"; rc=$?
expect_rc "--trace-budget=none: exit 0" 0 $rc
if ! grep -q "stopped at" "$T/n.err"; then ok "--trace-budget=none: the probe is not stopped"; else notok "--trace-budget=none: the probe is not stopped"; fi
pcollect -F 0 --trace tick --trace-budget=nothing -- true > /dev/null 2> "$T/u.err"; rc=$?
expect_rc "--trace-budget=nothing: usage error" 2 $rc
expect_grep "--trace-budget: says what it takes" "needs a positive percentage or none" "$T/u.err"
