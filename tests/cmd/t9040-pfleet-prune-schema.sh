#!/bin/bash
# pfleet prune and the schema's versions, against a real ClickHouse server
# started here: prune drops the days older than --ttl from the samples and
# from the hourly rollup and keeps the others; a store of the first schema
# (samples.value Float64) is still read by get, refused by put and init
# with one sentence naming what to do, and works again after doing it.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
ch_test_server "pfleet prune"
pfleet init $U 2> /dev/null || notok "init"
IN=$SP_TOP/share/demo/perf-demo.txt.gz
pfold "$IN" > "$T/want.folded"
# --- prune: a day 40 days old, a day 35 days old and today
old=$(date -u -d '-40 days' +%Y-%m-%dT10:00:00) old2=$(date -u -d '-35 days' +%Y-%m-%dT10:00:00)
now=$(date -u +%s); recent=@$((now - now % 3600 - 3600))
for s in $old $old2 $recent; do pfleet put -q --service p --host h --start $s $U "$IN" 2>> "$T/e" || notok "put at $s"; done
rows() { ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.$1 WHERE $2 < toDateTime($3)"; }
cut=$(date -u -d '-30 days' +%s)
[ "$(rows samples bucket $cut)" -gt 0 ] && [ "$(rows samples_hourly hour $cut)" -gt 0 ] && ok "old days stored in samples and the rollup" || notok "old days not stored"
pfleet prune --ttl 30 $U 2> "$T/e"; rc=$?
[ $rc = 0 ] && grep -qx 'pfleet: 2 days older than 30 days dropped' "$T/e" && ok "prune --ttl 30: 2 days dropped, said, exit 0" || { notok "prune (exit $rc)"; cat "$T/e"; }
[ "$(rows samples bucket $cut)" = 0 ] && [ "$(rows samples_hourly hour $cut)" = 0 ] && ok "... from the samples and from the rollup" || notok "old rows left: $(rows samples bucket $cut) $(rows samples_hourly hour $cut)"
pfleet get --service p --since "$old" --until "$(date -u -d '-30 days' +%Y-%m-%dT00:00:00)" $U > "$T/o" 2> "$T/e"; rc=$?
[ $rc = 1 ] && [ ! -s "$T/o" ] && grep -q '^pfleet: no samples for service p between ' "$T/e" && ok "get of the pruned days: no samples, exit 1" || { notok "get pruned (exit $rc)"; cat "$T/e"; }
# the day kept: from the rollup (a whole hour) and from the samples
t=${recent#@}
pfleet get --service p --since @$t --until @$((t + 3600)) $U | pfold > "$T/g"
expect_eq "the day kept is whole (rollup)" "$T/want.folded" "$T/g"
pfleet get --service p --since @$((t - 1)) --until @$((t + 3600)) $U | pfold > "$T/g"
expect_eq "the day kept is whole (samples)" "$T/want.folded" "$T/g"
pfleet prune --ttl 30 $U 2> "$T/e"; rc=$?
[ $rc = 0 ] && grep -qx 'pfleet: 0 days older than 30 days dropped' "$T/e" && ok "prune again: 0 days, exit 0" || { notok "prune again (exit $rc)"; cat "$T/e"; }
pfleet prune --ttl 0 $U > /dev/null 2> "$T/e"; rc=$?
expect_rc "prune --ttl 0: a usage error" 2 $rc
pfleet prune http://127.0.0.1:1 2> "$T/e"; rc=$?
[ $rc = 2 ] && [ "$(grep -c . "$T/e")" = 1 ] && grep -q '^pfleet: http://127.0.0.1:1: ' "$T/e" && ok "prune, server down: one sentence, exit 2" || { notok "prune down (exit $rc)"; cat "$T/e"; }

# --- a store of the first schema (value Float64, no rollup)
S=2026-11-26T10:00:00
ch_query "$CH_HTTP" "CREATE DATABASE v1" > /dev/null
ch_query "$CH_HTTP" "CREATE TABLE v1.stacks (id UInt64, frames Array(String), kinds Array(UInt8)) ENGINE = ReplacingMergeTree() ORDER BY id" > /dev/null
ch_query "$CH_HTTP" "CREATE TABLE v1.samples (bucket DateTime, service String, host String, labels Array(String), stack UInt64, value_name String, unit String, value Float64, batch UInt32) ENGINE = MergeTree() PARTITION BY toDate(bucket) ORDER BY (service, toStartOfHour(bucket), stack, host, bucket)" > /dev/null
# its rows, as the first pfleet wrote them: copied from a store of this one
pfleet init --database tmp1 $U 2> /dev/null && pfleet put -q --database tmp1 --service p --host h --start $S $U "$IN" 2> "$T/e" || notok "put to tmp1"
ch_query "$CH_HTTP" "INSERT INTO v1.stacks SELECT id, frames, kinds FROM tmp1.stacks" > /dev/null
ch_query "$CH_HTTP" "INSERT INTO v1.samples SELECT bucket, service, host, labels, stack, value_name, unit, toFloat64(value), batch FROM tmp1.samples" > /dev/null
H="--since 2026-11-26T10:00:00 --until 2026-11-26T11:00:00"
pfleet get --database v1 --service p $H $U | pfold > "$T/g" 2> "$T/e"
expect_eq "get still reads a store of the first schema (whole hours without a rollup: from the samples)" "$T/want.folded" "$T/g"
pfleet put --database v1 --service p --host h2 --start $S $U "$IN" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ "$(grep -c . "$T/e")" = 5 ] && grep -q "^pfleet: $U: v1 is a store of pfleet's first schema (samples.value Float64): get still reads it; .*(pfleet(1), SCHEMA VERSIONS):$" "$T/e" &&
	grep -qx "  RENAME TABLE v1.samples TO v1.samples_v1;" "$T/e" && grep -qx "  pfleet init --database v1 $U" "$T/e"; then
	ok "put to it: one sentence naming the schema, then the statements that copy it over, exit 2"; else notok "put to v1 (exit $rc)"; cat "$T/e"; fi
[ ! -s "$PFLEET_SPOOL" ] || [ "$(grep -c 'pfleet-spool' "$PFLEET_SPOOL")" = 0 ] && ok "... nothing spooled for it" || notok "spooled for v1"
pfleet init --database v1 $U 2> "$T/e"; rc=$?
[ $rc = 2 ] && grep -q "first schema" "$T/e" && ok "init of it: the same sentence, exit 2" || { notok "init v1 (exit $rc)"; cat "$T/e"; }
[ -z "$(ch_query "$CH_HTTP" "SELECT name FROM system.tables WHERE database = 'v1' AND name = 'samples_hourly'")" ] && ok "... and init created nothing in it" || notok "init changed v1"
# doing what it says, word for word
s1=$(sed -n 's/^  \(RENAME TABLE .*\);$/\1/p' "$T/e")
s2=$(sed -n 's/^  \(pfleet init .*\)$/\1/p' "$T/e")
sed -n 's/^  \(INSERT INTO .*\);$/\1/p' "$T/e" > "$T/ins"
ch_query "$CH_HTTP" "$s1" > "$T/o" && $s2 2> /dev/null && while read -r s; do ch_query "$CH_HTTP" "$s" >> "$T/o"; done < "$T/ins"
[ -n "$s1" ] && [ -n "$s2" ] && [ "$(wc -l < "$T/ins")" = 2 ] && [ ! -s "$T/o" ] && ok "the statements run as written (the copy, then the rollup's rows)" || { notok "steps: '$s1' '$s2' $(cat "$T/ins")"; cat "$T/o"; }
pfleet put -q --database v1 --service p --host h2 --start $S $U "$IN" 2> "$T/e"; rc=$?
expect_rc "put to the store moved over: exit 0" 0 $rc
pmerge "$IN" "$IN" | pfold > "$T/want2"
pfleet get --database v1 --service p $H $U 2> "$T/e" | pfold > "$T/g"
expect_eq "... and the hour holds the old and the new rows (rollup)" "$T/want2" "$T/g"
[ ! -s "$T/e" ] && ok "... read from the rollup rebuilt as said (no warning)" || { notok "get after the steps warns"; cat "$T/e"; }
pfleet get --database v1 --service p --host 'h*' $H $U | pfold > "$T/g"
expect_eq "... (samples)" "$T/want2" "$T/g"

