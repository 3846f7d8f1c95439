#!/bin/bash
# pcollect --snapshot --locals reads values outside the stack copies (the
# heap, strings, a Python list's items) while the threads are stopped, so
# that they agree with the stacks:
#  C       tests/progs/t7-asof.c: a struct in the heap that another thread
#          rewrites without pause from the counter on its stack; the three
#          frames that point to it show it alike, and its number is the
#          writer's counter (within the one step the writer may be in); a
#          value read after the threads run on would be thousands further.
#          Bad memory on the variable: a pointer into an unreadable page, a
#          string running into one; -v says how long the stop was and how
#          many values the budget left unread; the target runs on untraced.
#  Python  tests/progs/t7-asof.py (Debian's python3, else a pyenv one): a
#          list rewritten from a counter, in a frame that is not the
#          innermost, and the counter in the writer's frame agree; with the
#          read budget made small, what it leaves is said on the variable.
#  real    Debian's python3 running the standard library's
#          ThreadingHTTPServer (tests/progs/t7-httpd.py) with a request
#          waiting for a module-level lock: socketserver's frames show the
#          client's address (its port as the client saw it) and the wait
#          names the lock LOCK_DB.
# Each writer spins one CPU for the second or two it runs (20 s at most).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

PIDS=""
trap 'for p in $PIDS; do kill -9 -- -$p 2>/dev/null; done; sp_cleanup' EXIT

# frame FUNC FILE: the variable lines under FUNC's frame (native "FUNC at",
# Python "FUNC at x.py:")
frame() { awk -v f="$1" '$1 ~ /^#/ { on = ($2 == f); next } /^thread / { on = 0 } on' "$2"; }
untraced() { t6_alive "$1" && grep -q '^TracerPid:[[:space:]]*0$' "/proc/$1/status"; }
# near A B C...: the numbers are within 1 of each other
near() { printf '%s\n' "$@" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { exit !(NR > 1 && hi - lo <= 1) }'; }

if t6_build asof t7-asof.c -O0 -g -pthread && t6_start asof && PIDS="$PIDS $TPID"; then
	for k in 1 2; do
		pcollect --snapshot --locals -v -p "$TPID" > "$T/c$k" 2> "$T/c$k.err"
		expect_rc "C $k: exit 0" 0 $?
		# the struct as each frame that points to it shows it
		sed -n 's/^ *c = 0x[0-9a-f]* -> //p' "$T/c$k" | sort -u > "$T/cv"
		if [ "$(grep -c . "$T/cv")" = 1 ] && [ "$(grep -c '^ *c = ' "$T/c$k")" = 3 ]; then
			ok "C $k: the heap struct alike in wait_on, main and writer"
		else notok "C $k: the heap struct differs between frames"; grep '^ *c = ' "$T/c$k" | sed 's/^/  /'; fi
		n=$(sed -n 's/^{n = \([0-9]*\),.*/\1/p' "$T/cv" | head -1)
		i=$(frame writer "$T/c$k" | sed -n 's/^ *i = \([0-9]*\)$/\1/p')
		if [ -n "$n" ] && [ -n "$i" ] && near "$n" "$i"; then ok "C $k: heap n = $n as the writer's stack i = $i"
		else notok "C $k: heap n = '$n', the writer's stack i = '$i': not as of the stop"; fi
		echo "# C $k: $(sed -n 's/.*: --locals: \(stopped for [0-9.]* ms\), of which \([0-9.]* ms\).*/\1 (values \2)/p' "$T/c$k.err")"
	done
	frame wait_on "$T/c1" > "$T/f"
	expect_grep "C: a pointer into an unreadable page" '^ +guarded = 0x[0-9a-f]+ <unreadable at 0x[0-9a-f]+>$' "$T/f"
	expect_grep "C: a string running into an unreadable page" '^ +edge = 0x[0-9a-f]+ "yyyyyyyy" <unreadable at 0x[0-9a-f]+>$' "$T/f"
	expect_grep "C -v: the stop and the values not read" ': --locals: stopped for [0-9.]+ ms, of which [0-9.]+ ms reading values \([0-9.]+ ms of CPU, [0-9]+ reads\); [0-9]+ values not read \(budget\)' "$T/c1.err"
	if untraced "$TPID"; then ok "C: target running and untraced afterwards"; else notok "C: target left stopped or traced"; fi
fi

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.1[0-3].*/bin/python3 2>/dev/null | tail -1)
if [ -z "$PY" ] || ! "$PY" -c 'import sys; sys.exit(not (3, 8) <= sys.version_info[:2] <= (3, 13))' 2> /dev/null; then
	skip "Python" "no CPython 3.8-3.13 (Debian's python3 or pyenv's)"
elif t6_spawn "$T/q.ready" "$PY" "$SP_TOP/tests/progs/t7-asof.py" && PIDS="$PIDS $TPID"; then
	pcollect --snapshot --locals -p "$TPID" > "$T/q" 2> "$T/q.err"
	expect_rc "Python: exit 0" 0 $?
	box=$(frame main "$T/q" | sed -n 's/^ *box = \[\([0-9]*\), \([0-9]*\)\]$/\1 \2/p')
	wbox=$(frame writer "$T/q" | sed -n 's/^ *box = \[\([0-9]*\), \([0-9]*\)\]$/\1 \2/p')
	i=$(frame writer "$T/q" | sed -n 's/^ *i = \([0-9]*\)$/\1/p')
	# shellcheck disable=SC2086
	if [ -n "$box" ] && [ "$box" = "$wbox" ] && [ -n "$i" ] && near $box "$i"; then
		ok "Python: the list in main (not the innermost frame) [$box] as the writer's counter $i"
	else notok "Python: main's list [$box], the writer's [$wbox] and counter '$i' disagree"; fi
	# 5 reads for the values (the test hook): what is left is said, not guessed
	SP_SNAPSHOT_TEST_LOCALS_READS=5 pcollect --snapshot --locals -p "$TPID" > "$T/q5" 2> "$T/q5.err"
	expect_rc "Python, budget spent: exit 0" 0 $?
	expect_grep "Python, budget spent: said on the variable" '^ +\.\.\. = <not read at 0x[0-9a-f]+: budget>$' "$T/q5"
	expect_grep "Python, budget spent: frames past it said" '^ +\(locals not read: ' "$T/q5"
	if untraced "$TPID"; then ok "Python: target running and untraced afterwards"; else notok "Python: target left stopped or traced"; fi
	kill -9 -- -"$TPID" 2> /dev/null
fi

if [ ! -x /usr/bin/python3 ]; then skip "real" "Debian's python3 is not installed"
elif t6_spawn "$T/h.ready" /usr/bin/python3 "$SP_TOP/tests/progs/t7-httpd.py" && PIDS="$PIDS $TPID"; then
	port=$(awk '/^ready/ { print $2 }' "$T/h.ready")
	setsid /usr/bin/python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print(s.getsockname()[1], flush=True)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
time.sleep(20)' "$port" > "$T/client" 2> /dev/null &
	PIDS="$PIDS $!"
	# until the request's thread waits for the lock (futex)
	for _ in $(seq 100); do
		grep -q '^request' "$T/h.ready" && [ -s "$T/client" ] && [ "$(grep -l '^202 ' /proc/"$TPID"/task/*/syscall 2> /dev/null | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	cport=$(head -1 "$T/client")
	pcollect --snapshot --locals -p "$TPID" > "$T/h" 2> "$T/h.err"
	expect_rc "real: exit 0" 0 $?
	expect_grep "real: socketserver's frame, the client's address" "^ +client_address = \\('127\\.0\\.0\\.1', ${cport:-none}\\)\$" \
		<(frame ThreadingMixIn.process_request_thread "$T/h")
	expect_grep "real: the request's wait names the lock" 'waits for Lock LOCK_DB \(0x[0-9a-f]+\) held by [0-9]+ \(MainThread\)' "$T/h"
	if untraced "$TPID"; then ok "real: target running and untraced afterwards"; else notok "real: target left stopped or traced"; fi
fi
