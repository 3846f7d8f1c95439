#!/bin/bash
# pcollect --snapshot on real hung processes (tests/progs/t7-hang.c, built
# -O2 -fomit-frame-pointer): lock owners, a chain, an ABBA deadlock, the
# other primitives, 100 threads, the stream/folded outputs, and that the
# target always runs on (also when pcollect is killed mid-snapshot).
# Tests synchronise on /proc/PID/task/TID/syscall, never on sleeps.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

t6_build hang t7-hang.c -O2 -g -fomit-frame-pointer -lpthread || exit 0
PIDS=""
trap 'for p in $PIDS; do kill -9 -- -$p 2>/dev/null; done; sp_cleanup' EXIT

# start MODE ARGS: run t7-hang in its own process group; sets HP, OUT.
start() {
	t6_start hang "$@" || { notok "t7-hang $1 did not get ready"; return 1; }
	HP=$TPID PIDS="$PIDS $TPID"
	OUT=$T/hang.ready
}
stop() { kill -9 -- -"$HP" 2>/dev/null; wait "$HP" 2>/dev/null; return 0; }
# tid_of NAME / addr_of NAME: what t7-hang printed for NAME; a thread
# announces itself while main prints "ready", so wait for its line (5 s)
tid_of() {
	local _ v
	for _ in $(seq 100); do
		v=$(awk -v n="$1" '$1 == n { print $2 }' "$OUT")
		[ -n "$v" ] && { echo "$v"; return; }
		sleep 0.05
	done
}
addr_of() { tid_of "$@"; }
# wait_syscall TID NR: until the thread sits in system call NR (5 s)
wait_syscall() {
	for _ in $(seq 100); do
		case "$(cat "/proc/$HP/task/$1/syscall" 2>/dev/null)" in "$2 "*) return 0 ;; esac
		sleep 0.05
	done
	return 1
}
# all_running: every thread of HP is back in R/S/D (not t/T) and untraced
all_running() {
	local bad=0 f st
	for f in /proc/"$HP"/task/*/stat; do
		st=$(awk '{ sub(/.*\) /, ""); print $1 }' "$f" 2>/dev/null)
		case "$st" in R|S|D) ;; *) bad=$((bad + 1)) ;; esac
	done
	[ "$bad" = 0 ] && grep -q '^TracerPid:[[:space:]]*0$' "/proc/$HP/status"
}
all_running_but_leader() {
	local f st
	for f in /proc/"$HP"/task/*/stat; do
		[ "$f" = "/proc/$HP/task/$HP/stat" ] && continue
		st=$(awk '{ sub(/.*\) /, ""); print $1 }' "$f" 2>/dev/null)
		case "$st" in R|S|D) ;; *) return 1 ;; esac
	done
}
# section TID: the text of one thread's section of a snapshot report
section() { awk -v t="thread $1 " 'index($0, t) == 1 { on = 1; print; next } /^thread / { on = 0 } on' "$2"; }

# ---- a mutex and its owner ----
if start mutex; then
	holder=$(tid_of holder) m1=$(addr_of m1)
	if wait_syscall "$HP" 202; then
		pcollect --snapshot -v -p "$HP" > "$T/snap" 2> "$T/err"
		expect_rc "snapshot: exit 0" 0 $?
		section "$HP" "$T/snap" > "$T/main"
		expect_grep "main thread first" "^thread $HP \\(hang\\) sleeping in futex\\($m1, FUTEX_WAIT_PRIVATE" <(grep '^thread' "$T/snap" | head -1)
		expect_grep "main waits for the mutex, held by the holder" "^  waits for mutex $m1 held by $holder \\(holder\\)$" "$T/main"
		expect_grep "main's stack: main_blocked_on_mutex -> pthread_mutex_lock" 'pthread_mutex_lock' "$T/main"
		grep -n 'main_blocked_on_mutex at .*t7-hang.c:[0-9]' "$T/main" > /dev/null && ok "main's stack has file:line" || notok "main's stack has file:line"
		awk '/^  owner /{ on = 1 } on' "$T/main" > "$T/owner"
		expect_grep "the owner's stack right below: hold_lock_and_sleep" '#[0-9 ]+ hold_lock_and_sleep at .*t7-hang.c' "$T/owner"
		expect_grep "the owner sleeps in clock_nanosleep" "^  owner $holder \\(holder\\) sleeping in clock_nanosleep" "$T/owner"
		expect_grep "-v: how long each thread was stopped" "stopped [0-9.]+ ms" "$T/snap"
		if all_running; then ok "target running and untraced afterwards"; else notok "target left stopped or traced"; fi
		pcollect --snapshot -t '^holder$' -p "$HP" > "$T/snap2"
		n=$(grep -c '^thread ' "$T/snap2")
		if [ "$n" = 1 ] && grep -q "^thread $holder (holder)" "$T/snap2"; then ok "-t: only the holder"; else notok "-t: $n threads"; fi
		# the stream feeds every other command: pfold of it = -O folded
		pcollect --snapshot -O stream -p "$HP" -o "$T/s.sp"
		pcollect --snapshot -O folded -p "$HP" > "$T/f.folded"
		pfold "$T/s.sp" > "$T/s.folded"
		expect_eq "-O stream | pfold = -O folded" "$T/f.folded" "$T/s.folded"
		expect_grep "folded: main's leaf is [futex wait]" '^hang;.*main_blocked_on_mutex;.*\[futex wait\] 1$' "$T/f.folded"
		expect_grep "folded: the holder's leaf is [clock_nanosleep wait]" '^holder;.*hold_lock_and_sleep;.*\[clock_nanosleep wait\] 1$' "$T/f.folded"
		# repeated snapshots: wall-clock samples, one per thread per snapshot
		pcollect --snapshot -c 5 -i 0.01 -p "$HP" | pfold > "$T/n.folded"
		expect_grep "-n 5: five samples of each thread" '^holder;.*\[clock_nanosleep wait\] 5$' "$T/n.folded"
		if [ "$(awk '{ s += $NF } END { print s }' "$T/n.folded")" = 10 ]; then ok "-n 5: 2 threads x 5 snapshots"; else notok "-n 5 total"; cat "$T/n.folded"; fi
		sp-dump "$T/s.sp" > "$T/dump" 2>&1
		expect_grep "stream metadata names the source" 'pcollect --snapshot' "$T/dump"
		if all_running; then ok "target running after 8 snapshots"; else notok "target left stopped after repeated snapshots"; fi
	else
		notok "t7-hang mutex: main never blocked in futex"
	fi
	stop
fi

# ---- ABBA deadlock ----
if start abba; then
	a=$(tid_of dl-a) b=$(tid_of dl-b)
	if wait_syscall "$a" 202 && wait_syscall "$b" 202; then
		pcollect --snapshot -p "$HP" > "$T/snap"
		expect_grep "ABBA: a deadlock of 2 threads" '^DEADLOCK: 2 threads wait for each other' "$T/snap"
		expect_grep "the cycle names both threads, each with the lock it waits for" "^DEADLOCK: 2 threads wait for each other: $a \\(dl-a\\) waits for mutex $(addr_of m2) held by $b \\(dl-b\\), which waits for mutex $(addr_of m1) held by $a \\(dl-a\\)\$" "$T/snap"
		expect_grep "main waits for dl-a to exit" "^  waits for thread $a \\(dl-a\\) to exit \\(pthread_join\\)" "$T/snap"
		expect_grep "dl-a's section ends the chain as a deadlock" "is already in this chain: DEADLOCK" <(section "$a" "$T/snap")
	else
		notok "ABBA threads never blocked"
	fi
	stop
fi

# ---- a chain of three ----
if start chain; then
	ca=$(tid_of chain-a) cb=$(tid_of chain-b) cc=$(tid_of chain-c)
	if wait_syscall "$ca" 202 && wait_syscall "$cb" 202; then
		pcollect --snapshot -p "$HP" > "$T/snap"
		section "$ca" "$T/snap" | grep -E '^  (waits|which|owner)' > "$T/chain"
		printf '%s\n' "  waits for mutex $(addr_of m1) held by $cb (chain-b)" \
			"  owner $cb (chain-b) sleeping in futex($(addr_of m2), FUTEX_WAIT_PRIVATE, 2, NULL):" \
			"  which waits for mutex $(addr_of m2) held by $cc (chain-c)" > "$T/want"
		grep -v "^  owner $cc" "$T/chain" > "$T/chain2"
		expect_eq "chain: a waits for b, which waits for c, in order" "$T/want" "$T/chain2"
		expect_grep "chain: c's stack at the end" "hold_lock_and_sleep" <(section "$ca" "$T/snap")
		if ! grep -q DEADLOCK "$T/snap"; then ok "chain: no deadlock reported"; else notok "chain reported as a deadlock"; fi
	else
		notok "chain threads never blocked"
	fi
	stop
fi

# ---- the other primitives ----
if start kinds; then
	ok_all=1
	for n in pi-waiter rw-reader cond-waiter sem-waiter joiner; do wait_syscall "$(tid_of $n)" 202 || ok_all=0; done
	if [ $ok_all = 1 ]; then
		pcollect --snapshot -p "$HP" > "$T/snap"
		expect_grep "PI mutex: owner from the lock word" "waits for priority-inheritance mutex $(addr_of pi) held by $(tid_of pi-holder) \\(pi-holder\\)" "$T/snap"
		expect_grep "rwlock: the writer from __cur_writer" "waits for rwlock \\(to read\\) $(addr_of rw) held by $(tid_of rw-writer) \\(rw-writer\\)" "$T/snap"
		expect_grep "condvar: no owner, said so" "waits for condition variable 0x[0-9a-f]+: a condition variable has no owner" "$T/snap"
		expect_grep "semaphore: no owner, said so" "waits for semaphore 0x[0-9a-f]+: a semaphore has no owner" "$T/snap"
		expect_grep "pthread_join: the joined thread" "waits for thread $(tid_of forever) \\(forever\\) to exit" "$T/snap"
	else
		notok "kinds: threads never blocked"
	fi
	stop
fi

# ---- a zombie leader: main called pthread_exit, the process runs on ----
if start zombie; then
	holder=$(tid_of holder)
	for _ in $(seq 100); do grep -q '^State:.*Z' "/proc/$HP/status" && break; sleep 0.05; done
	timeout 20 pcollect --snapshot -p "$HP" > "$T/snap" 2> "$T/err"; rc=$?
	expect_rc "zombie leader: the snapshot completes" 0 $rc
	expect_grep "zombie leader: listed as a zombie" "^thread $HP \\(hang\\) zombie" "$T/snap"
	expect_grep "zombie leader: the live thread is unwound" 'hold_lock_and_sleep' <(section "$holder" "$T/snap")
	if all_running_but_leader; then ok "zombie leader: the live thread runs on"; else notok "zombie leader: the live thread was left stopped"; fi
	stop
fi

# ---- a thread that cannot stop (uninterruptible: vfork) ----
if start vfork; then
	vf=$(tid_of vforker)
	for _ in $(seq 100); do [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$HP/task/$vf/stat" 2>/dev/null)" = D ] && break; sleep 0.02; done
	timeout 20 pcollect --snapshot -v -p "$HP" > "$T/snap" 2> "$T/err"; rc=$?
	expect_rc "uninterruptible thread: the snapshot completes" 0 $rc
	expect_grep "uninterruptible thread: listed, said why it has no stack" 'did not stop in time' <(section "$vf" "$T/snap")
	expect_grep "uninterruptible thread: the others are unwound" 'hold_lock_and_sleep' "$T/snap"
	if [ "$(id -u)" = 0 ] && cat "/proc/$HP/task/$vf/stack" > /dev/null 2>&1; then
		expect_grep "uninterruptible thread: where it waits in the kernel (vfork)" '^    in the kernel: .*vfork' <(section "$vf" "$T/snap")
	else
		skip "kernel stacks" "/proc/PID/task/TID/stack is readable by root only"
	fi
	ms=$(sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' "$T/snap" | head -1)
	if awk -v m="$ms" 'BEGIN { exit !(m < 1000) }'; then ok "uninterruptible thread: the others were held $ms ms, not the 2 s deadline"; else notok "uninterruptible thread held the others $ms ms"; fi
	back=0
	for _ in $(seq 200); do all_running && { back=1; break; }; sleep 0.05; done
	if [ $back = 1 ]; then ok "uninterruptible thread: runs on, untraced, once its wait ends"; else notok "uninterruptible thread left stopped or traced"; fi
	stop
fi

# ---- 100 threads; killing pcollect mid-snapshot ----
if start many 100; then
	for _ in $(seq 100); do [ "$(ls /proc/$HP/task | wc -l)" = 101 ] && break; sleep 0.05; done
	pcollect --snapshot -v -p "$HP" > "$T/snap" 2> "$T/err"
	expect_grep "100 threads: all 101 in the header" "^process $HP \\(hang\\): 101 threads" "$T/snap"
	n=$(grep -c '^thread ' "$T/snap") k=$(grep -c 'sleep_in_sleeper' "$T/snap")
	if [ "$n" = 101 ] && [ "$k" = 100 ]; then ok "100 threads: every one reported with its stack"; else notok "100 threads: $n reported, $k in sleep_in_sleeper"; fi
	if all_running; then ok "100 threads: all running again afterwards"; else notok "100 threads left stopped"; fi
	for sig in KILL INT TERM HUP; do
		SP_SNAPSHOT_TEST_PAUSE_MS=20000 pcollect --snapshot -p "$HP" > /dev/null 2>&1 &
		cp=$!
		stopped=0
		for _ in $(seq 100); do
			if grep -q "^TracerPid:[[:space:]]*$cp$" "/proc/$HP/status" && grep -q '^State:.*t' "/proc/$HP/task/$HP/status"; then stopped=1; break; fi
			sleep 0.05
		done
		kill -s "$sig" "$cp"
		wait "$cp" 2>/dev/null
		back=0
		for _ in $(seq 100); do all_running && { back=1; break; }; sleep 0.05; done
		if [ $stopped = 1 ] && [ $back = 1 ]; then ok "SIG$sig to pcollect mid-snapshot: all 101 threads run on, untraced"
		elif [ $stopped = 0 ]; then notok "SIG$sig test: the target was never seen stopped"
		else notok "SIG$sig to pcollect mid-snapshot left the target stopped or traced"; fi
	done
	# SIGINT during a stop of -n: the threads go, the stream still ends
	# with its trailer (pfold reads it), and the message says why
	SP_SNAPSHOT_TEST_PAUSE_MS=20000 pcollect --snapshot -c 3 -p "$HP" -o "$T/int.sp" 2> "$T/int.err" &
	cp=$!
	for _ in $(seq 100); do grep -q "^TracerPid:[[:space:]]*$cp$" "/proc/$HP/status" && break; sleep 0.05; done
	kill -INT "$cp"; wait "$cp"; rc=$?
	if [ $rc = 2 ] && grep -q 'interrupted by signal 2 before a snapshot was taken' "$T/int.err" && pfold "$T/int.sp" > /dev/null 2>&1; then
		ok "SIGINT in the stop window: threads let go, a complete (empty) stream, said so"
	else notok "SIGINT in the stop window: exit $rc, $(cat "$T/int.err"), pfold: $(pfold "$T/int.sp" 2>&1 | head -1)"; fi
	# a second tracer is refused with the first one named
	SP_SNAPSHOT_TEST_PAUSE_MS=20000 pcollect --snapshot -p "$HP" > /dev/null 2>&1 &
	cp=$!
	for _ in $(seq 100); do grep -q "^TracerPid:[[:space:]]*$cp$" "/proc/$HP/status" && break; sleep 0.05; done
	pcollect --snapshot -p "$HP" > /dev/null 2> "$T/err"; rc=$?
	kill -INT "$cp"; wait "$cp" 2>/dev/null
	if [ $rc = 2 ] && grep -q "already being traced by process $cp (pcollect)" "$T/err"; then ok "already traced: the tracer is named"
	else notok "already traced: exit $rc: $(cat "$T/err")"; fi
	stop
fi

# ---- a reader blocked on a pipe: the descriptor is named ----
sleep 2 | cat > /dev/null &
catp=$!
for _ in $(seq 100); do case "$(cat /proc/$catp/syscall 2>/dev/null)" in 0\ *) break ;; esac; sleep 0.02; done
pcollect --snapshot -p "$catp" > "$T/cat.snap" 2>&1
expect_grep "blocked in read: the descriptor is named (a pipe)" "^thread $catp \\(cat\\) sleeping in read\\(0 = pipe:\\[[0-9]+\\], " "$T/cat.snap"
kill "$catp" 2> /dev/null; wait "$catp" 2> /dev/null

# ---- the process exits during -n: what was taken is kept, complete ----
sleep 1.5 &  # long enough to be attached under load, shorter than -c 200 -i 0.02
sp=$!
for _ in $(seq 100); do case "$(cat /proc/$sp/syscall 2>/dev/null)" in 230\ *|35\ *) break ;; esac; sleep 0.01; done
pcollect --snapshot -c 200 -i 0.02 -p "$sp" -o "$T/ex.sp" 2> "$T/ex.err"; rc=$?
wait "$sp"
n=$(sed -n 's/.*exited after \([0-9]*\) snapshots.*/\1/p' "$T/ex.err")
pfold "$T/ex.sp" > "$T/ex.folded" 2> "$T/ex.ferr"; frc=$?
total=$(awk '{ s += $NF } END { print s + 0 }' "$T/ex.folded")
if [ $rc = 0 ] && [ -n "$n" ] && [ "$n" -lt 200 ] && [ $frc = 0 ] && [ "$total" = "$n" ] && ! grep -q zombie "$T/ex.folded"; then
	ok "the process exits during -n: $n snapshots kept, a complete stream, no zombie samples"
else notok "process exit during -n: exit $rc, '$(cat "$T/ex.err")', pfold $frc, total $total"; cat "$T/ex.folded" | head -3; fi

# ---- errors ----
pcollect --snapshot -p 999999999 > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && grep -q 'no process' "$T/err" && ok "a missing process: exit 2, said so" || notok "missing process: exit $rc: $(cat "$T/err")"
pcollect --snapshot -- true > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && grep -q 'running process' "$T/err" && ok "--snapshot with a command: usage error" || notok "--snapshot with a command: exit $rc"
pcollect --snapshot -h > "$T/help"; expect_rc "--snapshot -h: exit 0" 0 $?
expect_grep "--snapshot -h: synopsis" '^usage: pcollect --snapshot' "$T/help"
expect_grep "pcollect -h mentions --snapshot" '--snapshot' <(pcollect -h)
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && start mutex; then
	# an unprivileged user may not trace root's process
	cp "$(command -v pcollect)" "$T/pc" && chmod 755 "$T" "$T/pc"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T/pc" --snapshot -p "$HP" > /dev/null 2> "$T/perr"; rc=$?
	if [ $rc = 2 ] && grep -q "cannot attach to process $HP: " "$T/perr" && [ "$(wc -l < "$T/perr")" = 1 ]; then
		ok "not allowed to ptrace: one clear sentence ($(cut -c1-80 "$T/perr")...)"
	elif grep -q 'Permission denied\|cannot execute' "$T/perr"; then
		skip "ptrace refusal" "the unprivileged user cannot run a copy of pcollect here: $(head -1 "$T/perr")"
	else
		notok "ptrace refusal: exit $rc: $(cat "$T/perr")"
	fi
	if all_running; then ok "refused attach leaves the target alone"; else notok "refused attach disturbed the target"; fi
	stop
else
	skip "ptrace refusal" "needs root and setpriv to run pcollect as another user"
fi
