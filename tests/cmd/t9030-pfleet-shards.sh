#!/bin/bash
# pfleet over two shards: two ClickHouse servers started here, the cluster
# "fleet" of both, Distributed tables (pfleet init --cluster); the rows of
# four hosts are spread over both shards, and every answer equals the one
# of the same data on a single server.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
trap 'ch_stop_all; sp_cleanup' EXIT
why=$(ch_available) || { skip "pfleet shards" "$why"; exit 0; }
ch_start_free "$T/b" > "$T/start" || { notok "second shard starts"; cat "$T/start"; exit 0; }
B_HTTP=$CH_HTTP B_TCP=$CH_TCP
CH_SHARDS=$B_TCP ch_start_free "$T/a" > "$T/start" || { notok "first shard starts"; cat "$T/start"; exit 0; }
A=http://127.0.0.1:$CH_HTTP B=http://127.0.0.1:$B_HTTP
export PFLEET_SPOOL=$T/spool TMPDIR=$T # put's per-host lock files, removed with the rest
n=$(ch_query "$CH_HTTP" "SELECT count() FROM system.clusters WHERE cluster = 'fleet'")
[ "$n" = 2 ] && ok "two servers, cluster 'fleet' of 2 shards" || { notok "cluster: $n shards"; exit 0; }
pfleet init $A 2> /dev/null && pfleet init $B 2> /dev/null && pfleet init --cluster fleet $A 2> "$T/e"; rc=$?
expect_rc "init on each shard, then init --cluster fleet" 0 $rc
ch_query "$CH_HTTP" "SHOW TABLES FROM stackpipe" | tr '\n' ' ' > "$T/t"
grep -q 'samples_dist' "$T/t" && grep -q 'stacks_dist' "$T/t" && grep -q 'samples_hourly_dist' "$T/t" && ok "Distributed tables samples_dist, stacks_dist and samples_hourly_dist" || { notok "dist tables"; cat "$T/t"; }
pfleet init --database single $A 2> /dev/null

S=2026-11-26T10:00:00
R="--since 2026-11-26T09:00:00 --until 2026-11-26T12:00:00"
IN=$SP_TOP/share/demo/perf-demo.txt.gz
# per-host variation: every other host without its compress stacks
pfold -b "$IN" | pfilter -v compress > "$T/x.sp"
i=0
for h in web-1 web-2 web-3 web-4; do # sipHash64 puts 1 and 3 on one shard, 2 and 4 on the other
	i=$((i + 1))
	in=$IN; [ $((i % 2)) = 0 ] && in=$T/x.sp
	pfleet put --cluster fleet --service s --host $h --start $S $A "$in" 2>> "$T/e" || notok "put $h to the cluster"
	pfleet put --database single --service s --host $h --start $S $A "$in" 2>> "$T/e" || notok "put $h to one server"
done
na=$(ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.samples"); nb=$(ch_query "$B_HTTP" "SELECT count() FROM stackpipe.samples")
ns=$(ch_query "$CH_HTTP" "SELECT count() FROM single.samples")
if [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && [ $((na + nb)) = "$ns" ]; then ok "the rows are on both shards ($na + $nb = $ns on one server)"; else notok "rows: $na + $nb vs $ns"; fi
for args in "" "--by host" "--host web-[12]" "--by time" "--host web-4"; do
	pfleet get --cluster fleet --service s $args $R $A | pfold > "$T/two" 2> "$T/e"
	pfleet get --database single --service s $args $R $A | pfold > "$T/one"
	if [ -s "$T/one" ] && cmp -s "$T/one" "$T/two"; then ok "get $args: two shards answer as one server"; else notok "get $args differs"; diff "$T/one" "$T/two" | head -5; fi
done
# whole hours of every host: each shard's hourly rollup, through samples_hourly_dist
ch_query "$CH_HTTP" "SYSTEM FLUSH LOGS" > /dev/null
n=$(ch_query "$CH_HTTP" "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'SELECT stack, toFloat64%FROM stackpipe.samples_hourly_dist %'")
[ "$n" -gt 0 ] && ok "get over the cluster read the shards' rollups ($n queries of samples_hourly_dist)" || notok "no query of samples_hourly_dist ($n)"
pmerge "$IN" "$T/x.sp" "$IN" "$T/x.sp" | pfold > "$T/m"
pfleet get --cluster fleet --service s $R $A | pfold > "$T/two"
expect_eq "two shards: the slice equals pmerge of the inputs" "$T/m" "$T/two"
pfleet hosts --cluster fleet --service s --function compress $R $A > "$T/two" 2>&1
pfleet hosts --database single --service s --function compress $R $A > "$T/one" 2>&1
if grep -q '^web-1 ' "$T/one" && cmp -s "$T/one" "$T/two"; then ok "hosts --function: two shards answer as one server"; else notok "hosts differ"; cat "$T/one" "$T/two"; fi
pfleet get --cluster fleet --service nothing $R $A > "$T/o" 2> "$T/e"; rc=$?
[ $rc = 1 ] && grep -q 'no samples for service nothing' "$T/e" && ok "an empty range over the cluster: exit 1" || notok "empty over the cluster (exit $rc)"
