#!/bin/bash
# pcollect --snapshot on a hung CPython program (tests/progs/t61-locks.py),
# for each installed 3.8 to 3.13 (pyenv's) and Debian's python3: the
# Python frames, read while the threads are stopped, stand in place of the
# eval loop's frames, so each thread's stack names the Python line where it
# waits (time.sleep, RLock acquire, queue.get through Condition.wait) under
# the native frames of the wait; which thread holds the GIL (none; then a
# thread burning CPU, and one waiting for it); folded output; --python=off; the target runs on
# afterwards.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

PROG=$SP_TOP/tests/progs/t61-locks.py
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0
LH=$(line HOLDER) LW=$(line WAITER) LG=$(line GETTER) LM=$(line MAIN)

blocked() { t6_pyblocked "$1" 6; }

for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	: > "$T/ready"
	setsid "$py" "$PROG" > "$T/ready" 2> /dev/null &
	TPID=$!
	for _ in $(seq 100); do grep -q '^ready' "$T/ready" && blocked $TPID && break; sleep 0.1; done
	if ! blocked $TPID; then notok "${L}the program did not block (6 threads asleep)"; kill -9 -- -$TPID; continue; fi
	pcollect --snapshot -p $TPID > "$T/snap.txt" 2> "$T/snap.err"; rc=$?
	expect_rc "${L}snapshot: exit status" 0 $rc
	if [ -s "$T/snap.err" ]; then notok "${L}snapshot: said something"; sed 's/^/  /' "$T/snap.err"; else ok "${L}snapshot: nothing on stderr"; fi
	# One block per thread; the first Python frame of each, and what is under it.
	awk -v f="t61-locks.py" '
		/^thread / { t++ } 
		/^ +#[0-9]+ / && index($0, " at " f ":") && !seen[t]++ { sub(/^ +#[0-9]+ +/, ""); print t, $0 }' "$T/snap.txt" > "$T/first"
	for want in "holder at t61-locks.py:$LH" "waiter at t61-locks.py:$LW" "getter at t61-locks.py:$LG" "<module> at t61-locks.py:$LM"; do
		if grep -qF " $want" "$T/first"; then ok "${L}snapshot: a thread's innermost own frame is '${want}'"
		else notok "${L}snapshot: no thread at '$want'"; sed 's/^/  /' "$T/first"; fi
	done
	# the wait itself is native, under the Python line
	if awk -v f="t61-locks.py:$LG" '/^thread / { q = 0 } / (Queue\.)?get at .*queue\.py:[0-9]+/ { q = 1 } q && index($0, f) { found = 1 } END { exit !found }' "$T/snap.txt" &&
		grep -Eq ' (Condition\.)?wait at .*threading\.py:[0-9]*$' "$T/snap.txt"; then
		ok "${L}snapshot: queue.get: Condition.wait (threading.py) < Queue.get (queue.py) < getter"
	else notok "${L}snapshot: the queue.get chain"; grep -B2 -A2 'Queue.get' "$T/snap.txt" | head -8 | sed 's/^/  /'; fi
	if grep -q '_PyEval_EvalFrameDefault' "$T/snap.txt"; then notok "${L}snapshot: an eval-loop frame is left"; grep -m3 _PyEval_EvalFrameDefault "$T/snap.txt"
	else ok "${L}snapshot: no eval-loop frame is left"; fi
	if [ "$v" != debian ]; then
		if awk -v f="t61-locks.py:$LH" '/clock_nanosleep|select/ { s = 1 } s && /time_sleep/ { s = 2 } s == 2 && index($0, "holder at " f) { ok = 1 } /^thread / { s = 0 } END { exit !ok }' "$T/snap.txt"; then
			ok "${L}snapshot: holder: clock_nanosleep (select) < time_sleep < holder (native under Python)"
		else notok "${L}snapshot: holder's native frames under its Python line"; fi
	fi
	pcollect --snapshot -O folded -p $TPID > "$T/snap.folded" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && grep -q ";waiter (t61-locks.py:$LW);" "$T/snap.folded"; then ok "${L}snapshot -O folded: 'waiter (t61-locks.py:$LW)' frames"
	else notok "${L}snapshot -O folded (rc $rc)"; head -3 "$T/snap.folded" "$T/e" | cut -c1-300; fi
	pcollect --snapshot --python=off -p $TPID > "$T/off.txt" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && ! grep -q "t61-locks.py" "$T/off.txt" && grep -q '_PyEval_EvalFrameDefault\|python3' "$T/off.txt"; then
		ok "${L}snapshot --python=off: native frames only"; else notok "${L}snapshot --python=off (rc $rc)"; fi
	expect_grep "${L}snapshot: no thread holds the GIL (all asleep)" '^Python 3\.[0-9]+(\.[0-9]+)?: no thread holds the GIL$' "$T/snap.txt"
	if t6_alive $TPID && blocked $TPID; then ok "${L}the target runs on, not stopped"; else notok "${L}target state afterwards"; fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
	# The GIL's holder: a thread burning CPU in Python, the main one asleep.
	: > "$T/ready"
	setsid "$py" "$SP_TOP/tests/progs/t61-gil.py" > "$T/ready" 2> /dev/null &
	TPID=$!
	for _ in $(seq 100); do grep -q '^ready' "$T/ready" && break; sleep 0.1; done
	burners=" $(ls /proc/$TPID/task | grep -vx $TPID | tr '\n' ' ')"
	# Up to 10 tries: the other burner may be between two waits (a run at
	# load 10 saw it so in 6 tries of 3.12), and the
	# main thread holds the GIL from its print("ready") until time.sleep
	# lets it go (a run at load 8 caught it there: both burners waiting
	# for the main thread).
	for _ in $(seq 10); do
		pcollect --snapshot -p $TPID > "$T/gil.txt" 2> "$T/e"
		holder=$(sed -n 's/^Python 3\.[0-9.]*: the GIL is held by thread \([0-9]*\) .*/\1/p' "$T/gil.txt")
		[ -n "$holder" ] && case "$burners " in *" $holder "*)
			# (Debian's stripped python3: no take_gil to see a waiter by)
			[ "$v" = debian ] && break
			grep -q "^  waits for the GIL, held by thread $holder " "$T/gil.txt" && break ;;
		esac
		sleep 0.1
	done
	case "$holder:$burners " in
	:*) notok "${L}snapshot: no GIL holder named, burners$burners"; grep GIL "$T/gil.txt" | sed 's/^/  /' ;;
	*" $holder "*) ok "${L}snapshot: the GIL is held by a burning thread ($holder of$burners)" ;;
	*) notok "${L}snapshot: GIL holder '$holder', burners$burners"; grep GIL "$T/gil.txt" | sed 's/^/  /' ;;
	esac
	if [ "$v" != debian ]; then # take_gil is named where the interpreter has symbols
		expect_grep "${L}snapshot: the other burner waits for the GIL, held by $holder" \
			"^  waits for the GIL, held by thread $holder " "$T/gil.txt"
	fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
done
# (the loop ends with the killed target's status: not the test's)
exit 0
