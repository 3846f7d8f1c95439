#!/bin/bash
# fleet-real-bench.sh — pfleet put of one real `pcollect -a` stream against
# the server alone: measured, never asserted.
#
#   tests/bench/fleet-real-bench.sh [STREAM]
#
# STREAM (default: recorded here, pcollect -a -F 1999 for 30 s, kept in
# tests/bench/work/fleet-real/real.sp) is put twice into a private
# clickhouse-server, as host a (its stacks new to the dictionary) and host
# b (stacks known); RUNS pairs.  Beside each put, the server alone: the
# same sample rows, in the samples' key order, then their rollup rows,
# POSTed as RowBinary by curl into a second store of the same schema
# (beside the first put, the dictionary rows it sent too).  Then CPU
# time: put's (user + system, per 1000 sample rows), the server's for the
# same inserts (query_log's UserTime + SystemTime of curl's inserts) and
# reading the stream alone (pfold -b to /dev/null): on a machine whose
# CPUs are all busy, the ratio of wall times follows the CPU each side
# needs, whatever overlaps.  Then bytes per sample row of the samples
# table after OPTIMIZE FINAL, with the server's default compression
# (lz4), and per column.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
export PATH=$top/bin:$PATH
RUNS=${BENCH_RUNS:-3}
W=$top/tests/bench/work/fleet-real
mkdir -p "$W"
say() { printf 'fleet-real-bench: %s\n' "$*" >&2; }
. "$top/tests/fleet/ch.sh"
if ! why=$(ch_available); then say "skipped: $why"; exit 0; fi
IN=${1:-$W/real.sp}
if [ ! -s "$IN" ]; then
	say "recording this machine for 30 s (pcollect -a -F 1999)"
	pcollect -a -F 1999 -d 30 -o "$IN.tmp" 2> /dev/null && mv "$IN.tmp" "$IN" || { say "skipped: pcollect -a failed (root?)"; exit 0; }
fi
median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s.%N; }
rm -rf "$W/ch"
trap 'ch_stop_all || true' EXIT
ch_start_free "$W/ch" > /dev/null
U=http://127.0.0.1:$CH_HTTP
export PFLEET_SPOOL=$W/spool TMPDIR=$W # put's per-host lock files there, not in /tmp
rm -f "$PFLEET_SPOOL"
q() { ch_query "$CH_HTTP" "$1"; }
post() { curl -fsS --data-binary @"$2" "$U/?query=INSERT%20INTO%20$1%20FORMAT%20RowBinary" > /dev/null; }
S=2026-11-26T10:00:00
KEY="service, hour, host, stack, minute, second"
put_runs="" ref_runs="" put2_runs="" refs_runs="" ratio1="" ratio2="" cpu1="" cpu2="" rcpu="" rows=0
TIMEFORMAT='%U %S'
cpu_ms() { awk '{printf "%.0f", ($1 + $2) * 1000}' "$1"; }
for run in $(seq "$RUNS"); do
	q "DROP DATABASE IF EXISTS stackpipe" > /dev/null; q "DROP DATABASE IF EXISTS ref" > /dev/null
	pfleet init $U 2> /dev/null; pfleet init --database ref $U 2> /dev/null
	t0=$(now); { time pfleet put -q --service real --host a --start $S $U "$IN"; } 2> "$W/cpu1"; t1=$(now)
	{ time pfleet put -q --service real --host b --start $S $U "$IN"; } 2> "$W/cpu2"; t2=$(now)
	cpu1="$cpu1 $(cpu_ms "$W/cpu1")" cpu2="$cpu2 $(cpu_ms "$W/cpu2")"
	rows=$(q "SELECT count() FROM stackpipe.samples WHERE host = 'a'")
	q "SELECT * FROM stackpipe.samples WHERE host = 'a' ORDER BY $KEY FORMAT RowBinary" > "$W/rows"
	q "SELECT hour, service, labels, stack, value_name, unit, sum(value), count(), toUInt32(0) FROM stackpipe.samples WHERE host = 'a' GROUP BY hour, service, labels, stack, value_name, unit ORDER BY service, hour, value_name, unit, labels, stack FORMAT RowBinary" > "$W/hour"
	q "SELECT * FROM stackpipe.stacks FORMAT RowBinary" > "$W/stacks"
	t3=$(now); post ref.samples "$W/rows"; post ref.samples_hourly "$W/hour"; t4=$(now)
	q "DROP DATABASE ref" > /dev/null; pfleet init --database ref $U 2> /dev/null
	t5=$(now); post ref.stacks "$W/stacks"; post ref.samples "$W/rows"; post ref.samples_hourly "$W/hour"; t6=$(now)
	refs_runs="$refs_runs $(echo "$rows $t6 $t5" | awk '{printf "%.0f", $1 / ($2 - $3)}')"
	ratio1="$ratio1 $(echo "$t1 $t0 $t6 $t5" | awk '{printf "%.2f", ($4 - $3) / ($2 - $1)}')"
	ratio2="$ratio2 $(echo "$t2 $t1 $t4 $t3" | awk '{printf "%.2f", ($4 - $3) / ($2 - $1)}')"
	put_runs="$put_runs $(echo "$rows $t1 $t0" | awk '{printf "%.0f", $1 / ($2 - $3)}')"
	put2_runs="$put2_runs $(echo "$rows $t2 $t1" | awk '{printf "%.0f", $1 / ($2 - $3)}')"
	ref_runs="$ref_runs $(echo "$rows $t4 $t3" | awk '{printf "%.0f", $1 / ($2 - $3)}')"
done
med() { echo $1 | tr ' ' '\n' | median; }
# the server's CPU for curl's inserts of the sample and rollup rows (the
# second store of each run: the one beside the put whose stacks are known)
q "SYSTEM FLUSH LOGS" > /dev/null
rcpu=$(q "SELECT sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, 'UserTimeMicroseconds')] + ProfileEvents.Values[indexOf(ProfileEvents.Names, 'SystemTimeMicroseconds')]) / 1000 / $RUNS / 2 FROM system.query_log WHERE type = 2 AND (query LIKE 'INSERT INTO ref.samples %' OR query LIKE 'INSERT INTO ref.samples_hourly %')")
rd=""
for run in $(seq "$RUNS"); do { time pfold -b "$IN" > /dev/null; } 2> "$W/cpu3"; rd="$rd $(cpu_ms "$W/cpu3")"; done
per_k() { awk -v ms="$1" -v r="$rows" 'BEGIN {printf "%.2f", ms / r * 1000}'; }
q "OPTIMIZE TABLE stackpipe.samples FINAL" > /dev/null
bpr=$(q "SELECT round(sum(bytes_on_disk) / sum(rows), 2) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples'")
cbpr=$(q "SELECT round(sum(data_compressed_bytes) / (SELECT count() FROM stackpipe.samples), 2) FROM system.columns WHERE database = 'stackpipe' AND table = 'samples'")
percol=$(q "SELECT name, round(data_compressed_bytes / (SELECT count() FROM stackpipe.samples), 3) FROM system.columns WHERE database = 'stackpipe' AND table = 'samples' AND default_kind != 'ALIAS' ORDER BY data_compressed_bytes DESC" | awk '{printf "%s %s, ", $1, $2}')
samples=$(pfold "$IN" | awk '{s += $NF} END {print s}')
# What would cut the bytes: host a's rows copied into tables of other
# layouts (same key, the server's lz4, OPTIMIZE FINAL), in bytes per
# sample row of schema 3 (a (bucket, stack, value column)).  "32-bit" is
# the id's low half; "dense" numbers the host's stacks 0, 1 ... in the
# order first seen (by bucket, then id), as a per-(service, host) map put
# would keep (its own table's bytes said beside); "pairs" is a row per
# (bucket, stack) holding two value columns.
q "DROP DATABASE IF EXISTS whatif" > /dev/null; q "CREATE DATABASE whatif" > /dev/null
q "CREATE TABLE whatif.map ENGINE = Memory AS SELECT stack, toUInt32(rowNumberInAllBlocks()) AS sid FROM (SELECT stack FROM stackpipe.samples WHERE host = 'a' GROUP BY stack ORDER BY min(hour + minute * 60 + second), stack)" > /dev/null
VC="value_name String, unit String, value0 UInt8, value1 UInt8, value2 UInt8, value3 UInt8, value_hi Int32"
layout() { # NAME STACK-TYPE STACK-EXPR PAIRS: bytes per schema-3 row
	local cols="hour DateTime, minute UInt8, second UInt8, service String, host String, labels Array(String), stack $2, $VC" sel
	local from="(SELECT *, $3 AS S FROM stackpipe.samples ANY INNER JOIN whatif.map USING stack WHERE host = 'a')"
	[ "$4" = 1 ] && cols="$cols, name2 String, unit2 String, v20 UInt8, v21 UInt8, v22 UInt8, v23 UInt8, v2hi Int32"
	q "CREATE TABLE whatif.$1 ($cols, batch UInt32) ENGINE = MergeTree() PARTITION BY toDate(hour) ORDER BY ($KEY)" > /dev/null
	sel="hour, minute, second, service, host, labels, S, value_name, unit, value0, value1, value2, value3, value_hi"
	if [ "$4" = 1 ]; then
		q "INSERT INTO whatif.$1 SELECT hour, minute, second, service, host, labels, S, N[1], U[1], a0[1], a1[1], a2[1], a3[1], ah[1], N[2], U[2], a0[2], a1[2], a2[2], a3[2], ah[2], batch FROM (SELECT hour, minute, second, service, host, labels, S, batch, groupArray(value_name) AS N, groupArray(unit) AS U, groupArray(value0) AS a0, groupArray(value1) AS a1, groupArray(value2) AS a2, groupArray(value3) AS a3, groupArray(value_hi) AS ah FROM (SELECT * FROM $from ORDER BY value_name) GROUP BY hour, minute, second, service, host, labels, S, batch)" > /dev/null
	else
		q "INSERT INTO whatif.$1 SELECT $sel, batch FROM $from" > /dev/null
	fi
	q "OPTIMIZE TABLE whatif.$1 FINAL" > /dev/null
	q "SELECT round(sum(data_compressed_bytes) / $rows, 2), round(sumIf(data_compressed_bytes, name = 'stack') / $rows, 2) FROM system.columns WHERE database = 'whatif' AND table = '$1'" | awk '{printf "%s (stack %s)", $1, $2}'
}
wi64=$(layout id64 UInt64 stack 0) wi32=$(layout id32 UInt32 "toUInt32(stack % 4294967296)" 0)
wid=$(layout dense UInt32 sid 0) wid24=$(layout dense24 UInt32 "toUInt32(sid * intDiv(16777215, (SELECT count() FROM whatif.map)))" 0)
wp64=$(layout p64 UInt64 stack 1) wp32=$(layout p32 UInt32 "toUInt32(stack % 4294967296)" 1) wpd=$(layout pd UInt32 sid 1)
q "CREATE TABLE whatif.hostmap (service String, host String, sid UInt32, stack UInt64) ENGINE = ReplacingMergeTree() ORDER BY (service, host, sid)" > /dev/null
q "INSERT INTO whatif.hostmap SELECT 'real', 'a', sid, stack FROM whatif.map" > /dev/null; q "OPTIMIZE TABLE whatif.hostmap FINAL" > /dev/null
nst=$(q "SELECT count() FROM whatif.map")
wmap=$(q "SELECT round(sum(data_compressed_bytes) / $nst, 2) FROM system.columns WHERE database = 'whatif' AND table = 'hostmap'")
others=$(q "SELECT table, round(sum(data_compressed_bytes) / (SELECT count() FROM stackpipe.samples), 2) FROM system.columns WHERE database = 'stackpipe' AND table != 'samples' GROUP BY table ORDER BY table" | awk '{printf "%s %s, ", $1, $2}')
q "DROP DATABASE whatif" > /dev/null
cat <<TXT
fleet-real-bench: $(basename "$IN") ($(( $(stat -c %s "$IN") / 1024 )) KB, $rows sample rows a put); medians of $RUNS runs; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)
  put, stacks new:     $(med "$put_runs") rows/s   (runs:$put_runs)
  put, stacks known:   $(med "$put2_runs") rows/s   (runs:$put2_runs)
  curl, server alone:  $(med "$refs_runs") rows/s   (runs:$refs_runs)  (beside the first put: its dictionary rows, the sample rows, their rollup rows)
  curl, server alone:  $(med "$ref_runs") rows/s   (runs:$ref_runs)  (the same sample rows and their rollup rows, RowBinary)
  put / curl, paired:  stacks new $(med "$ratio1")x (runs:$ratio1); stacks known $(med "$ratio2")x (runs:$ratio2)
  CPU per 1000 sample rows: put, stacks new $(per_k "$(med "$cpu1")") ms; put, stacks known $(per_k "$(med "$cpu2")") ms; the server, inserting curl's rows $(per_k "$rcpu") ms; reading the stream alone (pfold -b) $(per_k "$(med "$rd")") ms
  disk (lz4, after OPTIMIZE FINAL): $bpr bytes per sample row (columns' data: $cbpr)
  per column: ${percol%, }
  the other tables, bytes per sample row: ${others%, }
  other layouts of host a's rows, bytes per sample row (stack id's share): this one $wi64; 32-bit id $wi32; dense per-host id $wid, spread over 24 bits $wid24 (the map: $wmap bytes per (host, stack), $nst stacks); pairs of value columns: 64-bit id $wp64, 32-bit $wp32, dense $wpd
TXT
# One more put of the stream (host c, its stacks known), sampled by
# pcollect: put's own flame graph beside these figures.
. "$top/tests/bench/self-flame.sh"
self_flame pfleet-put pfleet put -q --service real --host c --start $S $U "$IN"
