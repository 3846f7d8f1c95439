#!/bin/bash
# trace-bench.sh — what pcollect --trace costs, measured, never asserted.
#
#  1. Cost per hit: tests/progs/t62-bench.c calls tick() back to back,
#     alone and under pcollect -F 0 --trace with an entry probe only
#     (tick:entry), entry + return (tick), entry + return with values
#     (tick(arg1,arg2,ret)) and a point probe inside (tick+OFF, the second
#     instruction); the difference per call is the cost of the hits of
#     one call.  Next to perf probe -x BIN tick + perf record -e
#     probe_BIN:tick when perf probe works here (it needs tracefs), and
#     Debian's bpftrace when installed: probes counted in the kernel (entry,
#     entry + return) and a printf per hit; paired rounds against
#     bpftrace (alone, pcollect, bpftrace in turn); the BPF programs' own
#     time per hit (kernel.bpf_stats_enabled), pcollect's compact record
#     beside its every-register record (SP_BPFHIT_FULL=1) and bpftrace's.
#     And --stacks --weight arg1 (an allocation profile's probe: a 4 KiB
#     stack copy per hit, unwound by pcollect) on tick:entry.
#  2. Slowdown at 1k and 10k hits/s: fixed CPU work calling tick() at that
#     rate, its CPU time under each configuration over its CPU time alone.
#  3. --live (malloc, calloc, realloc, free probed; a malloc+free pair is
#     3 hits: malloc's entry with a stack copy, its return, free's entry):
#     tests/progs/t64-live.c cost N (back-to-back malloc(64)+free, static:
#     its own allocator, probed in it alone), alone, under --stacks
#     --weight arg1 on malloc (the allocation profile) and under --live,
#     --live --every 100; the target's CPU per pair, and pcollect's own
#     CPU per pair (pcollect's and the target's CPU from /usr/bin/time,
#     less the target's).
#
#  4. Cost to an untraced process: a bystander's malloc+free calls per
#     second alone and while another process's libc:malloc is traced.
#
#   RUNS=5 CALLS=20000 SECONDS_OF_WORK=1 PCOLLECT=bin/pcollect (environment);
#   ONLY=hits: section 1's cost per hit alone; ONLY=prog: its BPF
#   programs' time per hit alone; ONLY=live: section 3 alone;
#   ONLY=threads: section 5 alone
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-5}
CALLS=${CALLS:-20000}
SW=${SECONDS_OF_WORK:-1}
ONLY=${ONLY:-}
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
say() { printf '%s\n' "$*"; }

gcc -O2 -g -fomit-frame-pointer -o "$W/tb" tests/progs/t62-bench.c
if ! "$PC" -q -F 0 --trace tick -o "$W/probe.sp" -- "$W/tb" cost 10 > /dev/null 2> "$W/e"; then
	say "trace-bench: skipped: $(head -1 "$W/e")"; exit 0; fi
# the second instruction of tick, for the point probe
off=$(objdump -d --no-show-raw-insn "$W/tb" | awk '/<tick>:/ { f = 1; next } f && /^ *[0-9a-f]+:/ { n++; if (n == 2) { sub(":", "", $1); print $1; exit } }')
start=$(objdump -d "$W/tb" | awk '/<tick>:/ { print $1; exit }')
point=$(printf 'tick+%d' $((0x$off - 0x$start)))
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# perf probe mounts tracefs when it is not: leave the machine as found.
traced_before=0
mountpoint -q /sys/kernel/tracing 2> /dev/null && traced_before=1
have_perf=0
if command -v perf > /dev/null && perf probe -q -x "$W/tb" tick > /dev/null 2> "$W/perf.err"; then
	have_perf=1
	ev=$(perf probe -l 2> /dev/null | awk '/tick/ { print $1; exit }')
else
	why=$(head -1 "$W/perf.err" 2>/dev/null || true)
fi
cleanup_perf() {
	[ $have_perf = 1 ] && perf probe -q -d "${ev:-probe_tb:tick}" > /dev/null 2>&1
	[ $traced_before = 0 ] && mountpoint -q /sys/kernel/tracing 2> /dev/null && umount /sys/kernel/tracing 2> /dev/null
	true
}
trap 'cleanup_perf; rm -rf "$W"' EXIT

run() { # run NAME MODE ARGS... -> median of the program's numbers
	local name=$1; shift
	local i
	for i in $(seq "$RUNS"); do
		case $name in
		alone) "$W/tb" "$@" ;;
		entry) "$PC" -q -F 0 --trace tick:entry -o "$W/x.sp" -- "$W/tb" "$@" ;;
		full) SP_BPFHIT_FULL=1 "$PC" -q -F 0 --trace tick:entry -o "$W/x.sp" -- "$W/tb" "$@" ;;
		call) "$PC" -q -F 0 --trace tick -o "$W/x.sp" -- "$W/tb" "$@" ;;
		values) "$PC" -q -F 0 --trace 'tick(arg1,arg2,ret)' -o "$W/x.sp" -- "$W/tb" "$@" ;;
		point) "$PC" -q -F 0 --trace "$point" -o "$W/x.sp" -- "$W/tb" "$@" ;;
		stacks) "$PC" -q --trace 'tick:entry(arg1)' --stacks --weight arg1 -o "$W/x.sp" -- "$W/tb" "$@" ;;
		perf) perf record -q -e "$ev" -o "$W/p.data" -- "$W/tb" "$@" ;;
		bt_entry) bpftrace -q -e "uprobe:$W/tb:tick { @n = count(); }" -c "$W/tb $*" ;;
		bt_call) bpftrace -q -e "uprobe:$W/tb:tick { @n = count(); } uretprobe:$W/tb:tick { @r = count(); }" -c "$W/tb $*" ;;
		bt_out) bpftrace -q -e "uprobe:$W/tb:tick { printf(\"%d %d\\n\", tid, nsecs); }" -c "$W/tb $*" ;;
		esac 2> /dev/null
	done
}

if [ -z "$ONLY" ] || [ "$ONLY" = hits ] || [ "$ONLY" = prog ]; then
	say "== pcollect --trace: cost per hit (CPU time of $CALLS back-to-back calls of tick(), median of $RUNS)"
	base=$(run alone cost "$CALLS" | sed -n 's/^cost \([0-9.]*\).*/\1/p' | median)
	say "$(printf '  %-34s %9.1f ns per call' 'no probe' "$base")"
	names="entry call values point stacks"
	[ $have_perf = 1 ] && names="$names perf"
	# the record of every register and 8 bytes of stack that each hit
	# wrote before the compact records (bpfhit.h), to compare
	pc_bpf=0
	"$PC" -v -F 0 --trace tick:entry -o "$W/x.sp" -- "$W/tb" cost 10 2>&1 | grep -q 'a BPF program records the hits' && pc_bpf=1
	# Debian's bpftrace (tests/deps.sh, optional): its probes counted in
	# the kernel (no record per hit: a floor), and one line per hit
	bt=""
	command -v bpftrace > /dev/null && bpftrace -q -e "uprobe:$W/tb:tick { @n = count(); }" -c "$W/tb cost 10" \
		> /dev/null 2> "$W/bt.err" && bt="bt_entry bt_call bt_out"
	[ "$ONLY" = prog ] && names="" pc_bpf_rows=0 || pc_bpf_rows=$pc_bpf
	for n in $names $([ $pc_bpf_rows = 1 ] && echo full) $([ "$ONLY" = prog ] || echo $bt); do
		c=$(run $n cost "$CALLS" | sed -n 's/^cost \([0-9.]*\).*/\1/p' | median)
		case $n in
		entry) label="tick:entry (1 hit per call)"; hits=1 ;;
		full) label="tick:entry, every register (1)"; hits=1 ;;
		call) label="tick (entry + return: 2 hits)"; hits=2 ;;
		values) label="tick(arg1,arg2,ret) (2 hits)"; hits=2 ;;
		point) label="$point (point, 1 hit)"; hits=1 ;;
		stacks) label="tick:entry --stacks --weight (1 hit)"; hits=1 ;;
		perf) label="perf probe + perf record (1 hit)"; hits=1 ;;
		bt_entry) label="bpftrace uprobe, count (1 hit)"; hits=1 ;;
		bt_call) label="bpftrace uprobe+uretprobe, count (2)"; hits=2 ;;
		bt_out) label="bpftrace uprobe, printf per hit (1)"; hits=1 ;;
		esac
		say "$(awk -v l="$label" -v c="$c" -v b="$base" -v h=$hits 'BEGIN { printf "  %-34s %9.1f ns per call, %.2f us per hit\n", l, c, (c - b) / h / 1000 }')"
	done
	[ $have_perf = 1 ] || [ "$ONLY" = prog ] || say "  perf probe: not measured here (${why:-perf probe failed}); it needs tracefs"
	[ -n "$bt" ] || say "  bpftrace: not measured here ($(command -v bpftrace > /dev/null && head -1 "$W/bt.err" || echo "not installed: tests/deps.sh installs Debian's bpftrace"))"

	# Paired against bpftrace: each round runs the program alone, under
	# pcollect and under bpftrace one after the other, so that a load
	# that comes and goes weighs on both alike; per round the cost per hit
	# of each, then the medians and the median of pcollect's minus
	# bpftrace's.
	if [ -n "$bt" ] && [ "$ONLY" != prog ]; then
		say "== per hit against bpftrace, paired ($RUNS rounds of: alone, pcollect, bpftrace; medians)"
		cost() { sed -n 's/^cost \([0-9.]*\).*/\1/p'; }
		for i in $(seq "$RUNS"); do
			a=$(RUNS=1 run alone cost "$CALLS" | cost)
			pe=$(RUNS=1 run entry cost "$CALLS" | cost)
			be=$(RUNS=1 run bt_entry cost "$CALLS" | cost)
			pc=$(RUNS=1 run call cost "$CALLS" | cost)
			bc=$(RUNS=1 run bt_call cost "$CALLS" | cost)
			awk -v a="$a" -v pe="$pe" -v be="$be" -v pc="$pc" -v bc="$bc" \
				'BEGIN { printf "%.3f %.3f %.3f %.3f\n", (pe - a) / 1000, (be - a) / 1000, (pc - a) / 2000, (bc - a) / 2000 }'
		done > "$W/pairs"
		for k in 1 3; do
			pm=$(awk -v k=$k '{ print $k }' "$W/pairs" | median)
			bm=$(awk -v k=$k '{ print $(k + 1) }' "$W/pairs" | median)
			dm=$(awk -v k=$k '{ print $k - $(k + 1) }' "$W/pairs" | median)
			rounds=$(awk -v k=$k '{ printf "%s%.1f/%.1f", (NR > 1 ? " " : ""), $k, $(k + 1) }' "$W/pairs")
			say "$(awk -v l="$([ $k = 1 ] && echo 'tick:entry (1 hit)' || echo 'tick, entry + return (2)')" -v p="$pm" -v b="$bm" -v d="$dm" \
				'BEGIN { printf "  %-26s pcollect %.2f us per hit, bpftrace count %.2f us; pcollect - bpftrace %+.2f us (median of the rounds)\n", l, p, b, d }')"
			say "    rounds (pcollect/bpftrace): $rounds"
		done
	fi

	# The part of a hit that differs between the tools, without the
	# traps' noise: the BPF program's own run time (kernel.bpf_stats_enabled,
	# read from the tracer's fdinfo while it runs; the setting is restored).
	stats=/proc/sys/kernel/bpf_stats_enabled
	if [ $pc_bpf = 1 ] && [ -w $stats ]; then
		was=$(cat $stats)
		trap 'echo "$was" > $stats; cleanup_perf; rm -rf "$W"' EXIT
		say "== the BPF program per hit (its run time / runs from fdinfo, kernel.bpf_stats_enabled, median of $RUNS)"
		echo 1 > $stats
		prog_ns() { # prog_ns CMD...: ns per run of the busiest BPF program of CMD (and its children)
			"$@" > /dev/null 2>&1 &
			local tp=$! p f
			sleep 1.5
			for p in $tp $(pgrep -P $tp); do
				for f in /proc/$p/fdinfo/*; do
					awk '/^run_time_ns/ { t = $2 } /^run_cnt/ { c = $2 } END { if (c > 1000) print c, t / c }' "$f" 2> /dev/null || true
				done
			done | sort -n | tail -1 | awk '{ print $2 }' || true
			wait $tp || true
		}
		long=$((CALLS * 10))
		for n in entry full bt_entry bt_out; do
			[ -n "$bt" ] || case $n in bt_*) continue ;; esac
			for i in $(seq "$RUNS"); do
				case $n in
				entry) prog_ns "$PC" -q -F 0 --trace-budget=none --trace tick:entry -o "$W/x.sp" -- "$W/tb" cost $long ;;
				full) prog_ns env SP_BPFHIT_FULL=1 "$PC" -q -F 0 --trace-budget=none --trace tick:entry -o "$W/x.sp" -- "$W/tb" cost $long ;;
				bt_entry) prog_ns bpftrace -q -e "uprobe:$W/tb:tick { @n = count(); }" -c "$W/tb cost $long" ;;
				bt_out) prog_ns bpftrace -q -e "uprobe:$W/tb:tick { printf(\"%d %d\\n\", tid, nsecs); }" -c "$W/tb cost $long" ;;
				esac
			done | median > "$W/ns"
			case $n in
			entry) label="pcollect tick:entry (compact)" ;;
			full) label="pcollect, every register" ;;
			bt_entry) label="bpftrace uprobe, count" ;;
			bt_out) label="bpftrace uprobe, printf per hit" ;;
			esac
			say "$(printf '  %-34s %9.0f ns per hit' "$label" "$(cat "$W/ns")")"
		done
		echo "$was" > $stats
	fi

	[ "$ONLY" = hits ] || [ "$ONLY" = prog ] && exit 0
	for hz in 1000 10000; do
		say "== slowdown at $hz calls/s (fixed work, CPU time over the run alone, median of $RUNS)"
		b=$(run alone rate $hz "$SW" | sed -n 's/.*cpu \([0-9.]*\).*/\1/p' | median)
		for n in $names; do
			c=$(run $n rate $hz "$SW" | sed -n 's/.*cpu \([0-9.]*\).*/\1/p' | median)
			say "$(awk -v n=$n -v c="$c" -v b="$b" 'BEGIN { printf "  %-8s %.3f s CPU, x%.3f\n", n, c, c / b }')"
		done
	done
fi

if [ "$ONLY" != threads ]; then
say "== pcollect --live: cost per malloc+free pair (static program; CPU per pair, median of $RUNS)"
if gcc -O2 -fomit-frame-pointer -static -o "$W/tl" tests/progs/t64-live.c 2> "$W/cc.err"; then
	live_run() { # live_run NAME [CALLS] -> lines "TARGET_NS TOTAL_CPU_S"
		local i CALLS=${2:-$CALLS}
		for i in $(seq "$RUNS"); do
			case $1 in
			alone) /usr/bin/time -f 'cpu %U %S' -o "$W/t" "$W/tl" cost "$CALLS" ;;
			alloc) /usr/bin/time -f 'cpu %U %S' -o "$W/t" "$PC" -q --trace 'malloc(arg1)' --stacks --weight arg1 \
				-o "$W/x.sp" -- "$W/tl" cost "$CALLS" ;;
			live) /usr/bin/time -f 'cpu %U %S' -o "$W/t" "$PC" -q --live -o "$W/x.sp" -- "$W/tl" cost "$CALLS" ;;
			every) /usr/bin/time -f 'cpu %U %S' -o "$W/t" "$PC" -q --live --every 100 -o "$W/x.sp" -- \
				"$W/tl" cost "$CALLS" ;;
			esac 2> /dev/null | sed -n 's/^cost \([0-9.]*\).*/\1/p' | tr '\n' ' '
			awk '/^cpu/ { print $2 + $3 }' "$W/t"
		done
	}
	for n in alone alloc live every; do
		case $n in
		alone) label="no probe" ;;
		alloc) label="malloc --stacks --weight arg1" ;;
		live) label="--live" ;;
		every) label="--live --every 100" ;;
		esac
		live_run $n > "$W/l.$n"
		t=$(awk '{ print $1 }' "$W/l.$n" | median)
		# pcollect's CPU: the run's total less the target's loop, less
		# what a run of one pair costs (start-up, the cost calibration)
		f=$(live_run $n 1 | awk '{ print $2 }' | median)
		c=$(awk -v n="$CALLS" -v f="$f" '{ print ($2 - f - $1 * n / 1e9) * 1e9 / n }' "$W/l.$n" | median)
		if [ $n = alone ]; then
			say "$(printf '  %-34s %9.1f ns per pair' "$label" "$t")"
		else
			say "$(awk -v l="$label" -v t="$t" -v c="$c" 'BEGIN { printf "  %-34s %9.1f ns per pair (target), pcollect %.1f us of CPU per pair\n", l, t, c / 1000 }')"
		fi
	done
else
	say "  not measured: no static libc ($(head -1 "$W/cc.err"))"
fi

# 4. What a traced library function costs a process that is not traced: a
#    bystander calling malloc+free in a loop (tests/progs/t62-bystander.c),
#    its calls in 1 s alone and while another process (sleep) has libc's
#    malloc traced by pcollect.  Per-target probes: the bystander never
#    traps, so the two rates differ by the machine's noise only (with the
#    system-wide probes of before, it ran at ~1 % of its rate).
fi
if [ -z "$ONLY" ]; then
say "== cost to an untraced process of a traced libc:malloc (malloc+free calls in 1 s, median of $RUNS)"
gcc -O2 -o "$W/by" tests/progs/t62-bystander.c
for mode in alone traced; do
	for i in $(seq "$RUNS"); do
		pc=
		if [ $mode = traced ]; then
			"$PC" -q -F 0 --trace libc:malloc -o "$W/b.sp" -- sleep 3 > /dev/null 2>&1 &
			pc=$!
			sleep 0.5
		fi
		"$W/by" 1000 | sed -n 's/^mallocs //p'
		if [ -n "$pc" ]; then kill -INT "$pc" 2> /dev/null || true; wait "$pc" 2> /dev/null || true; fi
	done > "$W/by.$mode"
	say "$(printf '  %-34s %12s calls/s' "$mode" "$(median < "$W/by.$mode")")"
done

#  5. Start and stop against the thread count: tests/progs/t62-many.c with
#     N threads each calling tick() then sleeping 50 ms (and a thread born
#     and dying every 20 ms), pcollect -v -F 0 --trace tick -p PID -d 1:
#     the attach and detach times -v prints, and the events opened and the
#     most open at once; as root with tracefs (one uprobe per probe,
#     shared): bpf (one event per probe and process, one per CPU for the
#     output, a BPF program records every thread's hits), perthread
#     (SP_UPROBE_PERTHREAD=1: events per thread and CPU) and, up to 20
#     threads, with the uprobe PMU (SP_UPROBE_PMU=1: one uprobe per event,
#     each close waits a grace period; 200 threads took 127 s here).
#     THREADS="1 20 200 500" MODES="bpf perthread pmu" (environment).
fi
[ "$ONLY" = live ] && exit 0
say "== start and stop against the thread count (pcollect -v -F 0 --trace tick -p PID -d 1)"
gcc -O2 -pthread -o "$W/many" tests/progs/t62-many.c
# bpf: as root (a BPF program, its carriers on a keeper process that ends
# the uprobes after pcollect exits); nokeeper: the same, the events closed
# by pcollect (SP_UPROBE_NOKEEPER=1); perthread: events per thread and CPU;
# pmu: the uprobe PMU (not root)
: > "$W/plot"
for mode in ${MODES:-bpf nokeeper perthread pmu}; do
	for n in ${THREADS:-1 20 200 500}; do
		[ $mode = pmu ] && [ "$n" -gt 20 ] && { say "  pmu, $n threads: skipped (one grace period per event: minutes)"; continue; }
		"$W/many" many "$n" 50 60 > "$W/many.out" & mp=$!
		for _ in $(seq 100); do grep -q ready "$W/many.out" && break; sleep 0.1; done
		sleep 0.3
		case $mode in
		pmu) SP_UPROBE_PMU=1 "$PC" -v -F 0 --trace tick -p $mp -d 1 -o "$W/m.sp" 2> "$W/m.err" || true ;;
		perthread) SP_UPROBE_PERTHREAD=1 "$PC" -v -F 0 --trace tick -p $mp -d 1 -o "$W/m.sp" 2> "$W/m.err" || true ;;
		nokeeper) SP_UPROBE_NOKEEPER=1 "$PC" -v -F 0 --trace tick -p $mp -d 1 -o "$W/m.sp" 2> "$W/m.err" || true ;;
		*) "$PC" -v -F 0 --trace tick -p $mp -d 1 -o "$W/m.sp" 2> "$W/m.err" || true ;;
		esac
		kill $mp 2> /dev/null; wait $mp 2> /dev/null || true
		a=$(sed -n 's/^pcollect: probes attached in \([0-9.]*\) s: \([0-9]*\) events in \([0-9]*\) threads.*/\1 s, \2 events in \3 threads/p' "$W/m.err")
		d=$(sed -n 's/^pcollect: probes detached \([0-9.]*\) s after tracing ended.*/\1/p' "$W/m.err")
		m=$(sed -n 's/.* threads, \([0-9]*\) perf events at most.*/\1/p' "$W/m.err")
		say "$(printf '  %-9s %4s threads: attached in %s (%s at most); detached %s s after -d' "$mode" "$n" "${a:-?}" "${m:-?}" "${d:-?}")"
		at=${a%% s,*}
		echo "$mode $n ${at:-?} ${d:-?}" >> "$W/plot"
	done
done
# the same figures as bars against the thread count: flat is the goal
# (attach <= 0.5 s, stop <= 0.3 s: the | marks)
for k in 3 4; do
	awk -v k=$k 'BEGIN { goal = k == 3 ? 0.5 : 0.3; print (k == 3 ? "== attach" : "== detach") " time against the thread count (# = " 0.02 " s, | = the goal, " goal " s)" }
		$k != "?" && $k != "" { w = int($k / 0.02 + 0.5); g = int(goal / 0.02 + 0.5); bar = ""
			for (i = 1; i <= (w > g ? w : g) && i <= 60; i++) bar = bar (i == g ? "|" : i <= w ? "#" : " ")
			printf "  %-9s %4s %-61s %.3f s\n", $1, $2, bar (w > 60 ? ">" : ""), $k }' "$W/plot"
done
