#!/bin/bash
# pcollect -p A,B (and --children) that samples nothing (issue 29, item 3):
# the reason names every target, not only the first, with their CPU time
# summed; one target keeps the sentence it had.  The targets are sleeps
# (no CPU time): nothing here depends on load or timing, -d 0.3 ends it.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
trap '{ kill -9 $A $B $P; wait; } 2>/dev/null; sp_cleanup' EXIT
sleep 60 & A=$!
sleep 60 & B=$!
sh -c 'sleep 60 & sleep 60 & wait' & P=$!
for _ in $(seq 50); do [ "$(pgrep -c -P $P)" = 2 ] && break; sleep 0.1; done

pcollect -F 99 -d 0.3 -p "$A,$B" -o "$T/two.sp" 2> "$T/two.err"; rc=$?
expect_rc "-p A,B, both asleep: no samples, exit 1" 1 $rc
expect_grep "-p A,B: the reason names both" \
	"^pcollect: no samples: processes $A and $B used 0\.[0-9]* s of CPU in [0-9.]* s, less than one sample period at -F 99 .*: their threads were blocked or idle" \
	"$T/two.err"

pcollect -F 99 -d 0.3 -p "$A,$B,$P" -o "$T/three.sp" 2> "$T/three.err"; rc=$?
expect_rc "-p A,B,C: exit 1" 1 $rc
expect_grep "-p A,B,C: the reason names all three" "^pcollect: no samples: processes $A, $B and $P used " "$T/three.err"

pcollect -F 99 -d 0.3 --children -p "$P" -o "$T/kids.sp" 2> "$T/kids.err"; rc=$?
expect_rc "--children -p P: exit 1" 1 $rc
expect_grep "--children -p P: the reason counts its children" \
	"^pcollect: no samples: process $P \(and the 2 processes below it found at the start\) used " "$T/kids.err"

pcollect -F 99 -d 0.3 -p "$A" -o "$T/one.sp" 2> "$T/one.err"; rc=$?
expect_rc "-p A alone: exit 1" 1 $rc
expect_grep "-p A alone: the sentence it had" "^pcollect: no samples: process $A used 0\.[0-9]* s of CPU in [0-9.]* s, less .*: its threads were blocked" "$T/one.err"
