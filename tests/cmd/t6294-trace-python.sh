#!/bin/bash
# pcollect --trace on Python programs (pyenv 3.11-3.13 and Debian's
# python3): libz:deflate under zlib.compress, an exact call count against
# the program's own, and the samples inside deflate with their whole native
# stack, from _start (the share that also carries the Python frame of work()
# is printed, not asserted: the Python merge is lib/python/pymerge.c's).  With --trace, Python
# samples are nonblocking by default (the probes' holder of new threads is
# the threads' tracer): every such stack is whole.  With
# --python-sampling=exact the stopped thread's stack copy gets the return
# addresses the return probe replaced put back, as the kernel's copies do;
# a thread stopped while its entry record is still unread, or inside the
# return trampoline itself, keeps an [unknown] (a few %: asserted <= 15 %).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
t6_pythons
[ ${#pys[@]} -gt 0 ] || exit 0
prog="$SP_TOP/tests/progs/t62-zlib.py"
N=200
for entry in "${pys[@]}"; do
	label=${entry%% *} py=${entry#* }
	case $label in 3.8|3.9|3.10) continue ;; esac
	if ! "$py" -c 'import zlib' 2> /dev/null; then skip "python $label" "its zlib module is missing"; continue; fi
	t6_uprobes "python $label --trace" "$py" -c pass || continue
	for mode in default exact; do
		args=()
		[ $mode = exact ] && args=(--python-sampling=exact)
		pcollect -F 499 "${args[@]}" --trace libz:deflate -o "$T/z.sp" -- "$py" "$prog" $N > "$T/z.out" 2> "$T/z.err"; rc=$?
		want=$(sed -n 's/^compress calls //p' "$T/z.out")
		got=$(sp-dump "$T/z.sp" 2> /dev/null | grep -c '^trace entry.*frame=deflate ')
		if [ $rc = 0 ] && [ "$want" = $N ] && [ "$got" = "$want" ]; then ok "python $label $mode: libz:deflate: $got calls, the program's $want"; else
			notok "python $label $mode: exit $rc, $got deflate entries, program: ${want:-?}"; sed 's/^/  /' "$T/z.err" | head -4; fi
		pfold "$T/z.sp" > "$T/z.folded" 2> /dev/null
		# samples whose stack holds deflate: native stack whole (from
		# _start, no [unknown] frame) or cut; and how many of them carry
		# the Python frame of work()
		read -r whole part withpy < <(awk '/;deflate(;| [0-9]+$)/ {
				if ($0 ~ /;_start;/ && $0 !~ /\[unknown\]/) w += $NF; else p += $NF
				if ($0 ~ /;work \(.*t62-zlib.py:[0-9]+\);/) y += $NF }
			END { printf "%d %d %d\n", w, p, y }' "$T/z.folded")
		if [ $mode = default ]; then
			if [ "$whole" -gt 0 ] && [ "$part" = 0 ]; then ok "python $label $mode: every sample inside deflate has its whole native stack, from _start ($((withpy * 100 / whole)) % with work()'s Python frame)"; else
				notok "python $label $mode: inside deflate: $whole whole, $part cut"; grep deflate "$T/z.folded" | grep -v '_start' | head -3 | cut -c1-200 | sed 's/^/  /'; fi
		else
			if [ "$whole" -gt 0 ] && [ $((part * 100)) -le $(((whole + part) * 15)) ]; then
				ok "python $label $mode: samples inside deflate keep their whole native stack ($part of $((whole + part)) ns cut; $((withpy * 100 / (whole + part))) % with work()'s Python frame)"; else
				notok "python $label $mode: inside deflate: $whole whole, $part cut"; grep deflate "$T/z.folded" | grep unknown | head -3 | cut -c1-200 | sed 's/^/  /'; fi
		fi
	done
done
