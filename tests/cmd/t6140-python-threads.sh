#!/bin/bash
# Python threads in pcollect, for each installed 3.8 to 3.13 (pyenv's) and
# Debian's python3.  Snapshot of a hung program (tests/progs/t61-locks.py):
# every thread is named by its threading name; the two threads blocked on
# an RLock (a with statement, an explicit acquire) name the RLock (its
# id(), which the program prints) and its owner, twice acquired, with the
# owner's Python line below; the joiner names the thread it joins; each
# thread's own line; folded roots and -t use the names.  Sampling
# (tests/progs/t61-gil.py, two threads burning CPU in Python): samples
# carry the threading names; -t matches them; with --wall a thread
# waiting for the GIL ends in [gil wait] right under its Python frame,
# and pfilter drops those samples.  No timing is asserted.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
PROG=$SP_TOP/tests/progs/t61-locks.py
GIL=$SP_TOP/tests/progs/t61-gil.py
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0
LH=$(line HOLDER) LW=$(line WAITER) LA=$(line ACQUIRER) LG=$(line GETTER) LJ=$(line JOINER) LM=$(line MAIN)

blocked() { t6_pyblocked "$1" 6; }
# tid_of NAME FILE: the tid in FILE's "thread TID (NAME) ..." header.
tid_of() { sed -n "s/^thread \([0-9]*\) ($1) .*/\1/p" "$2"; }
# block NAME FILE: the lines of thread NAME's block in a text snapshot.
block() { awk -v h="($1)" '/^thread / { on = index($0, h) > 0 } on' "$2"; }

for entry in "${pys[@]}"; do
	v=${entry%% *} py=${entry#* }
	L="$v: "
	# --- snapshot: names, RLock owners, join ---
	if ! t6_pystart "$py" "$PROG"; then notok "${L}t61-locks.py did not start"; t6_pystop; continue; fi
	rl=$(awk '/^ready/ { print $2 }' "$T/ready")
	for _ in $(seq 100); do blocked $TPID && break; sleep 0.1; done
	if ! blocked $TPID; then notok "${L}t61-locks.py did not block (6 threads asleep)"; t6_pystop; continue; fi
	pcollect --snapshot -p $TPID > "$T/snap.txt" 2> "$T/snap.err"; rc=$?
	expect_rc "${L}snapshot: exit status" 0 $rc
	names=$(sed -n 's/^thread [0-9]* (\([^)]*\)) .*/\1/p' "$T/snap.txt" | sort | tr '\n' ' ')
	if [ "$names" = "MainThread acquirer-3 getter-4 holder-1 joiner-5 waiter-2 " ]; then
		ok "${L}snapshot: each thread is named by its threading name ($names)"
	else notok "${L}snapshot: thread names '$names'"; grep '^thread ' "$T/snap.txt" | sed 's/^/  /'; fi
	ht=$(tid_of holder-1 "$T/snap.txt")
	for w in waiter-2 acquirer-3; do
		block $w "$T/snap.txt" > "$T/b"
		if [ -n "$ht" ] && grep -qx "  waits for RLock rl ($rl) held by $ht (holder-1), 2 times" "$T/b"; then
			ok "${L}snapshot: $w waits for RLock rl ($rl, its id(); the module's global) held by $ht (holder-1), 2 times"
		else notok "${L}snapshot: $w's RLock (want $rl held by '$ht')"; grep -v '^ *#' "$T/b" | sed 's/^/  /'; fi
		if awk -v f="holder at t61-locks.py:$LH" '/^  owner [0-9]+ \(holder-1\)/ { o = 1 } o && index($0, f) { found = 1 } END { exit !found }' "$T/b"; then
			ok "${L}snapshot: under $w, the owner's stack shows 'holder at t61-locks.py:$LH'"
		else notok "${L}snapshot: $w: the owner's stack"; sed 's/^/  /' "$T/b" | head -30; fi
	done
	block joiner-5 "$T/snap.txt" > "$T/b"
	if [ -n "$ht" ] && grep -qx "  waits for thread $ht (holder-1) to finish (Thread.join)" "$T/b"; then
		ok "${L}snapshot: joiner-5 waits for thread $ht (holder-1) to finish (Thread.join)"
	else notok "${L}snapshot: joiner-5's join"; grep -v '^ *#' "$T/b" | sed 's/^/  /'; fi
	block getter-4 "$T/snap.txt" > "$T/b"
	if grep -q 'RLock\|held by' "$T/b"; then notok "${L}snapshot: getter-4 (queue.get) is given an owner"; grep 'RLock\|held by' "$T/b"
	else ok "${L}snapshot: getter-4 (queue.get, a Lock in Condition.wait) is given no owner"; fi
	for want in "holder-1 holder:$LH" "waiter-2 waiter:$LW" "acquirer-3 acquirer:$LA" "getter-4 getter:$LG" "joiner-5 joiner:$LJ" "MainThread <module>:$LM"; do
		t=${want%% *} f=${want#* }
		first=$(block "$t" "$T/snap.txt" | grep -m1 " at t61-locks.py:" | sed 's/^ *#[0-9]* *//')
		if [ "$first" = "${f%%:*} at t61-locks.py:${f#*:}" ]; then ok "${L}snapshot: $t's innermost own frame is '${f%%:*} at t61-locks.py:${f#*:}'"
		else notok "${L}snapshot: $t's innermost own frame is '$first', want '${f%%:*} at t61-locks.py:${f#*:}'"; fi
	done
	pcollect --snapshot -O folded -p $TPID > "$T/snap.folded" 2> /dev/null
	if grep -q "^waiter-2;.*;waiter (t61-locks.py:$LW);" "$T/snap.folded" && grep -q "^MainThread;" "$T/snap.folded"; then
		ok "${L}snapshot -O folded: the root frames are the threading names"
	else notok "${L}snapshot -O folded: roots"; grep -o '^[^;]*' "$T/snap.folded" | sed 's/^/  /'; fi
	pcollect --snapshot -t '^acq' -p $TPID > "$T/t.txt" 2> /dev/null
	if [ "$(grep -c '^thread ' "$T/t.txt")" = 1 ] && grep -q '^thread [0-9]* (acquirer-3) ' "$T/t.txt"; then
		ok "${L}snapshot -t '^acq': the threading name is matched"
	else notok "${L}snapshot -t '^acq'"; grep '^thread ' "$T/t.txt" | sed 's/^/  /'; fi
	if t6_alive $TPID && blocked $TPID; then ok "${L}the target runs on, not stopped"; else notok "${L}target state afterwards"; fi
	t6_pystop

	# --- sampling: names, [gil wait] ---
	if ! t6_pystart "$py" "$GIL"; then notok "${L}t61-gil.py did not start"; t6_pystop; continue; fi
	# (1 s, ~195 samples in burn, 10 times the least checked; the same
	# for --wall below, each burner ~47 % in [gil wait] against 3 %: each
	# -d 2 until session 11, 2 s more per interpreter and pass)
	pcollect -F 199 -p $TPID -d 1 -o "$T/g.sp" 2> "$T/g.err"; rc=$?
	expect_rc "${L}sampling: exit status" 0 $rc
	pfold --weight=count "$T/g.sp" > "$T/g.folded" 2> /dev/null
	read -r nb nn < <(awk '/;burn \(/ { s += $NF; if ($0 ~ /^burner[01];/) n += $NF } END { print s + 0, n + 0 }' "$T/g.folded")
	if [ "$nb" -ge 20 ] && [ $((nn * 100)) -ge $((nb * 95)) ]; then
		ok "${L}sampling: $nn of $nb samples in burn have the root burner0 or burner1 (threading names)"
	else notok "${L}sampling: $nn of $nb samples in burn under a threading name"; grep -o '^[^;]*' "$T/g.folded" | sort | uniq -c | sed 's/^/  /'; fi
	pcollect -F 199 -p $TPID -d 1 -t '^burner1$' 2> /dev/null | pfold > "$T/t.folded" 2> /dev/null
	if [ -s "$T/t.folded" ] && [ "$(grep -o '^[^;]*' "$T/t.folded" | sort -u)" = burner1 ]; then
		ok "${L}sampling -t '^burner1\$': the threading name is matched, that thread only"
	else notok "${L}sampling -t '^burner1\$'"; grep -o '^[^;]*' "$T/t.folded" | sort | uniq -c | sed 's/^/  /'; fi
	if [ "$v" = debian ]; then
		skip "${L}[gil wait]" "Debian's python3 is stripped: its take_gil has no symbol to recognise"
		t6_pystop; continue
	fi
	pcollect --wall -p $TPID -d 1 -o "$T/w.sp" 2> "$T/w.err"; rc=$?
	t6_pystop
	expect_rc "${L}--wall: exit status" 0 $rc
	pfold "$T/w.sp" > "$T/w.folded" 2> /dev/null
	# per burner: wall time, of which [gil wait], of which right under burn
	awk '/^burner[01];/ { split($1, r, ";"); t[r[1]] += $NF
		if ($0 ~ /;\[gil wait\]/) { g[r[1]] += $NF; if ($0 ~ /;burn \([^)]*\);([^;(]+;)*\[gil wait\]/) b[r[1]] += $NF } }
		END { for (k in t) print k, t[k], g[k] + 0, b[k] + 0 }' "$T/w.folded" | sort > "$T/gw"
	if [ "$(wc -l < "$T/gw")" = 2 ] && awk '{ if ($3 * 100 < $2 * 3 || $4 * 100 < $3 * 90) bad++ } END { exit bad > 0 }' "$T/gw"; then
		ok "${L}--wall: each burner waits for the GIL ([gil wait], right under burn): $(awk '{ printf "%s %d%% ", $1, $3 * 100 / $2 }' "$T/gw")"
	else notok "${L}--wall: [gil wait] per burner (name wall gil under-burn):"; sed 's/^/  /' "$T/gw"; grep 'take_gil\|gil wait' "$T/w.folded" | head -3 | cut -c1-400 | sed 's/^/  /'; fi
	tg=$(awk '/ \([^)]*\.py:[0-9]+\)/ && /;take_gil/ { s += $NF } END { print s + 0 }' "$T/w.folded")
	if [ "$tg" = 0 ]; then ok "${L}--wall: no merged stack keeps take_gil"; else notok "${L}--wall: $tg ns of merged stacks keep take_gil"; fi
	pfilter -F -v '[gil wait]' "$T/w.folded" > "$T/nogil.folded" 2> "$T/e"
	if [ -s "$T/nogil.folded" ] && ! grep -q 'gil wait' "$T/nogil.folded" && grep -q ';burn (' "$T/nogil.folded"; then
		ok "${L}pfilter -F -v '[gil wait]' drops the GIL waits, keeps the rest"
	else notok "${L}pfilter -F -v '[gil wait]'"; head -3 "$T/e"; fi
done
exit 0
