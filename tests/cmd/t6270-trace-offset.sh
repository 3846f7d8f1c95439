#!/bin/bash
# pcollect --trace FUNC+OFF: OFF must be an instruction boundary.  An
# offset that is a row of the DWARF line table is accepted (and hit as
# often as the function's start, in a function without branches); one
# inside an instruction (from objdump -d) is refused, naming the nearest
# rows; without a line table only +0 is accepted.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t62g t62-trace.c -O2 -g -fomit-frame-pointer -pthread || exit 0
t6_build t62 t62-trace.c -O2 -fomit-frame-pointer -pthread || exit 0
if ! command -v objdump > /dev/null || ! command -v nm > /dev/null; then
	skip "pcollect --trace FUNC+OFF" "objdump or nm (binutils) is not installed"; exit 0; fi
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pcollect --trace FUNC+OFF" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi

read -r start size <<< "$(nm -S "$T/t62g" | awk '$4 == "work" { print $1, $2 }')"
S=$((16#$start)); E=$((S + 16#$size))
# line table rows inside work, after its start
row=$(objdump --dwarf=decodedline "$T/t62g" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^0x[0-9a-f]+$/) print $i }' |
	while read -r a; do a=$((a)); if [ $a -gt $S ] && [ $a -lt $E ]; then echo $((a - S)); fi; done | sort -n | head -1)
# an offset inside an instruction of two bytes or more
inside=$(objdump -d --no-show-raw-insn --start-address=$S --stop-address=$E "$T/t62g" |
	awk -F: '/^ *[0-9a-f]+:/ { print $1 }' | while read -r a; do echo $((16#$a)); done |
	awk -v s=$S 'NR > 1 && $1 - prev >= 2 { print prev + 1 - s; exit } { prev = $1 }')
if [ -z "$row" ] || [ -z "$inside" ]; then
	notok "work: no line table row ($row) or no instruction of 2+ bytes ($inside) found"; exit 0; fi

pcollect -F 0 --trace work+0 --trace "work+$row" -o "$T/r.sp" -- "$T/t62g" threads 25 > /dev/null 2> "$T/r.err"; rc=$?
if grep -qE 'needs (system-wide )?uprobe events' "$T/r.err"; then skip "pcollect --trace FUNC+OFF" "$(head -1 "$T/r.err")"; exit 0; fi
expect_rc "work+$row (a line table row): accepted, exit 0" 0 $rc
preport --latency --json "$T/r.sp" > "$T/r.json" 2>&1
n0=$(grep -o '"probe": "work+0x0", "kind": "point", "count": [0-9]*' "$T/r.json" | sed 's/.* //')
hx=$(printf '0x%x' "$row")
nr=$(grep -o "\"probe\": \"work+$hx\", \"kind\": \"point\", \"count\": [0-9]*" "$T/r.json" | sed 's/.* //')
if [ -n "$n0" ] && [ "${n0:-0}" -gt 0 ] && [ "$n0" = "$nr" ]; then ok "work+$hx hit as often as work+0 ($n0)"; else
	notok "work+$hx hit ${nr:-no} times, work+0 ${n0:-no} times"; sed 's/^/  /' "$T/r.json" | head -5; fi

pcollect -F 0 --trace "work+$inside" -o "$T/x.sp" -- "$T/t62g" threads 1 > "$T/x.out" 2> "$T/x.err"; rc=$?
expect_rc "work+$inside (inside an instruction): refused, exit 2" 2 $rc
expect_grep "inside an instruction: says why, with the nearest rows" \
	"offset $inside into work is not the start of a line's code .* refused; the nearest" "$T/x.err"
if [ -s "$T/x.out" ]; then notok "inside an instruction: the program ran"; else ok "inside an instruction: the program did not run"; fi

pcollect -F 0 --trace "work+$row" -o "$T/x.sp" -- "$T/t62" threads 1 > "$T/x.out" 2> "$T/x.err"; rc=$?
expect_rc "work+$row without DWARF: refused, exit 2" 2 $rc
expect_grep "without DWARF: says only +0 is accepted" "no DWARF line table for it \\(build it with -g\\); only work\\+0 is accepted" "$T/x.err"
exit 0
