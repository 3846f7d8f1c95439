#!/bin/bash
# pcollect --trace: exact calls from uprobes on a program built -O2 without
# frame pointers.  Every count is compared with what the program says it
# did: N calls over several threads (N entries, N exits, each exit with its
# entry's call id), recursion, longjmp (abandoned calls, no orphans),
# arguments and return values; attach, trace, detach: the target creates
# threads before, during and after; bad probes are refused with a sentence.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t62 t62-trace.c -O2 -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pcollect --trace" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi
if ! pcollect -q -F 0 --trace work -o "$T/probe.sp" -- "$T/t62" threads 1 > /dev/null 2> "$T/probe.err"; then
	if grep -qE 'needs (system-wide )?uprobe events' "$T/probe.err"; then
		skip "pcollect --trace" "$(head -1 "$T/probe.err")"; exit 0; fi
fi

# trace_counts FILE: "entries exits abandoned" of frame work-like lines
counts() { # counts DUMP FRAME
	awk -v f="frame=$2 " '
		index($0, f) && /^trace entry/ { e++ }
		index($0, f) && /^trace exit/ && !/abandoned/ { x++ }
		index($0, f) && /^trace exit/ && /abandoned/ { a++ }
		END { printf "%d %d %d\n", e, x, a }' "$1"
}
# Every exit closes an entry of the same call id on the same thread, once.
paired() { # paired DUMP: prints the number of bad exits and unclosed entries
	awk '/^trace/ {
		call = ""; thr = ""
		for (i = 1; i <= NF; i++) { if ($i ~ /^call=/) call = $i; if ($i ~ /^thread=/) thr = $i }
		if ($2 == "entry") { if (open[call]) bad++; open[call] = thr }
		else { if (open[call] != thr) bad++; delete open[call] }
	} END { n = 0; for (c in open) n++; print bad + n }' "$1"
}

# ---- exact counts over threads, launch mode, tracing alone and with samples
for F in 0 499; do
	pcollect -q -F $F --trace work -o "$T/th$F.sp" -- "$T/t62" threads 300 > "$T/th$F.out" 2> "$T/th$F.err"; rc=$?
	expect_rc "-F $F --trace work: exit 0" 0 $rc
	sp-dump "$T/th$F.sp" > "$T/th$F.txt" 2>&1
	want=$(sed -n 's/^calls //p' "$T/th$F.out")
	got=$(counts "$T/th$F.txt" work)
	if [ -n "$want" ] && [ "$got" = "$want $want 0" ]; then ok "-F $F: $want calls over 4 threads: $want entries, $want exits"; else
		notok "-F $F: calls $want, entries/exits/abandoned $got"; sed 's/^/  /' "$T/th$F.err" | head -5; fi
	expect_grep "-F $F: pthread_create works while probed" '^pthread_create ok' "$T/th$F.out"
	nthr=$(grep '^trace' "$T/th$F.txt" | sed 's/.*thread=\([0-9/]*\).*/\1/' | sort -u | wc -l)
	if [ "$nthr" = 4 ]; then ok "-F $F: the trace events carry 4 threads"; else notok "-F $F: $nthr threads"; fi
	bad=$(paired "$T/th$F.txt")
	if [ "$bad" = 0 ]; then ok "-F $F: each exit closes its entry's call on its thread"; else
		notok "-F $F: $bad unpaired events"; fi
done
if grep -q '^sample' "$T/th499.txt"; then ok "-F 499: samples and trace events in one stream"; else
	notok "-F 499: no samples"; fi
# Return probes replace return addresses while a call runs: the samples
# inside work() must still unwind to their thread's root.
pcollect -q -F 999 --trace work -o "$T/uw.sp" -- "$T/t62" threads 3000 > /dev/null 2>&1
pfold --weight=count "$T/uw.sp" > "$T/th499.folded" 2>/dev/null
read -r spin full < <(awk '/;spin [0-9]+$/ { s += $NF; if ($0 ~ /(start_thread;thr|main;run_threads;thr);work;spin [0-9]+$/) f += $NF }
	END { print s + 0, f + 0 }' "$T/th499.folded")
if [ "$spin" -ge 10 ] && [ $((full * 100)) -ge $((spin * 90)) ]; then
	ok "samples inside traced calls unwind through the return probe: $full of $spin spin samples whole"
else notok "samples inside traced calls: $full of $spin spin samples unwound to the root"; head -5 "$T/th499.folded" | sed 's/^/  /'; fi
if grep -q '^sample' "$T/th0.txt"; then notok "-F 0: samples were taken"; else ok "-F 0: trace events only"; fi

# ---- recursion: 6 nested calls of recur per round, each paired by its SP
pcollect -q -F 0 --trace recur -o "$T/r.sp" -- "$T/t62" recur 50 > "$T/r.out" 2>&1
sp-dump "$T/r.sp" > "$T/r.txt" 2>&1
want=$(sed -n 's/^recur calls //p' "$T/r.out")
got=$(counts "$T/r.txt" recur)
if [ -n "$want" ] && [ "$got" = "$want $want 0" ]; then ok "recursion: $want calls, $want exits, none abandoned"; else
	notok "recursion: want $want, got $got"; fi
expect_eq "recursion: every exit closes its own call" <(echo 0) <(paired "$T/r.txt")

# ---- longjmp: jumper(3) leaves 4 frames without returning
pcollect -q -v -F 0 --trace jumper --trace jumper_ok -o "$T/j.sp" -- "$T/t62" longjmp 100 > "$T/j.out" 2> "$T/j.err"
sp-dump "$T/j.sp" > "$T/j.txt" 2>&1
jumped=$(sed -n 's/^jumped //p' "$T/j.out")
got=$(counts "$T/j.txt" jumper)
# per round: jumper x4 (abandoned) + jumper x3 returning normally
want="$((7 * jumped)) $((3 * jumped)) $((4 * jumped))"
if [ -n "$jumped" ] && [ "$got" = "$want" ]; then ok "longjmp: entries/exits/abandoned $got"; else
	notok "longjmp: want $want, got $got"; fi
expect_eq "longjmp: jumper_ok returns normally" <(echo "$jumped $jumped 0") <(counts "$T/j.txt" jumper_ok)
expect_eq "longjmp: no orphan, every entry closed" <(echo 0) <(paired "$T/j.txt")
if grep -q 'returns without their entry' "$T/j.err"; then notok "longjmp: orphan returns reported"; else
	ok "longjmp: no orphan return"; fi

# ---- values: arguments at entry, the return value at exit
pcollect -q -F 0 --trace 'mix(arg1,arg2,arg3,ret)' -o "$T/a.sp" -- "$T/t62" args 20 > "$T/a.out" 2>&1
sp-dump "$T/a.sp" > "$T/a.txt" 2>&1
sed -n 's/^mix \(.*\) \(.*\) \(.*\) = \(.*\)$/\1 \2 \3 \4/p' "$T/a.out" > "$T/a.want"
awk '/^trace entry/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }; a = v["arg1"] " " v["arg2"] " " v["arg3"] }
     /^trace exit/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ret") print a, kv[2] } }' "$T/a.txt" > "$T/a.got"
if [ "$(wc -l < "$T/a.want")" = 20 ]; then expect_eq "values: arg1..arg3 and ret as the program printed them (negative too)" "$T/a.want" "$T/a.got"; else
	notok "values: the program printed $(wc -l < "$T/a.want") calls"; fi

# ---- FUNC:entry: entries only, point events
pcollect -q -F 0 --trace 'work:entry' -o "$T/e.sp" -- "$T/t62" threads 10 > /dev/null 2>&1
sp-dump "$T/e.sp" > "$T/e.txt" 2>&1
got=$(grep -c '^trace entry.*frame=work .* point' "$T/e.txt"); ex=$(grep -c '^trace exit' "$T/e.txt")
if [ "$got" = 40 ] && [ "$ex" = 0 ]; then ok "work:entry: 40 point events, no exit"; else
	notok "work:entry: $got entries, $ex exits"; fi

# ---- attach: threads created after the attach are traced; after the
# detach the target runs on and creates threads
: > "$T/at.out"
setsid "$T/t62" attach 200 "$T/go" > "$T/at.out" 2>&1 &
TPID=$!
trap 'kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT
for _ in $(seq 100); do grep -q '^ready' "$T/at.out" && break; sleep 0.1; done
pcollect -v -F 99 -p "$TPID" --trace work -o "$T/at.sp" 2> "$T/at.err" &
pc=$!
for _ in $(seq 300); do grep -q 'tracing 1 probe in process' "$T/at.err" && break; sleep 0.1; done
touch "$T/go"
for _ in $(seq 300); do grep -qE '^done|timeout|not probed' "$T/at.out" && break; sleep 0.1; done
kill -INT $pc
wait $pc; rc=$?
expect_rc "attach: pcollect exits 0 on SIGINT" 0 $rc
for _ in $(seq 100); do grep -qE '^after|timeout' "$T/at.out" && break; sleep 0.1; done
wait $TPID; trc=$?
expect_rc "attach: the target exits 0" 0 $trc
expect_grep "attach: threads created while probed" '^pthread_create ok' "$T/at.out"
expect_grep "detach: the probe is gone, the target creates a thread" '^after ok' "$T/at.out"
sp-dump "$T/at.sp" > "$T/at.txt" 2>&1
want=$(sed -n 's/^calls //p' "$T/at.out")
got=$(counts "$T/at.txt" work)
if [ -n "$want" ] && [ "$got" = "$want $want 0" ]; then ok "attach: $want calls of threads created after the attach: all traced"; else
	notok "attach: want $want, got $got"; sed "s/^/  /" "$T/at.err" | head -5; fi

# ---- pfilter --slow uses the exact calls
pfilter --slow work:95 "$T/th499.sp" 2> "$T/slow.err" > /dev/null
expect_grep "pfilter --slow: calls from the trace events" "work: $(sed -n 's/^calls //p' "$T/th499.out") calls \(from trace events\)" "$T/slow.err"

pdiff --split work:95 "$T/th499.sp" 2> "$T/split.err" > /dev/null
expect_grep "pdiff --split: calls from the trace events" "work: $(sed -n 's/^calls //p' "$T/th499.out") calls \(from trace events\)" "$T/split.err"

# ---- streaming: trace events reach the output while the target runs
rm -f "$T/go"
setsid "$T/t62" attach 100 "$T/go" > "$T/st.out" 2>&1 &
SPID=$!
trap 'kill -9 $TPID $SPID 2>/dev/null; sp_cleanup' EXIT
for _ in $(seq 100); do grep -q '^ready' "$T/st.out" && break; sleep 0.1; done
pcollect -v -F 0 -p "$SPID" --trace work --no-rename -o "$T/st.sp" 2> "$T/st.err" &
pc=$!
for _ in $(seq 300); do grep -q 'tracing 1 probe in process' "$T/st.err" && break; sleep 0.1; done
touch "$T/go"
n=0
for _ in $(seq 100); do
	n=$(sp-dump --partial "$T/st.sp" 2>/dev/null | grep -c '^trace exit.*frame=work ')
	[ "$n" = 400 ] && break
	sleep 0.1
done
if kill -0 $pc 2>/dev/null && [ "$n" = 400 ]; then ok "streaming: all 400 calls in the output while pcollect still runs"; else
	notok "streaming: $n of 400 calls seen while running"; fi
kill -INT $pc; wait $pc
wait $SPID

# ---- a line probe: every inlined copy of the line, hits = times it ran
if t6_build t62g t62-trace.c -O2 -g -fomit-frame-pointer -pthread; then
	L=$(grep -n 'LINE-PROBE \*/' "$SP_TOP/tests/progs/t62-trace.c" | cut -d: -f1)
	pcollect -v -F 0 --trace "t62-trace.c:$L" -o "$T/ln.sp" -- "$T/t62g" line 300 > "$T/ln.out" 2> "$T/ln.err"; rc=$?
	expect_rc "line probe: exit 0" 0 $rc
	np=$(sed -n 's/.*tracing \([0-9]*\) probes* in process.*/\1/p' "$T/ln.err")
	if [ "${np:-0}" -ge 2 ]; then ok "line probe: $np addresses (the line is inlined twice)"; else
		notok "line probe: ${np:-no} addresses for two inlined copies"; sed 's/^/  /' "$T/ln.err" | head -3; fi
	want=$(sed -n 's/^line ran //p' "$T/ln.out")
	preport --latency --json "$T/ln.sp" > "$T/ln.json" 2>&1
	expect_grep "line probe: point hits = the times the line ran ($want)" "\"probe\": \"t62-trace.c:$L\", \"kind\": \"point\", \"count\": $want\}" "$T/ln.json"
	pcollect -F 0 --trace "t62-trace.c:3" -o "$T/x.sp" -- "$T/t62g" line 1 > /dev/null 2> "$T/x.err"; rc=$?
	expect_rc "a line without code: exit 2" 2 $rc
	expect_grep "a line without code: the nearest lines with code" "no code at t62-trace.c:3 .*nearest line" "$T/x.err"
	pcollect -F 0 --trace "nosuch.c:3" -o "$T/x.sp" -- "$T/t62g" line 1 > /dev/null 2> "$T/x.err"; rc=$?
	expect_grep "an unknown source file: says so" "no source file nosuch.c" "$T/x.err"
fi

# ---- the overhead budget: one warning with the measured cost per hit
pcollect -F 0 --trace work --trace-budget 0.001 -o "$T/b.sp" -- "$T/t62" threads 5000 > /dev/null 2> "$T/b.err"; rc=$?
expect_rc "--trace-budget: exit 0" 0 $rc
n=$(grep -c 'tracing costs the target about .* hits/s at [0-9.]* us per hit' "$T/b.err")
if [ "$n" = 1 ]; then ok "--trace-budget 0.001%: one warning with hits/s and the cost per hit"; else
	notok "--trace-budget: $n warnings"; sed 's/^/  /' "$T/b.err" | head -3; fi
pcollect -F 0 --trace work --trace-budget 0 -- true > /dev/null 2>&1; rc=$?
expect_rc "--trace-budget 0: usage error" 2 $rc

# ---- variables at a line: a parameter and a local in registers, a local
# in the frame (frame base = CFA), as the program printed them
if t6_build loc t62-locals.c -O2 -g -fomit-frame-pointer; then
	L=$(grep -n 'PROBE \*/' "$SP_TOP/tests/progs/t62-locals.c" | cut -d: -f1)
	pcollect -F 0 --trace "t62-locals.c:$L(k,len,sum)" -o "$T/v.sp" -- "$T/loc" > "$T/v.out" 2> "$T/v.err"; rc=$?
	expect_rc "line variables: exit 0" 0 $rc
	sp-dump "$T/v.sp" 2>&1 | sed -n 's/^trace entry.* point \(k=.*\)$/handle \1/p' > "$T/v.got"
	if [ "$(wc -l < "$T/v.out")" = 20 ]; then expect_eq "line variables: k, len (registers) and sum (frame) as printed, negative too" "$T/v.out" "$T/v.got"
	else notok "line variables: the program printed $(wc -l < "$T/v.out") lines"; sed 's/^/  /' "$T/v.err" | head -3; fi
	pcollect -F 0 --trace "t62-locals.c:$L(nosuch)" -o "$T/x.sp" -- "$T/loc" > /dev/null 2> "$T/x.err"; rc=$?
	expect_rc "a variable not in scope: exit 2" 2 $rc
	expect_grep "a variable not in scope: one sentence why" "cannot read nosuch at t62-locals.c:$L: no variable or parameter nosuch is in scope there" "$T/x.err"
	pcollect -F 0 --trace "t62-locals.c:$L(r->fd)" -o "$T/x.sp" -- "$T/loc" > /dev/null 2> "$T/x.err"; rc=$?
	expect_rc "r->fd where r is known only by its entry value (DW_OP_entry_value): refused, exit 2" 2 $rc
fi

# ---- bad probes: one sentence, exit 2, nothing run
pcollect -F 0 --trace wrok -o "$T/x.sp" -- "$T/t62" threads 1 > "$T/x.out" 2> "$T/x.err"; rc=$?
expect_rc "missing function: exit 2" 2 $rc
expect_grep "missing function: the nearest names" "no function wrok in .*t62; nearest: work" "$T/x.err"
if [ -s "$T/x.out" ]; then notok "missing function: the program ran"; else ok "missing function: the program did not run"; fi
pcollect -F 0 --trace 'nosuchlib:f' -o "$T/x.sp" -- "$T/t62" threads 1 > /dev/null 2> "$T/x.err"; rc=$?
expect_rc "missing library: exit 2" 2 $rc
expect_grep "missing library: says so" "no library 'nosuchlib'" "$T/x.err"
pcollect -F 0 --trace 'mix(arg9)' -o "$T/x.sp" -- "$T/t62" args 1 > /dev/null 2> "$T/x.err"; rc=$?
expect_rc "bad value: exit 2" 2 $rc
pcollect -F 0 --trace 'work+100000' -o "$T/x.sp" -- "$T/t62" args 1 > /dev/null 2> "$T/x.err"; rc=$?
expect_rc "offset past the end: exit 2" 2 $rc
expect_grep "offset past the end: says so" "past the end of work" "$T/x.err"
pcollect -F 0 --trace 'libc:*' -o "$T/x.sp" -- "$T/t62" args 1 > /dev/null 2> "$T/x.err"; rc=$?
expect_rc "a glob over the limit: exit 2" 2 $rc
expect_grep "a glob over the limit: the count" "matches [0-9]+ or more functions" "$T/x.err"
pcollect -F 0 --trace 'jumper*' -o "$T/g.sp" -- "$T/t62" longjmp 2 > /dev/null 2> "$T/g.err"; rc=$?
expect_rc "glob: exit 0" 0 $rc
expect_grep "glob: the count and names printed" "'jumper\*': 2 functions \((jumper, jumper_ok|jumper_ok, jumper)\)" "$T/g.err"
if command -v strip > /dev/null; then
	strip -o "$T/t62s" "$T/t62"
	pcollect -F 0 --trace work -o "$T/x.sp" -- "$T/t62s" threads 1 > /dev/null 2> "$T/x.err"; rc=$?
	expect_rc "stripped binary, a static function: exit 2" 2 $rc
	expect_grep "stripped binary: says only dynamic symbols are known" "no function work in .*t62s \(stripped: only its dynamic symbols are known\)" "$T/x.err"
else skip "stripped binary" "strip is not installed"; fi
pcollect -F 0 -o "$T/x.sp" -- "$T/t62" args 1 > /dev/null 2> "$T/x.err"; rc=$?
expect_rc "-F 0 without --trace: usage error" 2 $rc
# a library function by soname
pcollect -q -F 0 --trace 'libc:usleep' --no-rename -o "$T/l.sp" -- "$T/t62" attach 1 "$T/never" > /dev/null 2>&1 &
pl=$!
for _ in $(seq 200); do
	sp-dump --partial "$T/l.sp" 2>/dev/null | grep -q '^trace entry.*frame=usleep' && break
	sleep 0.1
done
kill -INT $pl 2>/dev/null; wait $pl
sp-dump "$T/l.sp" > "$T/l.txt" 2>&1
n=$(grep -c '^trace entry.*frame=usleep \[native libc' "$T/l.txt")
if [ "$n" -ge 1 ]; then ok "libc:usleep: $n calls traced in libc"; else notok "libc:usleep: none"; head -3 "$T/l.txt"; fi
exit 0
