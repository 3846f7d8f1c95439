#!/bin/bash
# pcollect -a: every process of the machine, as perf record -a.  While a C
# program of ours (tests/progs/t65-spin.c: about 75 % spin_hot, 25 % spin_cold, rounds of random length),
# a real program no one here wrote (xz -2, in a loop) and python3 doing stdlib work
# (json, hashlib) run, and a second C program starts during the run,
# pcollect -a and perf record -a -g sample the same seconds side by side;
# pfold reads both (perf.data directly).  Each program is under its
# process's root frame with its hot function, the late one too, python3
# with Python frames, and the share of spin_hot (and of xz's top function)
# agrees with perf's within 4 standard errors of their difference (at least
# 8 points: at -F 499 each has a few hundred samples; with fewer
# than 80 the comparison is skipped, saying so; nothing here is timed).
# Usage errors, and the one sentence without permission.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

# ---- usage (no sampling needed) ----
pcollect -a -p 1 > /dev/null 2> "$T/u1"; rc=$?
expect_rc "-a -p: usage error" 2 $rc
expect_grep "-a -p: says why" "^pcollect: -a samples every process: not with -p PID or a command" "$T/u1"
pcollect -a -- true > /dev/null 2> "$T/u2"; rc=$?
expect_rc "-a COMMAND: usage error" 2 $rc
expect_grep "-a COMMAND: says why" "not with -p PID or a command" "$T/u2"
pcollect -a --python-sampling=exact > /dev/null 2> "$T/u3"; rc=$?
expect_rc "-a --python-sampling=exact: usage error" 2 $rc
pcollect -a --trace malloc > /dev/null 2> "$T/u4"; rc=$?
expect_rc "-a --trace: usage error" 2 $rc
pcollect -a --children > /dev/null 2> "$T/u5"; rc=$?
expect_rc "-a --children: usage error" 2 $rc
expect_grep "-a --children: says why" "every process already: not with --children" "$T/u5"
pcollect --help > "$T/help"
expect_grep "--help: -a in the synopsis" "^       pcollect \[options\] -a$" "$T/help"
expect_grep "--help: --all-cpus" "^  -a, --all-cpus " "$T/help"

# ---- permission: one sentence naming the setting, exit 2 ----
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$par" -le 0 ]; then
	skip "-a without permission" "kernel.perf_event_paranoid is $par: every user may sample system-wide here"
elif [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SP_BIN/pcollect" --version > /dev/null 2>&1; then
	skip "-a without permission" "user nobody cannot run $SP_BIN/pcollect (setpriv, or the directory's permissions)"
else
	if [ "$(id -u)" = 0 ]; then asuser="setpriv --reuid=65534 --regid=65534 --clear-groups --"; else asuser=; fi
	$asuser "$SP_BIN/pcollect" -a -d 1 > /dev/null 2> "$T/perm"; rc=$?
	expect_rc "-a as a user (perf_event_paranoid $par): exit 2" 2 $rc
	if [ "$(wc -l < "$T/perm")" = 1 ] && grep -q "^pcollect: sampling every process needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0 (it is $par)" "$T/perm"; then
		ok "-a as a user: one sentence naming the setting"
	else notok "-a as a user: one sentence naming the setting"; sed 's/^/  /' "$T/perm"; fi
fi

# ---- sampling the machine ----
if [ "$(id -u)" != 0 ] && [ "$par" -gt 0 ]; then
	skip "pcollect -a" "not root and kernel.perf_event_paranoid is $par: system-wide sampling is not allowed"
	exit 0
fi
t6_build spinner t65-spin.c -O2 -g -fno-omit-frame-pointer || exit 0
cp "$T/spinner" "$T/latecomer"
have_perf=1
if ! command -v perf > /dev/null || ! perf record -q -a -o "$T/probe.data" -- true > "$T/probe.err" 2>&1; then
	have_perf=0
	skip "pcollect -a against perf" "perf record -a does not run here: $(command -v perf > /dev/null && head -1 "$T/probe.err" || echo 'perf is not installed')"
fi
command -v xz > /dev/null && have_xz=1 || { have_xz=0; skip "pcollect -a: xz" "xz is not installed"; }
head -c 3000000 /dev/urandom | base64 > "$T/data"
pids=()
trap 'kill "${pids[@]}" 2> /dev/null; sp_cleanup' EXIT
t6_start spinner || { notok "spinner did not start"; exit 0; }
pids+=($TPID)
if [ $have_xz = 1 ]; then
	# xz -2, not -9: -9 spends its first ~0.3 s faulting in a 674 MiB
	# dictionary (kernel leaves), so shares of two windows that differ
	# by a slow start (perf record -a reads every process's maps first)
	# differed by 13 points in one run at load 15; -2 runs many times in
	# a window and its phases average out
	setsid sh -c 'while :; do xz -2 -T1 -c "$1" > /dev/null; done' sh "$T/data" & pids+=($!)
fi
cat > "$T/work.py" << 'PY'
import hashlib, json
doc = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)]} for i in range(2000)]
print("ready", flush=True)
while True:
    s = json.dumps(doc)
    json.loads(s)
    hashlib.sha256(s.encode()).hexdigest()
PY
t6_spawn "$T/py.ready" python3 "$T/work.py" || { notok "python3 did not start"; exit 0; }
pids+=($TPID)
sleep 0.5
[ $have_perf = 1 ] && { perf record -q -a -g -F 499 -o "$T/p.data" -- sleep 4 > /dev/null 2> "$T/perf.err" & pp=$!; }
pcollect -a -F 499 -d 4 -o "$T/a.sp" 2> "$T/a.err" & pc=$!
# The latecomer starts once pcollect samples (its temporary grows).
for i in $(seq 100); do
	[ "$(cat "$T"/.a.sp.* 2> /dev/null | wc -c)" -gt 1000 ] && break
	sleep 0.05
done
t6_start latecomer && pids+=($TPID)
wait $pc; rc=$?
[ $have_perf = 1 ] && wait $pp
expect_rc "pcollect -a -d 4: exit 0" 0 $rc
if sp-dump "$T/a.sp" > "$T/a.txt" 2> "$T/dump.err"; then ok "-a: a complete stream"; else
	notok "-a: a complete stream"; sed 's/^/  /' "$T/dump.err"; fi
expect_grep "-a: the stream says it is system-wide" "^meta system-wide=yes" "$T/a.txt"
pfold --weight=count "$T/a.sp" > "$T/a.folded" 2> /dev/null
expect_grep "-a: the C program under its process, with spin_hot" '^spinner;.*main;spin_round;spin_hot [0-9]+$' "$T/a.folded"
expect_grep "-a: a process started during the run, with spin_hot" '^latecomer;.*main;spin_round;spin_hot [0-9]+$' "$T/a.folded"
expect_grep "-a: python3 with Python frames" '^python3;.*<module> \(work\.py:[0-9]+\);.*(dumps|loads|encode|decode)' "$T/a.folded"
[ $have_xz = 1 ] && expect_grep "-a: xz under its process" '^xz;' "$T/a.folded"
# Said on a busy machine: processes gone before they were read, CPython
# processes found, samples the kernel lost or throttled (said with their
# count); nothing else.
if grep -vE '^pcollect: ([0-9]+ process(es)? exited before (its|their) maps could be read: [0-9]+ samples? with \[unknown\] user frames|[0-9]+ CPython process(es)? found: Python frames merged, non-blocking|python: [0-9]+ of [0-9]+ samples of Python threads \([0-9.]+ %\) keep _PyEval_EvalFrameDefault in place of their Python frames|[0-9]+ samples lost: |the kernel throttled sampling [0-9]+ times)' "$T/a.err" > "$T/a.other"; then
	notok "-a: nothing unexpected on stderr"; sed 's/^/  /' "$T/a.other" | head -5
else ok "-a: nothing unexpected on stderr"; fi
expect_grep "-a: the CPython processes are counted" "^pcollect: [0-9]+ CPython process(es)? found" "$T/a.err"
[ $have_perf = 1 ] || exit 0

pfold --weight=count "$T/p.data" > "$T/p.folded" 2> /dev/null
# share ROOT LEAFRE FILE: % of ROOT's samples whose leaf matches LEAFRE, and
# ROOT's sample count
share() {
	awk -v r="$1" -v re="$2" '{ n = split($0, f, ";"); if (f[1] != r) next; c = $NF; t += c
		leaf = f[n]; sub(/ [0-9]+$/, "", leaf); if (leaf ~ re) h += c }
		END { printf "%.1f %d\n", t ? 100 * h / t : 0, t }' "$3"
}
# leaves ROOT FILE: ROOT's five most frequent leaves, for a failure's message
leaves() {
	awk -v r="$1" '{ n = split($0, f, ";"); if (f[1] != r) next; leaf = f[n]; sub(/ [0-9]+$/, "", leaf); s[leaf] += $NF }
		END { for (k in s) print s[k], k }' "$2" | sort -rn | head -5 | tr '\n' ',' | sed 's/,$//'
}
# Samples pcollect said it could not name (a process gone before its maps
# were read: stderr gives their count) are [unknown] leaves on its side
# only; they are left out of its share, and the count is said.
unres=$(sed -n 's/^pcollect: [0-9]* process.* exited before .* maps could be read: \([0-9]*\) sample.*/\1/p' "$T/a.err")
grep -v '\[unknown\] [0-9]*$' "$T/a.folded" > "$T/a.named"
# Samples each tool lost (a full ring): pcollect says so on stderr, perf
# in its LOST and LOST_SAMPLES records.  A tool that lost a large part of
# its samples lost them in bursts (phases of the target), so its shares
# are not the machine's: said, and the comparison skipped.
a_lost=$(sed -n 's/^pcollect: \([0-9]*\) samples lost: .*/\1/p' "$T/a.err" | head -1)
p_lost=$(perf report -D -i "$T/p.data" 2> /dev/null | awk '/PERF_RECORD_LOST/ { for (i = 1; i <= NF; i++) if ($i ~ /^lost:[0-9]+$/) { sub(/^lost:/, "", $i); n += $i } } END { print n + 0 }')
a_all=$(awk '{ t += $NF } END { print t + 0 }' "$T/a.folded"); p_all=$(awk '{ t += $NF } END { print t + 0 }' "$T/p.folded")
echo "# samples lost: pcollect ${a_lost:-0} (kept $a_all), perf $p_lost (kept $p_all)"
lossy=$(awk -v a="${a_lost:-0}" -v n="$a_all" -v b="$p_lost" -v m="$p_all" 'BEGIN {
	if (a > 0.05 * (a + n)) printf "pcollect lost %d of its %d samples; ", a, a + n
	if (b > 0.05 * (b + m)) printf "perf lost %d of its %d samples; ", b, b + m }')
cmp_share() { # LABEL ROOT LEAFRE
	local afile=$T/a.folded note=
	if [ -n "$unres" ]; then afile=$T/a.named; note=", without the $unres samples pcollect said it could not name"; fi
	read -r sa na < <(share "$2" "$3" "$afile")
	read -r sp np < <(share "$2" "$3" "$T/p.folded")
	if [ -n "$lossy" ]; then
		skip "-a against perf: $1" "${lossy}shares of a ring that overflowed are not comparable (pcollect $sa% of $na, perf $sp% of $np)"
		return
	fi
	# the two shares are independent estimates of one: 4 standard errors
	# of their difference (at least 8 points: xz's phases) bound it
	local tol
	tol=$(awk -v a="$sa" -v b="$sp" -v n="$na" -v m="$np" 'BEGIN { p = (a * n + b * m) / (n + m) / 100
		t = 400 * sqrt(p * (1 - p) * (1 / n + 1 / m)); printf "%.1f", t < 8 ? 8 : t }')
	if [ "$na" -lt 80 ] || [ "$np" -lt 80 ]; then
		skip "-a against perf: $1" "too few samples of $2 on this loaded machine (pcollect $na, perf $np)"
	elif awk -v a="$sa" -v b="$sp" -v t="$tol" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'; then
		ok "-a against perf -a + pfold: $1 $sa% of $na samples, perf $sp% of $np (within $tol$note)"
	elif [[ $SP_BIN == *asan* ]]; then
		# CI's ASan pass: perf kept 363 xz samples to pcollect's 941 in the
		# same seconds, 75.5 % in liblzma to 97.3 % (perf starved by the
		# ASan pcollect beside it); the shares are asserted in the plain pass
		echo "#   gap: under ASan, -a against perf -a + pfold: $1 $sa% of $na samples, perf $sp% of $np (not within $tol$note; asserted in the plain pass)"
		echo "#   pcollect's leaves of $2: $(leaves "$2" "$afile"); perf's: $(leaves "$2" "$T/p.folded")"
	else notok "-a against perf -a + pfold: $1 $sa% of $na samples, perf $sp% of $np (not within $tol$note)"
		echo "  pcollect's leaves of $2: $(leaves "$2" "$afile")"
		echo "  perf's leaves of $2: $(leaves "$2" "$T/p.folded")"
		sed 's/^/  /' "$T/a.err" | head -5; fi
}
cmp_share "spin_hot's share of spinner" spinner '^spin_hot$'
if [ $have_xz = 1 ]; then
	top=$(awk '{ n = split($0, f, ";"); if (f[1] != "xz") next; leaf = f[n]; sub(/ [0-9]+$/, "", leaf); s[leaf] += $NF }
		END { for (k in s) if (s[k] > m) { m = s[k]; b = k } print b }' "$T/p.folded")
	re=$(printf '%s' "$top" | sed 's/[][\.*^$(){}+?|]/\\&/g')
	cmp_share "xz's top function ($top)" xz "^$re\$"
fi
