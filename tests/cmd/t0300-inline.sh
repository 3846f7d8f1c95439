#!/bin/bash
# pfold --inline on real `perf script` output recorded here: the function a
# noinline function inlined (always_inline, -O2 -g) shows as an "_[i]" frame
# under it, resolved in-process from the program's DWARF.  Without --inline
# it does not show, and nothing else changes: the same total, no symbol
# offsets left in names.
. "$(dirname "$0")/../lib.sh"

if ! command -v perf >/dev/null; then skip inline "perf is not installed"; exit 0; fi
if ! command -v gcc >/dev/null; then skip inline "gcc is not installed"; exit 0; fi
gcc -O2 -g -o "$T/inl" "$SP_TOP/tests/progs/inline.c" || { notok "build tests/progs/inline.c"; exit 0; }
if ! perf record -e cpu-clock -F 999 -g -o "$T/perf.data" "$T/inl" > /dev/null 2> "$T/err"; then
	skip inline "perf record is not permitted here: $(tail -1 "$T/err")"; exit 0
fi
perf script -i "$T/perf.data" > "$T/out.txt" 2> /dev/null
if ! grep -q 'work_noinline+0x' "$T/out.txt"; then
	skip inline "perf script printed no work_noinline+0x... frame (no symbols?)"; exit 0
fi

total() { awk '{s+=$NF} END {printf "%.0f\n", s}' "$1"; }

pfold --inline "$T/out.txt" > "$T/inl.folded" 2> "$T/e"; rc=$?
expect_rc "--inline exits 0" 0 $rc
expect_grep "--inline: burn_inl_[i] under work_noinline" '(^|;)work_noinline;burn_inl_\[i\] [0-9]+$' "$T/inl.folded"
if grep -q '+0x[0-9a-f]*\( \|;\)' "$T/inl.folded"; then
	notok "--inline: symbol offsets stripped"; grep '+0x' "$T/inl.folded" | head -3 | sed 's/^/  /'
else ok "--inline: symbol offsets stripped"; fi

pfold "$T/out.txt" > "$T/plain.folded" 2>/dev/null
if grep -q 'burn_inl' "$T/plain.folded"; then
	notok "without --inline: no burn_inl frame"; head -3 "$T/plain.folded" | sed 's/^/  /'
else ok "without --inline: no burn_inl frame"; fi
a=$(total "$T/plain.folded") b=$(total "$T/inl.folded")
if [ "$a" = "$b" ] && [ "$a" != 0 ]; then ok "--inline keeps the total ($b)"; else
	notok "--inline keeps the total ($b, without: $a)"; fi

# Dropping the inlined frames gives back the plain stacks.
sed -e ':a' -e 's/;[^;]*_\[i\]\( \|;\)/\1/' -e 'ta' "$T/inl.folded" | pfold > "$T/back.folded" 2>/dev/null
pfold "$T/plain.folded" > "$T/plain2.folded" 2>/dev/null
expect_eq "--inline only adds _[i] frames" "$T/plain2.folded" "$T/back.folded"

# Binary output carries the same stacks.
pfold --inline -b "$T/out.txt" 2>/dev/null | pfold > "$T/bin.folded" 2>/dev/null
expect_eq "--inline -b | pfold = --inline" "$T/inl.folded" "$T/bin.folded"

# perf's DWARF unwinding prints "(inlined)" frames itself: they are kept,
# the frame they came from is not expanded a second time.
if perf record -e cpu-clock -F 999 --call-graph dwarf -o "$T/dw.data" "$T/inl" 10 > /dev/null 2>&1 &&
	perf script -i "$T/dw.data" > "$T/dw.txt" 2>/dev/null && grep -q 'burn_inl+0x[0-9a-f]* (inlined)' "$T/dw.txt"; then
	pfold --inline "$T/dw.txt" > "$T/dw.folded" 2>/dev/null
	if grep -qE '(^|;)work_noinline;burn_inl [0-9]+$' "$T/dw.folded" && ! grep -q 'burn_inl_\[i\]' "$T/dw.folded"; then
		ok "dwarf callchains: perf's (inlined) frame kept, not doubled"
	else
		notok "dwarf callchains: perf's (inlined) frame kept, not doubled"; head -3 "$T/dw.folded" | sed 's/^/  /'
	fi
else
	skip "dwarf callchains" "perf script printed no (inlined) frames for --call-graph dwarf here"
fi

# C++: perf prints the function demangled without parameters or return type
# ("ns::spin<unsigned long>"); the symbol table has it mangled.
if ! command -v g++ >/dev/null; then skip "C++" "g++ is not installed"; exit 0; fi
g++ -O2 -g -o "$T/cxx" "$SP_TOP/tests/progs/inline-cxx.cpp" || { notok "build tests/progs/inline-cxx.cpp"; exit 0; }
perf record -e cpu-clock -F 999 -g -o "$T/cxx.data" "$T/cxx" 10 > /dev/null 2>&1
perf script -i "$T/cxx.data" > "$T/cxx.txt" 2>/dev/null
if ! grep -q 'ns::spin<unsigned long>+0x' "$T/cxx.txt"; then
	skip "C++" "perf script did not print demangled ns::spin<unsigned long>"; exit 0
fi
pfold --inline "$T/cxx.txt" > "$T/cxx.folded" 2>/dev/null
expect_grep "C++: step_[i] under the demangled ns::spin<unsigned long>" '(^|;)ns::spin<unsigned long>;step_\[i\] [0-9]+$' "$T/cxx.folded"
