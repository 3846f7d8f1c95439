#!/bin/bash
# plive -p PID, T on the selected function: its exact calls, live, beside the
# samples.  tests/progs/t806-slow.c calls work() in a loop, 1 call in 10 about
# 10x slower, and prints its own figures each second (calls, p50, p95,
# measured around each call, and its clock).  The screen's calls/s, p50 and
# p95 are compared with the program's own over the same window (the panel
# says the window's end on the program's clock, CLOCK_MONOTONIC).
# Tolerances: 5 %.  Assumes: the program's call count is linear inside each
# of its 1 s lines (the window's ends are interpolated), that the median of
# its per-second p50/p95 stands for the window's (a loaded second skews a
# mean), and that the uprobes'
# cost (a few us per call, inside the program's own timing, outside
# pcollect's) stays under 5 % of a fast call (~90 us).  Polls up to 30 s per
# step (a loaded machine starts pcollect late).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

if ! command -v tmux > /dev/null; then skip "plive trace" "tmux is not installed (make deps installs it)"; exit 0; fi
t6_build slow t806-slow.c -O2 -g || exit 0
t6_probe || exit 0
if ! t6_start slow 600; then notok "plive T: the target did not start"; exit 0; fi
TM="tmux -L sp-t8060-$$ -f /dev/null"
trap '$TM kill-server 2>/dev/null; kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT
cap() { $TM capture-pane -p -t t8060 > "$T/cap" 2>/dev/null; }
wait_for() {
	local n=$(($1 * 10))
	for _ in $(seq "$n"); do
		cap
		if eval "$2"; then return 0; fi
		sleep 0.1
	done
	return 1
}
tracer() { pgrep -f -- "-p $TPID --trace=work" | head -1; }
# within A B PCT: |A - B| <= PCT % of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }
# us "95.4 us" / "2.45 ms" -> microseconds
us() { awk -v v="$1" -v u="$2" 'BEGIN { printf "%.3f", u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v }'; }

$TM new-session -d -s t8060 -x 130 -y 40 "$SP_BIN/plive --window 5 -o $T/sess.sp -p $TPID 2> $T/plive.err; echo \$? > $T/rc; sleep 60"
if wait_for 30 'grep -qE " work$" "$T/cap"'; then ok "plive -p PID: work in the table"; else
	notok "plive -p PID: work in the table"; sed 's/^/  /' "$T/cap" | head -12; exit 0; fi
$TM send-keys -t t8060 / '^work$' Enter
if wait_for 10 'grep -q "Filter: /^work\$/" "$T/cap"'; then ok "/^work\$: the filter applies"; else notok "/^work\$: the filter applies"; fi
$TM send-keys -t t8060 T
if wait_for 10 'grep -q "^T: tracing work (pcollect -p $TPID --trace work); X stops" "$T/cap"'; then
	ok "T: the status line says the probe"; else notok "T: the status line says the probe"; sed 's/^/  /' "$T/cap" | head -5; fi
if [ -n "$(tracer)" ]; then ok "T: a pcollect --trace=work runs beside the sampler"; else notok "T: a pcollect --trace=work runs"; fi
# the window full (5 s of calls), then paused: the figures stand still
if wait_for 40 'awk "/^Traced: work  calls [0-9]+ in / { exit !(\$6 >= 4.9) } END { }" "$T/cap" && grep -q "^Traced: work  calls [0-9]* in " "$T/cap" && grep -q "^calls/s " "$T/cap"'; then
	ok "T: the panel fills its 5 s window"; else notok "T: the panel fills its window"; sed 's/^/  /' "$T/cap" | tail -20; fi
$TM send-keys -t t8060 p
sleep 1.5; cap
cp "$T/cap" "$T/screen"
sleep 2.5 # the program's next line, past the window's end
read -r n span end <<< "$(awk '/^Traced: work  calls / { print $4, $6, $13 }' "$T/screen")"
read -r rate p50 p50u p95 p95u p99 p99u mx mxu <<< "$(awk '/^calls\/s / { print $2, $4, $5, $7, $8, $10, $11, $13, $14 }' "$T/screen")"
if [ -n "$rate" ] && [ -n "$p99u" ] && [ -n "$mxu" ] && grep -qE '^ +usecs : count +distribution$' "$T/screen" &&
	grep -qE '^slowest 5%: [0-9]+ calls >= [0-9.]+ (us|ms)  samples in them [0-9]+ \([0-9.]+% of [0-9]+ in work\)  in the other calls [0-9]+ \([0-9.]+%\)  outside [0-9]+$' "$T/screen"; then
	ok "the panel: calls/s, p50, p95, p99, max with units, histogram, slow split"; else
	notok "the panel's labelled figures"; sed 's/^/  /' "$T/screen" | tail -20; fi
# the program's own figures over [end - span, end]
awk -v a="$end" -v s="$span" '
	/^calls .* at .* total / { t[n] = $(NF - 3); c[n] = $NF; p50[n] = $6; p95[n] = $9; n++ }
	function med(v, m,   i, j, w) { for (i = 1; i < m; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { w = v[j]; v[j] = v[j - 1]; v[j - 1] = w } return m % 2 ? v[int(m / 2)] : (v[m / 2 - 1] + v[m / 2]) / 2 }
	function count_at(x,   i) { for (i = 1; i < n; i++) if (t[i] >= x) return c[i - 1] + (c[i] - c[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1]); return -1 }
	END {
		lo = count_at(a - s); hi = count_at(a)
		for (i = 0; i < n; i++) if (t[i] > a - s && t[i] <= a + 1) { x[k] = p50[i]; y[k] = p95[i]; k++ }
		if (lo < 0 || hi < 0 || !k) { print "none"; exit }
		printf "%.1f %.3f %.3f\n", (hi - lo) / s, med(x, k), med(y, k)
	}' "$T/slow.ready" > "$T/own"
read -r own_rate own50 own95 < "$T/own"
screen50=$(us "$p50" "$p50u"); screen95=$(us "$p95" "$p95u")
echo "# screen: $n calls in $span s to $end: $rate/s p50 $screen50 us p95 $screen95 us; program: $own_rate/s p50 $own50 us p95 $own95 us"
if [ "$own_rate" != none ] && within "$rate" "$own_rate" 5; then ok "calls/s within 5 % of the program's own ($rate vs $own_rate)"; else
	notok "calls/s within 5 % of the program's own ($rate vs $own_rate)"; fi
if within "$screen50" "$own50" 5; then ok "p50 within 5 % ($screen50 vs $own50 us)"; else notok "p50 within 5 % ($screen50 vs $own50 us)"; fi
if within "$screen95" "$own95" 5; then ok "p95 within 5 % ($screen95 vs $own95 us)"; else notok "p95 within 5 % ($screen95 vs $own95 us)"; fi
# the slow path is 10x: p95 (a slow call) against p50 (a fast one)
if awk -v a="$screen95" -v b="$screen50" 'BEGIN { exit !(a > 5 * b) }'; then ok "p95 is the slow path (> 5x p50)"; else notok "p95 is the slow path"; fi

# X: the probe removed, the sampler goes on
$TM send-keys -t t8060 p X
if wait_for 15 'grep -qE "^X: probe on work removed \([0-9]+ calls traced\)" "$T/cap"'; then ok "X: the status line says the probe is removed"; else
	notok "X: the probe removed"; sed 's/^/  /' "$T/cap" | head -5; fi
if [ -z "$(tracer)" ]; then ok "X: the tracing pcollect is gone"; else notok "X: the tracing pcollect is gone"; fi
if ! grep -q '^Traced: ' "$T/cap"; then ok "X: the panel is gone"; else notok "X: the panel is gone"; fi
sampler=$(pgrep -f "pcollect -p $TPID\$" | head -1)
if [ -n "$sampler" ]; then ok "X: the sampler still runs"; else notok "X: the sampler still runs"; fi

xcount=$(sed -n 's/^X: probe on work removed (\([0-9]*\) calls traced)$/\1/p' "$T/cap")

# q: the session recorded (-o), read by preport, pfilter, psvg
$TM send-keys -t t8060 q
for _ in $(seq 300); do [ -s "$T/rc" ] && break; sleep 0.1; done
expect_rc "q with -o: exit 0" 0 "$(cat "$T/rc" 2>/dev/null)"
if [ ! -s "$T/plive.err" ]; then ok "q: nothing on stderr"; else notok "q: nothing on stderr"; head -3 "$T/plive.err" | sed 's/^/  /'; fi
if ! ls "$T"/sess.sp.plive-* > /dev/null 2>&1; then ok "-o: no temporary part left"; else notok "-o: no temporary part left"; fi
preport --latency "$T/sess.sp" > "$T/lat" 2> "$T/lat.err"; rc=$?
expect_rc "preport --latency on the session: exit 0" 0 $rc
got=$(sed -n 's/^work: \([0-9]*\) calls.*/\1/p' "$T/lat")
if [ -n "$xcount" ] && [ "$got" = "$xcount" ]; then ok "preport --latency: the calls X counted ($got)"; else
	notok "preport --latency: the calls X counted (X '$xcount', preport '$got')"; head -3 "$T/lat" | sed 's/^/  /'; fi
stacks=$(pfold "$T/sess.sp" 2> /dev/null | grep -c ';work;')
if [ "$stacks" -gt 0 ]; then ok "the session holds work's samples ($stacks stacks)"; else notok "the session holds work's samples"; fi
pfilter --slow work:95 "$T/sess.sp" > "$T/slow.sp" 2> "$T/pf.err"; rc=$?
if [ $rc = 0 ] && grep -q '^pfilter: work: [0-9]* calls (from trace events)' "$T/pf.err"; then ok "pfilter --slow work:95 on the session: calls from its trace events"; else
	notok "pfilter --slow work:95 on the session (exit $rc)"; head -3 "$T/pf.err" | sed 's/^/  /'; fi
psvg --heatmap "$T/sess.sp" > "$T/heat.svg" 2> "$T/heat.err"; rc=$?
if [ $rc = 0 ] && grep -q '<svg' "$T/heat.svg"; then ok "psvg --heatmap on the session"; else notok "psvg --heatmap on the session (exit $rc)"; head -3 "$T/heat.err" | sed 's/^/  /'; fi

# a second plive: T, then SIGKILL of plive: both pcollects end
# (PR_SET_PDEATHSIG), the probe with them; the target keeps running
rm -f "$T/rc"
$TM respawn-pane -k -t t8060 "$SP_BIN/plive --window 5 -p $TPID 2> $T/plive.err; sleep 60"
if wait_for 30 'grep -qE " work$" "$T/cap"'; then ok "plive again: work in the table"; else notok "plive again: work in the table"; fi
# j: the selection moves onto work (sorted by name, main comes first)
$TM send-keys -t t8060 n / '^(work|main)$' Enter
wait_for 10 'grep -q "Filter: /^(work|main)\$/" "$T/cap"'
sleep 1.2; cap
row=$(awk 'f && NF >= 5 { n++; if ($5 == "work") { print n; exit } } /Function \(filename:line\)/ { f = 1 }' "$T/cap")
[ -n "$row" ] && for _ in $(seq 2 "$row"); do $TM send-keys -t t8060 j; done
$TM send-keys -t t8060 T
if [ "$row" = 2 ] && wait_for 10 'grep -q "^T: tracing work " "$T/cap"'; then ok "j moves the selection: T traces work (row $row)"; else notok "j moves the selection onto work (row '$row')"; sed 's/^/  /' "$T/cap" | head -8; fi
sampler=$(pgrep -f "pcollect -p $TPID\$" | head -1)
if wait_for 20 'grep -q "^calls/s [0-9]" "$T/cap"'; then ok "T: calls shown"; else notok "T: calls shown"; fi
tr=$(tracer)
pl=$(pgrep -f "plive --window 5 -p $TPID\$" | head -1)
if [ -n "$tr" ] && [ -n "$pl" ]; then
	kill -9 "$pl"
	for _ in $(seq 100); do kill -0 "$tr" 2> /dev/null || break; sleep 0.1; done
	if ! kill -0 "$tr" 2> /dev/null; then ok "plive SIGKILLed: the tracing pcollect ended"; else notok "plive SIGKILLed: the tracing pcollect ended"; fi
	for _ in $(seq 100); do kill -0 "$sampler" 2> /dev/null || break; sleep 0.1; done
	if ! kill -0 "$sampler" 2> /dev/null; then ok "plive SIGKILLed: the sampler ended"; else notok "plive SIGKILLed: the sampler ended"; fi
	if [ -r /sys/kernel/debug/tracing/uprobe_events ]; then
		if ! grep -q "$T/slow" /sys/kernel/debug/tracing/uprobe_events; then ok "no uprobe of the target in uprobe_events"; else notok "no uprobe of the target in uprobe_events"; fi
	else
		skip "uprobe_events" "/sys/kernel/debug/tracing/uprobe_events is not readable here (pcollect's probes are perf events: their process gone is their end)"
	fi
	# pcollect's uprobes are perf events of its own: its exit closed them
	# (the kernel removes a uprobe with its last event)
	lines0=$(wc -l < "$T/slow.ready"); sleep 2.5; lines1=$(wc -l < "$T/slow.ready")
	if t6_alive "$TPID" && [ "$lines1" -gt "$lines0" ]; then ok "the target keeps running (its lines go on)"; else notok "the target keeps running"; fi
else
	notok "plive and its tracing pcollect found (plive '$pl', tracer '$tr')"
fi
exit 0
