#!/bin/bash
# plive replaying a recording (the demo's real perf script, as a stream):
# --once --speed 0 is deterministic (golden), its numbers are those of
# pfilter --last | preport, --all those of preport, an EWMA with a huge
# half-life those of --all; a paced replay prints several tables as the
# stream time passes; bad input and bad options exit 2 with a message.
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
man=$SP_TOP/share/man/man1/plive.1
for key in '--window' '--ewma' '--speed' '--once' 'Esc'; do
	grep -q -- "${key//-/\\\\-}" "$man" 2>/dev/null || grep -q -- "$key" "$man" 2>/dev/null || notok "plive(1) describes $key"
done

pfold -b "$DEMO" > "$T/d.sp" 2> "$T/e" || { notok "pfold -b of the demo"; exit 0; }

# golden: one table of the last second of the recording
plive --once --speed 0 --window 1 -n 12 "$T/d.sp" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "--once --speed 0: exit 0" 0 $rc
expect_eq "--once --speed 0 --window 1: the golden table" "$SP_TOP/tests/data/t8010-plive-window1.txt" "$T/o"
plive --once --speed 0 --window 1 -n 12 "$T/d.sp" > "$T/o2" 2>&1
expect_eq "--once --speed 0: the same table every time" "$T/o" "$T/o2"

# plive's rows, as "function own total" in seconds and "function own% total%"
rows() { awk 'f && NF >= 5 { o = $3; t = $4; sub(/s$/, "", o); sub(/s$/, "", t); p = $1; q = $2; sub(/%/, "", p); sub(/%/, "", q);
	$1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); if ($0 != "logger") printf "%s\t%s\t%s\t%s\t%s\n", $0, o, t, p, q } /Function \(filename:line\)/ { f = 1 }' "$1" | LC_ALL=C sort; }
# preport's, the same way; thread roots (comm names) are plive-less (and
# "logger" is a thread and a function of the demo: left out of both)
want() { awk -F'\t' 'NR > 1 && $5 !~ /^(logger|worker-([12]|N))$/ { printf "%s\t%.2f\t%.2f\t%.1f\t%.1f\n", $5, $1 / 1e9, $3 / 1e9, $2, $4 }' "$1" | LC_ALL=C sort; }
plive --once --speed 0 --window 1 -n 0 "$T/d.sp" > "$T/o" 2>&1
rows "$T/o" > "$T/got"
pfilter --last 1 "$T/d.sp" | preport -O tsv -n 0 > "$T/pr" 2>&1
want "$T/pr" > "$T/want"
if [ "$(wc -l < "$T/want")" -gt 10 ]; then expect_eq "--window 1: own and total of every function = pfilter --last 1 | preport" "$T/want" "$T/got"; else
	notok "preport of pfilter --last 1"; head -3 "$T/pr"; fi
plive --once --speed 0 --all -n 0 "$T/d.sp" > "$T/o" 2>&1
rows "$T/o" > "$T/got"
preport -O tsv -n 0 "$T/d.sp" > "$T/pr" 2>&1
want "$T/pr" > "$T/want"
expect_eq "--all: every function = preport" "$T/want" "$T/got"
expect_grep "--all: header counts every sample and the 3 threads" "^Samples: $(sp-dump "$T/d.sp" | grep -c '^sample') \([0-9]+/s\)  Threads: 3  Lost: 0" "$T/o"
plive --once --speed 0 --ewma 1000000 -n 0 "$T/d.sp" > "$T/o" 2>&1
rows "$T/o" | cut -f1,4,5 > "$T/got"
cut -f1,4,5 "$T/want" > "$T/want2"
expect_eq "--ewma with a huge half-life: the shares of --all" "$T/want2" "$T/got"
plive --once --speed 0 --ewma 0.05 -n 0 "$T/d.sp" > "$T/o" 2>&1
rows "$T/o" | sort -t'	' -k4,4gr | head -1 | cut -f1 > "$T/got"
plive --once --speed 0 --window 0.2 -n 0 "$T/d.sp" | rows /dev/stdin | sort -t'	' -k4,4gr | head -1 | cut -f1 > "$T/want"
if [ -s "$T/got" ]; then expect_eq "--ewma 0.05: the top function of the last moments (as --window 0.2)" "$T/want" "$T/got"; else notok "--ewma 0.05"; fi
expect_grep "--ewma: the header names the half-life" '\[ewma, half-life 0.05 s\]' "$T/o"

# a replay at 4x with a table every 0.1 s: several tables, the stream's
# read count grows, the last one is the whole recording
plive --speed 4 -i 0.1 -n 3 "$T/d.sp" > "$T/o" 2>&1; rc=$?
expect_rc "--speed 4: exit 0" 0 $rc
grep -o 'Read: [0-9]*' "$T/o" | cut -d' ' -f2 > "$T/reads"
n=$(wc -l < "$T/reads"); total=$(sp-dump "$T/d.sp" | grep -c '^sample')
if [ "$n" -ge 3 ] && sort -n -c "$T/reads" && [ "$(tail -1 "$T/reads")" = "$total" ] && [ "$(head -1 "$T/reads")" -lt "$total" ]; then
	ok "--speed 4 -i 0.1: $n tables, read counts grow to all $total samples"; else notok "--speed 4 replay ($n tables)"; cat "$T/reads" | head; fi
expect_grep "the last table says the input ended" '\[input ended\]' "$T/o"
# from standard input, folded text (no timestamps): every sample at once
pfold "$DEMO" 2>/dev/null | plive --once -a -n 0 > "$T/o" 2>&1; rc=$?
expect_rc "folded text on stdin: exit 0" 0 $rc
expect_grep "folded text: the thread root frames are functions" '^ *0\.0% +[0-9.]+% +[0-9]+ +[0-9]+  logger$' "$T/o"

# bad input: a message with the file and offset, exit 2
head -c 3000 "$T/d.sp" > "$T/cut.sp"
plive --once --speed 0 "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "a cut stream: exit 2" 2 $rc
expect_grep "a cut stream: plive: FILE: offset N: why" "^plive: $T/cut.sp: offset [0-9]+: " "$T/e"
printf '\001\002\003' > "$T/bin"
plive --once --speed 0 "$T/bin" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "unknown input: exit 2" 2 $rc
expect_grep "unknown input: says so" 'cannot tell the input format' "$T/e"
if [ ! -s "$T/o" ]; then ok "a cut stream: no table (it would pass for the whole)"; else notok "a cut stream printed a table"; fi
plive --once --partial --speed 0 -n 0 "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q 'using the [0-9]* samples before the cut (--partial)' "$T/e" && grep -q '^Samples: [1-9]' "$T/o"; then
	ok "--partial: the samples before the cut, with a warning"; else notok "--partial (exit $rc)"; fi
plive --once < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "standard input: empty input (0 bytes)" "$T/e" && [ ! -s "$T/o" ]; then ok "empty standard input: exit 2, says so"; else notok "empty stdin (exit $rc)"; fi
plive --version > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -qx "plive (stackpipe) [0-9.]*" "$T/o"; then ok "plive --version"; else notok "plive --version"; fi
plive --no-such-option > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^plive: unrecognized option '--no-such-option'" "$T/e" && grep -q "^Try 'plive --help'" "$T/e"; then ok "an unknown option: reason, usage, hint"; else notok "unknown option (exit $rc)"; fi
plive --once "$T/none" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "a missing file: exit 2" 2 $rc
plive --sort size < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '^usage: plive' "$T/e" && grep -q 'own, total or name' "$T/e"; then ok "bad --sort: usage error, exit 2"; else notok "bad --sort (exit $rc)"; fi
plive --window 0 < /dev/null > "$T/o" 2> "$T/e"; rc=$?
expect_rc "--window 0: exit 2" 2 $rc
plive a b > "$T/o" 2> "$T/e"; rc=$?
expect_rc "two inputs: usage error, exit 2" 2 $rc
