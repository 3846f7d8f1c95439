#!/bin/bash
# pcollect --trace 'FILE.c:LINE(VAR)' where VAR is optimised out at LINE
# (-O2): refused with the lines where a probe can read it, from its
# location list's ranges; and probing the first line it names does read
# it, with the value the program printed.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build oo t62-optout.c -O2 -g -fomit-frame-pointer || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pcollect --trace optimised out" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi

G=$(grep -n 'GONE \*/' "$SP_TOP/tests/progs/t62-optout.c" | cut -d: -f1)
U=$(grep -n 'USED \*/' "$SP_TOP/tests/progs/t62-optout.c" | cut -d: -f1)
pcollect -F 0 --trace "t62-optout.c:$G(x)" -o "$T/x.sp" -- "$T/oo" 5 > "$T/x.out" 2> "$T/x.err"; rc=$?
expect_rc "x optimised out at the GONE line: exit 2" 2 $rc
if [ -s "$T/x.out" ]; then notok "optimised out: the program ran"; else ok "optimised out: the program did not run"; fi
expect_grep "optimised out: the sentence names the lines where it is readable" \
	"cannot read x at t62-optout.c:$G: it is optimised out there; lines where a probe can read it: [0-9]" "$T/x.err"
lines=$(sed -n 's/.*lines where a probe can read it: //p' "$T/x.err")
first=$(echo "$lines" | sed 's/[^0-9].*//')
# "13, 15-17": a single line or a range a-b holding U
if echo "$lines" | tr ',' '\n' | awk -F- -v u="$U" '{ hi = NF == 2 ? $2 : $1 } $1 + 0 <= u && u <= hi + 0 { f = 1 } END { exit !f }'; then
	ok "the USED line $U is among them ($lines)"
else notok "the USED line $U is not among the lines named: $lines"; fi
if [ -n "$first" ]; then
	pcollect -F 0 --trace "t62-optout.c:$first(x)" -o "$T/u.sp" -- "$T/oo" 5 > "$T/u.out" 2> "$T/u.err"; rc=$?
	expect_rc "the first line named ($first): exit 0" 0 $rc
	sp-dump "$T/u.sp" 2>&1 | sed -n 's/^trace entry.* point \(x=.*\)$/\1/p' > "$T/u.got"
	expect_eq "the first line named ($first): x as the program printed it" <(grep '^x=' "$T/u.out") "$T/u.got"
fi
exit 0
