#!/bin/bash
# Short-lived threads (issue 35, item 1): a program that serves each request
# on a new thread of 1-8 ms of CPU (tests/progs/t66-shortthr.c, -O2, lengths
# drawn at random so no rate locks onto them), two at a time.  Per thread,
# each new thread's sample period starts afresh and such threads are barely
# sampled; per CPU (the default where the kernel allows it) the samples must
# account for the program's CPU time: launched against its own getrusage,
# attached against the kernel's count over the same window and /proc's.
# Each check prints the distance and the floor (2/sqrt(samples): chance at
# this many samples) and fails beyond floor + 3 points.  Per thread, the
# loss must be said.  Load: two threads of ~1 CPU for 2 + 2 + 1.5 s.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
t6_build shortthr t66-shortthr.c -O2 -g -pthread || exit 0
P=
trap '{ kill -9 $P; wait; } 2>/dev/null; sp_cleanup' EXIT

# sampled FILE: the seconds of CPU the samples stand for; n FILE: samples
sampled() { pfold --weight=period "$1" 2> /dev/null | awk '{ s += $NF } END { printf "%.4f", s / 1e9 }'; }
nsamples() { pfold --weight=count "$1" 2> /dev/null | awk '{ s += $NF } END { print s + 0 }'; }
# judge LABEL SAMPLED TRUTH N: |SAMPLED/TRUTH - 1| within 2/sqrt(N) + 3 points
judge() {
	local verdict
	verdict=$(awk -v s="$2" -v t="$3" -v n="$4" 'BEGIN {
		d = (t > 0 ? 100 * s / t : 0); f = (n > 0 ? 200 / sqrt(n) : 100)
		printf "%s %.1f %% (floor %.1f)", ((d - 100 < f + 3 && 100 - d < f + 3) ? "ok" : "bad"), d, f }')
	if [ "${verdict%% *}" = ok ]; then ok "$1: sampled $2 s of $3 s: ${verdict#* }"
	elif [[ $SP_BIN == *asan* ]]; then
		# the rehearsal's ASan pass: 89.9 % (floor 6.8) once, with the
		# random per-CPU intervals (issue 35) whose mean is corrected by the
		# reader's delay, long under ASan; asserted in the plain pass
		echo "#   gap: under ASan, $1: sampled $2 s of $3 s: ${verdict#* }, beyond the floor + 3 points (asserted in the plain pass)"
	else notok "$1: sampled $2 s of $3 s: ${verdict#* }, beyond the floor + 3 points"; fi
}

F=499 # per CPU below 1000 Hz; a rate that gives the floor a few hundred samples
pcollect -v -F $F -o "$T/l.sp" -- "$T/shortthr" 2 > "$T/l.out" 2> "$T/l.err"; rc=$?
if [ $rc != 0 ]; then notok "launched: exit $rc"; sed 's/^/  /' "$T/l.err"; exit 0; fi
if ! sp-dump "$T/l.sp" | grep -qx "meta sampling=per-cpu"; then
	skip "per-CPU sampling of short threads" "the kernel refused per-CPU events (not root, kernel.perf_event_paranoid > 0)"
else
	judge "launched, per CPU, -F $F, against getrusage" "$(sampled "$T/l.sp")" "$(awk '/^cpu/ { print $2 }' "$T/l.out")" "$(nsamples "$T/l.sp")"
	if grep -q "^pcollect: CPU time: .* sampled of .* the kernel counted for process .*, sampled per CPU\(, at random intervals\)\{0,1\}$" "$T/l.err" &&
		sp-dump "$T/l.sp" | grep -q "^meta cpu-counted-ns=[1-9]" && preport "$T/l.sp" | grep -q "^CPU time sampled .* counted by the kernel"; then
		ok "launched: sampled and counted CPU time in -v, the metadata and preport"
	else notok "launched: sampled vs counted CPU time not said"; sed 's/^/  /' "$T/l.err"; fi

	setsid "$T/shortthr" 5 > "$T/a.out" 2> /dev/null & P=$!
	sleep 0.5
	c0=$(t6_cpu $P)
	pcollect -v -F $F -d 2 -p $P -o "$T/a.sp" 2> "$T/a.err"; rc=$?
	c1=$(t6_cpu $P)
	kill -9 $P; wait $P 2> /dev/null; P=
	counted=$(sp-dump "$T/a.sp" | sed -n 's/^meta cpu-counted-ns=//p' | awk '{ printf "%.4f", $1 / 1e9 }')
	if [ $rc != 0 ] || [ -z "$counted" ]; then notok "attached: exit $rc, counted '$counted'"; sed 's/^/  /' "$T/a.err"
	else
		judge "attached, per CPU, -F $F, against the kernel's count" "$(sampled "$T/a.sp")" "$counted" "$(nsamples "$T/a.sp")"
		# /proc's window holds pcollect's start and end too: the count is at most that
		proc=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", (b - a) / 100 }')
		if awk -v c="$counted" -v p="$proc" 'BEGIN { exit !(c <= p + 0.03 && c >= 0.5 * p) }'; then
			ok "attached: the kernel's count $counted s within /proc's wider window ($proc s)"
		else notok "attached: the kernel's count $counted s against /proc's $proc s"; fi
	fi
fi

# Per thread: most of it unsampled, and said with the share.
pcollect --per-thread -F 99 -o "$T/p.sp" -- "$T/shortthr" 1.5 > "$T/p.out" 2> "$T/p.err"; rc=$?
share=$(awk -v s="$(sampled "$T/p.sp")" -v t="$(awk '/^cpu/ { print $2 }' "$T/p.out")" 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')
if [ $rc = 0 ] && grep -q "^pcollect: [0-9]* % of process [0-9]*'s CPU time (.* counted by the kernel) was not sampled: it ran in threads too short to sample at -F 99" "$T/p.err"; then
	ok "--per-thread: the loss is said ($share % of getrusage sampled): $(grep -o '^pcollect: [0-9]* %[^(]*' "$T/p.err")"
else notok "--per-thread: exit $rc, $share % sampled, no warning"; sed 's/^/  /' "$T/p.err"; fi
