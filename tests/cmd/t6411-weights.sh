#!/bin/bash
# pcollect --stacks --weight for the allocators whose size is not arg1:
# calloc (arg1*arg2, a product), realloc (arg2), mmap (arg2).  A program
# built here makes N calls of each from its own function (via_calloc,
# via_realloc, via_mmap) with known sizes and prints the byte totals; the
# profile of each probe must give them within 1 %.  A static build: its
# allocator is probed in the program alone (t6400 runs libc's).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t64l t64-live.c -O2 -fomit-frame-pointer || exit 0
t6_probe || exit 0
t6_uprobes "pcollect --weight" "$T/t64l" weights 1 4 || exit 0
# under FOLDED FUNC: the values of the stacks through main;FUNC
under() { awk -v f=";main;$2;" 'index($0, f) { s += $NF } END { printf "%d\n", s }' "$1"; }

# usage: a product of two arguments, nothing else
pcollect --trace calloc --stacks --weight 'arg1*arg7' -- "$T/t64l" weights 1 4 > /dev/null 2> "$T/u1.err"; rc=$?
expect_rc "--weight arg1*arg7: exit 2" 2 $rc
expect_grep "--weight arg1*arg7: says what it takes" 'product argN\*argM' "$T/u1.err"
pcollect --trace calloc --stacks --weight 'arg1*' -- "$T/t64l" weights 1 4 > /dev/null 2> "$T/u2.err"; rc=$?
expect_rc "--weight arg1*: exit 2" 2 $rc

if ! gcc -O2 -fomit-frame-pointer -static -o "$T/t64s" "$SP_TOP/tests/progs/t64-live.c" 2> "$T/cc.err"; then
	skip "--weight of calloc, realloc, mmap" "no static libc (libc.a): $(head -1 "$T/cc.err")"; exit 0; fi
N=1000 SIZE=1000
# one probe per run: WHAT PROBE WEIGHT FUNC
for run in "calloc calloc(arg1,arg2) arg1*arg2 via_calloc" "realloc realloc arg2 via_realloc" \
	"mmap mmap arg2 via_mmap"; do
	set -- $run
	pcollect -q -v --trace "$2" --stacks --weight "$3" -o "$T/$1.sp" -- "$T/t64s" weights $N $SIZE \
		> "$T/$1.out" 2> "$T/$1.err"; rc=$?
	expect_rc "$1: --weight $3: exit 0" 0 $rc
	pfold "$T/$1.sp" > "$T/$1.folded" 2> "$T/$1.ferr"
	got=$(under "$T/$1.folded" "$4") want=$(wanted "$T/$1.out" "$4" 2)
	if [ -n "$want" ] && within "$want" "$got" 1; then
		ok "$1: --weight $3: $got bytes under main;$4 (the program: $want)"
	else notok "$1: --weight $3: $got bytes under main;$4, want $want"; sed 's/^/  /' "$T/$1.err" | head -5
		sort -k2 -n "$T/$1.folded" | tail -3 | sed 's/^/  /'; fi
done
# calloc weighed by one argument only is a quarter here (4 x SIZE/4): the product is what counts
pcollect -q --trace calloc --stacks --weight arg2 -o "$T/c2.sp" -- "$T/t64s" weights $N $SIZE > /dev/null 2>&1
pfold "$T/c2.sp" > "$T/c2.folded" 2>&1
got=$(under "$T/c2.folded" via_calloc)
if [ "$got" = $((N * (SIZE / 4))) ]; then ok "calloc --weight arg2 alone: $got, a quarter (the product multiplies)"; else
	notok "calloc --weight arg2: $got, want $((N * (SIZE / 4)))"; fi
