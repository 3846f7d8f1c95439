#!/bin/bash
# pcollect -p PID: attach to a running process with no preparation, all
# its threads and the ones it creates later; stop on -d, SIGINT, SIGTERM or
# the target's exit with a complete stream; the target keeps running,
# unharmed, after pcollect is done or killed with SIGKILL.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build shares t6-shares.c -O2 -g -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0
# The target: two named workers (75% / 25%), re-created every 0.3 s, for ever.
if ! t6_start shares 0.3 wait; then notok "attach: the target did not start"; exit 0; fi
trap 'kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT

pcollect -p "$TPID" -d 1 -F 499 -o "$T/a.sp" 2> "$T/e"; rc=$?
expect_rc "attach -d 1: exit 0" 0 $rc
if sp-dump "$T/a.sp" > "$T/a.txt" 2> "$T/e2"; then ok "attach -d 1: the stream ends with its trailer"; else
	notok "attach -d 1: complete stream"; sed 's/^/  /' "$T/e2"; fi
if t6_alive "$TPID"; then ok "attach -d 1: the target keeps running"; else notok "attach -d 1: the target keeps running"; fi
pfold --weight=count "$T/a.sp" > "$T/a.folded" 2>/dev/null
expect_grep "attach: hot-worker's stack" '^hot-worker;.*start_thread;hot;hot_caller;hot_loop' "$T/a.folded"
expect_grep "attach: cold-worker's stack" '^cold-worker;.*start_thread;cold;cold_caller;cold_loop' "$T/a.folded"
# The shares over whole rounds of the target (0.3 s of CPU each): a
# window of 1 s holds barely one round on a loaded machine, and a round cut
# while hot-worker still runs shifts them (an ASan rehearsal at load 11:
# 64.9 %).  Until the target used 1.5 s of CPU: 5 rounds, a cut round at
# most 3 points off.
pcollect -p "$TPID" -F 499 -o "$T/r.sp" 2> /dev/null & pc=$!
for _ in $(seq 150); do [ "$(cat "$T"/.r.sp.* 2>/dev/null | wc -c)" -gt 2000 ] && break; sleep 0.1; done
t6_ticks "$TPID" 150
kill -INT $pc; wait $pc
pfold --weight=count "$T/r.sp" > "$T/r.folded" 2>/dev/null
# Workers live 0.3 s of CPU: in 5 rounds most samples come from threads
# created after the attach, which only inheritance covers.
tids=$(sp-dump "$T/r.sp" 2>/dev/null | grep '^sample .*"hot-worker"' | sed 's/.*thread=[0-9]*\/\([0-9]*\).*/\1/' | sort -u | wc -l)
if [ "$tids" -ge 2 ]; then ok "attach: threads created after the attach are followed ($tids hot-worker threads)"; else
	notok "attach: threads created after the attach are followed ($tids hot-worker threads)"; fi
hot=$(awk '/^hot-worker;.*;hot_loop(;| )/ {s+=$NF} END {print s+0}' "$T/r.folded")
cold=$(awk '/^cold-worker;.*;cold_loop(;| )/ {s+=$NF} END {print s+0}' "$T/r.folded")
share=$(awk -v h="$hot" -v c="$cold" 'BEGIN { if (h + c) printf "%.1f", 100 * h / (h + c); else print 0 }')
if [ $((hot + cold)) -ge 100 ] && awk -v s="$share" 'BEGIN { exit !(s >= 67 && s <= 83) }'; then
	ok "attach: hot_loop $share% (want 75 +- 8), $((hot + cold)) samples"
else notok "attach: hot_loop share $share% (hot $hot, cold $cold)"; fi

# SIGINT and SIGTERM: a clean stop with the trailer.
for sig in INT TERM; do
	pcollect -p "$TPID" -o "$T/$sig.sp" 2>/dev/null &
	pc=$!
	# signal once samples are flowing (the temporary beside the -o file
	# grows), not after a fixed time: ASan on a loaded machine starts slowly
	for i in $(seq 150); do
		[ "$(cat "$T"/.$sig.sp.* 2>/dev/null | wc -c)" -gt 2000 ] && break
		sleep 0.1
	done
	kill -$sig $pc
	wait $pc; rc=$?
	if [ $rc = 0 ] && sp-dump "$T/$sig.sp" > "$T/$sig.txt" 2>&1 && grep -q '^sample' "$T/$sig.txt"; then
		ok "attach, SIG$sig: exit 0, complete stream"
	else notok "attach, SIG$sig: exit $rc"; tail -2 "$T/$sig.txt" | sed 's/^/  /'; fi
	if t6_alive "$TPID"; then ok "attach, SIG$sig: the target keeps running"; else
		notok "attach, SIG$sig: the target keeps running"; fi
done

# SIGKILL of pcollect: nothing to clean up in the target (no ptrace stop,
# no signal): it keeps running and keeps using CPU.
pcollect -p "$TPID" -o "$T/k.sp" 2>/dev/null &
pc=$!
sleep 0.5
{ kill -KILL $pc; wait $pc; } 2>/dev/null

c0=$(t6_cpu "$TPID")
sleep 0.5
c1=$(t6_cpu "$TPID")
if t6_alive "$TPID" && [ "${c1:-0}" -gt "${c0:-0}" ]; then
	ok "SIGKILL of pcollect: the target keeps running (CPU ticks $c0 -> $c1)"
else notok "SIGKILL of pcollect: the target keeps running (CPU ticks $c0 -> $c1)"; fi
if sp-dump "$T/k.sp" > /dev/null 2>&1; then
	notok "SIGKILL of pcollect: the cut stream is reported as truncated"
else ok "SIGKILL of pcollect: the cut stream is reported as truncated"; fi

# -t on attach, and a live consumer.
pcollect -p "$TPID" -d 0.6 -t '^hot' 2>/dev/null | pfold > "$T/t.folded" 2>/dev/null
if grep -q '^hot-worker;' "$T/t.folded" && ! grep -qv '^hot-worker;' "$T/t.folded"; then
	ok "attach -t '^hot' | pfold: only hot-worker"; else notok "attach -t '^hot' | pfold"; head -3 "$T/t.folded" | cut -c1-100 | sed 's/^/  /'; fi
kill -9 "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null

# The target's exit ends pcollect (no -d), with a complete stream.
"$T/shares" 0.6 &
short=$!
sleep 0.1
timeout 20 "$SP_BIN/pcollect" -p "$short" -o "$T/x.sp" 2>/dev/null; rc=$?
if [ $rc = 0 ] && sp-dump "$T/x.sp" > /dev/null 2>&1; then ok "attach: the target's exit ends pcollect, complete stream"; else
	notok "attach: the target's exit ends pcollect (exit $rc)"; fi
wait "$short" 2>/dev/null

pcollect -p 999999999 -o "$T/n.sp" 2> "$T/e"; rc=$?
expect_rc "attach to a missing process: exit 2" 2 $rc
expect_grep "attach to a missing process: says so" 'no process 999999999' "$T/e"

# a zombie main thread (pthread_exit) while a worker runs on: its maps are
# read through a live thread, so the worker's frames are named
if t6_build zombie t6-zombie.c -O2 -g -pthread && t6_start zombie; then
	for _ in $(seq 100); do grep -q '^State:.*Z' "/proc/$TPID/status" && break; sleep 0.05; done
	pcollect -p "$TPID" -d 0.5 -o "$T/z.sp" 2> "$T/e"
	pfold "$T/z.sp" > "$T/z.folded" 2> /dev/null
	expect_grep "zombie main thread: the worker's frames are named" ';burn_in_worker [0-9]+$' "$T/z.folded"
	kill -9 "$TPID" 2> /dev/null; wait "$TPID" 2> /dev/null
fi
true
