#!/bin/bash
# pcollect --trace traps in the target's processes only: probes are opened
# per thread, new threads and forked children are held (ptrace) until
# their probes are open, and a launched command is armed before its first
# instruction.  Counts are compared with what the programs say they did:
# libc:malloc's byte totals (5 runs each, -F 0 and sampling, 0 lost, 0 hits
# of other processes), a program of about 1 ms, threads and a child
# created after attaching; an untraced process calling malloc in a loop
# keeps its rate while another process's libc:malloc is traced.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t64 t64-alloc.c -O2 -fomit-frame-pointer || exit 0
t6_build spawn t62-spawn.c -O2 -pthread || exit 0
t6_build bystander t62-bystander.c -O2 || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --trace (per target)" "$T/t64" 1 1 || exit 0

# field ERRFILE: "hits-of-others lost" from pcollect -v's messages
field() {
	local foreign lost
	foreign=$(sed -n 's/.* \([0-9]*\) hits of other processes$/\1/p' "$1" | tail -1)
	lost=$(sed -n 's/^pcollect: probe .*: \([0-9]*\) of its [0-9]* hits lost.*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }')
	echo "${foreign:-?} ${lost:-0}"
}
sums() {
	awk '/;main;big_allocs;one;(malloc|__libc_malloc|__GI___libc_malloc) [0-9.]+$/ { b += $NF } /;main;small_allocs;one;(malloc|__libc_malloc|__GI___libc_malloc) [0-9.]+$/ { s += $NF }
		END { printf "%d %d\n", b, s }' "$1"
}

# ---- libc:malloc, the dynamic build: libc is mapped by every process of
# the machine, pcollect included; only the target's calls may count.
N=2500 SIZE=1000
for F in 0 99; do
	good=0 truthful=0 runs=""
	for run in 1 2 3 4 5; do
		pcollect -v -F $F --trace 'libc:malloc(arg1)' --trace-budget=none --stacks --weight arg1 -o "$T/m.sp" -- "$T/t64" $N $SIZE 2000 \
			> "$T/m.out" 2> "$T/m.err"; rc=$?
		pfold --value=bytes "$T/m.sp" > "$T/m.folded" 2> /dev/null
		got="$(sums "$T/m.folded") $(field "$T/m.err") rc=$rc"
		runs="$runs [$got]"
		[ "$got" = "$((3 * N * SIZE)) $((N * SIZE)) 0 0 rc=0" ] && good=$((good + 1))
		# A loaded machine may starve pcollect until the ring is full:
		# then the loss must be said, out of exactly the calls made
		# (4 N + 1 mallocs: printf's buffer), entries and returns.
		grep -q "^pcollect: probe malloc: [0-9]* of its $((2 * (4 * N + 1))) hits lost" "$T/m.err" &&
			truthful=$((truthful + 1))
	done
	# Exact needs pcollect to drain the 32 MiB ring (~7,000 hits with
	# their 4 KiB stacks) before it fills.  Unpaced, this program fills it
	# in ~70 ms, and a CI run at load ~3 lost hits in 3 of 5 runs (each
	# said); paced (2 ms asleep after every 50 calls: ~0.4 s a run) the ring
	# holds ~0.4 s of pcollect starved.  A run may still lose hits, said
	# below; 3 of 5 runs exact is asserted, 5 is what a quiet machine gives.  Under ASan
	# pcollect drains several times slower than this program mallocs (the
	# CI run: 1-2 of 5 exact, each other run saying its loss): there only
	# the truthfulness below is asserted, and the exact count is reported.
	if [ $good -ge 3 ]; then ok "-F $F libc:malloc --weight arg1: $good of 5 runs exact bytes 3:1, 0 hits of other processes, 0 lost"
	elif [ "${SP_LABEL#asan}" != "$SP_LABEL" ]; then
		skip "-F $F libc:malloc exactness" "under ASan pcollect drains too slowly for this program's malloc rate: $good of 5 runs exact (big small others lost):$runs"
	else
		notok "-F $F libc:malloc: $good of 5 runs exact (big small others lost):$runs"; sed 's/^/  /' "$T/m.err" | head -5; fi
	if [ $((good + truthful)) = 5 ]; then ok "-F $F: every run exact or its lost hits said, counted against all $((2 * (4 * N + 1))) hits"; else
		notok "-F $F: $((5 - good - truthful)) runs neither exact nor saying what they lost"; fi
done

# ---- a short program (about 1 ms): every call from its first instruction
for F in 0 99; do
	pcollect -q -F $F --trace work -o "$T/s.sp" -- "$T/spawn" 0 1 200 > "$T/s.out" 2> "$T/s.err"; rc=$?
	want=$(sed -n 's/^calls //p' "$T/s.out")
	got=$(sp-dump "$T/s.sp" 2>/dev/null | grep -c '^trace entry.*frame=work ')
	if [ $rc = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then ok "-F $F: a 1 ms program: all $want calls counted"; else
		notok "-F $F: 1 ms program: exit $rc, $got entries of $want calls"; sed 's/^/  /' "$T/s.err" | head -5; fi
done

# ---- threads and a child created after the probes are open
for mode in launch attach; do
	for F in 0 99; do
		if [ $mode = launch ]; then
			pcollect -v -F $F --trace work -o "$T/t.sp" -- "$T/spawn" 0 4 2000 fork > "$T/t.out" 2> "$T/t.err"; rc=$?
		else
			t6_spawn "$T/t.out" "$T/spawn" 1000 4 2000 fork || { notok "$mode: the program did not start"; continue; }
			pcollect -v -F $F -p $TPID --trace work -o "$T/t.sp" 2> "$T/t.err"; rc=$?
			wait $TPID
		fi
		want=$(sed -n 's/^calls //p' "$T/t.out")
		sp-dump "$T/t.sp" > "$T/t.txt" 2>/dev/null
		got=$(grep -c '^trace entry.*frame=work ' "$T/t.txt")
		procs=$(grep '^trace entry.*frame=work ' "$T/t.txt" | sed 's/.*thread=\([0-9]*\).*/\1/' | sort -u | wc -l)
		if [ $rc = 0 ] && [ "$want" = 10000 ] && [ "$got" = "$want" ]; then
			ok "$mode -F $F: 4 threads and a forked child made after the probes: all $want calls counted"; else
			notok "$mode -F $F: exit $rc, $got entries of ${want:-?} calls"; grep -v 'costs\|^pcollect: a probe\|samples of' "$T/t.err" | tail -5 | sed 's/^/  /'; fi
		expect_grep "$mode -F $F: -v says new threads were held" ' 5 new threads and processes held' "$T/t.err"
	done
done

# ---- a bystander: its malloc rate with another process's libc:malloc
# traced (sleep 5: a process that maps libc and runs little, so the two
# compete for no CPU), against its rate alone.  What this measures: whether
# the bystander traps (with system-wide probes it ran at ~1 % of its rate).
# On this shared machine rates move by tens of percent between runs, so
# the best of 3 traced runs must reach 60 % of the best of 3 runs alone:
# far from the 1 % of a bystander that traps, loose enough for the noise.
rate_alone=0 rate_traced=0
for i in 1 2 3; do
	r=$("$T/bystander" 700 | sed -n 's/^mallocs //p'); [ "${r:-0}" -gt $rate_alone ] && rate_alone=$r
	pcollect -q -F 0 --trace 'libc:malloc' -o "$T/b.sp" -- sleep 5 > /dev/null 2>&1 &
	pc=$!
	sleep 0.3
	r=$("$T/bystander" 700 | sed -n 's/^mallocs //p'); [ "${r:-0}" -gt $rate_traced ] && rate_traced=$r
	kill -INT $pc 2>/dev/null; wait $pc
done
if [ $rate_alone -gt 0 ] && [ $((rate_traced * 100)) -ge $((rate_alone * 60)) ]; then
	ok "a bystander's malloc loop keeps its rate while another process's libc:malloc is traced ($rate_traced vs $rate_alone in 0.7 s)"; else
	notok "bystander: $rate_traced mallocs in 0.7 s while another process is traced, $rate_alone alone"; fi

# ---- -F 0 --stacks: the mappings are followed without CPU samples; pfold
# --value picks a stream's column, and a column it lacks is an error.
pcollect -q -F 0 --trace 'libc:malloc(arg1)' --stacks --weight arg1 -o "$T/c.sp" -- "$T/t64" 1000 100 > /dev/null 2> "$T/c.err"; rc=$?
expect_rc "-F 0 --stacks: exit 0" 0 $rc
pfold --value=calls "$T/c.sp" > "$T/c.folded" 2> "$T/c.perr"; rc=$?
expect_rc "pfold --value=calls on a stream: exit 0" 0 $rc
got=$(sums "$T/c.folded")
if [ "$got" = "3000 1000" ]; then ok "-F 0 --stacks | pfold --value=calls: 3000 and 1000 calls, unwound to main"; else
	notok "-F 0 --stacks, calls column: '$got' (want 3000 1000)"; head -3 "$T/c.folded" | sed 's/^/  /'; fi
pfold --value=calls < "$T/c.sp" > "$T/c2.folded" 2>/dev/null
expect_eq "pfold --value=calls reads a piped stream alike" "$T/c.folded" "$T/c2.folded"
pfold --value=nosuch "$T/c.sp" > "$T/c3.folded" 2> "$T/c3.err"; rc=$?
expect_rc "pfold --value=nosuch: exit 2" 2 $rc
expect_grep "pfold --value=nosuch names the columns" '^pfold: --value=nosuch: the input has no such value column \(its columns: bytes, calls\)' "$T/c3.err"

# ---- lost hits, said truthfully: a 1 MiB buffer of 4 KiB stack copies
# overflows under 10,001 mallocs; the loss is counted per probe from the
# kernel's own count of the probe's hits (entries and returns: 20,002), and
# preport --latency marks the probe's figures incomplete.
pcollect -v -F 0 --buffer 1 --trace 'libc:malloc(arg1)' --stacks -o "$T/lo.sp" -- "$T/t64" 2500 1000 > /dev/null 2> "$T/lo.err"; rc=$?
expect_rc "--buffer 1 --stacks: exit 0" 0 $rc
lost=$(sed -n 's/^pcollect: probe malloc: \([0-9]*\) of its 20002 hits lost: its trace buffer was full.*/\1/p' "$T/lo.err")
if [ -z "$lost" ]; then
	if grep -q 'hits lost' "$T/lo.err"; then notok "lost hits said, but not as 'N of its 20002 hits'"; sed 's/^/  /' "$T/lo.err" | head -3
	else skip "lost hits" "a 1 MiB buffer held all 20002 hits on this run: nothing was lost to say"; fi
else
	# the hits read (-v; a return whose entry was lost is read but
	# written as no trace event)
	got=$(sed -n 's/^pcollect: traced 1 probes: \([0-9]*\) hits,.*/\1/p' "$T/lo.err")
	if [ -n "$got" ] && [ $((got + lost)) = 20002 ]; then ok "lost hits counted exactly: $got read + $lost said lost = the 20002 hits"; else
		notok "${got:-?} read + $lost said lost != 20002"; fi
	preport --latency "$T/lo.sp" > "$T/lo.txt" 2>&1
	expect_grep "preport --latency marks the probe that lost hits" "^malloc: [0-9]+ calls.* \(INCOMPLETE: $lost hits of this probe were lost\)" "$T/lo.txt"
fi
