#!/bin/bash
# pcollect --snapshot --locals on a hung CPython program
# (tests/progs/t7-pylocals.py), for each installed 3.8 to 3.13 (pyenv's)
# and Debian's python3: the locals of a Python frame that is not the
# innermost, read from memory while the threads are stopped (an int, a
# float, a str, a list, a dict, an object of a user class, bytes, a tuple,
# a bool, None), and of the innermost; the target runs on afterwards.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

PROG=$SP_TOP/tests/progs/t7-pylocals.py
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0

# frame FUNC FILE: the variable lines under the Python frame FUNC
frame() { awk -v f="$1 at t7-pylocals.py:" '/^ +#[0-9]+ / { on = index($0, f) > 0; next } on' "$2"; }

for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	: > "$T/ready"
	setsid "$py" "$PROG" > "$T/ready" 2> /dev/null &
	TPID=$!
	for _ in $(seq 100); do grep -q '^ready' "$T/ready" && t6_pyblocked $TPID 1 && break; sleep 0.1; done
	if ! t6_pyblocked $TPID 1; then notok "${L}the program did not block"; kill -9 -- -$TPID; continue; fi
	pcollect --snapshot --locals -v -p $TPID > "$T/snap.txt" 2> "$T/snap.err"
	expect_rc "${L}exit status" 0 $?
	frame handle "$T/snap.txt" > "$T/handle"
	printf '%s\n' "count = 42" "ratio = 2.5" "name = 'alice'" "items = [1, 2, 3, 4, ...] (6 items)" \
		"table = {'a': 1, 'b': [...] (2 items)}" "blob = b'\\x00ab'" "pair = (42, None)" "done = False" \
		"nothing = None" > "$T/want"
	sed 's/^ *//' "$T/handle" | grep -vE '^(req|lock) = ' > "$T/got"
	expect_eq "${L}handle (not the innermost frame): its locals" "$T/want" "$T/got"
	expect_grep "${L}handle: an object of a user class" '^ +req = <Request at 0x[0-9a-f]+>$' "$T/handle"
	expect_grep "${L}wait_here (innermost): a parameter" '^ +tries = 3$' <(frame wait_here "$T/snap.txt")
	if [ "$entry" = "${pys[0]}" ] && command -v python3 > /dev/null; then
		# -O json, once: the Python frame's locals as objects
		pcollect --snapshot --locals -O json -p $TPID > "$T/snap.json"
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["threads"][0]["frames"]:
    if f["kind"] == "python":
        for v in f.get("locals", []):
            print(f["name"], v["name"], v["value"])
' "$T/snap.json" > "$T/jl" 2> /dev/null
		expect_grep "${L}-O json: handle's count, a python frame" '^handle count 42$' "$T/jl"
		expect_grep "${L}-O json: handle's dict" "^handle table \\{'a': 1, 'b': \\[\\.\\.\\.\\] \\(2 items\\)\\}\$" "$T/jl"
	fi
	if t6_alive $TPID && grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TPID/status"; then ok "${L}target running and untraced afterwards"
	else notok "${L}target left stopped or traced"; fi
	t6_pystop
done
