#!/bin/bash
# pcollect's target and empty results (issue 10, items 3 and 7): a
# collection with no samples says why (kernel thread, -t matched nothing,
# an idle process) and exits 1; -p TID samples that thread only and says
# so; a zombie is named as one (sampling and --snapshot); a kernel thread
# is named as one by --snapshot; -F above the kernel's limit gets one note
# with the rate obtained.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build shares t6-shares.c -O2 -g -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0

# A kernel thread (PF_KTHREAD in the flags of /proc/PID/stat), if this
# machine shows one: the lowest pid, kthreadd on a normal system.
kt=
for p in $(ls /proc | grep -E '^[0-9]+$' | sort -n | head -200); do
	st=$(cat "/proc/$p/stat" 2>/dev/null) || continue
	rest=${st##*) }
	read -r -a f <<< "$rest"
	if [ "${#f[@]}" -gt 6 ] && [ $(( ${f[6]} & 0x00200000 )) != 0 ]; then
		kt=$p; ktname=$(cat "/proc/$p/comm"); break
	fi
done
if [ -n "$kt" ]; then
	pcollect -p "$kt" -d 0.3 -o "$T/k.sp" 2> "$T/err"; rc=$?
	if [ $rc = 1 ] && grep -qF "pcollect: no samples: $kt ($ktname) is a kernel thread" "$T/err" &&
		sp-dump "$T/k.sp" > /dev/null 2>&1; then
		ok "kernel thread $kt $ktname, no samples: says it is a kernel thread, exit 1, the stream is still complete"
	elif [ $rc = 0 ] && sp-dump "$T/k.sp" | grep -q '^sample'; then
		ok "kernel thread $kt $ktname ran while sampled: its kernel samples are kept (exit 0)"
	else notok "kernel thread $kt: exit $rc"; sed 's/^/  /' "$T/err"; fi
	pcollect --snapshot -p "$kt" > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 2 ] && grep -qF "pcollect: $kt ($ktname) is a kernel thread: it has no user space" "$T/err"; then
		ok "--snapshot of a kernel thread: says it is a kernel thread"
	else notok "--snapshot of kernel thread $kt: exit $rc"; sed 's/^/  /' "$T/err"; fi
else
	skip "kernel thread" "no kernel thread is visible here (a container?)"
fi

if ! t6_start shares 30 wait; then notok "target: the test program did not start"; exit 0; fi
trap 'kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT

# -t that matches no thread: the names it saw.
pcollect -p "$TPID" -t nomatch -d 0.5 -o "$T/n.sp" 2> "$T/err"; rc=$?
if [ $rc = 1 ] && grep -q "^pcollect: no samples: no thread matched -t 'nomatch' (the 3 threads seen: .*hot-worker" "$T/err" &&
	[ "$(sp-dump "$T/n.sp" | grep -c '^sample')" = 0 ]; then
	ok "-t nomatch: no samples, says which threads it saw, exit 1"
else notok "-t nomatch: exit $rc"; sed 's/^/  /' "$T/err"; fi

# -p TID: that thread only.
ct=
for c in /proc/"$TPID"/task/*/comm; do
	[ "$(cat "$c")" = cold-worker ] && ct=$(basename "$(dirname "$c")")
done
pcollect -p "$ct" -d 1 -F 499 -o "$T/t.sp" 2> "$T/err"; rc=$?
pfold --weight=count "$T/t.sp" > "$T/t.folded" 2> /dev/null
other=$(grep -vc '^cold-worker;' "$T/t.folded")
if [ $rc = 0 ] && [ -s "$T/t.folded" ] && [ "$other" = 0 ] && sp-dump "$T/t.sp" | grep -q "^meta tid=$ct$"; then
	ok "-p TID: only that thread's samples ($(awk '{s+=$NF} END {print s}' "$T/t.folded") of cold-worker), tid in the metadata"
else notok "-p TID: exit $rc, $other stacks of other threads"; head -3 "$T/t.folded" | sed 's/^/  /'; fi
expect_grep "-p TID: says it samples that thread only" "^pcollect: $ct is a thread of process $TPID \\(shares\\): sampling thread $ct \\(cold-worker\\) only" "$T/err"

# -F above kernel.perf_event_max_sample_rate: one note, the rate obtained.
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
if [ "$max" -gt 0 ] && [ "$max" -lt 1000000 ]; then
	pcollect -p "$TPID" -F 1000000 -d 0.3 --call-graph=none -o "$T/f.sp" 2> "$T/err"; rc=$?
	if [ $rc = 0 ] && [ "$(grep -c 'perf_event_max_sample_rate' "$T/err")" = 1 ] &&
		grep -q "^pcollect: -F 1000000 is above the kernel's limit (kernel.perf_event_max_sample_rate): sampling at $max Hz$" "$T/err" &&
		sp-dump "$T/f.sp" | grep -q "^meta frequency=$max$"; then
		ok "-F above the kernel's limit: one note, sampled at $max Hz (in the metadata too)"
	else notok "-F 1000000: exit $rc"; sed 's/^/  /' "$T/err"; fi
else
	skip "-F above the limit" "kernel.perf_event_max_sample_rate is $max"
fi
kill -9 "$TPID"; wait "$TPID" 2> /dev/null

# An idle process: no samples, its CPU time named.
sleep 30 &
sl=$!
pcollect -p "$sl" -d 0.5 -o "$T/i.sp" 2> "$T/err"; rc=$?
if [ $rc = 1 ] && grep -q "^pcollect: no samples: process $sl used 0\\.0[0-9]* s of CPU in 0\\.[5-9] s" "$T/err"; then
	ok "an idle process: no samples, says it used next to no CPU, exit 1"
else notok "idle process: exit $rc"; sed 's/^/  /' "$T/err"; fi
kill "$sl"

# A zombie: its parent (exec'd into sleep) never collects it.
sh -c 'true & exec sleep 30' &
par=$!
z=
for _ in $(seq 50); do
	z=$(cat /proc/$par/task/$par/children 2>/dev/null | tr -d ' ')
	[ -n "$z" ] && grep -q '^State:.*Z' "/proc/$z/status" 2>/dev/null && break
	sleep 0.05
done
if [ -n "$z" ]; then
	pcollect -p "$z" -d 0.5 -o "$T/z.sp" 2> "$T/err"; rc=$?
	if [ $rc = 2 ] && grep -q "^pcollect: process $z (.*) is a zombie" "$T/err"; then ok "sampling a zombie: says it is one, exit 2"
	else notok "sampling a zombie: exit $rc"; sed 's/^/  /' "$T/err"; fi
	pcollect --snapshot -p "$z" 2> "$T/err" > /dev/null; rc=$?
	if [ $rc = 2 ] && grep -q "^pcollect: process $z (.*) is a zombie" "$T/err"; then ok "--snapshot of a zombie: says it is one, exit 2"
	else notok "--snapshot of a zombie: exit $rc"; sed 's/^/  /' "$T/err"; fi
else
	notok "zombie: no zombie child appeared"
fi
kill "$par" 2> /dev/null
true
