#!/bin/bash
# pcollect --snapshot --locals on a hung C program with known values in
# several frames (tests/progs/t7-locals.c): at -O0 every one of them, at
# -O2 which are optimized out; bad pointers said on the variable; values
# the read budget left unread said on the variable and counted; the
# target runs on afterwards.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

PIDS=""
trap 'for p in $PIDS; do kill -9 -- -$p 2>/dev/null; done; sp_cleanup' EXIT

# frame FUNC FILE: the variable lines under FUNC's frame
frame() { awk -v f="$1" '$1 ~ /^#/ { on = ($2 == f || index($2, f ".") == 1); next } on' "$2"; }
# in_read PID: until the process sits in read(2) (5 s)
in_read() {
	for _ in $(seq 100); do
		case "$(cat "/proc/$1/syscall" 2>/dev/null)" in "0 "*) return 0 ;; esac
		sleep 0.05
	done
	return 1
}
untraced() { t6_alive "$1" && grep -q '^TracerPid:[[:space:]]*0$' "/proc/$1/status"; }

if t6_build l0 t7-locals.c -O0 -g && t6_start l0 && PIDS="$PIDS $TPID" && in_read "$TPID"; then
	pcollect --snapshot --locals -v -p "$TPID" > "$T/o0" 2> "$T/err"
	expect_rc "-O0: exit 0" 0 $?
	frame wait_input "$T/o0" > "$T/f"
	expect_grep "-O0 wait_input: parameter retries" '^ +retries = 3$' "$T/f"
	expect_grep "-O0 wait_input: local tries" '^ +tries = 6$' "$T/f"
	expect_grep "-O0 wait_input: fd" '^ +fd = [0-9]+$' "$T/f"
	frame handle "$T/o0" > "$T/f"
	expect_grep "-O0 handle: a struct by pointer, one level" '^ +r = 0x[0-9a-f]+ -> \{id = 7, len = 512, path = 0x[0-9a-f]+ "/srv/data.bin"\}$' "$T/f"
	expect_grep "-O0 handle: an enum by name" '^ +c = BLUE$' "$T/f"
	expect_grep "-O0 handle: a char * with its string" '^ +who = 0x[0-9a-f]+ "alice"$' "$T/f"
	expect_grep "-O0 handle: an array" '^ +counts = \{10, 20, 30, 40, 50\}$' "$T/f"
	expect_grep "-O0 handle: a double" '^ +ratio = 1.75$' "$T/f"
	frame serve "$T/o0" > "$T/f"
	expect_grep "-O0 serve: an int parameter" '^ +port = 8080$' "$T/f"
	expect_grep "-O0 serve: a struct" '^ +rq = \{id = 7, len = 512, path = 0x[0-9a-f]+ "/srv/data.bin"\}$' "$T/f"
	expect_grep "-O0 serve: a char array as a string" '^ +label = "server"$' "$T/f"
	expect_grep "-O0 serve: a pointer into nowhere" '^ +gone = 0xdead000 <unreadable at 0xdead000>$' "$T/f"
	expect_grep "-O0 serve: a struct pointer into nowhere" '^ +lost = 0xdead100 -> <unreadable at 0xdead100>$' "$T/f"
	expect_grep "-O0 serve: a string without its end, bounded" '^ +endless = 0x[0-9a-f]+ "x{64}"\.\.\.$' "$T/f"
	expect_grep "-v: the stop" 'stopped for [0-9.]+ ms' "$T/o0"
	if untraced "$TPID"; then ok "-O0: target running and untraced afterwards"; else notok "-O0: target left stopped or traced"; fi
	# -O json: the same values, per frame
	pcollect --snapshot --locals -O json -p "$TPID" > "$T/o0.json"
	expect_rc "-O json: exit 0" 0 $?
	if ! command -v python3 > /dev/null; then skip "-O json" "python3 is not installed to parse it"
	else
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["threads"][0]["frames"]:
    for v in f.get("locals", []):
        print(f["name"], f["kind"], v["name"], v["value"])
' "$T/o0.json" > "$T/jl" 2> "$T/jerr"
		expect_rc "-O json: one JSON object" 0 $?
		expect_grep "-O json: handle's enum" '^handle native c BLUE$' "$T/jl"
		expect_grep "-O json: serve's struct" '^serve native rq \{id = 7, len = 512, path = 0x[0-9a-f]+ "/srv/data.bin"\}$' "$T/jl"
		expect_grep "-O json: wait_input's parameter" '^wait_input native retries 3$' "$T/jl"
	fi
	# the budget for values read outside the stack copies, made 1 byte
	# (the test hook): said on each such variable, counted; what the
	# stack copy holds is still shown
	SP_SNAPSHOT_TEST_LOCALS_READS=1 pcollect --snapshot --locals -v -p "$TPID" > "$T/b" 2> "$T/b.err"
	expect_rc "budget spent: exit 0" 0 $?
	frame serve "$T/b" > "$T/f"
	expect_grep "budget spent: a char * says its string was not read" '^ +endless = 0x[0-9a-f]+ <not read at 0x[0-9a-f]+: budget>$' "$T/f"
	expect_grep "budget spent: a struct's string member too" '^ +rq = \{id = 7, len = 512, path = 0x[0-9a-f]+ <not read at 0x[0-9a-f]+: budget>\}$' "$T/f"
	expect_grep "budget spent: the stack copy's values still shown" '^ +port = 8080$' "$T/f"
	n=$(grep -c '<not read at 0x[0-9a-f]*: budget>' "$T/b")
	expect_grep "budget spent: counted in the report ($n)" "^\\($n values not read: " "$T/b"
	expect_grep "budget spent: counted by -v" ": --locals: stopped for [0-9.]+ ms, of which [0-9.]+ ms reading values \\([0-9.]+ ms of CPU, [0-9]+ reads\\); $n values not read \\(budget\\)" "$T/b.err"
	pcollect --snapshot -p "$TPID" > "$T/plain"
	if grep -q ' = ' <(grep -v '^thread' "$T/plain"); then notok "without --locals: no values"; else ok "without --locals: no values"; fi
fi

if t6_build l2 t7-locals.c -O2 -g && t6_start l2 && PIDS="$PIDS $TPID" && in_read "$TPID"; then
	pcollect --snapshot --locals -p "$TPID" > "$T/o2" 2> "$T/err"
	expect_rc "-O2: exit 0" 0 $?
	expect_grep "-O2 handle: the enum still known" '^ +c = BLUE$' <(frame handle "$T/o2")
	expect_grep "-O2 serve: port still known" '^ +port = 8080$' <(frame serve "$T/o2")
	n=$( { frame handle "$T/o2"; frame serve "$T/o2"; } | grep -c '= <optimized out>$')
	if [ "$n" -ge 1 ]; then ok "-O2: $n variables said to be optimized out"; else notok "-O2: none said to be optimized out"; frame handle "$T/o2"; fi
	if untraced "$TPID"; then ok "-O2: target running and untraced afterwards"; else notok "-O2: target left stopped or traced"; fi
	pcollect --snapshot --locals -O folded -p "$TPID" > /dev/null 2> "$T/err"
	expect_rc "--locals with -O folded: usage error" 2 $?
	expect_grep "--locals with -O folded: says why" 'needs text or json output' "$T/err"
fi
