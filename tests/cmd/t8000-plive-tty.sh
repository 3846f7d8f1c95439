#!/bin/bash
# plive in a real terminal (tmux): pcollect -p PID | plive --window 2 on a
# program that burns CPU in phase_one for 4 s, then in phase_two: phase_one
# is on top first, phase_two a few seconds after the switch; keys change
# the sort, the filter and the view; a resize redraws; q exits 0, pcollect
# stops, the target runs on and the terminal is restored (after SIGTERM too).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/t8-lib.sh"

if ! command -v tmux > /dev/null; then skip "plive tty" "tmux is not installed (make deps installs it)"; exit 0; fi
t6_build phases t80-phases.c -O2 -g || exit 0
t6_probe || exit 0
if ! t6_start phases 4; then notok "plive: the target did not start"; exit 0; fi
t8_tmux t8000
# top_row: the function of the first table row
top_row() { awk 'f && NF >= 5 { sub(/^ *[0-9.]+% +[0-9.]+% +[0-9.]+s? +[0-9.]+s? +/, ""); print; exit } /Function \(filename:line\)/ { f = 1 }' "$T/cap"; }

$TM new-session -d -s t8000 -x 120 -y 30 \
	"$SP_BIN/pcollect -q -p $TPID | $SP_BIN/plive --window 2; echo \$? > $T/rc; stty -a > $T/stty; sleep 60"
if wait_for 20 '[ "$(top_row)" = phase_one ]'; then ok "early: phase_one on top"; else
	notok "early: phase_one on top (top row: $(top_row))"; sed 's/^/  /' "$T/cap" | head -12; fi
expect_grep "header: window, samples/s, threads, lost" '\[last 2 s\]' "$T/cap"
expect_grep "header: samples/s, threads, lost" '^Samples: [0-9]+ \([0-9]+/s\)  Threads: 1  Lost: 0' "$T/cap"
if wait_for 20 '[ "$(top_row)" = phase_two ]'; then ok "later: phase_two on top (the 2 s window forgot phase_one)"; else
	notok "later: phase_two on top (top row: $(top_row))"; sed 's/^/  /' "$T/cap" | head -12; fi
if ! grep -q 'phase_one' "$T/cap"; then ok "later: phase_one left the window"; else
	# a sample of phase_one may linger while the machine is slow
	if wait_for 10 '! grep -q phase_one "$T/cap"'; then ok "later: phase_one left the window"; else notok "phase_one stays in a 2 s window"; fi
fi

# keys: sort by total, by name, back to own
$TM send-keys -t t8000 t
if wait_for 5 'grep -q "sort (total)" "$T/cap"'; then
	awk 'f && NF >= 5 { print $2 } /Function \(filename:line\)/ { f = 1 }' "$T/cap" | sed 's/%//' > "$T/tot"
	if [ -s "$T/tot" ] && sort -g -r -c "$T/tot" 2>/dev/null && [ "$(head -1 "$T/tot")" = 100.0 ]; then ok "t: sorted by %Total, 100% first"; else
		notok "t: sorted by %Total"; sed 's/^/  /' "$T/cap" | head -12; fi
else notok "t: the status line says sort (total)"; fi
$TM send-keys -t t8000 n
if wait_for 5 'grep -q "sort (name)" "$T/cap"'; then
	awk 'f && NF >= 5 { print $5 } /Function \(filename:line\)/ { f = 1 }' "$T/cap" > "$T/names"
	if [ "$(wc -l < "$T/names")" -ge 3 ] && LC_ALL=C sort -c "$T/names" 2>/dev/null; then ok "n: sorted by name"; else
		notok "n: sorted by name"; sed 's/^/  /' "$T/names"; fi
else notok "n: the status line says sort (name)"; fi
$TM send-keys -t t8000 o
wait_for 5 'grep -q "sort (own)" "$T/cap"' && [ "$(top_row)" = phase_two ] && ok "o: back to own, phase_two first" || notok "o: back to own"

# callers and callees of the top row (phase_two): main calls it
$TM send-keys -t t8000 Enter
if wait_for 5 'grep -q "^Callers of phase_two" "$T/cap"'; then
	awk '/^Callers of/ { f = 1; next } /^Callees/ { exit } f && NF >= 5 { print $5 }' "$T/cap" > "$T/callers"
	if grep -qx main "$T/callers"; then ok "Enter: the callers of phase_two include main"; else notok "Enter: callers"; sed 's/^/  /' "$T/cap" | head -14; fi
else notok "Enter: callers and callees of the selected row"; sed 's/^/  /' "$T/cap" | head -8; fi
$TM send-keys -t t8000 Escape
wait_for 5 '! grep -q "^Callers of" "$T/cap" && grep -q "Function (filename" "$T/cap"' && ok "Esc: back to the table" || notok "Esc: back to the table"

# the filter: only rows that match
$TM send-keys -t t8000 / '^_st' Enter
if wait_for 5 'grep -q "Filter: /\^_st/" "$T/cap"'; then
	awk 'f && NF >= 5 { print $5 } /Function \(filename:line\)/ { f = 1 }' "$T/cap" > "$T/names"
	if [ -s "$T/names" ] && ! grep -qv '^_st' "$T/names"; then ok "/: a regex filter keeps the matching rows ($(tr '\n' ' ' < "$T/names"))"; else
		notok "/: filter"; sed 's/^/  /' "$T/cap" | head -10; fi
else notok "/: the header shows the filter"; fi
$TM send-keys -t t8000 / Enter

# w cycles the view: all time, the EWMA, the window again
$TM send-keys -t t8000 w
wait_for 5 'grep -q "\[all time\]" "$T/cap"' && ok "w: all time" || notok "w: all time"
$TM send-keys -t t8000 w
wait_for 5 'grep -q "\[ewma, half-life 30 s\]" "$T/cap"' && ok "w: the EWMA (half-life 30 s)" || notok "w: the EWMA"
$TM send-keys -t t8000 w
wait_for 5 'grep -q "\[last 2 s\]" "$T/cap"' && ok "w: back to the 2 s window" || notok "w: back to the window"

# resize while paused: the screen stands still except for the redraw the
# resize asks for, so a full-width status line proves the redraw
$TM send-keys -t t8000 p
wait_for 5 'grep -q "\[paused\]" "$T/cap"' || notok "p: [paused] in the header"
$TM resize-window -t t8000 -x 40 -y 12
sleep 0.5
$TM resize-window -t t8000 -x 130 -y 30
if wait_for 5 'grep -q "h callers+callees" "$T/cap"' && cap && [ "$(awk 'length > 40' "$T/cap" | wc -l)" -ge 3 ]; then
	ok "resize (paused): redrawn at the new width"; else notok "resize: redrawn"; sed 's/^/  /' "$T/cap" | head -6; fi

# q: exit 0, pcollect gone, the target alive, the terminal restored
$TM send-keys -t t8000 q
for _ in $(seq 100); do [ -s "$T/stty" ] && break; sleep 0.1; done
expect_rc "q: plive exits 0" 0 "$(cat "$T/rc" 2>/dev/null)"
gone=1
for _ in $(seq 50); do gone=1; pgrep -f "pcollect -q -p $TPID\$" > /dev/null && gone=0; [ $gone = 1 ] && break; sleep 0.1; done
if [ $gone = 1 ]; then ok "q: pcollect upstream stopped"; else notok "q: pcollect upstream stopped"; fi
if t6_alive "$TPID"; then ok "q: the target keeps running"; else notok "q: the target keeps running"; fi
if grep -q ' icanon' "$T/stty" && grep -q ' echo ' "$T/stty"; then ok "q: the terminal is restored (icanon echo)"; else
	notok "q: terminal restored"; head -5 "$T/stty" | sed 's/^/  /'; fi

# SIGTERM: the terminal is restored too
rm -f "$T/stty" "$T/rc"
$TM respawn-pane -k -t t8000 "$SP_BIN/pcollect -q -p $TPID | $SP_BIN/plive --window 2; echo \$? > $T/rc; stty -a > $T/stty; sleep 60"
if wait_for 20 'grep -q phase_two "$T/cap"'; then
	pid=$(pgrep -f "^$SP_BIN/plive --window 2\$" | head -1)
	[ -n "$pid" ] && kill -TERM "$pid"
	for _ in $(seq 100); do [ -s "$T/stty" ] && break; sleep 0.1; done
	expect_rc "SIGTERM: plive dies of the signal" 143 "$(cat "$T/rc" 2>/dev/null)"
	if grep -q ' icanon' "$T/stty" && grep -q ' echo ' "$T/stty"; then ok "SIGTERM: the terminal is restored"; else notok "SIGTERM: terminal restored"; fi
	cap
	if ! grep -q 'Function (filename:line)' "$T/cap"; then ok "SIGTERM: the alternate screen is left"; else notok "SIGTERM: alternate screen left"; fi
else notok "plive restarted"; fi
if t6_alive "$TPID"; then ok "the target is still running"; else notok "the target is still running"; fi

# an idle target: nothing is written, yet quitting plive stops pcollect
setsid sleep 300 > /dev/null 2>&1 &
SPID=$!
trap '$TM kill-server 2>/dev/null; kill -9 $TPID $SPID 2>/dev/null; sp_cleanup' EXIT
( pcollect -q -p $SPID 2> "$T/idle.err"; echo $? > "$T/idle.rc" ) | plive --once -i 0.5 > "$T/idle.out" 2>&1
for _ in $(seq 100); do [ -s "$T/idle.rc" ] && break; sleep 0.1; done
if [ "$(cat "$T/idle.rc" 2>/dev/null)" = 0 ] && [ ! -s "$T/idle.err" ]; then ok "idle target: pcollect stops quietly (exit 0) when plive quits"; else
	notok "idle target: pcollect still running or failed (rc '$(cat "$T/idle.rc" 2>/dev/null)')"; cat "$T/idle.err" 2>/dev/null | head -3; fi
expect_grep "idle target: plive says no samples yet" 'no samples yet' "$T/idle.out"
if t6_alive "$SPID"; then ok "idle target: still running"; else notok "idle target: still running"; fi
kill $SPID 2>/dev/null
# plive on a terminal with no input: a usage error, not a hang
$TM respawn-pane -k -t t8000 "$SP_BIN/plive > $T/tty.out 2>&1; echo \$? > $T/tty.rc; sleep 60"
for _ in $(seq 100); do [ -s "$T/tty.rc" ] && break; sleep 0.1; done
if [ "$(cat "$T/tty.rc" 2>/dev/null)" = 2 ] && grep -q 'standard input is a terminal' "$T/tty.out"; then ok "plive with a terminal as input: usage error, exit 2"; else
	notok "plive with a terminal as input (rc '$(cat "$T/tty.rc" 2>/dev/null)')"; fi
