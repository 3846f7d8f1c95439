#!/bin/bash
# pfleet against a real ClickHouse server started here (127.0.0.1, its own
# ports and data directory, stopped at the end even on failure): the
# schema (share/fleet/schema.sql by clickhouse-client and pfleet init, on the
# installed server), profiles of real programs (xz and gzip recorded by
# pcollect, perf script text, folded text) stored as hosts, and slices read
# back: equal to pmerge of the same inputs byte for byte after pfold, by
# host, host globs, labels, time ranges, time buckets, the per-host table,
# an empty range.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
ch_test_server "pfleet store"
ver=$(ch_query "$CH_HTTP" "SELECT version()")
ok "clickhouse-server $ver started on 127.0.0.1:$CH_HTTP with data in $T/ch"

# the schema: the shipped file by clickhouse-client equals pfleet init's tables
if command -v clickhouse-client > /dev/null; then
	clickhouse-client --port "$CH_TCP" --multiquery < "$SP_TOP/share/fleet/schema.sql" 2> "$T/e"; rc=$?
	expect_rc "share/fleet/schema.sql applies with clickhouse-client --multiquery" 0 $rc
	pfleet init --database other $U 2> "$T/e"; rc=$?
	expect_rc "pfleet init --database other" 0 $rc
	grep -q "no TTL (ClickHouse 19.6 has): run 'pfleet prune --ttl 30 $U' daily" "$T/e" && ok "init says this server has no TTL and what to run" || notok "TTL note"; 
	for t in stacks samples; do
		a=$(ch_query "$CH_HTTP" "SHOW CREATE TABLE stackpipe.$t")
		b=$(ch_query "$CH_HTTP" "SHOW CREATE TABLE other.$t" | sed 's/other\./stackpipe./')
		if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$t: the file's table equals pfleet init's"; else notok "$t differs"; echo "  $a"; echo "  $b"; fi
	done
else skip "schema file" "clickhouse-client is not installed"; fi
pfleet init $U 2> /dev/null && pfleet init $U 2> /dev/null; rc=$?
expect_rc "pfleet init twice (idempotent)" 0 $rc

# real programs nobody here wrote: xz and gzip, recorded by pcollect
have_rec=1
t6_probe || have_rec=0
head -c 3000000 /usr/bin/perl > "$T/blob" 2> /dev/null || head -c 3000000 /bin/bash > "$T/blob"
if [ $have_rec = 1 ]; then
	pcollect -q -F 499 -o "$T/xz.sp" -- xz -6 -T1 -c "$T/blob" > /dev/null 2> "$T/e" &&
	pcollect -q -F 499 -o "$T/gzip.sp" -- gzip -9 -c "$T/blob" > /dev/null 2>> "$T/e" || { notok "pcollect of xz and gzip"; cat "$T/e"; have_rec=0; }
fi
if [ $have_rec = 0 ]; then # the bundled real perf recording stands in, as two hosts
	pfold -b "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/xz.sp"; cp "$T/xz.sp" "$T/gzip.sp"
fi
S=2026-11-26T10:00:00
pfleet put --service comp --host web-1 --label dc=a --start $S $U "$T/xz.sp" 2> "$T/e1"; r1=$?
pfleet put --service comp --host web-2 --label dc=b --start $S $U "$T/gzip.sp" 2> "$T/e2"; r2=$?
if [ $r1 = 0 ] && [ $r2 = 0 ] && grep -q '^pfleet: [0-9]* samples -> [0-9]* rows stored in [0-9]* inserts, [0-9]* stacks sent' "$T/e1"; then
	ok "put of two recordings as hosts web-1 and web-2: exit 0, a summary with counts"; else notok "put (exit $r1 $r2)"; cat "$T/e1" "$T/e2"; fi
R="--since 2026-11-26T09:00:00 --until 2026-11-26T11:00:00"
pfleet get --service comp $R $U > "$T/g.sp" 2> "$T/e"; rc=$?
expect_rc "get: exit 0" 0 $rc
pfold "$T/g.sp" > "$T/g.folded"; pmerge "$T/xz.sp" "$T/gzip.sp" | pfold > "$T/m.folded"
expect_eq "the slice equals pmerge of the same inputs, byte for byte after pfold" "$T/m.folded" "$T/g.folded"
pfold --weight=samples "$T/g.sp" > "$T/g2"; pmerge "$T/xz.sp" "$T/gzip.sp" | pfold --weight=samples > "$T/m2"
expect_eq "... and in the samples column too" "$T/m2" "$T/g2"
sp-dump "$T/g.sp" | head -3 > "$T/d"
grep -qx 'values samples,period' "$T/d" && grep -qx 'units samples,ns' "$T/d" && ok "the slice keeps the value columns and their units" || { notok "columns"; cat "$T/d"; }
# --by host = pmerge --tag of files named as the hosts
mkdir -p "$T/tag" && cp "$T/xz.sp" "$T/tag/web-1" && cp "$T/gzip.sp" "$T/tag/web-2"
(cd "$T/tag" && pmerge --tag web-1 web-2) | pfold > "$T/m.folded"
pfleet get --service comp --by host $R $U | pfold > "$T/g.folded"
expect_eq "--by host: a root frame per host, as pmerge --tag" "$T/m.folded" "$T/g.folded"
pfleet get --service comp --host 'web-[2]' $R $U | pfold > "$T/g.folded"; pfold "$T/gzip.sp" > "$T/m.folded"
expect_eq "--host 'web-[2]': only that host" "$T/m.folded" "$T/g.folded"
pfleet get --service comp --host 'web-*' --label dc=a $R $U | pfold > "$T/g.folded"; pfold "$T/xz.sp" > "$T/m.folded"
expect_eq "--label dc=a: only the samples so labelled" "$T/m.folded" "$T/g.folded"

# the per-host table: the xz host spends its time in lzma, the gzip host does not
if [ $have_rec = 1 ]; then
	f=$(pfold "$T/xz.sp" | tr ';' '\n' | sed 's/ [0-9]*$//' | grep -m1 '^lzma_')
	pfleet hosts --service comp --function "$f" $R $U > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && [ "$(sed -n 2p "$T/o" | awk '{print $1}')" = web-1 ] && head -1 "$T/o" | grep -q "host .*$f .*host total .*share"; then ok "hosts --function $f: web-1 (xz) first"; else notok "hosts (exit $rc)"; cat "$T/o" "$T/e"; fi
	want=$(pfold "$T/xz.sp" | grep -F ";$f" | awk '{s += $NF} END {print s}')
	pfleet get --service comp --host web-1 $R $U | pfold | grep -F ";$f" | awk '{s += $NF} END {print s}' > "$T/got"
	[ -n "$want" ] && [ "$(cat "$T/got")" = "$want" ] && ok "the slice's time in $f is the recording's ($want ns)" || notok "$f: $(cat "$T/got") vs $want"
	pfleet hosts --service comp --function no_such_function $R $U > "$T/o" 2> "$T/e"; rc=$?
	[ $rc = 1 ] && grep -q "no samples in no_such_function for service comp between 2026-11-26 09:00:00 and 2026-11-26 11:00:00 UTC" "$T/e" && ok "hosts of a function nobody runs: said, exit 1" || { notok "hosts none (exit $rc)"; cat "$T/e"; }
else skip "hosts --function" "no pcollect recording here (perf events unusable)"; fi

# time: two puts an hour apart; ranges pick one; --by time stamps each bucket
printf 'main;work;a 5\nmain;work;b 3\n' > "$T/early.folded"; printf 'main;work;c 7\n' > "$T/late.folded"
pfleet put --service t --host h --start 2026-11-26T10:00:05 --bucket 10 $U "$T/early.folded" 2> /dev/null
pfleet put --service t --host h --start 2026-11-26T11:00:00 $U "$T/late.folded" 2> /dev/null
pfleet get --service t --since 2026-11-26T10:00:00 --until 2026-11-26T10:30:00 $U | pfold > "$T/g.folded"
expect_eq "--since/--until: only the early samples" "$T/early.folded" "$T/g.folded"
pfleet get --service t --since @1795000000 --until now $U | pfold > "$T/g.folded"; cat "$T/early.folded" "$T/late.folded" | pfold > "$T/m.folded"
expect_eq "@EPOCH to now: both" "$T/m.folded" "$T/g.folded"
pfleet get --service t --by time --since 2026-11-26T09:00:00 --until 2026-11-26T12:00:00 $U | sp-dump | grep '^sample' | sed 's/ values.*//' | sort | uniq -c > "$T/d"
e=$(date -u -d 2026-11-26T10:00:00 +%s); l=$(date -u -d 2026-11-26T11:00:00 +%s)
if [ "$(wc -l < "$T/d")" = 2 ] && grep -q " 2 sample t=${e}000000000\$" "$T/d" && grep -q " 1 sample t=${l}000000000\$" "$T/d"; then
	ok "--by time: each sample at its bucket's start (10:00:05 -> 10:00:00)"; else notok "--by time"; cat "$T/d"; fi
# folded text and perf script text are inputs too
pfleet put --service demo --host h --start $S $U "$SP_TOP/share/demo/perf-demo.txt.gz" 2> "$T/e"; rc=$?
pfleet get --service demo $R $U | pfold > "$T/g.folded"; pfold "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/m.folded"
expect_eq "perf script text (gzip) in, the same folded out" "$T/m.folded" "$T/g.folded"

# standard input: a pipeline into put
pfold -b "$SP_TOP/share/demo/perf-demo.txt.gz" | pfleet put --service pipe --host h --start $S $U 2> "$T/e"; rc=$?
pfleet get --service pipe $R $U | pfold > "$T/g.folded"
if [ $rc = 0 ]; then expect_eq "a pipe into put (standard input): the same folded out" "$T/m.folded" "$T/g.folded"; else notok "put from a pipe (exit $rc)"; cat "$T/e"; fi

# an empty range: one sentence, exit 1, no output
pfleet get --service api --host 'web-*' --label dc=a --since 2026-11-26T09:00:00 --until 2026-11-26T10:00:00 $U > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 1 ] && [ ! -s "$T/o" ] && [ "$(cat "$T/e")" = "pfleet: no samples for service api, hosts web-*, label dc=a between 2026-11-26 09:00:00 and 2026-11-26 10:00:00 UTC" ]; then
	ok "empty range: 'no samples for service api, ... between ...', exit 1, no output"; else notok "empty range (exit $rc)"; cat "$T/e"; fi
# a stack is stored once for the fleet: both hosts put the same profile
pfleet put --service same --host a --start $S $U "$T/early.folded" 2> /dev/null; pfleet put --service same --host b --start $S $U "$T/early.folded" 2> /dev/null
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.stacks FINAL" > /dev/null
n=$(ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.stacks WHERE has(frames, 'work') AND length(frames) = 3")
[ "$n" = 3 ] && ok "a stack sent by several hosts is one dictionary row (content id)" || notok "dictionary rows: $n, want 3 (a, b, c)"
# the dictionary rows a put sends: each new stack once, however many
# batches (three inputs in three batches of 2 rows: the third batch's
# insert held the first's stacks again), and an input of 10,000 new
# stacks sent in chunks of 8,192 while it is read on
for i in 1 2 3; do printf 'main;f%s;g 5\nmain;h%s 3\n' $i $i > "$T/d$i.folded"; done
awk 'BEGIN {for (i = 0; i < 10000; i++) printf "main;s%d;t%d 1\n", i % 97, i}' > "$T/many.folded"
D="--database dict"
pfleet init $D $U 2> /dev/null; pfleet put $D --batch-rows 2 --service dict --host a --start $S $U "$T/d1.folded" "$T/d2.folded" "$T/d3.folded" 2> "$T/e" &&
pfleet put $D --service dict --host b --start $S $U "$T/many.folded" 2>> "$T/e"; rc=$?
ch_query "$CH_HTTP" "SYSTEM FLUSH LOGS" > /dev/null
ins=$(ch_query "$CH_HTTP" "SELECT arraySort(groupArray(written_rows)) FROM system.query_log WHERE type = 2 AND query LIKE 'INSERT INTO dict.stacks %'")
pfleet get $D --service dict --host b $R $U | pfold > "$T/g.folded"; pfold "$T/many.folded" > "$T/m.folded"
if [ $rc = 0 ] && [ "$ins" = "[2,2,2,1808,8192]" ] && cmp -s "$T/m.folded" "$T/g.folded"; then
	ok "dictionary rows: each new stack sent once in 3 batches (2, 2, 2); 10,000 in chunks of 8,192 and 1,808 (sent as read) and read back whole"
else notok "dictionary inserts' rows: $ins (exit $rc)"; cat "$T/e"; fi
# a batch of over 1,024 rows is sorted by the ids' top 16 bits, then each
# group by the whole key: the same input twice in one put (every bucket,
# stack and column twice) is one row each, twice the value
pfleet put $D --service dict --host c --start $S $U "$T/many.folded" "$T/many.folded" 2> "$T/e"; rc=$?
pfleet get $D --service dict --host c $R $U | pfold > "$T/g.folded"
awk '{$NF = 2 * $NF; print}' "$T/m.folded" > "$T/m2.folded"
n=$(ch_query "$CH_HTTP" "SELECT count() FROM dict.samples WHERE host = 'c'")
if [ $rc = 0 ] && [ "$n" = 10000 ] && cmp -s "$T/m2.folded" "$T/g.folded"; then
	ok "the same 10,000 stacks from two inputs of one put: 10,000 rows, each value twice"
else notok "two inputs' same rows: $n rows (exit $rc)"; cat "$T/e"; diff "$T/m2.folded" "$T/g.folded" | head -5; fi
