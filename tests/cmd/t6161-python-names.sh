#!/bin/bash
# pcollect names Python frames as py-spy does: the file relative to the
# longest sys.path entry of the target (the stdlib's json/encoder.py, the
# script's own name), --full-filenames for the interpreter's full paths;
# --python=only says "Python frames only"; snapshots name files the same way.  A stdlib workload nobody here
# wrote (json.dumps of a large structure), for each installed interpreter.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

# Once per make check, in the ASan pass when one follows, for every
# interpreter: how frames are named does not depend on the build (the
# plain build names them in every other Python test).  (Both passes until
# session 11.)
once_per_check "Python file names"
t6_probe || exit 0
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0
# (0.4 s of CPU: ~40 samples at 99 Hz, nearly all in json/encoder.py
# under <module>; what is checked is how they are named, not how many.
# 1 s until session 11: 3 x 0.6 s more per interpreter and pass.)
cat > "$T/js.py" <<'PY'
import json, time
d = [{"k%d" % i: [i, str(i), {"x": i * 1.5}]} for i in range(3000)]
end = time.process_time() + 0.4
while time.process_time() < end:
    json.JSONEncoder(indent=1).encode(d)
PY
cat > "$T/sl.py" <<'PY'
import sys, threading
def waiter(ev):
    ev.wait()
ev = threading.Event()
threading.Thread(target=waiter, args=(ev,), name="waiter").start()
print("ready", flush=True)
sys.stdin.read()
ev.set()
PY
# the main thread spins before threading is imported, then beside a
# worker: its samples before the interpreter is found, after it and at
# the exit are one root (the comm, as perf names the thread); the worker
# is named by its threading name (its first samples may come before
# threading lists it: an unnamed thread has the names read again)
cat > "$T/mt.py" <<'PY'
import time
def spin(t):
    e = time.thread_time() + t
    while time.thread_time() < e:
        pass
spin(0.2)
import threading
th = threading.Thread(target=spin, args=(0.2,), name="worker")
th.start()
spin(0.2)
th.join()
PY
for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	pcollect -F 99 -o "$T/n.sp" -- "$py" "$T/js.py" 2> "$T/n.err"; rc=$?
	expect_rc "${L}exit status" 0 $rc
	pfold "$T/n.sp" > "$T/n.folded" 2> /dev/null
	expect_grep "${L}the stdlib relative to its sys.path entry: json/encoder.py" \
		';[A-Za-z_.]*(encode|iterencode|_iterencode[a-z_]*) \(json/encoder\.py:[0-9]+\)' "$T/n.folded"
	expect_grep "${L}the script relative to its folder (sys.path[0])" ';<module> \(js\.py:[0-9]+\)' "$T/n.folded"
	if grep -q '(/[^)]*\.py:[0-9]*)' "$T/n.folded"; then notok "${L}no absolute Python file name left"
		grep -o '(/[^)]*\.py:[0-9]*)' "$T/n.folded" | sort -u | head -3 | sed 's/^/  /'
	else ok "${L}no absolute Python file name left"; fi
	pcollect -F 99 --full-filenames -o "$T/f.sp" -- "$py" "$T/js.py" 2> /dev/null
	pfold "$T/f.sp" > "$T/f.folded" 2> /dev/null
	expect_grep "${L}--full-filenames: the interpreter's full path" ' \(/[^)]*/json/encoder\.py:[0-9]+\)' "$T/f.folded"
	expect_grep "${L}--full-filenames: the script's full path" "<module> \\($T/js\\.py:[0-9]+\\)" "$T/f.folded"
	pcollect -F 99 --python=only -o "$T/o.sp" -- "$py" "$T/js.py" 2> "$T/o.err"
	expect_grep "${L}--python=only: says Python frames only" '^pcollect: process [0-9]+: Python [0-9.]+: Python frames only' "$T/o.err"
	if grep -q 'frames merged' "$T/o.err"; then notok "${L}--python=only: does not say merged"; else ok "${L}--python=only: does not say merged"; fi
	# a snapshot of a script waiting in threading's Event.wait
	# its standard input a FIFO held open by a sleep of its own: killed by
	# pid (a pkill -f "sleep 30" here killed other tests' sleeps, any
	# "sleep 30..." of the machine)
	rm -f "$T/sl.out" "$T/sl.in"; mkfifo "$T/sl.in"
	"$py" "$T/sl.py" < "$T/sl.in" > "$T/sl.out" 2>&1 &
	spid=$!
	sleep 30 > "$T/sl.in" &
	slp=$!
	for _ in $(seq 100); do grep -q ready "$T/sl.out" 2> /dev/null && break; sleep 0.05; done
	pcollect --snapshot -p "$spid" > "$T/s.txt" 2> /dev/null
	pcollect --snapshot --full-filenames -p "$spid" > "$T/sf.txt" 2> /dev/null
	kill "$slp" "$spid" 2> /dev/null; wait "$slp" "$spid" 2> /dev/null
	expect_grep "${L}snapshot: threading.py relative to its sys.path entry" ' ([A-Za-z]+\.)?wait at threading\.py:[0-9]+' "$T/s.txt"
	expect_grep "${L}snapshot --full-filenames: threading.py's full path" ' ([A-Za-z]+\.)?wait at /[^ ]*/threading\.py:[0-9]+' "$T/sf.txt"
	pcollect -F 199 -o "$T/m.sp" -- "$py" "$T/mt.py" 2> /dev/null
	pfold --tid "$T/m.sp" 2> /dev/null | sed 's/^\[python frame changed\];//' | cut -d';' -f1 | sort | uniq -c > "$T/m.roots"
	main=$(awk '{ r = $2; sub(/.*-/, "", r); split(r, x, "/"); if (x[1] == x[2]) n++ } END { print n + 0 }' "$T/m.roots")
	if [ "$main" = 1 ] && grep -q ' worker-[0-9]*/[0-9]*$' "$T/m.roots"; then
		ok "${L}the main thread is one root before and after threading is imported, the worker named by its threading name"
	else notok "${L}the main thread under $main roots (want 1), a worker root: $(grep -c ' worker-' "$T/m.roots")"; sed 's/^/  /' "$T/m.roots"; fi
done
