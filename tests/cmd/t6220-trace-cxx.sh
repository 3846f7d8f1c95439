#!/bin/bash
# pcollect --trace on C++: a method named by its demangled name, and a
# function that exceptions are thrown through.  Return probes are off there
# by default (said once), so the program keeps running.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

if ! command -v g++ > /dev/null; then skip "pcollect --trace C++" "g++ is not installed"; exit 0; fi
if ! g++ -O2 -fomit-frame-pointer -o "$T/exc" "$SP_TOP/tests/progs/t62-exc.cpp" 2> "$T/cc.err"; then
	notok "build tests/progs/t62-exc.cpp"; head -5 "$T/cc.err" | sed 's/^/  /'; exit 0; fi
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pcollect --trace C++" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi

pcollect -F 0 --trace middle --trace 'ns::Conn::recv(arg2)' -o "$T/x.sp" -- "$T/exc" 40 > "$T/x.out" 2> "$T/x.err"; rc=$?
if grep -qE 'needs (system-wide )?uprobe events' "$T/x.err"; then skip "pcollect --trace C++" "$(head -1 "$T/x.err")"; exit 0; fi
expect_rc "exceptions through a traced function: exit 0" 0 $rc
expect_grep "the program ran to its end" '^exc ok c=' "$T/x.out"
n=$(grep -c 'return probes are off' "$T/x.err")
if [ "$n" = 1 ]; then ok "one warning: return probes are off in C++ with exception tables"; else
	notok "the C++ warning came $n times"; sed 's/^/  /' "$T/x.err"; fi
sp-dump "$T/x.sp" > "$T/x.txt" 2>&1
expect_eq "middle: 40 entries, as points, no exit" <(echo "40 0") \
	<(echo "$(grep -c '^trace entry.*frame=middle .*point' "$T/x.txt") $(grep -c '^trace exit.*frame=middle ' "$T/x.txt")")
# the method by its C++ name, its second argument (after this)
seq 0 39 > "$T/want"
sed -n 's/^trace entry.*frame=ns::Conn::recv .* arg2=\(-*[0-9]*\)$/\1/p' "$T/x.txt" > "$T/got"
expect_eq "ns::Conn::recv by its demangled name: 40 calls with arg2 = 0..39" "$T/want" "$T/got"
# --trace-returns asks for them anyway: calls that return normally are measured
pcollect -q -F 0 --trace-returns --trace 'ns::Conn::recv' -o "$T/r.sp" -- "$T/exc" 40 > /dev/null 2>&1
sp-dump "$T/r.sp" > "$T/r.txt" 2>&1
expect_eq "--trace-returns: 40 entries and 40 exits of recv" <(echo "40 40") \
	<(echo "$(grep -c '^trace entry.*frame=ns::Conn::recv ' "$T/r.txt") $(grep -c '^trace exit.*frame=ns::Conn::recv ' "$T/r.txt")")
exit 0
