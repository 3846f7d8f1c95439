#!/bin/bash
# Accuracy (issue 35, item 5): node --perf-basic-prof (JIT frames named from
# /tmp/perf-PID.map) running tests/progs/t35-nodework.js (sorting, JSON,
# regular expressions, arithmetic; phases of random lengths), profiled
# over the same seconds by pcollect -p and by perf record --call-graph
# dwarf -p, both at 499 Hz, both --no-inline (perf script's addr2line
# takes minutes on node's binary).  Printed: the TVD of the leaf distributions
# and the noise floor (two draws of the same sizes from perf's); fails
# beyond the floor + 0.06.  And preport's rows of that recording are
# functions: the process name (the root frame) is not one of them.
# Quick: 2 s; SP_ACCURACY=long (make accuracy): 8 s.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/acc-lib.sh"
acc_plain_only "node against perf"
if ! command -v node > /dev/null; then skip "node against perf" "node is not installed (make deps installs nodejs)"; exit 0; fi
acc_perf_ok "node against perf" || exit 0
t6_probe || exit 0
d=2; [ -n "$ACC_LONG" ] && d=8

P=
trap '{ kill -9 $P; wait; } 2> /dev/null; [ -n "$P" ] && rm -f "/tmp/perf-$P.map"; sp_cleanup' EXIT
cd "$T" || exit 1 # node --perf-basic-prof writes its isolate-*.log here
t6_spawn "$T/ready" node --perf-basic-prof "$SP_TOP/tests/progs/t35-nodework.js"; P=$TPID
if ! t6_alive $P || ! grep -q ready "$T/ready"; then notok "node --perf-basic-prof did not start"; exit 0; fi
t6_ticks $P 20
if acc_both $P $d 499 --no-inline; then
	pfold --kernel --no-comm --weight=samples "$T/ours.sp" > "$T/ours.folded" 2> "$T/pf.err"
	pfold --kernel --no-comm --weight=samples "$T/perf.txt" > "$T/perf.folded" 2>> "$T/pf.err"
	acc_leaves "$T/perf.folded" > "$T/perf.leaves"; acc_leaves "$T/ours.folded" > "$T/ours.leaves"
	if grep -q '^JS:' "$T/ours.leaves"; then
		acc_tvd "node --perf-basic-prof against perf record --call-graph dwarf, ${d} s at 499 Hz" "$T/perf.leaves" "$T/ours.leaves" 0.06
	else notok "node: no JS: frames named from /tmp/perf-$P.map"; head -5 "$T/ours.leaves" | sed 's/^/  /'; fi
	# preport's function rows: the process name is the root, not a function
	preport -n 8 "$T/ours.sp" > "$T/rep" 2>&1
	if awk '/^ *self%/ { t = 1; next } t && $NF == "node" { bad = 1 } END { exit !t || bad }' "$T/rep"; then
		ok "preport -n 8: no row for the process name node"
	else notok "preport -n 8: a row for the process name node (or no table)"; sed 's/^/  /' "$T/rep" | head -12; fi
fi
