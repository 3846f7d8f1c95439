#!/bin/bash
# One program owns the terminal (tmux): in `pcollect -p PID | plive`,
# pcollect's status line never lands on plive's screen (it draws only while
# the terminal is in line mode) and q ends both with status 0 (EPIPE is a
# normal end for pcollect); `pcollect | pfold > x` keeps its status line;
# `plive -p PID` and `plive -- COMMAND` run pcollect themselves.
# Timing: polls for up to 20 s per step (a loaded machine draws late).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/t8-lib.sh"

if ! command -v tmux > /dev/null; then skip "plive collect" "tmux is not installed (make deps installs it)"; exit 0; fi
t6_build phases t80-phases.c -O2 -g || exit 0
t6_probe || exit 0
if ! t6_start phases 600; then notok "plive: the target did not start"; exit 0; fi
t8_tmux t8040
# rows_intact: the header on row 1, the counts on row 2, the keys or the
# filter prompt on row 3, and no pcollect line anywhere
rows_intact() {
	[ "$(sed -n 1p "$T/cap" | cut -c1-13)" = "plive  [last " ] && sed -n 2p "$T/cap" | grep -q '^Samples: ' &&
		sed -n 3p "$T/cap" | grep -qE '^(q quit|Filter \(regex)' && ! grep -q 'pcollect' "$T/cap"
}

# ---- the pipe form, pcollect not quiet ----
$TM new-session -d -s t8040 -x 120 -y 30 \
	"bash -c '$SP_BIN/pcollect -p $TPID | $SP_BIN/plive --window 2; echo \${PIPESTATUS[*]} > $T/rc'; sleep 60"
if wait_for 20 'grep -q phase_one "$T/cap"'; then ok "pcollect -p PID | plive: the table shows"; else
	notok "pcollect -p PID | plive: the table shows"; sed 's/^/  /' "$T/cap" | head -8; fi
# a status line every 0.5 s: 3 s of screens without one
bad=0
for _ in $(seq 15); do cap; rows_intact || { bad=1; break; }; sleep 0.2; done
if [ $bad = 0 ]; then ok "3 s of screens: rows intact, no pcollect status line"; else
	notok "rows intact, no pcollect status line"; sed 's/^/  /' "$T/cap" | head -5; fi
# a filter typed while the input runs
$TM send-keys -t t8040 / 'phase'
sleep 1.2; cap
if grep -q '^Filter (regex, Enter applies, Esc cancels): /phase$' "$T/cap" && rows_intact; then ok "typing a filter: the prompt stays intact"; else
	notok "typing a filter: the prompt stays intact"; sed 's/^/  /' "$T/cap" | head -5; fi
$TM send-keys -t t8040 Enter
if wait_for 5 'grep -q "Filter: /phase/" "$T/cap"'; then
	sleep 1.2; cap
	awk 'f && NF >= 5 { print $5 } /Function \(filename:line\)/ { f = 1 }' "$T/cap" > "$T/names"
	if [ "$(cat "$T/names")" = phase_one ] && rows_intact; then ok "/phase: the filtered table, rows intact"; else
		notok "/phase: the filtered table"; sed 's/^/  /' "$T/cap" | head -8; fi
else notok "/phase: the header shows the filter"; fi
$TM send-keys -t t8040 q
for _ in $(seq 100); do [ -s "$T/rc" ] && break; sleep 0.1; done
expect_rc "q: pcollect and plive both exit 0" "0 0" "$(cat "$T/rc" 2>/dev/null)"
cap
if ! grep -q 'pcollect' "$T/cap"; then ok "q: pcollect says nothing (no write error)"; else notok "q: pcollect says nothing"; grep pcollect "$T/cap" | sed 's/^/  /'; fi
if t6_alive "$TPID"; then ok "q: the target keeps running"; else notok "q: the target keeps running"; fi

# ---- pcollect | pfold > x: the status line stays ----
rm -f "$T/rc"
$TM respawn-pane -k -t t8040 "bash -c '$SP_BIN/pcollect -p $TPID -d 4 | $SP_BIN/pfold > $T/x.folded; echo \${PIPESTATUS[*]} > $T/rc'; sleep 60"
if wait_for 20 'grep -qE "^pcollect: [0-9.]+ s, [0-9]+ samples, 1 threads, 0 lost" "$T/cap"'; then ok "pcollect | pfold > x: the status line shows"; else
	notok "pcollect | pfold > x: the status line shows"; sed 's/^/  /' "$T/cap" | head -3; fi
for _ in $(seq 200); do [ -s "$T/rc" ] && break; sleep 0.1; done
if [ "$(cat "$T/rc" 2>/dev/null)" = "0 0" ] && grep -q 'phase_one' "$T/x.folded"; then ok "pcollect | pfold > x: both exit 0, the stacks are in x"; else
	notok "pcollect | pfold > x (rc '$(cat "$T/rc" 2>/dev/null)')"; fi

# ---- plive -p PID ----
rm -f "$T/rc"
$TM respawn-pane -k -t t8040 "$SP_BIN/plive --window 2 -p $TPID 2> $T/plive.err; echo \$? > $T/rc; sleep 60"
if wait_for 20 'grep -q phase_one "$T/cap"'; then ok "plive -p PID: the table shows"; else
	notok "plive -p PID: the table shows"; sed 's/^/  /' "$T/cap" | head -8; fi
child=$(pgrep -f "pcollect -p $TPID\$" | head -1)
if [ -n "$child" ]; then ok "plive -p PID runs pcollect"; else notok "plive -p PID runs pcollect"; fi
for _ in $(seq 10); do cap; rows_intact || { bad=1; break; }; sleep 0.2; done
if [ $bad = 0 ]; then ok "plive -p PID: rows intact"; else notok "plive -p PID: rows intact"; sed 's/^/  /' "$T/cap" | head -5; fi
$TM send-keys -t t8040 q
for _ in $(seq 100); do [ -s "$T/rc" ] && break; sleep 0.1; done
expect_rc "plive -p PID, q: exit 0" 0 "$(cat "$T/rc" 2>/dev/null)"
if [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null; then ok "q: its pcollect is gone"; else notok "q: its pcollect is gone"; fi
if t6_alive "$TPID"; then ok "q: the target keeps running"; else notok "q: the target keeps running"; fi
if [ ! -s "$T/plive.err" ]; then ok "q: nothing on stderr"; else notok "q: nothing on stderr"; head -3 "$T/plive.err" | sed 's/^/  /'; fi

# ---- plive -- COMMAND, on programs no one here wrote (no terminal: tables) ----
head -c 3000000 /dev/urandom > "$T/rand"
cat /usr/bin/* 2>/dev/null | head -c 6000000 > "$T/bins"
# (COMMAND's output goes to plive's stderr, at the end; the first table
# waits for pcollect's first samples)
plive --once -i 1.5 -n 0 -- xz -9e -T1 -c "$T/bins" > "$T/xz.out" 2> "$T/xz.err"; rc=$?
expect_rc "plive --once -- xz: exit 0" 0 $rc
expect_grep "plive -- xz: liblzma's frames in the table" 'lzma' "$T/xz.out"
if ! pgrep -f "xz -9e -T1 -c $T/bins" > /dev/null; then ok "plive --once -- COMMAND: the command is ended"; else
	notok "plive --once -- COMMAND: the command is ended"; pkill -f "xz -9e -T1 -c $T/bins"; fi
plive -n 0 --window 100 -- gzip -9 -c "$T/bins" > "$T/gz.out" 2> "$T/gz.err"; rc=$?
expect_rc "plive -- gzip (to its end): exit 0" 0 $rc
gzip -9 -c "$T/bins" > "$T/gz.want"
if cmp -s "$T/gz.want" "$T/gz.err"; then ok "plive -- gzip: gzip's output is plive's stderr, whole"; else
	notok "plive -- gzip: gzip's output is plive's stderr, whole"; cmp "$T/gz.want" "$T/gz.err" 2>&1 | head -1 | sed 's/^/  /'
	grep -a '^\(pcollect\|plive\|==\)' "$T/gz.err" | head -3 | cut -c1-200 | sed 's/^/  /'; fi
expect_grep "plive -- gzip: gzip's frames in the last table" '\[gzip\]|deflate' "$T/gz.out"
expect_grep "plive -- gzip: the last table says the input ended" '\[input ended\]' "$T/gz.out"

# ---- errors ----
plive --once -p 999999999 > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '^pcollect: no process 999999999' "$T/e"; then ok "plive -p of no process: pcollect's reason, exit 2"; else
	notok "plive -p of no process (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'; fi
plive -p 1 "$T/rand" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'not two of them' "$T/e"; then ok "plive -p PID FILE: usage error"; else notok "plive -p PID FILE (exit $rc)"; fi
plive -- > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "no COMMAND after '--'" "$T/e"; then ok "plive --: usage error"; else notok "plive -- (exit $rc)"; fi
exit 0
