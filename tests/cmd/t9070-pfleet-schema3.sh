#!/bin/bash
# pfleet's third schema against a real ClickHouse server started here: the
# value split into bytes and a high half reads back exactly (0, 255, 256,
# past 32 bits, negative), host globs read through the key's host range
# give pmerge's answer, a store of the second schema is read by get,
# refused by put and init with the statements that copy it over, and works
# after running them as printed; a spool record of the second schema's
# rows is sent in this one's layout; init --cluster makes again a
# Distributed table made over an older schema's columns.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
# the server's time zone half an hour off UTC's hours: the store's hours
# are UTC's (put's, the copy's), not the server's toStartOfHour
CH_TIMEZONE=Asia/Kolkata ch_test_server "pfleet schema 3"
[ "$(ch_query "$CH_HTTP" "SELECT timezone()")" = Asia/Kolkata ] && ok "the server's time zone is Asia/Kolkata (UTC+5:30)" || notok "time zone: $(ch_query "$CH_HTTP" "SELECT timezone()")"
pfleet init $U 2> /dev/null || notok "init"
S=2026-11-26T10:00:00
H="--since 2026-11-26T10:00:00 --until 2026-11-26T11:00:00"
R="--since 2026-11-26T09:59:59 --until 2026-11-26T11:00:00"
q() { ch_query "$CH_HTTP" "$1"; }

# --- values at the split's edges, exact (one bucket: no sums)
printf '%s\n' 'main;a 1' 'main;b 255' 'main;c 256' 'main;d 65535' 'main;e 16777216' 'main;f 4294967295' \
	'main;g 4294967296' 'main;h 1099511627777' 'main;i 9007199254740991' 'main;j -1' 'main;k -4294967297' > "$T/edge.folded"
pfold "$T/edge.folded" > "$T/edge.want"
pfleet put -q --service edge --host e --start $S $U "$T/edge.folded" 2> "$T/e" || { notok "put edge"; cat "$T/e"; }
pfleet get --service edge $R $U | pfold > "$T/g"
expect_eq "edge values (0..2^53, negative) read back exactly from the samples" "$T/edge.want" "$T/g"
pfleet get --service edge $H $U | pfold > "$T/g"
expect_eq "... and from the rollup" "$T/edge.want" "$T/g"
[ "$(q "SELECT DISTINCT toUInt32(hour) % 3600, toUInt32(bucket) FROM stackpipe.samples WHERE service = 'edge'")" = "$(printf '0\t%s' "$(date -u -d $S +%s)")" ] &&
	ok "the bucket is $S UTC, its hour a whole UTC hour" || notok "hour, bucket: $(q "SELECT DISTINCT hour, bucket FROM stackpipe.samples WHERE service = 'edge'")"
[ "$(q "SELECT value0, value1, value2, value3, value_hi FROM stackpipe.samples WHERE service = 'edge' AND value = 1099511627777")" = "$(printf '1\t0\t0\t0\t256')" ] &&
	ok "2^40+1 is stored as bytes 1 0 0 0 and high half 256" || notok "split of 2^40+1: $(q "SELECT value0, value1, value2, value3, value_hi FROM stackpipe.samples WHERE service = 'edge' AND value = 1099511627777")"

# --- host globs: the key's range and the pattern give pmerge's answer
IN=$SP_TOP/share/demo/perf-demo.txt.gz
pfold "$IN" > "$T/p.folded"
for h in web-1 web-10 web-1x web-2 db-1; do pfleet put -q --service api --host $h --start $S $U "$IN" 2> "$T/e" || notok "put $h"; done
for g in 'web-1?' 'web-1*' '*-1' 'web-[12]*' 'db-1'; do
	n=0
	for h in web-1 web-10 web-1x web-2 db-1; do case $h in $g) n=$((n + 1));; esac; done
	args=""
	for i in $(seq $n); do args="$args $T/p.folded"; done
	pmerge $args | pfold > "$T/want"
	pfleet get --service api --host "$g" $H $U | pfold > "$T/g"
	expect_eq "--host '$g' ($n hosts) equals pmerge of their inputs" "$T/want" "$T/g"
done

# --- a store of the second schema
q "CREATE DATABASE v2" > /dev/null
q "CREATE TABLE v2.stacks (id UInt64, frames Array(String), kinds Array(UInt8), files Array(String), lines Array(UInt32)) ENGINE = ReplacingMergeTree() ORDER BY id" > /dev/null
q "CREATE TABLE v2.samples (bucket DateTime, service String, host String, labels Array(String), stack UInt64, value_name String, unit String, value Int64, batch UInt32) ENGINE = MergeTree() PARTITION BY toDate(bucket) ORDER BY (service, toStartOfHour(bucket), stack, host, bucket)" > /dev/null
q "CREATE MATERIALIZED VIEW v2.samples_hourly ENGINE = SummingMergeTree((value, rows)) PARTITION BY toDate(hour) ORDER BY (service, hour, value_name, unit, labels, stack) AS SELECT toStartOfHour(bucket) AS hour, service, labels, stack, value_name, unit, value, toUInt64(1) AS rows FROM v2.samples" > /dev/null
# its rows, as the second pfleet wrote them: copied from this store
q "INSERT INTO v2.stacks SELECT id, frames, kinds, files, lines FROM stackpipe.stacks" > /dev/null
q "INSERT INTO v2.samples SELECT bucket, service, host, labels, stack, value_name, unit, value, batch FROM stackpipe.samples" > /dev/null
pfleet get --database v2 --service edge $R $U | pfold > "$T/g"
expect_eq "get reads a store of the second schema (samples)" "$T/edge.want" "$T/g"
# (its rollup's hours are the server's: 9:30 and 10:30 UTC here; get says
# so and reads the samples)
pfleet get --database v2 --service edge $H $U 2> "$T/e" | pfold > "$T/g"
expect_eq "... (whole hours: its rollup's hours are the server's, not UTC's: from the samples)" "$T/edge.want" "$T/g"
grep -q '^pfleet: warning: the hourly rollup of v2 disagrees with its samples' "$T/e" && ok "... said" || { notok "rollup of v2 not said"; cat "$T/e"; }
pmerge "$T/p.folded" "$T/p.folded" | pfold > "$T/want2"
pfleet get --database v2 --service api --host 'web-1?' $H $U | pfold > "$T/g"
expect_eq "... (a host glob)" "$T/want2" "$T/g"
pfleet put --database v2 --service api --host web-3 --start $S $U "$IN" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ "$(grep -c . "$T/e")" = 6 ] && grep -q "^pfleet: $U: v2 is a store of pfleet's second schema (samples.value an Int64 column): get still reads it; .*(pfleet(1), SCHEMA VERSIONS):$" "$T/e" &&
	grep -qx "  DROP TABLE v2.samples_hourly;" "$T/e" && grep -qx "  RENAME TABLE v2.samples TO v2.samples_v2;" "$T/e" && grep -qx "  pfleet init --database v2 $U" "$T/e"; then
	ok "put to it: one sentence naming the schema, then the statements that copy it over, exit 2"; else notok "put to v2 (exit $rc)"; cat "$T/e"; fi
pfleet init --database v2 $U 2> "$T/e2"; rc=$?
[ $rc = 2 ] && cmp -s "$T/e" "$T/e2" && ok "init of it: the same, exit 2" || { notok "init v2 (exit $rc)"; cat "$T/e2"; }
# the statements, as printed
sed -n 's/^  \(DROP TABLE .*\);$/\1/p; s/^  \(RENAME TABLE .*\);$/\1/p' "$T/e" > "$T/sql"
sed -n 's/^  \(INSERT INTO .*\);$/\1/p' "$T/e" > "$T/ins" # the copy, then the rollup's rows
s3=$(head -1 "$T/ins")
s2=$(sed -n 's/^  \(pfleet init .*\)$/\1/p' "$T/e")
: > "$T/o"
while read -r s; do q "$s" >> "$T/o"; done < "$T/sql"
[ "$(wc -l < "$T/sql")" = 2 ] && [ "$(wc -l < "$T/ins")" = 2 ] && { $s2 2> /dev/null || echo "$s2 failed" >> "$T/o"; } && while read -r s; do q "$s" >> "$T/o"; done < "$T/ins"
[ -n "$s2" ] && [ -n "$s3" ] && [ ! -s "$T/o" ] && ok "the statements run as printed" || { notok "statements: $(cat "$T/sql") '$s2' '$s3'"; cat "$T/o"; }
[ "$(q "SELECT count() FROM v2.samples")" = "$(q "SELECT count() FROM v2.samples_v2")" ] && ok "... every row copied" || notok "rows copied: $(q "SELECT count() FROM v2.samples") of $(q "SELECT count() FROM v2.samples_v2")"
pfleet put -q --database v2 --service api --host web-3 --start $S $U "$IN" 2> "$T/e"; rc=$?
expect_rc "put to the store copied over: exit 0" 0 $rc
pfleet get --database v2 --service edge $H $U 2> "$T/e" | pfold > "$T/g"
expect_eq "... the edge values are exact (rollup made again from the copy)" "$T/edge.want" "$T/g"
[ ! -s "$T/e" ] && ok "... read from the rollup, its hours UTC's (no warning)" || { notok "get after the copy said something"; cat "$T/e"; }
pfleet get --database v2 --service edge $R $U | pfold > "$T/g"
expect_eq "... (samples)" "$T/edge.want" "$T/g"
pmerge "$T/p.folded" "$T/p.folded" "$T/p.folded" "$T/p.folded" "$T/p.folded" "$T/p.folded" | pfold > "$T/want6"
pfleet get --database v2 --service api $H $U | pfold > "$T/g"
expect_eq "... and the hour of api holds the old hosts and the new one (rollup)" "$T/want6" "$T/g"

# --- a spool record of the second schema's rows ("pfleet-spool 1"): web-1's
# rows a day later
export PFLEET_SPOOL=$T/spool1
q "SELECT bucket + 86400 AS b, service, host, labels, stack, value_name, unit, value, toUInt32(424242) AS batch FROM stackpipe.samples WHERE service = 'api' AND host = 'web-1' FORMAT RowBinary" > "$T/rows1"
n=$(q "SELECT count() FROM stackpipe.samples WHERE service = 'api' AND host = 'web-1'")
b=$(date -u -d "$S" +%s)
printf 'pfleet-spool 1 samples %s %016x %s %s %s\n' "$n" 424242 $((b + 86400)) $((b + 86400 + 3599)) "$(stat -c %s "$T/rows1")" > "$PFLEET_SPOOL"
cat "$T/rows1" >> "$PFLEET_SPOOL"
pfleet flush $U 2> "$T/e"; rc=$?
[ $rc = 0 ] && ok "flush of a record of the second schema: exit 0" || { notok "flush (exit $rc)"; cat "$T/e"; }
pfleet get --service api --since 2026-11-27T10:00:00 --until 2026-11-27T11:00:00 $U 2> "$T/e" | pfold > "$T/g"
expect_eq "... its rows are stored in this schema's layout" "$T/p.folded" "$T/g"
[ ! -s "$T/e" ] && ok "... with their hourly rollup rows (the whole hour read from it, no warning)" || { notok "rollup of the flushed record"; cat "$T/e"; }
[ "$(q "SELECT count() FROM stackpipe.samples WHERE batch = 424242")" = "$n" ] && ok "... every row ($n), once" || notok "spooled rows stored: $(q "SELECT count() FROM stackpipe.samples WHERE batch = 424242") of $n"

# --- init --cluster: a Distributed table of an older schema's columns
q "CREATE TABLE stackpipe.stacks_dist (id UInt64, frames Array(String), kinds Array(UInt8)) ENGINE = Distributed(fleet, stackpipe, stacks, id)" > /dev/null
pfleet init --cluster fleet $U 2> "$T/e"; rc=$?
[ $rc = 0 ] && grep -qx 'pfleet: note: stacks_dist made again over the cluster: it was of an older schema' "$T/e" && ok "init --cluster: a stacks_dist without files and lines made again, said" || { notok "init --cluster (exit $rc)"; cat "$T/e"; }
[ "$(q "SELECT count() FROM system.columns WHERE database = 'stackpipe' AND table = 'stacks_dist' AND name IN ('files', 'lines')")" = 2 ] && ok "... with the dictionary's columns" || notok "stacks_dist columns"
pfleet init --cluster fleet $U 2> "$T/e"; rc=$?
[ $rc = 0 ] && ! grep -q 'made again' "$T/e" && ok "init --cluster again: nothing made again" || { notok "init --cluster again (exit $rc)"; cat "$T/e"; }
pfleet get --cluster fleet --service edge $R $U | pfold > "$T/g"
expect_eq "get --cluster over it: the edge values" "$T/edge.want" "$T/g"
