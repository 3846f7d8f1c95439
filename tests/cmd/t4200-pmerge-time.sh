#!/bin/bash
# pmerge of timestamped binary streams: a k-way merge by time (samples and
# trace events interleaved), sums and threads kept, --tag on binary output,
# many inputs, bad input.
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
# times: the t= of every sample/trace record of a stream, one per line
times() { sp-dump "$1" | sed -n 's/^\(sample\|trace entry\|trace exit\) t=\([0-9]*\) .*/\2/p'; }
ordered() { awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' "$1"; }

# Two real recordings' streams whose times interleave: the demo's perf
# script split by thread (worker-1, and the others).
gzip -dc "$DEMO" | awk 'BEGIN { RS = ""; ORS = "\n\n" } /^worker-1/ { print > "'"$T"'/a.txt"; next } { print > "'"$T"'/b.txt" }'
pfold -b "$T/a.txt" > "$T/a.sp" && pfold -b "$T/b.txt" > "$T/b.sp" || { notok "pfold -b of the split recording"; exit 0; }
cat "$T/a.sp" "$T/b.sp" > "$T/cat.sp"
times "$T/cat.sp" > "$T/t0"
if ! ordered "$T/t0"; then ok "(the inputs' times interleave: concatenated, they are out of order)"; else notok "test input: the two streams do not interleave"; fi

pmerge "$T/a.sp" "$T/b.sp" > "$T/m.sp" 2> "$T/e"; rc=$?
expect_rc "two streams: exit 0" 0 $rc
times "$T/m.sp" > "$T/t1"
if ordered "$T/t1"; then ok "merged: every sample in time order ($(wc -l < "$T/t1") samples)"; else notok "merged: samples out of time order"; fi
if [ "$(wc -l < "$T/t1")" = "$(wc -l < "$T/t0")" ]; then ok "merged: as many samples as the inputs"; else notok "merged: $(wc -l < "$T/t1") samples, inputs $(wc -l < "$T/t0")"; fi
pfold --tid "$T/m.sp" > "$T/m.tid"; pfold --tid "$T/a.sp" "$T/b.sp" > "$T/w.tid"
expect_eq "merged: per-thread stacks and weights = the inputs' sum" "$T/w.tid" "$T/m.tid"
sort -n "$T/t0" > "$T/t0s"
expect_eq "merged: exactly the inputs' timestamps" "$T/t0s" "$T/t1"
# the order does not depend on the order of the arguments (ties by input)
pmerge "$T/b.sp" "$T/a.sp" > "$T/m2.sp"
times "$T/m2.sp" > "$T/t2"
expect_eq "inputs given the other way round: the same time order" "$T/t1" "$T/t2"
if sp-dump "$T/m.sp" > /dev/null 2>&1; then ok "merged stream: complete (trailer, checksum)"; else notok "merged stream is not complete"; fi

# --tag on binary output: the tag is the stack's root frame; without the
# thread root that pfold adds (--no-comm), one tower per input
pmerge --tag "$T/a.sp" "$T/b.sp" > "$T/tag.sp"
pfold --no-comm "$T/tag.sp" | cut -d';' -f1 | sort -u > "$T/roots"
printf '%s\n' "$T/a.sp" "$T/b.sp" > "$T/want"
expect_eq "--tag, binary: the input's name at the root (pfold --no-comm)" "$T/want" "$T/roots"
pfold --no-comm "$T/tag.sp" | sed "s|^$T/[ab].sp;||" > "$T/untag"; pfold --no-comm "$T/a.sp" "$T/b.sp" > "$T/wuntag"
sort "$T/untag" | awk '{ i = match($0, / [0-9]+$/); s[substr($0, 1, i - 1)] += substr($0, i + 1) } END { for (k in s) print k, s[k] }' | sort > "$T/u1"
sort "$T/wuntag" > "$T/u2"
expect_eq "--tag, binary: under the tags, the inputs' stacks and weights" "$T/u2" "$T/u1"
times "$T/tag.sp" > "$T/t3"
if ordered "$T/t3"; then ok "--tag, binary: still in time order"; else notok "--tag: out of time order"; fi

# trace events interleave with samples (streams of tests/progs/t4gen.c)
LIB=$SP_TOP/build/libstackpipe.a PKGS="libdw libelf libxxhash libcjson zlib"
if [ -f "$LIB" ] && cc -std=gnu11 -D_GNU_SOURCE $(printf -- "-I%s " "$SP_TOP"/lib/*/ "$SP_TOP/formats") $(pkg-config --cflags $PKGS) \
	-o "$T/t4gen" "$SP_TOP/tests/progs/t4gen.c" "$LIB" $(pkg-config --libs $PKGS) -lpthread -lm 2> "$T/cc"; then
	"$T/t4gen" hostA trace > "$T/ta.sp"; "$T/t4gen" hostB trace > "$T/tb.sp"
	pmerge "$T/ta.sp" "$T/tb.sp" > "$T/tm.sp"
	sp-dump "$T/tm.sp" | grep -E '^(sample|trace) ' > "$T/rec"
	na=$(sp-dump "$T/ta.sp" | grep -c '^trace ') nm=$(grep -c '^trace ' "$T/rec")
	sed -n 's/^\(sample\|trace entry\|trace exit\) t=\([0-9]*\) .*/\2/p' "$T/rec" > "$T/t4"
	if [ "$nm" = $((2 * na)) ] && [ "$na" -gt 0 ] && ordered "$T/t4"; then ok "trace events: all $nm kept, in time order with the samples"
	else notok "trace events: $nm of $((2 * na)), ordered: $(ordered "$T/t4" && echo yes || echo no)"; fi
	{ sp-dump "$T/ta.sp"; sp-dump "$T/tb.sp"; } | sed -n 's/^\(sample\|trace entry\|trace exit\) t=\([0-9]*\) .*/\2/p' | sort -n > "$T/t4w"
	expect_eq "trace events and samples: exactly both inputs' times, merged" "$T/t4w" "$T/t4"
else
	notok "build tests/progs/t4gen.c"; sed 's/^/  /' "$T/cc" | head -3
fi

# folded and binary mixed: still a sum (folded samples have no time)
pfold "$T/b.sp" > "$T/b.folded"
pmerge "$T/a.sp" "$T/b.folded" > "$T/mix.sp"
pfold "$T/mix.sp" > "$T/mix"; pfold "$T/a.sp" "$T/b.folded" > "$T/wmix"
expect_eq "binary + folded into a stream: the sum" "$T/wmix" "$T/mix"

# many inputs: 300 streams (each a slice of the recording), merged in order
gzip -dc "$DEMO" | awk -v d="$T/many" 'BEGIN { RS = ""; ORS = "\n\n"; system("mkdir -p " d) } { print > (d "/" (NR % 300) ".txt") }'
for f in "$T"/many/*.txt; do pfold -b "$f" > "${f%.txt}.sp"; done
/usr/bin/time -f '%M' -o "$T/rss" pmerge "$T"/many/*.sp > "$T/many.sp" 2> "$T/e"; rc=$?
times "$T/many.sp" > "$T/t5"
pfold --tid "$T/many.sp" > "$T/many.tid"; pfold --tid "$T"/many/*.sp > "$T/many.want"
if [ $rc = 0 ] && ordered "$T/t5" && cmp -s "$T/many.want" "$T/many.tid"; then
	ok "300 inputs: merged in time order, same sums (peak RSS $(cat "$T/rss" 2>/dev/null) KB)"
else notok "300 inputs: exit $rc, ordered: $(ordered "$T/t5" && echo yes || echo no), $(head -1 "$T/e")"; fi

# an input not in time order keeps its order, with a note
pmerge "$T/cat.sp" "$T/b.sp" > "$T/u.sp" 2> "$T/e"; rc=$?
expect_rc "an input out of time order: still merged" 0 $rc
expect_grep "an input out of time order: a note names it" "cat.sp is not in time order" "$T/e"

# bad input: a truncated stream is an error naming the file, exit 2
head -c 3000 "$T/b.sp" > "$T/trunc.sp"
pmerge "$T/a.sp" "$T/trunc.sp" > "$T/o.sp" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "trunc.sp" "$T/e"; then ok "truncated input: error naming it, exit 2"; else notok "truncated input: exit $rc: $(head -1 "$T/e")"; fi
