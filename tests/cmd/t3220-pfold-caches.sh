#!/bin/bash
# pfold's perf reader caches against an independent count: generated perf
# script text of 24,000 distinct stacks, each sampled twice (the second time
# after all the others, so the fixed whole-block cache has evicted many of
# them), from 301 threads (more than the thread cache's 256 ways) plus one
# comm longer than the cached 42 bytes; frames of 40,000 distinct lines (the
# frame cache grows many times), "[unknown]" frames of many addresses and
# inlined "a->b" frames.  awk computes the folded output from the same
# numbers without parsing anything; pfold must agree for -j1 and -j2, from a
# file and a pipe, with and without --tid.
. "$(dirname "$0")/../lib.sh"

# gen MODE: MODE "perf" prints perf script text, "want" the folded lines
# (unsorted, unsummed) that perf text must fold to, "wanttid" with --tid.
gen() {
	awk -v mode="$1" 'BEGIN {
	long = "a_comm_name_longer_than_the_thread_cache_keeps_it"
	n = 24000
	for (pass = 0; pass < 2; pass++)
	for (i = 0; i < n; i++) {
		k = pass ? (i * 7919) % n : i
		s = pass * n + i
		t = (s * 31) % 302
		comm = t == 301 ? long : "w" t % 50
		pid = 1000 + t % 7; tid = 2000 + t
		period = s % 5 + 1
		depth = 2 + k % 3
		# frames leaf first; frame j of stack k
		stack = ""
		lines = ""
		for (j = 0; j < depth; j++) {
			f = (k * (j + 3) + j * 11) % 40000
			if (j == depth - 1) f = k % 97   # a few shared roots
			if (f % 13 == 5) {
				# an address perf could not name, in a module: "[libz.so]"
				lines = lines sprintf("\t    7f00%08x [unknown] (/opt/app/libz.so)\n", k * 16 + j)
				name = "[libz.so]"
			} else if (f % 17 == 3) {
				# inlined functions: a->b, b marked _[i], a nearer the root
				lines = lines sprintf("\t%16x outer_%d->inner_%d+0x%x (/usr/lib/libx.so)\n", 4096 + f * 64 + j, f, f, j + 1)
				name = "outer_" f ";inner_" f "_[i]"
			} else {
				lines = lines sprintf("\t%16x func_%d+0x%x (/usr/lib/libm%d.so)\n", 65536 + f * 256 + j, f, j * 4 + 1, f % 5)
				name = "func_" f
			}
			stack = j ? name ";" stack : name
		}
		if (mode == "perf") {
			printf "%s %d/%d [%03d] %d.%06d: %d cpu-clock: \n%s\n", comm, pid, tid, t % 4, 100 + s / 1000, s % 1000000, period, lines
		} else if (mode == "want") {
			print comm ";" stack " " period
		} else {
			print comm "-" pid "/" tid ";" stack " " period
		}
	}
	}'
}
sum() { awk '{ n = $NF; k = $0; sub(/ [0-9]+$/, "", k); s[k] += n } END { for (k in s) print k " " s[k] }' | LC_ALL=C sort; }

gen perf > "$T/in.txt"
gen want | sum > "$T/want"
gen wanttid | sum > "$T/wanttid"
if [ "$(wc -l < "$T/want")" -lt 20000 ]; then notok "the generator made too few stacks ($(wc -l < "$T/want"))"; exit 0; fi

for j in 1 2; do
	pfold -j$j "$T/in.txt" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/e" ] && cmp -s "$T/want" "$T/o"; then
		ok "-j$j FILE: $(wc -l < "$T/want") stacks, sums as awk counts them"
	else
		notok "-j$j FILE differs from awk's count (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'
		diff "$T/want" "$T/o" | head -6 | sed 's/^/  /'
	fi
	cat "$T/in.txt" | pfold -j$j > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/e" ] && cmp -s "$T/want" "$T/o"; then ok "-j$j from a pipe: the same"
	else notok "-j$j from a pipe differs from awk's count (exit $rc)"; diff "$T/want" "$T/o" | head -6 | sed 's/^/  /'; fi
	cat "$T/in.txt" | pfold -j$j --tid > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/e" ] && cmp -s "$T/wanttid" "$T/o"; then ok "-j$j --tid from a pipe: every thread labelled as awk labels it"
	else notok "-j$j --tid differs from awk's count (exit $rc)"; diff "$T/wanttid" "$T/o" | head -6 | sed 's/^/  /'; fi
done
exit 0
