#!/bin/bash
# Small untruths a new user met (issue 28, items 6 and 7):
# - folded input with no valid line is an error ("no valid stack line"),
#   not an empty profile that exits 0; a bad line's control bytes are
#   written escaped (\x01), never raw to the terminal;
# - pcollect -v counts the distinct stacks it wrote, --stacks profiles
#   included (it said "0 distinct stacks" for one with 6).
. "$(dirname "$0")/../lib.sh"

printf 'foo\001bar\nbaz\nqux zz\n' > "$T/garbage.txt"
pfold -f folded "$T/garbage.txt" > "$T/g.out" 2> "$T/g.err"; rc=$?
expect_rc "pfold -f folded on 3 bad lines: exit 2" 2 $rc
expect_grep "... says no valid stack line, with the count" "garbage.txt: no valid stack line \(3 lines rejected\)" "$T/g.err"
if [ -s "$T/g.out" ]; then notok "... writes nothing"; else ok "... writes nothing"; fi
if LC_ALL=C grep -q $'\001' "$T/g.err"; then notok "control byte of a bad line written raw"; cat -v "$T/g.err" | sed 's/^/  /'
else expect_grep 'control byte of a bad line written as \x01' 'garbage.txt:1: expected "stack COUNT": foo\\x01bar$' "$T/g.err"; fi
psvg -f folded < "$T/garbage.txt" > "$T/g.svg" 2> "$T/g2.err"; rc=$?
expect_rc "psvg on the same text (stdin): exit 2" 2 $rc
expect_grep "... names standard input" "standard input: no valid stack line" "$T/g2.err"
printf '\n \n\n' > "$T/blank.txt"
pfold -f folded "$T/blank.txt" > /dev/null 2> "$T/b.err"; rc=$?
expect_rc "pfold -f folded on blank lines only: exit 2" 2 $rc
expect_grep "... says so" "no valid stack line \(only blank lines\)" "$T/b.err"
# One good line among bad ones is a profile: warnings, exit 0.
printf 'junk\na;b 3\n' > "$T/some.txt"
pfold -f folded "$T/some.txt" > "$T/s.out" 2> "$T/s.err"; rc=$?
expect_rc "one valid line among bad: exit 0" 0 $rc
printf 'a;b 3\n' > "$T/s.want"
expect_eq "... its stack kept" "$T/s.want" "$T/s.out"
expect_grep "... the bad line counted" "1 bad line skipped" "$T/s.err"

# pcollect -v: distinct stacks of a --stacks (probe hits) profile.
. "$SP_TOP/tests/cmd/t6-lib.sh"
t6_build t64 t64-alloc.c -O2 -fomit-frame-pointer || exit 0
t6_probe || exit 0
t6_uprobes "pcollect -v --stacks" "$T/t64" 1 1 || exit 0
pcollect -q -v --trace 'libc:malloc(arg1)' --stacks --weight arg1 -o "$T/a.sp" -- "$T/t64" 100 100 > /dev/null 2> "$T/a.err"; rc=$?
expect_rc "pcollect -v --stacks: exit 0" 0 $rc
said=$(sed -n 's/.* \([0-9]*\) distinct stacks;.*/\1/p' "$T/a.err")
# the distinct stacks of the program's own samples (other processes' hits
# of libc's malloc are not written, see pcollect(1))
got=$(pfold "$T/a.sp" 2> /dev/null | wc -l)
if [ -n "$said" ] && [ "$said" -gt 0 ] && [ "$said" = "$got" ]; then
	ok "pcollect -v says $said distinct stacks, as many as pfold's lines"
else notok "pcollect -v says '${said}' distinct stacks, pfold writes $got lines"; grep distinct "$T/a.err" | sed 's/^/  /'; fi
