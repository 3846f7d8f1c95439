#!/bin/bash
# Accuracy (issue 35, item 5): node --perf-basic-prof (JIT frames named from
# /tmp/perf-PID.map) running tests/progs/t35-nodework.js (sorting, JSON,
# regular expressions, arithmetic; phases of random lengths), profiled over
# the same seconds by pcollect -p and by perf record --call-graph dwarf -p,
# both at 499 Hz, both --no-inline (perf script's addr2line takes minutes
# on node's binary).  Printed: the TVD of the main thread's leaf
# distributions and the noise floor (two draws of the same sizes from
# perf's); fails beyond the pooled draws' 95th percentile + 0.04.  V8's
# helper threads (GC, compiler) are printed apart, their share of each
# profile, and left out of the distance (when the two profiles' windows
# were not cut to the same seconds their shares differed 2-5 points).
# And preport's rows of that
# recording are functions: the process name (the root frame) is not one
# of them.  Where libc has several names at one address, ours is perf's
# (without inlined frames: perf's choose_best_symbol,
# __memmove_avx_unaligned_erms).
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
	# the main thread's stacks (root "node-PID/TID" with TID = PID), root
	# left out; and the share of V8's helper threads
	for w in ours.sp perf.txt; do
		pfold --kernel --tid --weight=samples "$T/$w" 2>> "$T/pf.err" |
			awk -v main="/$P" -v out="$T/${w%.*}.folded" '{ r = $0; sub(/;.*/, "", r); t += $NF
				if (substr(r, length(r) - length(main) + 1) == main) { s = $0; sub(/^[^;]*;/, "", s); print s > out } else h += $NF }
				END { printf "%.1f", t ? 100 * h / t : 0 }' > "$T/${w%.*}.helpers"
	done
	echo "# V8's helper threads: $(cat "$T/perf.helpers") % of perf's samples, $(cat "$T/ours.helpers") % of ours; the leaves compared are the main thread's"
	acc_leaves "$T/perf.folded" > "$T/perf.leaves"; acc_leaves "$T/ours.folded" > "$T/ours.leaves"
	if grep -q '^JS:' "$T/ours.leaves"; then
		acc_tvd "node --perf-basic-prof against perf record --call-graph dwarf, ${d} s at 499 Hz" "$T/perf.leaves" "$T/ours.leaves" 0.04
	else notok "node: no JS: frames named from /tmp/perf-$P.map"; head -5 "$T/ours.leaves" | sed 's/^/  /'; fi
	acc_aliases "node --no-inline: libc's aliases as perf script --no-inline names them" "$(command -v node)" "$T/perf.folded" "$T/ours.folded"
	# preport's function rows: the process name is the root, not a function
	preport -n 8 "$T/ours.sp" > "$T/rep" 2>&1
	if awk '/^ *self%/ { t = 1; next } t && $NF == "node" { bad = 1 } END { exit !t || bad }' "$T/rep"; then
		ok "preport -n 8: no row for the process name node"
	else notok "preport -n 8: a row for the process name node (or no table)"; sed 's/^/  /' "$T/rep" | head -12; fi
fi
