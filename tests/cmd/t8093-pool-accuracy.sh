#!/bin/bash
# Accuracy (issue 35, item 5): a multiprocessing pool (tests/progs/t35-pool.py:
# two forked workers, tasks of 0.5-25 ms of CPU drawn at random) launched
# under pcollect, against each process's own getrusage.  Printed: the TVD
# of the CPU time's split over the processes (sampled against getrusage)
# with its noise floor (two draws of our sample count from getrusage's
# split), and the total sampled against the total counted, with its floor
# 2/sqrt(samples).  Fails beyond the floor + 0.05 (TVD) or + 3 points
# (total).  Per CPU at fixed periods, the drainer woken at each sample
# (Python merging) ran at one phase of the period: processes 86-117 % of
# their time on the CPU, totals 78-104 % of the kernel's count; the
# intervals are drawn at random now (perf_events.c, redraw_period).
# getrusage is each process's at its
# last task: the pool's shutdown after it (1-2 % of the total) is sampled
# but not in it.  Quick: 100 tasks (~1.3 s of CPU); SP_ACCURACY=long: 600.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/acc-lib.sh"
acc_plain_only "multiprocessing pool against getrusage"
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
if [ -z "$PY" ] || ! "$PY" -c 'import multiprocessing, resource' 2> /dev/null; then
	skip "multiprocessing pool against getrusage" "no python3 with multiprocessing"; exit 0; fi
t6_probe || exit 0
n=100; [ -n "$ACC_LONG" ] && n=600

pcollect -F 499 -o "$T/pool.sp" -- "$PY" "$SP_TOP/tests/progs/t35-pool.py" 2 $n > "$T/pool.out" 2> "$T/pool.err"; rc=$?
if [ $rc != 0 ] || [ "$(grep -c '^cpu ' "$T/pool.out")" -lt 3 ]; then
	notok "pcollect -- python3 t35-pool.py: exit $rc, $(grep -c '^cpu ' "$T/pool.out") processes' CPU times"; sed 's/^/  /' "$T/pool.err" | head -5; exit 0; fi
# per process: sampled seconds and samples, by the PID the root frame ends in
for w in period count; do
	pfold --pid --weight=$w "$T/pool.sp" | awk '{ split($1, a, ";"); p = a[1]; sub(/.*-/, "", p); s[p] += $NF }
		END { for (k in s) print k, s[k] }' > "$T/$w"
done
awk '
FILENAME ~ /pool.out$/ { if ($1 == "cpu") { C[$2] = $3; TC += $3; K[$2] = 1 } next }
FILENAME ~ /period$/ { S[$1] = $2 / 1e9; TS += $2 / 1e9; K[$1] = 1; next }
{ N += $2 }
function draw(n, A,   i, x, j, c) {
	for (i = 0; i < n; i++) { x = rand(); c = 0
		for (j = 1; j < m; j++) { c += P[j]; if (x < c) break }
		A[j]++ } }
END {
	if (!TC || !TS || !N) { print "bad no figures (counted " TC ", sampled " TS ", samples " N ")"; exit }
	tvd = 0; for (k in K) { d = C[k] / TC - S[k] / TS; tvd += d < 0 ? -d : d }; tvd /= 2
	m = 0; for (k in C) P[++m] = C[k] / TC
	srand(35); fl = 0
	for (r = 0; r < 40; r++) { split("", A); split("", B); draw(N, A); draw(N, B)
		t = 0; for (j = 1; j <= m; j++) { d = (A[j] - B[j]) / N; t += d < 0 ? -d : d }; fl += t / 2 }
	fl /= 40
	printf "%s split over %d processes: TVD %.3f, noise floor %.3f (two draws of %d samples from getrusage), limit %.3f\n",
		tvd <= fl + 0.05 ? "ok" : "bad", length(C), tvd, fl, N, fl + 0.05
	tot = 100 * TS / TC; f = 200 / sqrt(N)
	printf "%s total: sampled %.3f s of %.3f s by getrusage: %.1f %%, floor %.1f points, limit %.1f\n",
		(tot - 100 <= f + 3 && 100 - tot <= f + 3) ? "ok" : "bad", TS, TC, tot, f, f + 3
	for (k in C) printf "  process %s: getrusage %.3f s, sampled %.3f s\n", k, C[k], S[k]
	for (k in S) if (!(k in C)) printf "  process %s: not in the program'"'"'s list, sampled %.3f s\n", k, S[k]
}' "$T/pool.out" "$T/period" "$T/count" > "$T/cmp"
sed 's/^/# /; s/^# \(ok\|bad\) /# /' "$T/cmp"
grep -E '^(ok|bad) ' "$T/cmp" | while read -r v rest; do
	if [ "$v" = ok ]; then ok "multiprocessing pool against getrusage, $n tasks: $rest"
	else notok "multiprocessing pool against getrusage, $n tasks: $rest"; fi
done
grep -qE '^(ok|bad) ' "$T/cmp" || { notok "multiprocessing pool against getrusage: no figures"; sed 's/^/  /' "$T/cmp"; }
