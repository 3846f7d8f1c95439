#!/bin/bash
# fleet-bench.sh — pfleet over ClickHouse against pmerge of stream files:
# measured, never asserted.
#
# The fleet is made from a real recording: `perf record -a -g -F 1999` of
# this machine for 20 s (whatever it runs, plus gcc compiling this
# project's sources, xz, gzip and python3 started here), folded by pfold; its distinct stacks are the pool that
# fleet-gen.py draws HOSTS x MINUTES profiles of STACKS distinct stacks
# from, with per-host variation (fleet-gen.py says how), each kept as a
# binary stream file hNNN/mMM.sp (pfold -b), dated at its minute.
#
# Measured, on a private clickhouse-server (127.0.0.1, its own data
# directory under tests/bench/work/fleet, 2 threads a query as this VM has
# 2 cores):
#   ingest   pfleet put of every host's 60 files, two puts at a time:
#            sample rows per second (wall clock); beside it, the server
#            alone, as RowBinary POSTed by curl, two at a time: (1) the
#            server's work of the puts: every host's sample rows in the
#            samples' key order (as put sends them), each followed by its
#            hourly rollup rows (put's: per host, hour, value column and
#            stack), into a second store of the same schema; (2) the same
#            sample rows alone into a copy of the samples table (no rollup
#            at all); (3) the same sample rows into a table with schema 2's
#            rollup, a materialized view (the rollup put now replaces)
#   stacks   the stack dictionary rows the puts sent (each put asks the
#            server which of its stacks it has: the first hosts send most)
#   disk     bytes per sample row of the samples table after OPTIMIZE FINAL
#            (all its columns), and per column; the stack dictionary and the
#            hourly rollup apart; with the server's default compression (lz4)
#            and again after restarting it with <compression> zstd level 9
#            (pfleet(1), SERVER SETTINGS) and OPTIMIZE FINAL
#   queries  medians of RUNS runs, each against pmerge of the same files:
#            one hour of the service on all hosts (to folded text: what a
#            flame graph is drawn from; read from the hourly rollup, and
#            from the samples for comparison: the same hour from a second
#            before it), the same for 10 hosts, a diff of the first and
#            second half hours (pdiff)
#   answers  pfleet's folded output equals pmerge's (the bench says so)
#
#   FLEET_HOSTS=100 FLEET_MINUTES=60 FLEET_STACKS=3000 BENCH_RUNS=3
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
export PATH=$top/bin:$PATH
HOSTS=${FLEET_HOSTS:-100} MINUTES=${FLEET_MINUTES:-60} STACKS=${FLEET_STACKS:-3000} RUNS=${BENCH_RUNS:-3}
W=$top/tests/bench/work/fleet
mkdir -p "$W"
say() { printf 'fleet-bench: %s\n' "$*" >&2; }
. "$top/tests/fleet/ch.sh"
if ! why=$(ch_available); then say "skipped: $why"; exit 0; fi
command -v perf > /dev/null || { say "skipped: perf is not installed (linux-perf)"; exit 0; }
median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s.%N; }

# ---- 1. the pool of real stacks ----
if [ ! -s "$W/pool.folded" ]; then
	say "recording the machine for 20 s (perf record -a -g) for the pool of stacks"
	head -c 20000000 /dev/urandom > "$W/rand"
	( xz -6 -T1 -c "$W/rand" > /dev/null & gzip -9 -c "$W/rand" > /dev/null &
	  for f in lib/*/*.c formats/*.c; do gcc -std=gnu11 -D_GNU_SOURCE -O2 $(for d in lib/*/ formats; do printf -- "-I%s " "$d"; done) -c -o /dev/null "$f" 2> /dev/null; done &
	  python3 -c 'import json, re, hashlib
d = [{"k": i, "v": str(i) * 10} for i in range(200000)]
for _ in range(40): s = json.dumps(d); json.loads(s); re.findall(r"\d+", s); hashlib.sha256(s.encode()).hexdigest()' & wait ) &
	perf record -q -a -g -F 1999 -o "$W/pool.data" -- sleep 20 2> /dev/null
	wait
	pfold "$W/pool.data" > "$W/pool.folded.tmp" 2> /dev/null && mv "$W/pool.folded.tmp" "$W/pool.folded"
	rm -f "$W/pool.data" "$W/rand"
fi
say "pool: $(wc -l < "$W/pool.folded") distinct stacks from a real system-wide recording"

# ---- 2. the fleet, as per-host-per-minute stream files ----
START=$(date -u -d 2026-11-26T10:00:00 +%s)
G=$W/gen-$HOSTS-$MINUTES-$STACKS
if [ ! -f "$G/done" ]; then
	rm -rf "$G"; mkdir -p "$G"
	say "generating $HOSTS hosts x $MINUTES minutes x $STACKS stacks in $G"
	python3 "$top/tests/bench/fleet-gen.py" "$W/pool.folded" "$G" "$HOSTS" "$MINUTES" "$STACKS" "$START" > "$G/HOTFN"
	find "$G" -name 'm*.folded' | sort | xargs -P2 -n 200 sh -c 'for f; do s=${f%.folded}.sp; pfold -b -o "$s" "$f" && touch -r "$f" "$s" && rm "$f"; done' sh
	touch "$G/done"
fi
HOT=$(cat "$G/HOTFN")
files=$(find -L "$G" -name 'm*.sp' | wc -l)
say "fleet: $files stream files, $(du -shL "$G" | cut -f1) on disk"

# ---- 3. a fresh server ----
rm -rf "$W/ch"
trap 'ch_stop_all || true' EXIT # (set -e: a kill of a server already gone would make the bench's status 1)
ch_start_free "$W/ch" > /dev/null
U=http://127.0.0.1:$CH_HTTP
export PFLEET_SPOOL=$W/spool TMPDIR=$W # put's per-host lock files there, not in /tmp
rm -f "$PFLEET_SPOOL"
pfleet init $U 2> /dev/null
say "clickhouse-server $(ch_query "$CH_HTTP" 'SELECT version()') on $U"

# ---- 4. ingest ----
t0=$(now)
ls -d "$G"/h* | xargs -P2 -I{} sh -c 'pfleet put -q --service api --host "$(basename "$1")" "$2" "$1"/m*.sp' sh {} "$U"
t1=$(now)
rows=$(ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.samples")
ch_query "$CH_HTTP" "SYSTEM FLUSH LOGS" > /dev/null
sent=$(ch_query "$CH_HTTP" "SELECT sum(written_rows) FROM system.query_log WHERE type = 2 AND query LIKE 'INSERT INTO stackpipe.stacks %'")
hsent=$(ch_query "$CH_HTTP" "SELECT sum(written_rows) FROM system.query_log WHERE type = 2 AND query LIKE 'INSERT INTO stackpipe.samples_hourly %'")
cols=$(ch_query "$CH_HTTP" "SELECT value_name, count() FROM stackpipe.samples GROUP BY value_name ORDER BY value_name" | awk '{printf "%s%s \"%s\"", (NR > 1 ? ", " : ""), $2, $1}')
ing=$(echo "$t1 $t0" | awk '{print $1 - $2}')
rps=$(echo "$rows $ing" | awk '{printf "%.0f", $1 / $2}')
load_ing=$(cut -d' ' -f1 /proc/loadavg)

# the references: the server alone, the same rows as RowBinary POSTed by
# curl two at a time (the hosts in two halves, each host's rows in the
# samples' key order as put sends them)
KEY="service, hour, host, stack, minute, second"
HOUR="SELECT hour, service, labels, stack, value_name, unit, sum(value), count(), toUInt32(0) FROM stackpipe.samples"
for i in 0 1; do
	ch_query "$CH_HTTP" "SELECT * FROM stackpipe.samples WHERE cityHash64(host) % 2 = $i ORDER BY $KEY FORMAT RowBinary" > "$W/rows.part.$i"
	# put's rollup rows: per host (a put's batch), hour, value column and stack
	ch_query "$CH_HTTP" "$HOUR WHERE cityHash64(host) % 2 = $i GROUP BY host, hour, service, labels, stack, value_name, unit ORDER BY host, service, hour, value_name, unit, labels, stack FORMAT RowBinary" > "$W/hour.part.$i"
done
post() { curl -fsS --data-binary @"$2" "$U/?query=INSERT%20INTO%20$1%20FORMAT%20RowBinary" > /dev/null; }
ref_ingest() { # DB.TABLE [ROLLUP-TABLE]: sample rows/s of the two parts POSTed at once into it (each with its rollup rows)
	local t0 t1
	rm -f "$W/ref.failed"
	t0=$(now)
	for i in 0 1; do ( post "$1" "$W/rows.part.$i" && { [ -z "${2:-}" ] || post "$2" "$W/hour.part.$i"; } || touch "$W/ref.failed" ) & done; wait
	t1=$(now)
	if [ -e "$W/ref.failed" ]; then echo "FAILED (the server refused an insert: $W/ch/log/server.err.log)"; return; fi
	echo "$rows $t1 $t0" | awk '{printf "%.0f", $1 / ($2 - $3)}'
}
pfleet init --database stackpipe_ref $U 2> /dev/null
ref_put=$(ref_ingest stackpipe_ref.samples stackpipe_ref.samples_hourly)
ch_query "$CH_HTTP" "DROP DATABASE stackpipe_ref" > /dev/null
ch_query "$CH_HTTP" "CREATE TABLE stackpipe.ref AS stackpipe.samples" > /dev/null
ref_plain=$(ref_ingest stackpipe.ref)
ch_query "$CH_HTTP" "DROP TABLE stackpipe.ref" > /dev/null
ch_query "$CH_HTTP" "CREATE DATABASE stackpipe_ref" > /dev/null
ch_query "$CH_HTTP" "CREATE TABLE stackpipe_ref.samples AS stackpipe.samples" > /dev/null
ch_query "$CH_HTTP" "CREATE MATERIALIZED VIEW stackpipe_ref.samples_hourly ENGINE = SummingMergeTree((value, rows)) PARTITION BY toDate(hour) ORDER BY (service, hour, value_name, unit, labels, stack) AS SELECT hour, service, labels, stack, value_name, unit, toInt64(value_hi) * 4294967296 + value3 * 16777216 + value2 * 65536 + value1 * 256 + value0 AS value, toUInt64(1) AS rows FROM stackpipe_ref.samples" > /dev/null
ref_view=$(ref_ingest stackpipe_ref.samples)
ch_query "$CH_HTTP" "DROP DATABASE stackpipe_ref" > /dev/null
load_ref=$(cut -d' ' -f1 /proc/loadavg)
rm -f "$W/rows.part."* "$W/hour.part."*

H1="--since @$START --until @$((START + MINUTES * 60))"
time_runs() { # NAME CMD: median wall seconds of RUNS runs
	local name=$1 i t0 t1; shift
	for i in $(seq "$RUNS"); do
		t0=$(now); eval "$*" > "$W/out.$name"; t1=$(now)
		echo "$t1 $t0" | awk '{print $1 - $2}'
	done | median
}
# the hour from the rollup as the background merges left it
q_unmerged=$(time_runs fu "pfleet get --service api $H1 $U | pfold")
hrows0=$(ch_query "$CH_HTTP" "SELECT sum(rows) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples_hourly'")

# ---- 5. bytes on disk ----
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.samples FINAL" > /dev/null
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.stacks FINAL" > /dev/null
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.samples_hourly FINAL" > /dev/null
bpr=$(ch_query "$CH_HTTP" "SELECT sum(bytes_on_disk) / sum(rows) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples'")
hrows=$(ch_query "$CH_HTTP" "SELECT sum(rows) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples_hourly'")
hbytes=$(ch_query "$CH_HTTP" "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples_hourly'")
sbytes=$(ch_query "$CH_HTTP" "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'stacks'")
nstacks=$(ch_query "$CH_HTTP" "SELECT count() FROM stackpipe.stacks")
percol=$(ch_query "$CH_HTTP" "SELECT name, round(data_compressed_bytes / $rows, 3) FROM system.columns WHERE database = 'stackpipe' AND table = 'samples' AND default_kind != 'ALIAS' ORDER BY data_compressed_bytes DESC" | awk '{printf "%s %s, ", $1, $2}')
sbytes_files=$(du -sbL "$G" | cut -f1)
# the same parts with zstd: the server restarted with <compression>
ch_stop "$W/ch" || true
sed -i 's|</remote_servers>|</remote_servers><compression><case><min_part_size>0</min_part_size><min_part_size_ratio>0</min_part_size_ratio><method>zstd</method><level>9</level></case></compression>|' "$W/ch/config.xml"
"$(ch_bin)" --config-file="$W/ch/config.xml" > "$W/ch/log/stdout" 2>&1 &
echo $! > "$W/ch/pid"
for i in $(seq 600); do curl -fsS "$U/ping" > /dev/null 2>&1 && break; sleep 0.1; done
ch_query "$CH_HTTP" "OPTIMIZE TABLE stackpipe.samples FINAL" > /dev/null
zbpr=$(ch_query "$CH_HTTP" "SELECT sum(bytes_on_disk) / sum(rows) FROM system.parts WHERE active AND database = 'stackpipe' AND table = 'samples'")
zpercol=$(ch_query "$CH_HTTP" "SELECT name, round(data_compressed_bytes / $rows, 3) FROM system.columns WHERE database = 'stackpipe' AND table = 'samples' AND default_kind != 'ALIAS' ORDER BY data_compressed_bytes DESC" | awk '{printf "%s %s, ", $1, $2}')

# ---- 6. queries, each beside pmerge of the same files ----
HALF=$((START + MINUTES * 30))
A="--since @$START --until @$HALF" B="--since @$HALF --until @$((START + MINUTES * 60))"
allf=$(echo "$G"/h*/m*.sp)
subf=$(echo "$G"/h00?/m*.sp)
firstf=$(for m in $(seq 0 $((MINUTES / 2 - 1))); do echo "$G"/h*/m$(printf %02d $m).sp; done | tr '\n' ' ')
secondf=$(for m in $(seq $((MINUTES / 2)) $((MINUTES - 1))); do echo "$G"/h*/m$(printf %02d $m).sp; done | tr '\n' ' ')
q_all=$(time_runs fa "pfleet get --service api $H1 $U | pfold")
q_raw=$(time_runs fr "pfleet get --service api --since @$((START - 1)) --until @$((START + MINUTES * 60)) $U | pfold")
m_all=$(time_runs ma "pmerge --folded $allf")
q_sub=$(time_runs fs "pfleet get --service api --host 'h00?' $H1 $U | pfold")
m_sub=$(time_runs ms "pmerge --folded $subf")
q_diff=$(time_runs fd "pdiff -O folded <(pfleet get --service api $A $U) <(pfleet get --service api $B $U)")
m_diff=$(time_runs md "pdiff <(pmerge --folded $firstf) <(pmerge --folded $secondf)")
q_svg=$(time_runs fg "pfleet get --service api $H1 $U | psvg")
same=""
for p in u r; do cmp -s "$W/out.f$p" "$W/out.ma" && same="$same $p:same" || same="$same $p:DIFFERENT"; done
for p in a s d; do cmp -s "$W/out.f$p" "$W/out.m$p" && same="$same $p:same" || same="$same $p:DIFFERENT"; done

# ---- 7. the figures ----
cat <<TXT
fleet-bench: $HOSTS hosts x $MINUTES min x $STACKS stacks/min ($files stream files, $(( sbytes_files / 1048576 )) MB),
  pool of $(wc -l < "$W/pool.folded") real stacks; medians of $RUNS runs; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)
  ingest:        $rows sample rows (rows per value column: $cols) in ${ing} s = $rps rows/s
                 (pfleet put, 2 at a time; load $load_ing after it), with $hsent hourly rollup rows
                 the server alone, the same rows POSTed as RowBinary by curl, 2 at a time (load $load_ref after):
                 $ref_put rows/s as put sends them (in key order, with put's rollup rows),
                 $ref_plain rows/s into a table without a rollup, $ref_view rows/s with schema 2's rollup view
                 stack dictionary rows sent: $sent for $nstacks distinct stacks
  disk (lz4):    $(printf %.2f "$bpr") bytes per sample row (samples table after OPTIMIZE FINAL);
                 per column: $percol
  disk (zstd 9): $(printf %.2f "$zbpr") bytes per sample row; per column: $zpercol
                 stack dictionary: $nstacks stacks, $sbytes bytes; hourly rollup: $hrows rows, $hbytes bytes (lz4)
  queries on the zstd parts; the rollup after OPTIMIZE FINAL ($hrows0 rows as the background merges left it: ${q_unmerged} s)
  1 hour, all hosts:  pfleet get | pfold ${q_all} s (rollup; from the samples ${q_raw} s)   pmerge --folded ${m_all} s   (get | psvg ${q_svg} s)
  1 hour, 10 hosts:   pfleet get | pfold ${q_sub} s   pmerge --folded ${m_sub} s
  diff of half hours: pdiff of 2 gets ${q_diff} s   pdiff of 2 pmerges ${m_diff} s
  answers (folded text, pfleet vs pmerge):$same   (slow hosts' hot function: $HOT)
TXT
