#!/bin/bash
# pfleet put stores an input whole or not at all, and never twice, against
# a real ClickHouse server started here: a truncated stream stores none of
# its rows (a good input beside it is stored whole); --partial stores the
# samples before the cut; the same --partial again finds its batches stored
# and sends nothing (a batch's id is its content's hash, asked before it is
# sent); a put killed mid-way and run again stores the rest, nothing twice;
# two puts at once sending the same new stacks: each host's slice whole
# and the dictionary one row per stack once merged; two puts of the same
# host and file at once: the input once, no row twice.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
ch_test_server "pfleet atomic puts"
pfleet init $U 2> /dev/null || { notok "pfleet init"; exit 0; }
S=2026-11-26T10:00:00
R="--since 2026-11-26T09:00:00 --until 2026-11-26T12:00:00"
# rows SERVICE: sample rows stored; dups SERVICE: rows stored twice
rows() { ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.samples WHERE service = '$1'"; }
dups() { ch_query "$CH_HTTP" "SELECT count() FROM (SELECT bucket, host, stack, value_name, count() AS c FROM stackpipe.samples WHERE service = '$1' GROUP BY bucket, host, stack, value_name HAVING c > 1)"; }
rollup() { ch_query "$CH_HTTP" "SELECT (SELECT sum(rows) FROM stackpipe.samples_hourly WHERE service = '$1'), (SELECT count() FROM stackpipe.samples WHERE service = '$1')" | tr '\t' ' '; }
pfold -b "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/d.sp"
head -c $(($(stat -c %s "$T/d.sp") * 2 / 3)) "$T/d.sp" > "$T/t.sp"
pfold --partial "$T/t.sp" > "$T/t.want" 2> /dev/null
pfold "$T/d.sp" > "$T/d.want"
head -c 5000 /dev/urandom > "$T/garbage"

# 1. a truncated stream: exit 2, the reader's sentence, none of its rows
pfleet put --service trunc --host h --start $S $U "$T/t.sp" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'truncated stream' "$T/e" && grep -q '^pfleet: none of the [0-9]* samples read from it stored' "$T/e" && [ "$(rows trunc)" = 0 ]; then
	ok "a truncated stream: exit 2, said, none of its rows stored"; else notok "truncated (exit $rc, $(rows trunc) rows)"; cat "$T/e"; fi
# with a good input and garbage: the good one whole, the garbage none
pfleet put --service mixed --host h --start $S $U "$T/garbage" "$T/d.sp" > /dev/null 2> "$T/e"; rc=$?
pfleet get --service mixed $R $U | pfold > "$T/g"
[ $rc = 2 ] && grep -q '^pfleet: the other inputs: [0-9]* samples -> [0-9]* rows stored' "$T/e" && expect_eq "garbage beside a good input: exit 2, the good input stored whole" "$T/d.want" "$T/g" ||
	{ notok "garbage and a good input (exit $rc)"; cat "$T/e"; }

# an input that names no service (folded text, no --service): that input
# alone is the error, the stream beside it is stored
printf 'main;f 3\n' > "$T/noname.folded"
pfleet put --host nos --start $S $U "$T/noname.folded" "$T/d.sp" > /dev/null 2> "$T/e"; rc=$?
n=$(ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.samples WHERE host = 'nos'")
[ $rc = 2 ] && grep -q "noname.folded: the input names no command and no thread: give --service" "$T/e" && [ "$n" -gt 0 ] &&
	ok "an input without a service: its error, exit 2, the other input stored ($n rows)" || { notok "input without a service (exit $rc, $n rows)"; cat "$T/e"; }

# 2. --partial: the samples before the cut, once; the same put again: nothing sent
for run in first again; do
	pfleet put --partial --service trunc --host h --start $S $U "$T/t.sp" > /dev/null 2> "$T/e"; rc=$?
	pfleet get --service trunc $R $U | pfold > "$T/g"
	[ $rc = 0 ] && expect_eq "--partial ($run): the slice is the samples before the cut, once" "$T/t.want" "$T/g" || { notok "--partial $run (exit $rc)"; cat "$T/e"; }
	[ $run = first ] && n1=$(rows trunc)
done
grep -q '^pfleet: 1 batch ([0-9]* rows) stored already by an earlier put of the same rows: not sent again' "$T/e" && [ "$(rows trunc)" = "$n1" ] && [ "$(dups trunc)" = 0 ] &&
	ok "the same --partial again: found stored, said, no row twice ($n1 rows)" || { notok "--partial again: $(rows trunc) rows, was $n1"; cat "$T/e"; }
r=$(rollup trunc); [ "${r% *}" = "${r#* }" ] && ok "the rollup counted the rows once ($r)" || notok "rollup and samples rows $r"

# 3. a put killed mid-way (kill -9 after its first batch is stored), run again:
# the batches stored are found, the rest sent, no row twice
awk 'BEGIN { for (i = 0; i < 40000; i++) printf "main;f%d;g%d %d\n", i, i % 97, 1 + i % 5 }' > "$T/big.folded"
pfold "$T/big.folded" > "$T/big.want"
pfleet put --batch-rows 1000 --service killed --host h --start $S $U "$T/big.folded" > /dev/null 2> "$T/e" &
pp=$!
n=0
for i in $(seq 600); do
	n=$(rows killed); [ "$n" != 0 ] && break; sleep 0.05
done
if [ "$n" != 0 ] && kill -9 $pp 2> /dev/null; then
	wait $pp 2> /dev/null
	k=$(rows killed)
	pfleet put --batch-rows 1000 --service killed --host h --start $S $U "$T/big.folded" > /dev/null 2> "$T/e"; rc=$?
	pfleet get --service killed $R $U 2> "$T/ge" | pfold > "$T/g"
	[ $rc = 0 ] && grep -q 'stored already by an earlier put' "$T/e" && expect_eq "put killed after $k rows, run again: the slice is the input" "$T/big.want" "$T/g" || { notok "rerun after kill (exit $rc)"; cat "$T/e"; }
	r=$(rollup killed); [ "${r% *}" = "${r#* }" ] && [ ! -s "$T/ge" ] && ok "put killed and run again: the rollup counts every row once ($r), get reads it without a warning" || { notok "rollup after kill: $r"; cat "$T/ge"; }
	[ "$(dups killed)" = 0 ] && ok "put killed and run again: no row stored twice" || notok "killed: $(dups killed) rows twice"
else
	wait $pp
	skip "put killed mid-way" "the put had finished ($n rows) when first seen"
fi

# 4. two puts at once sending the same new stacks (two hosts, one profile)
pfleet put --service twice --host a --start $S $U "$T/d.sp" 2> "$T/e1" & p1=$!
pfleet put --service twice --host b --start $S $U "$T/d.sp" 2> "$T/e2" & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
for h in a b; do
	pfleet get --service twice --host $h $R $U | pfold > "$T/g.$h"
	expect_eq "two puts at once: host $h's slice is its input" "$T/d.want" "$T/g.$h"
done
[ $r1 = 0 ] && [ $r2 = 0 ] && ok "two puts at once: both exit 0" || { notok "two puts (exit $r1 $r2)"; cat "$T/e1" "$T/e2"; }
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.stacks FINAL" > /dev/null
st=$(ch_query "$CH_HTTP" "SELECT count(), uniqExact(id) FROM stackpipe.stacks" | tr '\t' ' ')
[ "${st% *}" = "${st#* }" ] && ok "the dictionary holds each stack once after its merge ($st)" || notok "dictionary rows, ids: $st"

# 5. two puts of the same host and file at once: the question "is this batch
# stored?" and its insert are one step under the host's lock, so the second
# finds the first's batches stored; no row twice, the slice the input once
pfleet put --service same --host h --start $S $U "$T/d.sp" 2> "$T/e1" & p1=$!
pfleet put --service same --host h --start $S $U "$T/d.sp" 2> "$T/e2" & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
pfleet get --service same $R $U | pfold > "$T/g"
[ $r1 = 0 ] && [ $r2 = 0 ] && expect_eq "two puts of the same host and file at once: the slice is the input once" "$T/d.want" "$T/g" ||
	{ notok "same host twice (exit $r1 $r2)"; cat "$T/e1" "$T/e2"; }
n=$(cat "$T/e1" "$T/e2" | grep -c 'stored already by an earlier put')
r=$(rollup same)
[ "$(dups same)" = 0 ] && [ "$n" = 1 ] && [ "${r% *}" = "${r#* }" ] &&
	ok "... no row stored twice, one put said it found the other's batch stored, the rollup counts each row once ($r)" ||
	{ notok "same host twice: $(dups same) rows twice, $n said stored, rollup $r"; cat "$T/e1" "$T/e2"; }
# no lock file can be made (TMPDIR a missing directory): sent, and said
TMPDIR=$T/no-such-dir pfleet put --service nolock --host h --start $S $U "$T/d.sp" > /dev/null 2> "$T/e"; rc=$?
[ $rc = 0 ] && grep -q "^pfleet: 1 batch sent without the host's lock (no lock file could be opened in \$TMPDIR or /tmp)" "$T/e" &&
	ok "no lock file: the batch sent, and put says it went without the host's lock" || { notok "no lock file (exit $rc)"; cat "$T/e"; }
