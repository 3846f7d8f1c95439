#!/bin/bash
# pfold -j on real `perf script` output recorded here: the folded output is
# byte-identical for every -j, for a file and a pipe, for any chunk size
# (SP_PFOLD_CHUNK cuts even this small input into many chunks, and into
# chunks shorter than one sample), and so are the warnings and their line
# numbers; the binary stream (-b) read back folds to the same text.
. "$(dirname "$0")/../lib.sh"

if ! command -v perf > /dev/null; then skip pfold-parallel "perf is not installed"; exit 0; fi
gcc -O2 -g -pthread -o "$T/burn" "$SP_TOP/tests/progs/burn.c" || { notok "build tests/progs/burn.c"; exit 0; }
if ! perf record -e cpu-clock -F 1999 -g -o "$T/fp.data" "$T/burn" > /dev/null 2> "$T/err"; then
	skip pfold-parallel "perf record is not permitted here: $(tail -1 "$T/err")"; exit 0
fi
# a second, different program: the shell, sort and gzip at work
perf record -e cpu-clock -F 1999 -g -o "$T/sh.data" -- sh -c \
	'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; seq 200000 | sort -r | gzip -9 > /dev/null' > /dev/null 2>&1
perf record -e cpu-clock,page-faults -F 1999 -g -o "$T/ev.data" "$T/burn" > /dev/null 2>&1
perf record -e cpu-clock -F 1999 -o "$T/nocg.data" "$T/burn" > /dev/null 2>&1
perf script -i "$T/fp.data" > "$T/fp.txt" 2> /dev/null
perf script -i "$T/sh.data" > "$T/sh.txt" 2> /dev/null
perf script -i "$T/ev.data" > "$T/ev.txt" 2> /dev/null
perf script -i "$T/nocg.data" > "$T/nocg.txt" 2> /dev/null
cat "$T/fp.txt" "$T/sh.txt" > "$T/in.txt"
if [ "$(grep -c '^$' "$T/in.txt")" -lt 100 ]; then
	notok "perf script gave too few samples to test with ($(grep -c '^$' "$T/in.txt"))"; exit 0
fi

pfold -j1 "$T/in.txt" > "$T/ref" 2> "$T/ref.err"
if [ -s "$T/ref" ] && [ "$(wc -l < "$T/ref")" -gt 5 ] && [ ! -s "$T/ref.err" ]; then
	ok "pfold -j1 folds the recordings ($(wc -l < "$T/ref") stacks, no warnings)"
else
	notok "pfold -j1 on the recordings"; head -3 "$T/ref.err" | sed 's/^/  /'
fi

# same [ENV=VALUE...] -- pfold-args... : file and pipe, several -j and chunks
same() {
	local name=$1 bad=""; shift
	for j in 1 2 3 8; do
		for ck in "" 4096 100; do
			SP_PFOLD_CHUNK=$ck pfold -j$j "$@" "$T/in.txt" > "$T/o" 2> "$T/e" || bad="$bad file-j$j-c$ck(exit)"
			cmp -s "$T/want" "$T/o" || bad="$bad file-j$j-c$ck"
			cat "$T/in.txt" | SP_PFOLD_CHUNK=$ck pfold -j$j "$@" > "$T/o" 2> "$T/e" || bad="$bad pipe-j$j-c$ck(exit)"
			cmp -s "$T/want" "$T/o" || bad="$bad pipe-j$j-c$ck"
		done
	done
	if [ -z "$bad" ]; then ok "$name: byte-identical for -j1,2,3,8, file and pipe, chunks 4 MB, 4096 and 100 bytes"
	else notok "$name: differs for$bad"; diff "$T/want" "$T/o" | head -5 | sed 's/^/  /'; fi
}
cp "$T/ref" "$T/want"; same "folded"
pfold -j1 --tid --all "$T/in.txt" > "$T/want"; same "--tid --all" --tid --all
pfold -j1 --weight=count --no-comm "$T/in.txt" > "$T/want"; same "--weight=count --no-comm" --weight=count --no-comm

# gzip from a pipe
gzip -c "$T/in.txt" | SP_PFOLD_CHUNK=4096 pfold -j2 > "$T/o"
expect_eq "gzip from a pipe, -j2, small chunks" "$T/ref" "$T/o"

# The binary stream: written from a pipe, read back, folds to the same text
cat "$T/in.txt" | pfold -b > "$T/s.sp"
pfold -b "$T/in.txt" > "$T/s2.sp"
pfold -j1 "$T/s.sp" > "$T/o"
if cmp -s "$T/s.sp" "$T/s2.sp" && cmp -s "$T/ref" "$T/o"; then ok "-b: the same stream from a pipe and a file, and it folds to the same text"
else notok "-b from a pipe vs a file, or folded back"; fi

# The default event filter (the first event) is the same in every chunk.
cat "$T/ev.txt" | pfold -j1 > "$T/evref" 2> "$T/everr"
cat "$T/ev.txt" | SP_PFOLD_CHUNK=4096 pfold -j2 > "$T/o" 2> "$T/e"
if grep -q 'filtering for events of type: ' "$T/e" && cmp -s "$T/evref" "$T/o" && cmp -s "$T/everr" "$T/e"; then
	ok "two events: the first is kept in every chunk, with the same note"
else notok "two events, -j2 small chunks"; diff "$T/everr" "$T/e" | head -5 | sed 's/^/  /'; fi
for ev in page-faults cpu-clock; do
	pfold -j1 --event-filter=$ev "$T/ev.txt" > "$T/evref"
	cat "$T/ev.txt" | SP_PFOLD_CHUNK=4096 pfold -j3 --event-filter=$ev > "$T/o"
	if [ -s "$T/o" ]; then expect_eq "--event-filter=$ev, -j3 small chunks" "$T/evref" "$T/o"
	else notok "--event-filter=$ev gave nothing"; fi
done

# Samples without blank lines between them (no call graphs).
if [ -s "$T/nocg.txt" ]; then
	pfold -j1 "$T/nocg.txt" > "$T/ncref"
	cat "$T/nocg.txt" | SP_PFOLD_CHUNK=1000 pfold -j2 > "$T/o"
	if [ -s "$T/ncref" ]; then expect_eq "single-line samples (no blank lines), -j2 1000-byte chunks" "$T/ncref" "$T/o"
	else notok "pfold on perf script without call graphs gave nothing"; fi
else
	skip "single-line samples" "perf script printed nothing for the recording without -g"
fi

# Bad lines: reported with the line of the whole input, in input order,
# counted; the same stderr for every -j and chunk size.
awk 'NR % 997 == 500 { print "garbage line " NR } { print }' "$T/in.txt" > "$T/bad.txt"
nbad=$(grep -c '^garbage line' "$T/bad.txt")
pfold -j1 "$T/bad.txt" > "$T/bref" 2> "$T/beref"
cat "$T/bad.txt" | pfold -j1 > "$T/o" 2> "$T/bpref"
first=$(grep -n -m1 '^garbage line' "$T/bad.txt" | cut -d: -f1)
bad=""
for j in 2 3; do
	for ck in "" 4096; do
		cat "$T/bad.txt" | SP_PFOLD_CHUNK=$ck pfold -j$j > "$T/o" 2> "$T/e" || bad="$bad pipe-j$j-c$ck(exit)"
		cmp -s "$T/bref" "$T/o" && cmp -s "$T/bpref" "$T/e" || bad="$bad pipe-j$j-c$ck"
		SP_PFOLD_CHUNK=$ck pfold -j$j "$T/bad.txt" > "$T/o" 2> "$T/e" || bad="$bad file-j$j-c$ck(exit)"
		cmp -s "$T/bref" "$T/o" && cmp -s "$T/beref" "$T/e" || bad="$bad file-j$j-c$ck"
	done
done
if [ -z "$bad" ] && grep -q "^pfold: -:$first: " "$T/bpref" && grep -q "^pfold: $T/bad.txt:$first: " "$T/beref" &&
	grep -q "^pfold: $nbad bad lines skipped" "$T/beref"; then
	ok "$nbad bad lines: the same warnings (first at line $first) and count for every -j, chunk, file and pipe"
else
	notok "bad lines with -j:$bad (want $nbad, first at $first)"; diff "$T/beref" "$T/e" | head -6 | sed 's/^/  /'
fi
# A bad line in column 0 inside a sample longer than the chunk is a bad
# stack line, as for -j1, not the start of a sample to cut before (an ASan
# CI run: a 4096-byte chunk cut a long sample there, and the rest of it
# became "stack line outside a sample").  The longest sample, a bad line in
# its middle, 30 times over, cut into chunks of half its length.
awk 'BEGIN {RS = ""} length($0) > length(m) {m = $0} END {n = split(m, l, "\n")
	for (r = 0; r < 30; r++) {for (i = 1; i <= n; i++) {print l[i]; if (i == int(n / 2)) print "garbage in a long sample"}; print ""}}' \
	"$T/in.txt" > "$T/long.txt"
lk=$(( $(awk 'BEGIN {RS = ""} {print length($0); exit}' "$T/long.txt") / 2 ))
pfold -j1 "$T/long.txt" > "$T/lref" 2> "$T/leref"
bad=""
for j in 2 3; do
	cat "$T/long.txt" | SP_PFOLD_CHUNK=$lk pfold -j$j > "$T/o" 2> "$T/e" || bad="$bad pipe-j$j(exit)"
	cmp -s "$T/lref" "$T/o" && cmp -s <(sed 's/^pfold: -:/X/' "$T/e") <(sed "s|^pfold: $T/long.txt:|X|" "$T/leref") || bad="$bad pipe-j$j"
	SP_PFOLD_CHUNK=$lk pfold -j$j "$T/long.txt" > "$T/o" 2> "$T/e" || bad="$bad file-j$j(exit)"
	cmp -s "$T/lref" "$T/o" && cmp -s "$T/leref" "$T/e" || bad="$bad file-j$j"
done
if [ -z "$bad" ] && grep -q "^pfold: 30 bad lines skipped" "$T/leref"; then
	ok "a bad line inside samples longer than the chunk ($lk bytes): as -j1, every -j, file and pipe"
else
	notok "a bad line inside long samples:$bad"; diff "$T/leref" "$T/e" | head -4 | sed 's/^/  /'
fi

# Folded text before perf text: the first file sets the value columns (one
# value, or a pdiff-style "a b" pair), and the workers' folds of the perf
# text must be written in those columns, as -j1 writes them (the workers'
# own profiles have "samples" and "period": adding their periods to the
# first file's counts made -j2 differ from -j1).
printf 'prog;fn0 119\nprog;fn1 5\n' > "$T/one.folded"
printf 'prog;fn0 3 4\nprog;fn1 5 6\n' > "$T/ab.folded"
for first in one ab; do
	pfold -j1 "$T/$first.folded" "$T/in.txt" > "$T/mref" 2> /dev/null
	bad=""
	for j in 2 3; do
		for ck in "" 4096; do
			SP_PFOLD_CHUNK=$ck pfold -j$j "$T/$first.folded" "$T/in.txt" > "$T/o" 2> /dev/null || bad="$bad j$j-c$ck(exit)"
			cmp -s "$T/mref" "$T/o" || bad="$bad j$j-c$ck"
		done
	done
	cols=$(awk '{print NF}' "$T/mref" | sort -u | tr '\n' ' ')
	if [ -z "$bad" ] && [ "$(wc -l < "$T/mref")" -gt 5 ]; then
		ok "$first.folded then perf text: -j2, -j3 as -j1 (columns per line: $cols)"
	else
		notok "$first.folded then perf text:$bad"; diff "$T/mref" "$T/o" | head -4 | sed 's/^/  /'
	fi
done
