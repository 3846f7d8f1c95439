#!/bin/bash
# pcollect's exact Python samples (--python-sampling=exact, the default at
# -F 100 or less): each sampled Python thread is stopped (ptrace) while its
# stack and Python frames are read, so merged stacks are exact.  For each
# installed 3.8 to 3.13 (pyenv's) and Debian's python3: launch with known
# shares (60/30/10 in two threads, zlib under b30) and at most 1 % disagreements
# among the exact samples; attach to a 40-deep recursion and a C extension
# calling back into Python: whole stacks.  Then the target's safety (one
# interpreter): never left stopped or traced after pcollect ends normally,
# by SIGINT, by SIGKILL; signals sent to it all arrive; short-lived threads
# and the target's own exit mid-run (its parent gets its status); another
# tracer (strace) means non-blocking with one sentence; the rate rule and
# the option's errors.  No timing is asserted.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
PROGS=$SP_TOP/tests/progs
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0

share() { awk -v f=";$1 \\\\(" '$0 ~ f {s+=$NF} END {print s+0}' "$2"; }
meta() { sed -n "s/^meta $1=//p" "$2"; }
# few_disagree EXACT DISAGREE: at most 1 % of the exact samples disagree.  A
# thread stopped in the few instructions of _PyEval_EvalFrameDefault between
# its native entry and linking its frame into the thread state (or between
# unlinking and returning) has one eval frame more than Python frames: rare
# (1 of 793 seen in one CI run, 0 in most), inherent to stopping a thread
# anywhere, and counted in meta python-exact-disagree.
few_disagree() { [ -n "$2" ] && [ "$(( $2 * 100 ))" -le "${1:-0}" ]; }
# states PID: the state letters of every thread of PID ("" when gone).
states() { cat /proc/$1/task/*/stat 2>/dev/null | sed 's/.*) \(.\).*/\1/' | sort | uniq -c | tr -s ' \n' ' '; }
# let_go PID: every thread runs or sleeps (none stopped, traced or dead) and nothing traces it.
let_go() {
	local s
	s=$(states "$1")
	[ -n "$s" ] && ! echo "$s" | grep -q '[tTZX]' && grep -q '^TracerPid:[[:space:]]*0$' /proc/$1/status 2>/dev/null
}
start_py() { # start_py PY PROG ARGS...: in the background, own group, wait for "ready"; sets TPID
	local py=$1 prog=$2; shift 2
	: > "$T/ready"
	setsid "$py" "$prog" "$@" > "$T/ready" 2> /dev/null &
	TPID=$!
	for _ in $(seq 100); do grep -q '^ready' "$T/ready" && return 0; sleep 0.1; done
	return 1
}

# The issue's bound is 3 points of the truth.  Exact samples are of the
# stop's instant, which lags the kernel's sample by the time pcollect takes
# to handle it: an ASan pcollect, or any pcollect on a machine busier than
# its CPUs, lags enough to shift shares (53/37/10 seen under ASan at load
# 10; the plain build stayed within 2 points at load 3 and at load 10), so
# there the bound is 6 points, and on a machine loaded beyond four times its
# CPUs; the line says which.  4 s of CPU per thread: ~800 samples.
# The truth is the program's own split (T61_OWN): a b30 call ends after
# its last zlib.compress, so b30 runs over 30 % (the "bias of up to ~4
# points" of sessions 13-15, measured against a nominal 60/30/10).  Each
# share within 4 binomial deviations (~6.8 points for a60 at 800 samples:
# the per-CPU periods are drawn at random), at least 3 points, 6 under
# ASan or on a machine loaded beyond four times its CPUs.
tol=3
if [[ $SP_BIN == *asan* ]]; then tol=6
elif awk -v n="$(nproc)" '{ exit !($1 > 4 * n) }' /proc/loadavg; then
	tol=6; echo "# launch shares within at least 6 points: load average $(cut -d' ' -f1 /proc/loadavg) > 4 x $(nproc) CPUs"
fi

# Under ASan the launch and attach below run for 3.8 and the newest pyenv
# interpreter only: what exact mode adds (lib/python/pystop.c: seize, interrupt,
# the registers and stack copy; the exact counts of lib/python/pymerge.c) does not
# depend on the version, and each version's own frame reading (the same
# lib/python/python.c code for both modes) runs under ASan in t6160 (a launch,
# every interpreter), t6100 (this attach's shapes), t6150 and t6140.  3.8
# (PyFrameObject chains) and the newest (_PyInterpreterFrame, the debug
# offsets) keep both frame layouts exact under ASan; the plain pass runs
# every interpreter.  (Until session 11 the ASan pass ran all six: ~40 s.)
if [[ $SP_BIN == *asan* ]]; then
	newest=
	for e in "${pys[@]}"; do [ "${e%% *}" = debian ] || newest=${e%% *}; done
	keep=()
	for e in "${pys[@]}"; do
		case "${e%% *}" in 3.8 | "$newest") keep+=("$e") ;; esac
	done
	[ ${#keep[@]} -gt 0 ] && [ ${#keep[@]} -lt ${#pys[@]} ] &&
		echo "# under ASan, exact launch and attach for $(for e in "${keep[@]}"; do printf '%s ' "${e%% *}"; done)only: each version's frame reading runs under ASan in t6160, t6100, t6150 and t6140; the plain pass runs every interpreter"
	[ ${#keep[@]} -gt 0 ] && loop=("${keep[@]}") || loop=("${pys[@]}")
else loop=("${pys[@]}"); fi
for entry in "${loop[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	# --- launch: shares, exact ---
	rm -f "$T/own"
	T61_OWN=$T/own pcollect -v -o "$T/s.sp" -- "$py" "$PROGS/t61-shares.py" 4 2> "$T/s.err"; rc=$?
	expect_rc "${L}launch: exit status of the Python program" 0 $rc
	expect_grep "${L}launch: says the Python frames are merged exactly" \
		"^pcollect: process [0-9]+: Python 3\.[0-9]+(\.[0-9]+)?: Python frames merged, exact " "$T/s.err"
	sp-dump "$T/s.sp" > "$T/s.txt" 2>&1
	ex=$(meta python-exact "$T/s.txt") exd=$(meta python-exact-disagree "$T/s.txt") all=$(meta python-samples "$T/s.txt")
	if [ "$(meta python-sampling "$T/s.txt")" = exact ] && [ "${ex:-0}" -ge 100 ] && few_disagree "$ex" "$exd"; then
		ok "${L}launch: $ex of $all Python samples taken from stopped threads, $exd of them disagree (at most 1 %)"
	else notok "${L}launch: exact samples $ex of $all, disagreeing $exd"; grep '^meta python' "$T/s.txt" | sed 's/^/  /'; grep 'python:' "$T/s.err" | sed 's/^/  /'; fi
	pfold --weight=count "$T/s.sp" > "$T/s.folded" 2> /dev/null
	a=$(share a60 "$T/s.folded") b=$(share b30 "$T/s.folded") c=$(share c10 "$T/s.folded")
	tot=$((a + b + c))
	t6_split "${L}launch" "$T/own" $tol $a $b $c

	z=$(awk '/;deflate/ {s+=$NF} END {print s+0}' "$T/s.folded")
	zb=$(awk '/;b30 \([^)]*\);[^(]*deflate/ {s+=$NF} END {print s+0}' "$T/s.folded")
	if [ "$z" -ge 20 ] && [ $((zb * 100)) -ge $((z * 95)) ]; then
		ok "${L}launch: $zb of $z samples in zlib's deflate are right under b30 (want >= 95%)"
	else notok "${L}launch: $zb of $z deflate samples under b30"; grep deflate "$T/s.folded" | grep -v ';b30 ' | head -3 | cut -c1-400 | sed 's/^/  /'; fi

	# --- attach: whole stacks ---
	if ! start_py "$py" "$PROGS/t61-shapes.py"; then notok "${L}attach: t61-shapes.py did not start"; kill -9 -- -$TPID 2> /dev/null; continue; fi
	# Until the target used 1.2 s of CPU (two rounds of its shapes) once
	# pcollect has found its Python, however loaded the machine: ~120 exact
	# samples, ~40 in each shape.  (2 s from pcollect's start until session
	# 11: ~200 samples, 0.8 s more per interpreter and pass.)
	pcollect -v -p $TPID -o "$T/a.sp" 2> "$T/a.err" & CP=$!
	for _ in $(seq 100); do grep -q 'Python frames merged' "$T/a.err" && break; sleep 0.1; done
	t6_ticks $TPID 120
	kill -INT $CP; wait $CP; rc=$?
	expect_rc "${L}attach: exit status" 0 $rc
	if let_go $TPID; then ok "${L}attach: afterwards no thread of the target is stopped, and nothing traces it"; else
		notok "${L}attach: target threads: $(states $TPID); $(grep TracerPid /proc/$TPID/status)"; fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
	pfold --weight=count "$T/a.sp" > "$T/a.folded" 2> /dev/null
	sp-dump "$T/a.sp" > "$T/a.txt" 2>&1
	exd=$(meta python-exact-disagree "$T/a.txt") ex=$(meta python-exact "$T/a.txt")
	if [ "${ex:-0}" -ge 50 ] && few_disagree "$ex" "$exd"; then ok "${L}attach: $ex exact samples, $exd disagree (at most 1 %)"; else
		notok "${L}attach: $ex exact samples, $exd disagree"; grep 'python:' "$T/a.err" | sed 's/^/  /'; fi
	r=$(awk '/;rec \(/ && /;spin \(/ {s+=$NF} END {print s+0}' "$T/a.folded")
	r40=$(awk '/;rec \(/ && /;spin \(/ { n = gsub(/;rec \(/, "&"); if (n == 40) s += $NF } END {print s+0}' "$T/a.folded")
	if [ "$r" -ge 5 ] && [ $((r40 * 100)) -ge $((r * 95)) ]; then
		ok "${L}attach: recursion: $r40 of $r samples show all 40 rec frames (want >= 95%)"
	else notok "${L}attach: recursion: $r40 of $r samples with 40 rec frames"; grep ';rec (' "$T/a.folded" | awk 'gsub(/;rec \(/, "&") != 40' | head -2 | cut -c1-300 | sed 's/^/  /'; fi
	l=$(awk '/<lambda> \(/ && /;spin \(/ {s+=$NF} END {print s+0}' "$T/a.folded")
	if [ "$v" = debian ]; then cre='[^;(]+(;[^;(]+)*'; else cre='([^;(]+;)*functools_reduce(;[^;(]+)*'; fi
	lr=$(awk -v re=";via_reduce \\\\([^)]*\\\\);$cre;(via_reduce\\\\.<locals>\\\\.)?<lambda> \\\\([^)]*\\\\);([^;(]+;)*spin \\\\(" \
		'$0 ~ re {s+=$NF} END {print s+0}' "$T/a.folded")
	if [ "$l" -ge 10 ] && [ $((lr * 100)) -ge $((l * 90)) ]; then
		ok "${L}attach: functools.reduce: $lr of $l lambda samples read via_reduce;<C frames>;<lambda>;spin (want >= 90%)"
	else notok "${L}attach: functools.reduce: $lr of $l samples well-formed"; grep '<lambda>' "$T/a.folded" | head -2 | cut -c1-400 | sed 's/^/  /'; fi
done

# --- the target's safety (the last pyenv interpreter, else Debian's) ---
py=${pys[0]#* }
for e in "${pys[@]}"; do [ "${e%% *}" = debian ] || py=${e#* }; done
L="safety: "
if start_py "$py" "$PROGS/t61-shapes.py"; then
	# SIGINT: a normal end; every thread let go.
	pcollect -p $TPID -o "$T/i.sp" 2> "$T/i.err" & CP=$!
	sleep 1.5
	kill -INT $CP; wait $CP; rc=$?
	expect_rc "${L}SIGINT: pcollect ends with status 0" 0 $rc
	if let_go $TPID; then ok "${L}SIGINT: the target's threads run on, not traced"; else
		notok "${L}SIGINT: target threads: $(states $TPID); $(grep TracerPid /proc/$TPID/status)"; fi
	if sp-dump "$T/i.sp" 2> /dev/null | grep -q '^meta python-sampling=exact$'; then ok "${L}SIGINT: the stream is complete, exact"; else
		notok "${L}SIGINT: stream"; sp-dump "$T/i.sp" 2>&1 | tail -3 | sed 's/^/  /'; fi
	# SIGKILL, five times at different moments: the kernel lets them go.
	bad=0
	for d in 0.5 0.73 0.91 1.17 1.39; do
		pcollect -q -p $TPID -o "$T/k.sp" 2> /dev/null & CP=$!
		sleep $d
		kill -KILL $CP; wait $CP 2> /dev/null
		sleep 0.1
		let_go $TPID || { bad=$((bad + 1)); notok "${L}SIGKILL after $d s: target threads: $(states $TPID)"; }
	done
	c0=$(t6_cpu $TPID); sleep 0.5; c1=$(t6_cpu $TPID)
	if [ $bad = 0 ] && [ "$c1" -gt "$c0" ]; then ok "${L}SIGKILL (5 times): the target runs on ($c0 -> $c1 CPU ticks), not traced"; else
		notok "${L}SIGKILL: $bad times not free; CPU ticks $c0 -> $c1"; fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
else notok "${L}t61-shapes.py did not start"; kill -9 -- -$TPID 2> /dev/null; fi

# Signals, short-lived threads, the target's exit mid-run.
if start_py "$py" "$PROGS/t612-life.py"; then
	c0=$(t6_cpu $TPID)
	pcollect -v -p $TPID -d 120 -o "$T/l.sp" 2> "$T/l.err" & CP=$!
	sleep 1
	for i in $(seq 200); do kill -s RTMIN $TPID; [ $((i % 20)) = 0 ] && sleep 0.05; done
	# until the target used 1.5 s of CPU while sampled, however loaded the machine
	for _ in $(seq 600); do [ $(($(t6_cpu $TPID) - c0)) -ge 150 ] && break; sleep 0.1; done
	kill -TERM $TPID; wait $TPID; trc=$?
	# pcollect ends on its own once the target is gone.
	for _ in $(seq 100); do kill -0 $CP 2> /dev/null || break; sleep 0.1; done
	if kill -0 $CP 2> /dev/null; then notok "${L}target exit: pcollect still runs 10 s later"; kill -INT $CP; fi
	wait $CP; rc=$?
	expect_rc "${L}target exit: pcollect ends with status 0" 0 $rc
	expect_rc "${L}target exit: its parent gets its exit status (7)" 7 $trc
	if grep -q '^signals 200 threads' "$T/ready"; then ok "${L}200 SIGRTMIN sent while sampled: all 200 arrived ($(tail -1 "$T/ready"))"; else
		notok "${L}SIGRTMIN: $(tail -1 "$T/ready") (sent 200)"; fi
	n=$(awk '/^signals/ {print $4}' "$T/ready")
	sp-dump "$T/l.sp" > "$T/l.txt" 2>&1
	ex=$(meta python-exact "$T/l.txt") exd=$(meta python-exact-disagree "$T/l.txt")
	if [ "${n:-0}" -ge 3 ] && [ "${ex:-0}" -ge 20 ] && few_disagree "$ex" "$exd"; then
		ok "${L}$n short-lived threads: $ex exact samples, $exd disagree (at most 1 %)"; else
		notok "${L}short-lived threads: $n threads, $ex exact samples, $exd disagree"; grep 'python:' "$T/l.err" | sed 's/^/  /'; fi
else notok "${L}t612-life.py did not start"; kill -9 -- -$TPID 2> /dev/null; fi

# exec: the threads are let go at once, while pcollect runs on.
if start_py "$py" -c 'import os, time
print("ready", flush=True)
e = time.time() + 1.5
while time.time() < e: pass
os.execv("/bin/sleep", ["sleep", "60"])'; then
	pcollect -q -p $TPID -d 60 -o "$T/e.sp" 2> /dev/null & CP=$!
	for _ in $(seq 100); do [ "$(cat /proc/$TPID/comm 2> /dev/null)" = sleep ] && break; sleep 0.1; done
	sleep 1
	tr=$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$TPID/status)
	if [ "$(cat /proc/$TPID/comm)" = sleep ] && [ "$tr" = 0 ] && kill -0 $CP 2> /dev/null; then
		ok "${L}exec: the process is let go at its exec (TracerPid 0) while pcollect runs on"
	else notok "${L}exec: comm $(cat /proc/$TPID/comm), TracerPid $tr"; fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
	wait $CP
else notok "${L}exec: the program did not start"; kill -9 -- -$TPID 2> /dev/null; fi

# Launch mode: the command's own status passes through.
pcollect -q -o "$T/x.sp" -- "$py" -c 'import sys, time
e = time.time() + 0.5
while time.time() < e: pass
sys.exit(3)'; rc=$?
expect_rc "${L}launch: the command's exit status (3) passes through" 3 $rc

# Another tracer: non-blocking, one sentence.
if command -v strace > /dev/null; then
	if start_py strace "-o" "$T/strace.out" "$py" "$PROGS/t61-shapes.py"; then
		PYPID=$(pgrep -P $TPID | head -1)
		pcollect -p $PYPID -d 1 -o "$T/st.sp" 2> "$T/st.err"; rc=$?
		expect_rc "${L}traced by strace: exit status" 0 $rc
		expect_grep "${L}traced by strace: one sentence, then non-blocking" \
			"^pcollect: process $PYPID: no exact Python stacks \(cannot attach to process $PYPID: it is already being traced by process $TPID \(strace\).*\): its Python frames are read after each sample, without stopping the thread \(non-blocking\)$" "$T/st.err"
		if pfold "$T/st.sp" 2> /dev/null | grep -q ';spin ('; then ok "${L}traced by strace: Python frames merged all the same"; else
			notok "${L}traced by strace: no Python frames"; fi
	else notok "${L}strace t61-shapes.py did not start"; fi
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
else skip "${L}another tracer" "strace is not installed"; fi

# The rate rule, the option.
pcollect -F 199 -o "$T/f.sp" -- "$py" -c 'import time
e = time.time() + 0.5
while time.time() < e: pass' 2> "$T/f.err"
expect_grep "${L}-F 199: non-blocking, and why" \
	"Python frames merged, non-blocking: -F 199 is above 100 Hz, where stopping each sampled thread would slow it down by more than 5 %" "$T/f.err"
if start_py "$py" "$PROGS/t61-shapes.py"; then
	pcollect --python-sampling=nonblocking -p $TPID -d 1 -o "$T/n.sp" 2> "$T/n.err"
	kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null
else notok "${L}t61-shapes.py did not start"; fi
expect_grep "${L}--python-sampling=nonblocking: said" "Python frames merged, non-blocking: --python-sampling=nonblocking$" "$T/n.err"
if sp-dump "$T/n.sp" 2> /dev/null | grep -q '^meta python-sampling=nonblocking$'; then ok "${L}--python-sampling=nonblocking: in the metadata"; else notok "${L}nonblocking metadata"; fi
pcollect --python-sampling=sometimes -- true 2> "$T/e"; rc=$?
expect_rc "${L}--python-sampling=sometimes: usage error" 2 $rc
expect_grep "${L}--python-sampling=sometimes: says what is allowed" "must be exact or nonblocking, not 'sometimes'" "$T/e"
pcollect --python-sampling=exact --call-graph fp -- true 2> "$T/e"; rc=$?
expect_rc "${L}exact with --call-graph fp: usage error" 2 $rc
expect_grep "${L}exact with --call-graph fp: says why" "needs --call-graph dwarf" "$T/e"
exit 0
