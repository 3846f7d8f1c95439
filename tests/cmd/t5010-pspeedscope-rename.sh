#!/bin/bash
# pspeedscope: a thread renamed during the recording is one profile, named by
# its last name.  Real case: pcollect on python3 names the main thread by its
# comm ("python3") until it has read the interpreter's thread name
# ("MainThread"); a worker thread sets its own name with prctl midway.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

# py-spy's speedscope names (`Process PID Thread TID "name"`): two profiles
# of one thread under two names
cat > "$T/two.json" <<'JSON'
{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"},{"name":"work"}]},
 "profiles":[
  {"type":"sampled","name":"Process 40 Thread 41 \"python3\"","unit":"none","startValue":0,"endValue":1,"samples":[[0]],"weights":[1]},
  {"type":"sampled","name":"Process 40 Thread 41 \"MainThread\"","unit":"none","startValue":0,"endValue":3,"samples":[[0,1],[0,1],[0]],"weights":[1,1,1]},
  {"type":"sampled","name":"Process 40 Thread 42 \"worker\"","unit":"none","startValue":0,"endValue":2,"samples":[[0],[0,1]],"weights":[1,1]}]}
JSON
pspeedscope "$T/two.json" > "$T/two.out" 2> "$T/err"
expect_rc "pspeedscope on one thread under two names" 0 $?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join("%s %g" % (p["name"], sum(p["weights"])) for p in d["profiles"]))' "$T/two.out" > "$T/two.got"
printf 'MainThread (41) 4\nworker (42) 2\n' > "$T/two.want"
expect_eq "one profile per thread id, named by its last name" "$T/two.want" "$T/two.got"

t6_probe || exit 0
PY=/usr/bin/python3
if [ ! -x $PY ]; then skip "pspeedscope of a renamed python3 thread" "$PY is not installed"; exit 0; fi
cat > "$T/ren.py" <<'PY'
import ctypes, hashlib, json, threading, time
libc = ctypes.CDLL(None)
def work(t):
    end = time.time() + t
    while time.time() < end:
        hashlib.sha256(json.dumps(list(range(500))).encode()).hexdigest()
def worker():
    work(0.5)
    libc.prctl(15, b"renamed-worker", 0, 0, 0)  # PR_SET_NAME
    work(0.5)
t = threading.Thread(target=worker, name="worker")
t.start()
work(1)
t.join()
PY
pcollect -q -o "$T/ren.sp" -- $PY "$T/ren.py" 2> "$T/pc.err"
expect_rc "pcollect -- python3 (two threads, one renamed)" 0 $?
# each tid's names in sample order, and the last one
sp-dump "$T/ren.sp" | awk '$1 == "sample" { split($3, th, "[=/]"); nm = $4
	for (i = 5; i <= NF && nm !~ /"$/; i++) nm = nm " " $i
	gsub(/"/, "", nm); tid = th[3]
	if (!(tid in n)) order[++k] = tid
	n[tid]++; if (last[tid] != nm) names[tid] = names[tid] " " nm; last[tid] = nm }
	END { for (i = 1; i <= k; i++) print order[i], n[order[i]], last[order[i]], "|" names[order[i]] }' > "$T/tids"
renamed=$(awk '{ sub(/.*\| /, ""); if (split($0, a, " ") > 1) c++ } END { print c + 0 }' "$T/tids")
# (timing: pcollect may read the Python name before the first sample)
if [ "$renamed" -ge 1 ]; then ok "the recording has $renamed renamed thread(s): $(grep -v '| [^ ]*$' "$T/tids" | sed 's/.*| //' | paste -sd';')"; else
	skip "a renamed thread in the recording" "pcollect read the Python thread names before the first sample this time"; fi
pspeedscope "$T/ren.sp" > "$T/ren.json" 2> "$T/err"
expect_rc "pspeedscope of the recording" 0 $?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join(sorted(p["name"] for p in d["profiles"])))' "$T/ren.json" > "$T/ren.got"
awk '{ print $3 " (" $1 ")" }' "$T/tids" | sort > "$T/ren.want"
expect_eq "one profile per thread, named by its last name" "$T/ren.want" "$T/ren.got"
exit 0
