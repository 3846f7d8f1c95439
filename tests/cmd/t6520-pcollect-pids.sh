#!/bin/bash
# pcollect -p PID,PID... (issue 29, item 3): several processes in one
# stream, each under its own root (pfold --pid: comm-PID), Python frames
# merged in each; one exiting does not end the collection, the last one
# does; a pid that does not exist or cannot be sampled is named and
# nothing starts (exit 2, no file).  Assumes nothing about load: the
# spinners stop when told (a file), A first, B a second later.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
if ! command -v python3 > /dev/null; then skip "pcollect -p PID,PID" "python3 is not installed"; exit 0; fi
trap '{ kill -9 $A $B $R $N $PC; wait; } 2>/dev/null; sp_cleanup' EXIT
A= B= R= N= PC=

t6_spawn "$T/a.ready" python3 "$SP_TOP/tests/progs/t652-spin.py" 120 "$T/stop-a" && A=$TPID
t6_spawn "$T/b.ready" python3 "$SP_TOP/tests/progs/t652-spin.py" 120 "$T/stop-b" && B=$TPID
if [ -z "$A" ] || [ -z "$B" ]; then notok "-p A,B: the spinners did not start"; exit 0; fi
pcollect -F 99 -p "$A,$B" -o "$T/two.sp" 2> "$T/err" & PC=$!
# Attached: one perf event per CPU for each of the two threads.
ncpu=$(getconf _NPROCESSORS_ONLN)
for _ in $(seq 300); do
	[ "$(ls -l /proc/$PC/fd 2> /dev/null | grep -c perf_event)" -ge $((2 * ncpu)) ] && break
	sleep 0.1
done
sleep 1
touch "$T/stop-a"; wait "$A" 2> /dev/null
sleep 1
pc_after_a=gone; t6_alive "$PC" && pc_after_a=running
touch "$T/stop-b"
wait "$PC"; rc=$?
pfold --pid --weight=count "$T/two.sp" > "$T/two.folded" 2> /dev/null
roots=$(cut -d';' -f1 "$T/two.folded" | sort -u | tr '\n' ' ')
# (A's root may lack Python frames: a sample read after A exited cannot
# have them, and on a loaded machine that may be all of A's.)
if [ $rc = 0 ] && grep -q "^[^;]*-$A;" "$T/two.folded" && grep -q "^[^;]*-$B;.*spin_for" "$T/two.folded" &&
	[ "$(cut -d';' -f1 "$T/two.folded" | sed 's/.*-//' | grep -cvE "^($A|$B)$")" = 0 ]; then
	ok "-p A,B: both processes, each under its own root ($roots), Python frames merged"
else notok "-p A,B: exit $rc, roots: $roots"; sed 's/^/  /' "$T/err"; fi
if [ $rc = 0 ] && [ $pc_after_a = running ]; then
	ok "-p A,B: A's end did not end the collection; B's end did"
else notok "-p A,B: exit $rc, pcollect 1 s after A's end: $pc_after_a"; fi
if sp-dump "$T/two.sp" | grep -qx "meta pids=$A,$B"; then ok "-p A,B: the pids in the metadata"
else notok "-p A,B: no 'meta pids=$A,$B'"; sp-dump "$T/two.sp" | grep '^meta' | sed 's/^/  /'; fi
wait "$A" "$B" 2> /dev/null

# -p repeated is the same list.
sleep 30 & R=$!
sleep 30 & N=$!
pcollect -F 99 -d 0.3 -p "$R" -p "$N" -o "$T/rep.sp" 2> "$T/err"; rc=$?
if [ $rc = 1 ] && sp-dump "$T/rep.sp" | grep -qx "meta pids=$R,$N"; then
	ok "-p R -p N: one list of two (two idle sleeps: no samples, exit 1)"
else notok "-p R -p N: exit $rc"; sed 's/^/  /' "$T/err"; fi

# A pid that does not exist: named, exit 2, nothing written (an old file is kept).
gone=$(sh -c 'echo $$')
echo old > "$T/keep.sp"
pcollect -p "$R,$gone" -d 1 -o "$T/keep.sp" 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -qx "pcollect: no process $gone" "$T/err" && [ "$(cat "$T/keep.sp")" = old ] &&
	[ "$(wc -l < "$T/err")" = 1 ]; then
	ok "-p R,GONE: 'no process $gone', exit 2, the old -o file kept"
else notok "-p R,GONE: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect -p "$R,$R" -d 1 > /dev/null 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -qx "pcollect: -p: process $R is given twice" "$T/err"; then ok "-p R,R: said, exit 2"
else notok "-p R,R: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect -p "$R,x" -d 1 > /dev/null 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "^pcollect: -p needs a process id, not '$R,x'" "$T/err"; then
	ok "-p R,x: usage error, exit 2"
else notok "-p R,x: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect -p "$R,$N" --trace malloc -d 1 > /dev/null 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "^pcollect: --trace follows one process: not with several -p targets" "$T/err"; then
	ok "-p R,N --trace: usage error, exit 2"
else notok "-p R,N --trace: exit $rc"; sed 's/^/  /' "$T/err"; fi

# A process of another user, as an unprivileged user: named, exit 2.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && [ -x "$SP_BIN/pcollect" ] &&
	setpriv --reuid 65534 --regid 65534 --clear-groups true 2> /dev/null; then
	kill "$N"; wait "$N" 2> /dev/null
	setpriv --reuid 65534 --regid 65534 --clear-groups sleep 30 & N=$!
	sleep 0.2
	setpriv --reuid 65534 --regid 65534 --clear-groups "$SP_BIN/pcollect" -p "$N,$R" -d 1 -o /dev/null \
		2> "$T/err"; rc=$?
	if [ $rc = 2 ] && grep -q "^pcollect: cannot attach to process $R (sleep): permission denied" "$T/err"; then
		ok "-p OWN,ROOTS as nobody: 'cannot attach to process $R', exit 2"
	else notok "-p OWN,ROOTS as nobody: exit $rc"; sed 's/^/  /' "$T/err"; fi
else
	skip "-p of another user's process" "needs root and setpriv to run pcollect as nobody"
fi
kill "$R" "$N" 2> /dev/null; wait "$R" "$N" 2> /dev/null; R= N=
