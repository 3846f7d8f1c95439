#!/bin/bash
# pcollect --trace on instructions the kernel cannot probe (lock-prefixed):
# a function entry and a line probe move to the next instruction of the
# same basic block, with one note naming both addresses, and count what
# the program counts; a probe whose next instruction is a jump target is
# refused (exit 2) with the nearest probeable instruction; attach mode
# gives the same sentences.  The kernel itself records nothing there
# (perf probe too), which is why the tool checks before opening.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build lock t62-lock.c -O2 -g || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --trace (placement)" "$T/lock" 1 || exit 0
if ! objdump -d "$T/lock" 2>/dev/null | awk '/<counted>:/ { getline; print; exit }' | grep -q 'lock'; then
	skip "pcollect --trace (placement)" "this compiler does not start counted() with a lock-prefixed add"; exit 0; fi

line=$(grep -n 'LOCKLINE \*/' "$SP_TOP/tests/progs/t62-lock.c" | cut -d: -f1)
N=1000
for mode in launch attach; do
	run() { # run PROBE...: pcollect -F 0 on the program, its stderr in $T/$mode.err
		local args=() p
		for p in "$@"; do args+=(--trace "$p"); done
		if [ $mode = launch ]; then
			pcollect -F 0 "${args[@]}" -o "$T/l.sp" -- "$T/lock" $N > "$T/l.out" 2> "$T/$mode.err"
		else
			t6_spawn "$T/l.out" "$T/lock" $N 800 || return 99
			pcollect -F 0 -p $TPID "${args[@]}" -o "$T/l.sp" 2> "$T/$mode.err"
			local rc=$?
			wait $TPID
			return $rc
		fi
	}
	run counted "t62-lock.c:$line"; rc=$?
	expect_rc "$mode: probes moved off lock-prefixed instructions: exit 0" 0 $rc
	expect_grep "$mode: counted's entry moved, both addresses named" \
		'^pcollect: probe counted: moved from 0x[0-9a-f]+ \(counted\+0x0, t62-lock.c:[0-9]+\) to 0x[0-9a-f]+ \(counted\+0x8, .*\): the kernel cannot probe the lock-prefixed instruction there, and the next one is in the same basic block' "$T/$mode.err"
	expect_grep "$mode: the lock line's probe moved" "^pcollect: probe t62-lock.c:$line: moved from 0x[0-9a-f]+ \\(maybe\\+0x[0-9a-f]+, t62-lock.c:$line\\) to " "$T/$mode.err"
	sp-dump "$T/l.sp" > "$T/l.txt" 2>/dev/null
	want=$(sed -n 's/^counted \([0-9]*\) lock \([0-9]*\).*/\1 \2/p' "$T/l.out")
	got="$(grep -c '^trace entry.*frame=counted ' "$T/l.txt") $(grep -c "^trace entry.*frame=t62-lock.c:$line " "$T/l.txt")"
	if [ "$want" = "$N $N" ] && [ "$got" = "$want" ]; then ok "$mode: the moved probes count what the program counts ($got)"; else
		notok "$mode: counted/lock line: program '$want', trace '$got'"; sed 's/^/  /' "$T/$mode.err" | head -4; fi
	run counted joined; rc=$?
	expect_rc "$mode: a probe no instruction can stand for: exit 2" 2 $rc
	expect_grep "$mode: the refusal says why and what can be probed" \
		"^pcollect: --trace 'joined': the kernel cannot probe the lock-prefixed instruction at 0x[0-9a-f]+ \\(joined\\+0x0\\), and no later instruction can stand for it: a jump lands on the next instruction, at 0x[0-9a-f]+; nearby instructions it can probe: 0x[0-9a-f]+ \\(joined\\+0x8\\)" "$T/$mode.err"
	[ $mode = launch ] && cp "$T/$mode.err" "$T/launch.refusal"
done
if diff <(grep joined "$T/launch.refusal") <(grep joined "$T/attach.err") > /dev/null; then
	ok "attach mode refuses with the same sentence as launch mode"; else
	notok "the refusals differ"; diff <(grep joined "$T/launch.refusal") <(grep joined "$T/attach.err") | sed 's/^/  /'; fi

# A real program nobody here wrote: xz's liblzma, probed where it starts.
if command -v xz > /dev/null; then
	head -c 3000000 /dev/urandom > "$T/data"
	pcollect -F 0 --trace 'liblzma:lzma_code' -o "$T/x.sp" -- xz -k -1 -T1 -c "$T/data" > /dev/null 2> "$T/x.err"; rc=$?
	n=$(sp-dump "$T/x.sp" 2>/dev/null | grep -c '^trace entry.*frame=lzma_code ')
	if [ $rc = 0 ] && [ "$n" -gt 0 ] && ! grep -q ' 0 hits$' "$T/x.err"; then ok "xz: liblzma:lzma_code traced ($n calls)"; else
		notok "xz: exit $rc, $n calls"; sed 's/^/  /' "$T/x.err" | head -3; fi
else skip "xz" "xz is not installed"; fi
