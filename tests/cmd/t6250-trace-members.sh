#!/bin/bash
# pcollect --trace 'FILE.c:LINE(conn->fd,req.len)': one level of struct
# member at a line probe, at -O2: a member of a heap struct through a
# pointer (read from the live process), of a struct in the frame (the stack
# copy) and through a pointer into the frame (the stack copy); the values
# must be those the program printed.  Wrong member syntax: one sentence.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build mem t62-members.c -O2 -g -fomit-frame-pointer || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "pcollect --trace members" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi

L=$(grep -n 'PROBE \*/' "$SP_TOP/tests/progs/t62-members.c" | cut -d: -f1)
pcollect -F 0 --trace "t62-members.c:$L(conn->fd,conn->flags,req.len,rp->kind)" -o "$T/m.sp" -- "$T/mem" 40 \
	> "$T/m.out" 2> "$T/m.err"; rc=$?
if grep -qE 'needs (system-wide )?uprobe events' "$T/m.err"; then skip "pcollect --trace members" "$(head -1 "$T/m.err")"; exit 0; fi
expect_rc "struct members: exit 0" 0 $rc
sp-dump "$T/m.sp" 2>&1 | sed -n 's/^trace entry.* point \(conn->fd=.*\)$/serve \1/p' > "$T/m.got"
if [ "$(wc -l < "$T/m.out")" = 40 ]; then
	expect_eq "conn->fd, conn->flags (heap), req.len (frame), rp->kind (pointer into the frame) as printed" \
		"$T/m.out" "$T/m.got"
else notok "struct members: the program printed $(wc -l < "$T/m.out") lines"; sed 's/^/  /' "$T/m.err" | head -3; fi
if grep -q 'could not be read' "$T/m.err"; then notok "struct members: values not read"; sed 's/^/  /' "$T/m.err" | head -3
else ok "struct members: no value left unread"; fi

# wrong member syntax or type: exit 2, one sentence, the program not run
bad() { # LABEL VALUE PATTERN
	pcollect -F 0 --trace "t62-members.c:$L($2)" -o "$T/x.sp" -- "$T/mem" 1 > "$T/x.out" 2> "$T/x.err"; rc=$?
	expect_rc "$1: exit 2" 2 $rc
	expect_grep "$1: says why" "$3" "$T/x.err"
	if [ -s "$T/x.out" ]; then notok "$1: the program ran"; fi
}
bad "'.' on a pointer" 'conn.fd' "cannot read conn.fd at t62-members.c:$L: it is a pointer: use '->'"
bad "'->' on a struct" 'req->len' "cannot read req->len at .*: '->' needs a pointer to a struct"
bad "a missing member" 'conn->nosuch' "its struct has no member nosuch"
bad "two levels" 'conn->fd->x' "'conn->fd->x' is not a variable name, VAR.MEMBER or VAR->MEMBER"
bad "a member of an integer" 'i.x' "cannot read i.x at .*: it is not a struct, union or class"
exit 0
