#!/bin/bash
# pcollect, launch mode, on real programs built here: DWARF unwinding of
# -O2 -fomit-frame-pointer code, the shares of known functions in two named
# threads, inlined frames, threads/times/periods in the stream, exit codes,
# short-lived commands, options.  Shares are checked within a few points;
# nothing here asserts a timing.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build shares t6-shares.c -O2 -g -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0

# hot_loop gets 75% of the sampled CPU time, cold_loop 25% (thread CPU time).
pcollect -F 499 -o "$T/s.sp" -- "$T/shares" 1.2 2> "$T/err"; rc=$?
expect_rc "launch: exit status 0 of the command" 0 $rc
if sp-dump "$T/s.sp" > "$T/s.txt" 2> "$T/e"; then ok "launch: the stream is complete (trailer, checksum)"; else
	notok "launch: the stream is complete"; sed 's/^/  /' "$T/e"; fi
pfold --weight=count "$T/s.sp" > "$T/s.folded" 2>/dev/null
hot=$(awk '/^hot-worker;.*;hot_caller;hot_loop(;|( [0-9]+$))/ {s+=$NF} END {print s+0}' "$T/s.folded")
cold=$(awk '/^cold-worker;.*;cold_caller;cold_loop(;|( [0-9]+$))/ {s+=$NF} END {print s+0}' "$T/s.folded")
total=$(awk '{s+=$NF} END {print s+0}' "$T/s.folded")
share=$(awk -v h="$hot" -v c="$cold" 'BEGIN { if (h + c) printf "%.1f", 100 * h / (h + c); else print 0 }')
if [ "$((hot + cold))" -ge 200 ] && awk -v s="$share" 'BEGIN { exit !(s >= 69 && s <= 81) }'; then
	ok "launch: hot_loop $share% / cold_loop of the two threads (want 75 +- 6), $((hot + cold)) samples"
else
	notok "launch: hot_loop share $share% (hot $hot, cold $cold samples; want 75 +- 6)"; sort -k2 -nr "$T/s.folded" | head -5 | sed 's/^/  /'
fi
# Nearly every sample of the workers unwinds down to the thread's start.
inner=$(awk '/^(hot|cold)-worker;/ && /;start_thread;(hot;hot_caller;hot_loop|cold;cold_caller;cold_loop)/ {s+=$NF} END {print s+0}' "$T/s.folded")
workers=$(awk '/^(hot|cold)-worker;/ {s+=$NF} END {print s+0}' "$T/s.folded")
if [ "$workers" -gt 0 ] && [ $((inner * 100)) -ge $((workers * 95)) ]; then
	ok "launch: $inner of $workers worker samples unwound through start_thread;hot;hot_caller / cold;cold_caller"
else notok "launch: $inner of $workers worker samples fully unwound (want >= 95%)"; sort -k2 -nr "$T/s.folded" | head -5 | sed 's/^/  /'; fi
expect_grep "launch: the inlined blend() under hot_loop" ';hot_caller;hot_loop;blend( |;)' "$T/s.folded"
expect_grep "launch: blend is a frame of kind inlined" 'hot_loop \[native [^]]*\];blend \[inlined ' "$T/s.txt"
expect_grep "launch: samples carry time, thread (pid/tid name) and period" \
	'^sample t=[0-9]+ thread=[0-9]+/[0-9]+ "hot-worker" event=cpu-clock values=1,[0-9]+ stack=' "$T/s.txt"
if awk '/^sample / { sub("t=", "", $2); if ($2 + 0 < last) bad++; last = $2 + 0 } END { exit bad > 0 }' "$T/s.txt"; then
	ok "launch: samples are in time order"; else notok "launch: samples are in time order"; fi
expect_grep "launch: the command line is in the stream's metadata" "^meta command=$T/shares 1.2$" "$T/s.txt"
expect_grep "launch: the exit status is in the stream's metadata" '^meta exit-status=0$' "$T/s.txt"
# Kernel frames: shown when the kernel allows it, else one warning.  dd
# copying /dev/zero spends most of its time in read(2) and write(2).
pcollect -F 999 -o "$T/dd.sp" -- dd if=/dev/zero of=/dev/null bs=64k count=30000 2> "$T/err" > /dev/null
pfold --kernel "$T/dd.sp" > "$T/k.folded" 2>/dev/null
if grep -q 'kernel frames are not available' "$T/err"; then
	if grep -q '_\[k\]' "$T/k.folded"; then notok "kernel frames: warned, yet some are there"; else
		ok "kernel frames: not allowed here, one warning, user frames only"; fi
else
	kern=$(awk '/_\[k\]/ {s+=$NF} END {print s+0}' "$T/k.folded")
	all=$(awk '{s+=$NF} END {print s+0}' "$T/k.folded")
	if [ "$all" -gt 0 ] && [ $((kern * 2)) -ge "$all" ] && grep -q '^dd;.*;__libc_start_call_main;.*_\[k\]' "$T/k.folded"; then
		ok "kernel frames: dd's system calls show kernel frames (_[k]) under its user stack"
	else notok "kernel frames: $kern of $all in the kernel"; sort -k2 -nr "$T/k.folded" | head -3 | cut -c1-200 | sed 's/^/  /'; fi
fi

# Exit codes and short commands.
# the stream on stdout: the command's own stdout must not land in it
pcollect -- sh -c 'i=0; while [ $i -lt 2000 ]; do echo "hello from the child $i"; i=$((i+1)); done' 2> "$T/e" > "$T/o.sp"
if sp-dump "$T/o.sp" > /dev/null 2>&1 && grep -q 'hello from the child 1999' "$T/e"; then
	ok "launch, stream on stdout: the command's output goes to stderr, the stream stays intact"
else notok "launch, stream on stdout: $(sp-dump "$T/o.sp" 2>&1 > /dev/null | head -1)"; fi
pcollect -o "$T/x.sp" -- sh -c 'exit 3' 2> "$T/e"; rc=$?
expect_rc "launch: the command's exit status (3) is pcollect's" 3 $rc
expect_grep "launch: a failing command is reported" 'sh exited with status 3' "$T/e"
if sp-dump "$T/x.sp" > /dev/null 2>&1; then ok "launch: a failing command still gives a complete stream"; else
	notok "launch: a failing command still gives a complete stream"; fi
pcollect -o "$T/x.sp" -- "$T/no-such-command" 2> "$T/e"; rc=$?
expect_rc "launch: a command that cannot run: exit 127" 127 $rc
expect_grep "launch: ... with a clear message" 'cannot run .*no-such-command: No such file' "$T/e"
pcollect -F 999 -o "$T/short.sp" -- "$T/shares" 0.01 2> "$T/e"; rc=$?
if [ $rc = 0 ] && sp-dump "$T/short.sp" > "$T/short.txt" 2>&1 && grep -q '^meta exit-status=0' "$T/short.txt"; then
	ok "launch: a command that runs 10 ms gives a valid stream ($(grep -c '^sample' "$T/short.txt") samples)"
else notok "launch: a 10 ms command gives a valid stream (exit $rc)"; head -3 "$T/short.txt" "$T/e" | sed 's/^/  /'; fi
pcollect -o "$T/sig.sp" -- sh -c 'kill -9 $$' 2>/dev/null; rc=$?
expect_rc "launch: a command killed by signal 9: exit 137" 137 $rc

# -d ends the command it started, and the stream is complete.
start=$(date +%s)
pcollect -d 0.5 -o "$T/d.sp" -- "$T/shares" 30 2>/dev/null; rc=$?
el=$(( $(date +%s) - start ))
if [ $rc = 0 ] && [ $el -lt 10 ] && sp-dump "$T/d.sp" > "$T/d.txt" 2>&1 && grep -q '^sample' "$T/d.txt"; then
	ok "launch -d 0.5: stops, ends the command, complete stream"
else notok "launch -d 0.5: exit $rc after ${el}s"; tail -2 "$T/d.txt" | sed 's/^/  /'; fi

# Output to a terminal is refused (script(1) provides one).
if command -v script > /dev/null; then
	script -qec "$SP_BIN/pcollect -- true" /dev/null > "$T/tty.out" 2>&1; rc=$?
	if [ $rc = 2 ] && grep -q 'refusing to write the binary stream to a terminal' "$T/tty.out"; then
		ok "a terminal on standard output is refused (exit 2, says to pipe)"
	else notok "a terminal on standard output is refused (exit $rc)"; head -3 "$T/tty.out" | sed 's/^/  /'; fi
else
	skip "terminal refusal" "script(1) is not installed"
fi

# Usage errors: exit 2, one line of reason and the synopsis.
for args in "" "-F 0 -- true" "-p 1 -- true" "--call-graph=lbr -- true" "-d x -- true" "-t ( -- true"; do
	pcollect $args > /dev/null 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q '^usage: pcollect' "$T/e"; then ok "usage error: pcollect $args"; else
		notok "usage error: pcollect $args (exit $rc)"; head -2 "$T/e" | sed 's/^/  /'; fi
done
pcollect --help > "$T/h" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q -- '--call-graph' "$T/h" && grep -q 'perf_event_paranoid' "$T/h"; then
	ok "--help: exit 0, options and permissions"; else notok "--help (exit $rc)"; fi

# Thread filter.
pcollect -t '^cold' -F 499 -o "$T/t.sp" -- "$T/shares" 0.6 2>/dev/null
pfold "$T/t.sp" > "$T/t.folded" 2>/dev/null
if grep -q '^cold-worker;' "$T/t.folded" && ! grep -q '^hot-worker' "$T/t.folded"; then
	ok "-t '^cold': only the cold-worker thread"; else notok "-t '^cold'"; cut -c1-100 "$T/t.folded" | head -3 | sed 's/^/  /'; fi

# --lines, --no-inline.
pcollect --lines -F 499 -o "$T/l.sp" -- "$T/shares" 0.4 2>/dev/null
sp-dump "$T/l.sp" > "$T/l.txt" 2>&1
expect_grep "--lines: frames carry file:line" 'hot_loop \[native [^]]*t6-shares\.c:[0-9]+\]' "$T/l.txt"
expect_grep "--lines: the inlined frame's line is in blend()" 'blend \[inlined [^]]*t6-shares\.c:[0-9]+\]' "$T/l.txt"
pcollect --no-inline -F 499 -o "$T/n.sp" -- "$T/shares" 0.4 2>/dev/null
pfold "$T/n.sp" > "$T/n.folded" 2>/dev/null
if grep -q ';hot_loop' "$T/n.folded" && ! grep -q 'blend' "$T/n.folded"; then ok "--no-inline: no blend frame"; else
	notok "--no-inline: no blend frame"; fi

# Frame pointers: the kernel's callchain, on a -fno-omit-frame-pointer build.
t6_build shares_fp t6-shares.c -O2 -g -fno-omit-frame-pointer -pthread || exit 0
pcollect --call-graph fp -F 499 -o "$T/fp.sp" -- "$T/shares_fp" 0.6 2>/dev/null
pfold "$T/fp.sp" > "$T/fp.folded" 2>/dev/null
expect_grep "--call-graph fp: hot_caller;hot_loop from frame pointers" '^hot-worker;.*hot;hot_caller;hot_loop' "$T/fp.folded"

# A live consumer: the stream is read while it is written.
pcollect -F 499 -- "$T/shares" 0.4 2>/dev/null | pfold > "$T/pipe.folded" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q '^hot-worker;' "$T/pipe.folded"; then ok "pcollect -- CMD | pfold"; else
	notok "pcollect -- CMD | pfold (exit $rc)"; head -2 "$T/e" | sed 's/^/  /'; fi
