#!/bin/bash
# Stack shapes of CPython programs (tests/progs/t61-shapes2.py), for each
# installed 3.8 to 3.13 (pyenv's) and Debian's python3: merged stacks stay
# well-formed (each Python function right above the one it called, with at
# most native call frames between; no eval-loop frame left) for asyncio
# tasks (under the event loop's Handle._run), an exception in flight (spin
# inside an except block, and inside a finally block while the exception
# propagates: the handler's line), functools.reduce calling a lambda, a
# thread started after pcollect attached (named by its threading name), a
# forked child (followed: its samples are merged under its own pid) and an
# exec of another Python program (the new image is read anew).  Shares
# are loose: the Python frames are read after the sample (pcollect(1)).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

# Once per make check, in the ASan pass when one follows, for every
# interpreter (3.9 too): the checks are the shapes of the merged stacks,
# whose bounds (well-formed shares of non-blocking samples) an ASan
# pcollect, reading frames later, meets less easily than the plain one;
# the plain build's frame reading runs for each interpreter in t6100,
# t6120, t6140 and t6160.  (Both passes until session 11: ~45 s more.)
once_per_check "stack shapes"
t6_probe || exit 0
PROG=$SP_TOP/tests/progs/t61-shapes2.py
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0

# count RE FILE: samples (last field) of the lines matching RE (awk ERE).
count() { awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }' "$2"; }
# under PARENT CHILD: an awk ERE for Python frame CHILD right under Python
# frame PARENT (native call frames, without a file, between them).
under() { echo ";$1 \\([^)]*\\);([^;(]+;)*$2 \\("; }
# wellformed NAME CALLS ALL [MIN [PCT]]: CALLS of ALL samples (want >= MIN,
# default 10) have the expected shape: at least PCT% (default 80) of them.
wellformed() {
	if [ "$3" -ge "${4:-10}" ] && [ $(($2 * 100)) -ge $(($3 * ${5:-80})) ]; then ok "$1: $2 of $3 samples"
	else notok "$1: $2 of $3 samples (want >= ${5:-80}% of >= ${4:-10})"; return 1; fi
}
# noeval NAME FILE [PCT]: at most PCT% (default 5) of the stacks in spin
# keep an eval-loop frame (a sample whose thread moved on before its
# frames were read keeps one: pcollect(1), Consistency).  Samples of the
# start-up's imports are not counted: pcollect handles the first samples
# of a launch late (it loads symbols), when the thread is in spin already.
noeval() {
	local e p
	e=$(awk '/;spin \(/ && !/;PyImport_/ { s += $NF } END { print s + 0 }' "$2")
	p=$(awk '/;spin \(/ && !/;PyImport_/ && /;_PyEval_EvalFrameDefault/ { s += $NF } END { print s + 0 }' "$2")
	if [ "$e" -gt 0 ] && [ $((p * 100)) -le $((e * ${3:-5})) ]; then ok "$1: $p of $e samples in spin keep an eval-loop frame (want <= ${3:-5}%)"
	else notok "$1: $p of $e samples in spin keep _PyEval_EvalFrameDefault (want <= ${3:-5}%)"; fi
}

# retry FN: run the checks of FN, and once more when one failed: the
# Python frames are read after the sample (pcollect(1), Consistency), and
# on a loaded machine a run can read most of them late.
retry() {
	local out
	out=$("$@")
	if grep -q '^not ok' <<< "$out"; then
		echo "# $1 failed once, again:"
		out=$("$@")
	fi
	printf '%s\n' "$out"
}

# asyncio
shape_asyncio() {
	# (launched: the program runs for a given CPU time, so the number of
	# samples does not depend on the machine's load)
	if pcollect -F 199 -o "$T/a.sp" -- "$py" "$PROG" asyncio > /dev/null 2>&1; then
		pfold --weight=count "$T/a.sp" > "$T/a.folded" 2> /dev/null
		all=$(count ';spin \(' "$T/a.folded")
		a=$(count "$(under task_a spin)" "$T/a.folded") b=$(count "$(under task_b spin)" "$T/a.folded")
		loop=$(count ";(Handle\\._run|_run) \\([^)]*events\\.py:[0-9]+\\);([^;]+;)*task_[ab] \\([^)]*:($(line TASK_A)|$(line TASK_B))\\);([^;(]+;)*spin \\(" "$T/a.folded")
		if [ "$a" -ge 3 ] && [ "$b" -ge 3 ]; then ok "${L}asyncio: both tasks sampled ($a, $b samples)"; else notok "${L}asyncio: task_a $a, task_b $b samples"; fi
		wellformed "${L}asyncio: Handle._run (events.py) ... task_a|task_b (their line);spin" $loop $all ||
			grep ';spin (' "$T/a.folded" | head -2 | cut -c1-600 | sed 's/^/  /'
		noeval "${L}asyncio" "$T/a.folded"
	else notok "${L}asyncio: pcollect or the program failed"; fi
}

# exception in flight, C calling back into Python
shape_exc() {
	if pcollect -F 199 -o "$T/e.sp" -- "$py" "$PROG" exc > /dev/null 2>&1; then
		pfold --weight=count "$T/e.sp" > "$T/e.folded" 2> /dev/null
		for f in "in_except EXCEPT" "in_finally FINALLY"; do
			fn=${f% *} ln=$(line ${f#* })
			all=$(count ";$fn \\(" "$T/e.folded")
			good=$(count ";$fn \\([^)]*:$ln\\);([^;(]+;)*spin \\(" "$T/e.folded")
			wellformed "${L}exception in flight: $fn (t61-shapes2.py:$ln, the handler's line);spin" $good $all 5 ||
				grep ";$fn (" "$T/e.folded" | head -2 | cut -c1-500 | sed 's/^/  /'
		done
		if [ "$v" = debian ]; then cre='[^;(]+(;[^;(]+)*'; else cre='([^;(]+;)*functools_reduce(;[^;(]+)*'; fi
		all=$(count '<lambda> \(' "$T/e.folded")
		good=$(count ";via_reduce \\([^)]*\\);$cre;(via_reduce\\.<locals>\\.)?<lambda> \\([^)]*:$(line REDUCE)\\);([^;(]+;)*spin \\(" "$T/e.folded")
		# (50%, as in t6100: a lambda call's frames are often read late)
		wellformed "${L}functools.reduce: via_reduce;<C frames>;<lambda>;spin" $good $all 5 50 ||
			grep '<lambda>' "$T/e.folded" | head -2 | cut -c1-500 | sed 's/^/  /'
		# calls start and end every 0.2 s: more samples are read late, many
		# more under load
		noeval "${L}exception/reduce" "$T/e.folded" 30
	else notok "${L}exc: pcollect or the program failed"; fi
}

# a thread started after attach
shape_late() {
	rm -f "$T/go"
	if t6_pystart "$py" "$PROG" late "$T/go"; then
		pcollect -F 199 -p $TPID -d 6 -o "$T/l.sp" 2> "$T/l.err" &
		pc=$!
		# the thread starts once pcollect has sampled the process
		for _ in $(seq 100); do grep -q 'Python frames merged' "$T/l.err" && break; sleep 0.1; done
		: > "$T/go"
		wait $pc
		t6_pystop
		pfold --weight=count "$T/l.sp" > "$T/l.folded" 2> /dev/null
		all=$(count ';late_worker \(' "$T/l.folded")
		good=$(count "^late-N;.*$(under late_worker spin)" "$T/l.folded")
		wellformed "${L}a thread started after attach: late-N;...;late_worker;spin (its threading name late-1, numbered names grouped)" $good $all ||
			grep -o '^[^;]*' "$T/l.folded" | sort | uniq -c | sed 's/^/  /'
	else notok "${L}late: the program did not start"; t6_pystop; fi
}

# fork: the child is followed
shape_fork() {
	pcollect -F 199 -o "$T/f.sp" -- "$py" "$PROG" fork > /dev/null 2> "$T/f.err"; rc=$?
	expect_rc "${L}fork: exit status" 0 $rc
	pfold --weight=count --pid "$T/f.sp" > "$T/f.folded" 2> /dev/null
	ppid=$(awk '/;parent_work \(/ { split($1, r, ";"); n = split(r[1], p, "-"); print p[n]; exit }' "$T/f.folded")
	all=$(count ';child_work \(' "$T/f.folded")
	good=$(awk -v re="$(under child_work spin)" -v pp="$ppid" '$0 ~ re { split($1, r, ";"); n = split(r[1], p, "-"); if (p[n] != pp) s += $NF } END { print s + 0 }' "$T/f.folded")
	wellformed "${L}fork: the child is sampled, under its own pid, child_work;spin merged" $good $all ||
		grep -o '^[^;]*' "$T/f.folded" | sort | uniq -c | sed 's/^/  /'
	if [ "$(grep -c 'Python frames merged' "$T/f.err")" = 2 ]; then ok "${L}fork: Python found in parent and child"
	else notok "${L}fork: messages"; sed 's/^/  /' "$T/f.err"; fi
}

# exec of another Python program
shape_exec() {
	pcollect -F 199 -o "$T/x.sp" -- "$py" "$PROG" exec > /dev/null 2> "$T/x.err"; rc=$?
	expect_rc "${L}exec: exit status" 0 $rc
	pfold --weight=count "$T/x.sp" > "$T/x.folded" 2> /dev/null
	for f in before_exec after_exec; do
		all=$(count ";$f \\(" "$T/x.folded")
		good=$(count "$(under $f spin)" "$T/x.folded")
		wellformed "${L}exec: $f;spin merged" $good $all
	done
	p=$(sed -n 's/^pcollect: process \([0-9]*\): Python.*: Python frames merged\b.*/\1/p' "$T/x.err" | sort | uniq -c | awk '{ print $1 }')
	if [ "$p" = 2 ]; then ok "${L}exec: the new image's Python is found anew (same pid, said twice)"
	else notok "${L}exec: messages"; sed 's/^/  /' "$T/x.err"; fi
}

for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	retry shape_asyncio
	retry shape_exc
	retry shape_late
	retry shape_fork
	retry shape_exec
done
exit 0
