#!/bin/bash
# Plain threading locks in pcollect --snapshot, for each installed 3.8 to
# 3.13 (pyenv's) and Debian's python3, on tests/progs/t618-deadlock.py:
#  lock2/lock3  two or three threads take threading.Lock objects in a
#               cycle: "all threads are blocked: deadlock" and a DEADLOCK
#               line naming each Lock (how the waiting frame calls it:
#               other._lock, and its id(), which the program prints) and
#               its holder (whose frame holds it as self._lock)
#  queue        a consumer holding a Lock waits in queue.get(); the
#               producer waits for that Lock: the Queue and the Lock are
#               named (q, lock), the consumer among the Lock's possible holders
#  many         20 threads in lock.acquire (their thread's target) while
#               another sleeps inside "with lock:": each names the holder and
#               the 19 others; not all threads are blocked (one sleeps)
#  globals      two module-level Locks taken in opposite orders: the
#               DEADLOCK line names them as the code does (LOCK_IN,
#               LOCK_OUT); a module-level Event waited for is named DONE
#  cond         two threads in Condition.wait(), one in Semaphore.acquire(),
#               one in Event.wait(): each object named by its class and
#               id(), the two Condition waiters grouped, nobody an owner
# The lock is matched by its semaphore (the futex the thread sleeps on),
# so Debian's stripped python3 is covered too.  No timing is asserted: the
# program prints "ready" before its threads block, and the test waits (up
# to 10 s) until every thread sleeps in futex, three times in a row.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

# Once per make check, in the ASan pass when one follows, for every
# interpreter (3.9 too): what a snapshot of blocked threads says does not
# depend on the build; the plain build reads Python's locks in t6140 and
# t6110.  (Both passes until session 11: ~22 s more.)
once_per_check "Python deadlocks"
t6_probe || exit 0
PROG=$SP_TOP/tests/progs/t618-deadlock.py
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0
# block NAME FILE: the lines of thread NAME's block in a text snapshot.
block() { awk -v h="($1)" '/^thread / { on = index($0, h) > 0 } on' "$2"; }
tid_of() { sed -n "s/^thread \([0-9]*\) ($1) .*/\1/p" "$2"; }
# onefutex PID: the most threads of PID asleep in futex on one address.
onefutex() {
	cat /proc/$1/task/*/syscall 2> /dev/null | awk '$1 == 202 { n[$2]++ } END { m = 0; for (a in n) if (n[a] > m) m = n[a]; print m }'
}
# settled PID THREADS SAME: THREADS threads or more, all blocked, SAME of
# them in futex on one address.
settled() { t6_pyblocked $1 $2 && [ "$(onefutex $1)" -ge $3 ]; }
# snap MODE THREADS [SAME]: start the program, wait until THREADS threads
# sleep in futex (SAME of them on one address: the Lock all wait for), take
# a snapshot into $T/snap.txt; the lock ids in $ids.
snap() {
	local same=${3:-0}
	if ! t6_pystart "$py" "$PROG" "$1"; then notok "${L}$1: t618-deadlock.py did not start"; t6_pystop; return 1; fi
	ids=($(sed -n 's/^ready //p' "$T/ready"))
	# asleep in futex at three polls 0.2 s apart: a thread that waits for
	# the GIL on its way to lock.acquire sleeps in futex too, but not for
	# long.  Under load (a CI run at load ~15) one of 'many's 20 waiters was
	# still on another futex (the GIL's, woken but not yet run) at the
	# snapshot: 18 other waiters named, not 19; hence SAME.
	for _ in $(seq 100); do
		settled $TPID "$2" $same && sleep 0.2 && settled $TPID "$2" $same && sleep 0.2 && settled $TPID "$2" $same && break
		sleep 0.1
	done
	if ! settled $TPID "$2" $same; then notok "${L}$1: the program did not block ($2 threads asleep, $same on one futex)"; t6_pystop; return 1; fi
	pcollect --snapshot -p $TPID > "$T/snap.txt" 2> "$T/snap.err"; rc=$?
	expect_rc "${L}$1: snapshot exit status" 0 $rc
	if t6_alive $TPID; then ok "${L}$1: the target runs on"; else notok "${L}$1: target state afterwards"; fi
	t6_pystop
}
for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	# --- a cycle of 2 and of 3 Locks ---
	for n in 2 3; do
		snap lock$n $((n + 1)) || continue
		expect_grep "${L}lock$n: all threads are blocked: deadlock" '^all threads are blocked: deadlock' "$T/snap.txt"
		want="DEADLOCK: $n threads wait for each other:"
		for i in $(seq 0 $((n - 1))); do
			tid=$(tid_of transfer-$i "$T/snap.txt") nx=$(((i + 1) % n))
			ntid=$(tid_of transfer-$nx "$T/snap.txt")
			# transfer-i holds lock i and waits for lock i+1
			if grep -qF "waits for Lock other._lock (${ids[$nx]}) held by $ntid (transfer-$nx)" "$T/snap.txt"; then
				ok "${L}lock$n: transfer-$i waits for Lock other._lock (${ids[$nx]}, its id()) held by transfer-$nx"
			else notok "${L}lock$n: transfer-$i's Lock (want other._lock ${ids[$nx]} held by $ntid)"; block transfer-$i "$T/snap.txt" | grep -v '^ *#' | sed 's/^/  /'; fi
			block transfer-$i "$T/snap.txt" > "$T/b"
			if grep -q "^  waits for Lock other._lock (${ids[$nx]}) held by $ntid (transfer-$nx): its frame \(Account\.\)\?transfer is inside \"with\" or between acquire() and release() of self._lock$" "$T/b"; then
				ok "${L}lock$n: the holder's frame is named (transfer, self._lock)"
			else notok "${L}lock$n: transfer-$i's wait line"; grep '^  waits' "$T/b" | sed 's/^/  /'; fi
		done
		if grep -q "^$want" "$T/snap.txt" && [ "$(grep -o 'held by' <<< "$(grep '^DEADLOCK' "$T/snap.txt")" | wc -l)" = $n ]; then
			ok "${L}lock$n: one DEADLOCK line, a cycle of $n Locks"
		else notok "${L}lock$n: DEADLOCK line"; grep '^DEADLOCK\|^all' "$T/snap.txt" | sed 's/^/  /'; fi
		block MainThread "$T/snap.txt" > "$T/b"
		expect_grep "${L}lock$n: MainThread waits in Thread.join for transfer-0" '^  waits for thread [0-9]+ \(transfer-0\) to finish \(Thread\.join\)' "$T/b"
	done
	# --- module-level Locks and Event: named as the module calls them ---
	if snap globals 4; then
		a=$(tid_of in-out "$T/snap.txt") b=$(tid_of out-in "$T/snap.txt")
		expect_grep "${L}globals: the DEADLOCK line names the module's Locks" "^DEADLOCK: 2 threads wait for each other: $a \(in-out\) waits for Lock LOCK_OUT \(${ids[1]}\) held by $b \(out-in\), which waits for Lock LOCK_IN \(${ids[0]}\) held by $a \(in-out\)\$" "$T/snap.txt"
		expect_grep "${L}globals: the holder's frame holds LOCK_IN" "^  waits for Lock LOCK_IN \(${ids[0]}\) held by $a \(in-out\): its frame in_then_out is inside \"with\" or between acquire\(\) and release\(\) of LOCK_IN\$" <(block out-in "$T/snap.txt")
		expect_grep "${L}globals: the module's Event named DONE" "^  waits for Event DONE \(${ids[2]}\): an Event has no owner" <(block done-waiter "$T/snap.txt")
	fi
	# --- Lock + queue.Queue ---
	if snap queue 3; then
		expect_grep "${L}queue: all threads are blocked: deadlock" '^all threads are blocked: deadlock' "$T/snap.txt"
		block consumer "$T/snap.txt" > "$T/b"
		expect_grep "${L}queue: the consumer waits for a Queue, which has no owner" '^  waits for Queue q \(0x[0-9a-f]+\): a Queue has no owner' "$T/b"
		block producer "$T/snap.txt" > "$T/b"
		ct=$(tid_of consumer "$T/snap.txt")
		if grep -qE "^  waits for Lock lock \(${ids[0]}\).* $ct \(consumer\)" "$T/b"; then
			ok "${L}queue: the producer waits for the Lock (${ids[0]}), the consumer named as its holder"
		else notok "${L}queue: the producer's Lock"; grep '^  waits' "$T/b" | sed 's/^/  /'; fi
		if grep -q '^DEADLOCK' "$T/snap.txt"; then notok "${L}queue: a cycle claimed (a Queue has no owner)"; else ok "${L}queue: no cycle claimed"; fi
	fi
	# --- many waiters, one holder ---
	if snap many 22 20; then
		ht=$(tid_of holder "$T/snap.txt")
		block w7 "$T/snap.txt" > "$T/b"
		if grep -qE "^  waits for Lock \(${ids[0]}\) held by $ht \(holder\): its frame (many\.<locals>\.)?holder is inside \"with\" or between acquire\(\) and release\(\) of lock; also waited for by " "$T/b"; then
			ok "${L}many: w7 waits for the Lock (${ids[0]}) held by the holder, named with its frame"
		else notok "${L}many: w7's Lock"; grep '^  waits' "$T/b" | cut -c1-300 | sed 's/^/  /'; fi
		n=$(grep '^  waits' "$T/b" | grep -o '([0-9]*) (w[0-9]*)\|[0-9]* (w[0-9]*)' | wc -l)
		if [ "$n" = 19 ]; then ok "${L}many: the 19 other waiters are grouped on its line"; else notok "${L}many: $n other waiters named, want 19"; fi
		if grep -q '^all threads are blocked' "$T/snap.txt"; then notok "${L}many: 'all blocked' though the holder sleeps with a timeout"
		else ok "${L}many: not all threads blocked (the holder sleeps)"; fi
	fi
	# --- Condition, Semaphore, Event ---
	if snap cond 5; then
		expect_grep "${L}cond: all threads are blocked: deadlock" '^all threads are blocked: deadlock' "$T/snap.txt"
		w1=$(tid_of cond-waiter "$T/snap.txt") w2=$(tid_of cond-waiter-2 "$T/snap.txt")
		block cond-waiter "$T/snap.txt" > "$T/b"
		expect_grep "${L}cond: Condition.wait named, the other waiter grouped" "^  waits for Condition c \\(${ids[0]}\\): a Condition has no owner: any thread may notify it; also waited for by $w2 \\(cond-waiter-2\\)\$" "$T/b"
		block cond-waiter-2 "$T/snap.txt" > "$T/b"
		expect_grep "${L}cond: ... and the other way round" "also waited for by $w1 \\(cond-waiter\\)\$" "$T/b"
		block sem-taker "$T/snap.txt" > "$T/b"
		expect_grep "${L}cond: Semaphore.acquire named" "^  waits for Semaphore sem \\(${ids[1]}\\): a Semaphore has no owner" "$T/b"
		block event-waiter "$T/snap.txt" > "$T/b"
		expect_grep "${L}cond: Event.wait named" "^  waits for Event ev \\(${ids[2]}\\): an Event has no owner" "$T/b"
		if grep -q 'semaphore 0x\|held by' "$T/snap.txt"; then notok "${L}cond: a raw semaphore or an owner reported"; grep 'semaphore 0x\|held by' "$T/snap.txt" | head -3
		else ok "${L}cond: no raw semaphore, no owner"; fi
	fi
done
