#!/bin/bash
# pfold: inputs, options, errors, output checking.
. "$(dirname "$0")/../lib.sh"

FG=$CONF/flamegraph
if [ ! -d "$FG" ]; then
	skip pfold "fixtures not found at $CONF"
	exit 0
fi
CI=$FG/perf-cycles-instructions-01/input.txt

# --help and usage errors
pfold --help > "$T/h" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '^usage: pfold' "$T/h"; then ok "--help prints the synopsis, exit 0"; else notok "--help (exit $rc)"; fi
pfold --no-such-option < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '^usage: pfold' "$T/e" && [ ! -s "$T/o" ]; then ok "unknown option: exit 2 and synopsis on stderr"; else notok "unknown option (exit $rc)"; fi
pfold "$T/missing" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^pfold: $T/missing: No such file or directory" "$T/e"; then ok "missing file: clear error, exit 2"; else notok "missing file (exit $rc)"; cat "$T/e"; fi

# stdin, '-', gzip, several files
pfold "$CI" > "$T/ref"
pfold < "$CI" > "$T/o"; expect_eq "stdin gives the same as a file" "$T/ref" "$T/o"
cat "$CI" | pfold - > "$T/o"; expect_eq "'-' reads stdin" "$T/ref" "$T/o"
gzip -c "$CI" > "$T/ci.gz"; pfold "$T/ci.gz" > "$T/o"; expect_eq "gzip input is read transparently" "$T/ref" "$T/o"
cat "$T/ci.gz" "$T/ci.gz" > "$T/ci2.gz"
pfold "$CI" "$CI" > "$T/two"
pfold "$T/ci2.gz" > "$T/o"; expect_eq "concatenated gzip members are all read" "$T/two" "$T/o"
awk '{ n=$NF; $NF=""; sub(/ $/, ""); print $0 " " 2*n }' "$T/ref" > "$T/double"
expect_eq "several input files add up" "$T/double" "$T/two"

# folded input is re-aggregated: idempotent, order-independent
pfold "$T/ref" > "$T/o"; expect_eq "folded input folds to itself" "$T/ref" "$T/o"
{ tac "$T/ref"; cat "$T/ref"; } | pfold > "$T/o"; expect_eq "folded input is sorted and merged" "$T/double" "$T/o"
printf 'a;b 1 2\na;c 3 0\na;b 4 5\n' | pfold > "$T/o"
printf 'a;b 5 7\na;c 3 0\n' > "$T/w"; expect_eq "two-value folded input keeps both columns" "$T/w" "$T/o"
printf 'a;b 1.5\na;b 2.25\n' | pfold > "$T/o"
printf 'a;b 3.75\n' > "$T/w"; expect_eq "fractional counts are kept" "$T/w" "$T/o"

# bad lines: reported with FILE:LINE, skipped, counted; exit 0
printf 'a;b 1\nthis line has no count\na;b 2\n' > "$T/bad.folded"
pfold "$T/bad.folded" > "$T/o" 2> "$T/e"; rc=$?
printf 'a;b 3\n' > "$T/w"
if [ $rc = 0 ] && cmp -s "$T/w" "$T/o" && grep -q "^pfold: $T/bad.folded:2: " "$T/e" && grep -q '^pfold: 1 bad line skipped' "$T/e"; then
	ok "a bad folded line is reported as FILE:LINE, skipped and counted"
else notok "bad folded line (exit $rc)"; cat "$T/e" | sed 's/^/  /'; fi
printf 'not\nany known\nformat at all\n' > "$T/unknown"
pfold "$T/unknown" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q 'cannot tell the input format' "$T/e"; then ok "unknown format: error, exit 2, no output"; else notok "unknown format (exit $rc)"; fi
pfold -f perf "$T/bad.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/o" ] && grep -q '3 bad lines skipped' "$T/e"; then ok "-f forces the format (folded text read as perf: every line reported)"; else notok "-f perf on folded (exit $rc)"; cat "$T/e" | head -3; fi

# events, weights, annotations
pfold --event-filter=cycles "$CI" > "$T/o" 2> "$T/e"
pfold --event-filter=instructions "$CI" > "$T/oi" 2> "$T/e"
if [ -s "$T/oi" ] && ! cmp -s "$T/o" "$T/oi" && cmp -s "$T/ref" "$T/oi"; then ok "--event-filter picks the event (default: the first seen)"; else notok "--event-filter"; fi
if pfold "$CI" 2>&1 >/dev/null | grep -q '^pfold: filtering for events of type: instructions'; then ok "a note says which event was kept"; else notok "no note on event filtering"; fi
pfold --weight=count "$CI" | awk '{s+=$NF} END {print s}' > "$T/o"
grep -c 'instructions:' "$CI" > "$T/w"
expect_eq "--weight=count counts samples" "$T/w" "$T/o"

# parallel folding gives the same bytes as one thread
for i in $(seq 1 40); do zcat "$CONF/inferno/perf-example-perf-stacks/input.txt.gz"; done > "$T/big.txt"
pfold -j1 "$T/big.txt" > "$T/j1"
pfold -j2 "$T/big.txt" > "$T/j2"
pfold -j3 "$T/big.txt" > "$T/j3"
if [ -s "$T/j1" ] && cmp -s "$T/j1" "$T/j2" && cmp -s "$T/j1" "$T/j3"; then ok "-j1, -j2, -j3 give identical output ($(wc -c < "$T/big.txt") bytes in)"; else notok "-j output differs"; diff "$T/j1" "$T/j2" | head -5; fi
zcat "$CONF/inferno/perf-example-perf-stacks/input.txt.gz" | pfold -j1 | awk '{ n=$NF; $NF=""; sub(/ $/, ""); print $0 " " 40*n }' > "$T/w"
expect_eq "-j2 on 40 copies equals 40 x one copy" "$T/w" "$T/j2"

# output errors are never silent; a closed pipe is quiet
if [ -w /dev/full ]; then
	pfold "$T/big.txt" > /dev/full 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'write error' "$T/e"; then ok "disk full: 'write error', exit 2"; else notok "disk full not reported (exit $rc)"; fi
else skip "disk full" "/dev/full not writable"; fi
pfold "$T/big.txt" 2> "$T/e" | head -1 > /dev/null
if [ ! -s "$T/e" ]; then ok "a reader that goes away (| head) causes no error message"; else notok "EPIPE printed: $(head -1 "$T/e")"; fi

# binary output round trip (needs the stream writer)
if pfold -b "$CI" > "$T/ci.sp" 2> "$T/e"; then
	pfold "$T/ci.sp" > "$T/o"; expect_eq "pfold -b | pfold equals pfold (binary keeps what folded needs)" "$T/ref" "$T/o"
	pfold --pid "$CI" > "$T/w"; pfold --pid "$T/ci.sp" > "$T/o"; expect_eq "--pid applies to binary input" "$T/w" "$T/o"
	cat "$T/ci.sp" "$T/ci.sp" | pfold > "$T/o"; expect_eq "two concatenated streams read as their union" "$T/two" "$T/o"
	gzip -c "$T/ci.sp" | pfold > "$T/o"; expect_eq "gzip-compressed binary stream" "$T/ref" "$T/o"
	pfold -b "$CI" | pfold -b | pfold > "$T/o"; expect_eq "binary -> binary -> folded" "$T/ref" "$T/o"
	head -c 300 "$T/ci.sp" | pfold > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'offset' "$T/e"; then ok "truncated stream: fatal error naming the offset"; else notok "truncated stream (exit $rc)"; cat "$T/e"; fi
	script -qc "pfold -b $CI" /dev/null > "$T/tty" 2>&1
	if grep -q 'refusing to write the binary stream to a terminal' "$T/tty"; then ok "-b refuses to write to a terminal"; else notok "-b wrote to a terminal"; fi
else
	notok "pfold -b failed: $(head -1 "$T/e")"
fi

# folded input reuses the previous line's leading frames (sorted input
# shares them): frames that are prefixes of each other, empty frames, a
# line that is a prefix of the one before and after, repeats, in every
# order, must fold exactly as an independent sum of each line does.
printf '%s\n' 'a;bc;d 1' 'a;b;d 2' 'a;b 3' 'a;b;d;e 4' 'a;;b 5' 'a;;b 6' 'a;;c 7' 'a 8' 'ab;c 9' 'a;bc 10' \
	'a;b;d 11' ';a 12' 'a;b;dd 13' 'a;b;d 14' > "$T/pref.folded"
awk '{ i = match($0, / [0-9]+$/); s[substr($0, 1, i - 1)] += substr($0, i + 1) } END { for (k in s) print k, s[k] }' "$T/pref.folded" | LC_ALL=C sort > "$T/pref.want"
for order in asis sorted reversed; do
	case $order in
	asis) cp "$T/pref.folded" "$T/in" ;;
	sorted) LC_ALL=C sort "$T/pref.folded" > "$T/in" ;;
	reversed) LC_ALL=C sort -r "$T/pref.folded" > "$T/in" ;;
	esac
	pfold "$T/in" | LC_ALL=C sort > "$T/pref.got"
	expect_eq "folded input, shared leading frames ($order): same sums as line by line" "$T/pref.want" "$T/pref.got"
done
