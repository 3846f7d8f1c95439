#!/bin/bash
# pcollect --trace 'malloc(arg1)' --stacks --weight arg1: allocation
# profiles.  A program built here mallocs 3*N blocks from big_allocs and N
# from small_allocs (both under main, each block freed), and prints what it
# did; the profile must give those bytes and calls, under main, in their own
# columns ("bytes", "calls": no CPU samples mixed in).  Exact counts use a
# static build (its malloc is probed in the program alone); the user's
# pipeline (libc:malloc | psvg --colors=mem) uses the dynamic build, whose
# libc every process of the machine shares (system-wide probes).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t64 t64-alloc.c -O2 -fomit-frame-pointer || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --stacks" "$T/t64" 1 1 || exit 0
STATIC=1
if ! gcc -O2 -fomit-frame-pointer -static -o "$T/t64s" "$SP_TOP/tests/progs/t64-alloc.c" 2> "$T/cc.err"; then
	skip "static build" "no static libc (libc.a): $(head -1 "$T/cc.err")"; STATIC=0; fi

N=1000 SIZE=1000
# sums FOLDED: "big small" values of the stacks main;big_allocs;... and main;small_allocs;...
sums() {
	awk '/;main;big_allocs;one;(malloc|__libc_malloc|__GI___libc_malloc) [0-9.]+$/ { b += $NF } /;main;small_allocs;one;(malloc|__libc_malloc|__GI___libc_malloc) [0-9.]+$/ { s += $NF }
		END { printf "%d %d\n", b, s }' "$1"
}

if [ $STATIC = 1 ]; then
	# ---- bytes: --weight arg1
	pcollect -q -v --trace 'malloc(arg1)' --stacks --weight arg1 -o "$T/b.sp" -- "$T/t64s" $N $SIZE \
		> "$T/b.out" 2> "$T/b.err"; rc=$?
	expect_rc "--stacks --weight arg1: exit 0" 0 $rc
	sp-dump "$T/b.sp" > "$T/b.txt" 2>&1
	expect_grep "the stream has the columns bytes, calls" '^values bytes,calls$' "$T/b.txt"
	expect_grep "the bytes column is in bytes" '^units bytes,samples$' "$T/b.txt"
	ev=$(sed -n 's/^sample .* event=\([^ ]*\) .*/\1/p' "$T/b.txt" | sort -u | tr '\n' ' ')
	if [ "$ev" = "probe-hits " ]; then ok "every sample is a probe hit (no CPU samples)"; else
		notok "sample events: '$ev'"; fi
	pfold "$T/b.sp" > "$T/b.folded" 2> "$T/b.ferr"
	read -r big small < <(sums "$T/b.folded")
	wb=$(wanted "$T/b.out" big_allocs 2) ws=$(wanted "$T/b.out" small_allocs 2)
	if [ -n "$wb" ] && within "$wb" "$big" 1 && within "$ws" "$small" 1; then
		ok "bytes under main;big_allocs and main;small_allocs: $big and $small (the program: $wb, $ws)"
	else notok "bytes: big_allocs $big (want $wb), small_allocs $small (want $ws)"; sed 's/^/  /' "$T/b.err" | head -5
		head -5 "$T/b.folded" | sed 's/^/  /'; fi
	share=$(awk -v b="$big" -v s="$small" 'BEGIN { if (b + s > 0) printf "%.2f", 100 * b / (b + s) }')
	if [ -n "$share" ] && awk -v x="$share" 'BEGIN { exit !(x >= 74 && x <= 76) }'; then
		ok "byte shares 3:1: big_allocs $share %"; else notok "byte shares: big $big small $small ($share %)"; fi
	# ---- calls: no --weight
	pcollect -q --trace malloc --stacks -o "$T/c.sp" -- "$T/t64s" $N $SIZE > "$T/c.out" 2> "$T/c.err"
	sp-dump "$T/c.sp" 2>&1 | grep -q '^values calls$' && ok "no --weight: one column, calls" || notok "no --weight: columns $(sp-dump "$T/c.sp" 2>&1 | grep '^values')"
	pfold "$T/c.sp" > "$T/c.folded" 2>&1
	read -r big small < <(sums "$T/c.folded")
	wb=$(wanted "$T/c.out" big_allocs 1) ws=$(wanted "$T/c.out" small_allocs 1)
	if [ -n "$wb" ] && [ "$big $small" = "$wb $ws" ]; then ok "calls: $big and $small, the program's exact numbers"; else
		notok "calls: $big $small, want $wb $ws"; sed 's/^/  /' "$T/c.err" | head -5; fi
	# ---- --every 10: every 10th hit, counted 10 times
	pcollect -q -v --trace 'malloc(arg1)' --stacks --weight arg1 --every 10 -o "$T/e.sp" -- "$T/t64s" $N $SIZE \
		> "$T/e.out" 2> "$T/e.err"
	pfold "$T/e.sp" > "$T/e.folded" 2>&1
	read -r big small < <(sums "$T/e.folded")
	kept=$(sed -n 's/.*--stacks: \([0-9]*\) probe entries, \([0-9]*\) stacks written.*/\2/p' "$T/e.err")
	wb=$(wanted "$T/e.out" big_allocs 2) ws=$(wanted "$T/e.out" small_allocs 2)
	if [ -n "$wb" ] && within "$wb" "$big" 1 && within "$ws" "$small" 1 && [ -n "$kept" ] && [ "$kept" -le $((4 * N / 10 + 2)) ]; then
		ok "--every 10: $kept stacks kept, bytes scaled to $big and $small (want $wb, $ws)"
	else notok "--every 10: $kept kept, big $big (want $wb), small $small (want $ws)"; fi
	pspeedscope "$T/b.sp" > "$T/b.json" 2>&1
	expect_grep "pspeedscope: the profile is in bytes" '"unit":"bytes"' "$T/b.json"
	psvg --colors=mem "$T/b.sp" > "$T/b.svg" 2> "$T/b.svgerr"; rc=$?
	expect_rc "psvg --colors=mem: exit 0" 0 $rc
	if grep -q '>big_allocs<' "$T/b.svg" && grep -q 'small_allocs' "$T/b.svg"; then ok "the SVG draws big_allocs and small_allocs"; else
		notok "the SVG lacks big_allocs or small_allocs"; fi
	fills=$(grep -o '<rect [^>]*fill="#[0-9a-f]*"' "$T/b.svg" | sed 's/.*fill="#\(..\).*/\1/' | sort -u | tr '\n' ' ')
	if [ "$fills" = "00 " ]; then ok "mem palette: frames in greens and blues (no red)"; else notok "mem palette: red components '$fills'"; fi
fi

# ---- the user's pipeline: libc's malloc, psvg --colors=mem
pcollect -v --trace 'libc:malloc(arg1)' --stacks --weight arg1 -o "$T/d.sp" -- "$T/t64" $N $SIZE > "$T/d.out" 2> "$T/d.err"; rc=$?
expect_rc "libc:malloc --stacks --weight arg1: exit 0" 0 $rc
psvg --colors=mem "$T/d.sp" > "$T/d.svg" 2> "$T/d.svgerr"; rc=$?
expect_rc "libc:malloc | psvg --colors=mem: exit 0" 0 $rc
if grep -q '>big_allocs<' "$T/d.svg"; then ok "libc:malloc: the SVG draws big_allocs"; else
	notok "libc:malloc: the SVG lacks big_allocs"; sed 's/^/  /' "$T/d.err" | head -5; fi
pfold "$T/d.sp" > "$T/d.folded" 2>&1
read -r big small < <(sums "$T/d.folded")
wb=$(wanted "$T/d.out" big_allocs 2) ws=$(wanted "$T/d.out" small_allocs 2)
if [ -n "$wb" ] && within "$wb" "$big" 1 && within "$ws" "$small" 1; then
	ok "libc:malloc: bytes under main;big_allocs and main;small_allocs: $big and $small (want $wb, $ws)"
elif why=$(t6_shared_loss "$T/d.err"); then
	# libc is shared by every process here: their mallocs hit the same
	# system-wide probe, fill its buffer and make the kernel drop hits.
	skip "libc:malloc bytes" "$why (big $big small $small)"
else notok "libc:malloc: big_allocs $big (want $wb), small_allocs $small (want $ws)"; sed 's/^/  /' "$T/d.err" | head -8; fi

# ---- usage errors
pcollect --stacks -- "$T/t64" 1 1 > /dev/null 2> "$T/u1.err"; rc=$?
expect_rc "--stacks without --trace: exit 2" 2 $rc
expect_grep "--stacks without --trace: says why" 'stacks needs --trace' "$T/u1.err"
pcollect --trace malloc --stacks --weight size -- "$T/t64" 1 1 > /dev/null 2> "$T/u2.err"; rc=$?
expect_rc "--weight size: exit 2" 2 $rc
expect_grep "--weight size: says what it takes" 'arg1 .. arg6' "$T/u2.err"
pcollect --trace malloc --stacks --call-graph fp -- "$T/t64" 1 1 > /dev/null 2> "$T/u3.err"; rc=$?
expect_rc "--stacks --call-graph fp: exit 2" 2 $rc
pcollect --trace malloc --weight arg1 -- "$T/t64" 1 1 > /dev/null 2> "$T/u4.err"; rc=$?
expect_rc "--weight without --stacks: exit 2" 2 $rc
pcollect --trace malloc --stacks --every 0 -- "$T/t64" 1 1 > /dev/null 2> "$T/u5.err"; rc=$?
expect_rc "--every 0: exit 2" 2 $rc
