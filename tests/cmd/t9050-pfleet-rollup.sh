#!/bin/bash
# The hourly rollup and the stack dictionary's traffic, against a real
# ClickHouse server started here (its query log says what it was asked and
# sent): real programs (xz and python3 stdlib work, recorded by pcollect)
# stored as hosts; a get of whole hours of every host reads the rollup, a
# get of the same range from a second earlier reads the samples, and both
# equal pmerge of the inputs byte for byte after pfold (with labels, after
# the rollup merged, over two hours); a put of stacks the dictionary has
# sends none of their frames again.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
ch_test_server "pfleet rollup"
pfleet init $U 2> /dev/null || notok "init"
q() { ch_query "$CH_HTTP" "$1"; }

have_rec=1
t6_probe || have_rec=0
head -c 3000000 /usr/bin/perl > "$T/blob" 2> /dev/null || head -c 3000000 /bin/bash > "$T/blob"
if [ $have_rec = 1 ]; then
	pcollect -q -F 499 -o "$T/a.sp" -- xz -6 -T1 -c "$T/blob" > /dev/null 2> "$T/e" &&
	pcollect -q -F 499 -o "$T/b.sp" -- python3 -c 'import json, re, hashlib
d = [{"k": i, "v": str(i) * 10} for i in range(30000)]
for _ in range(6): s = json.dumps(d); json.loads(s); re.findall(r"\d+", s); hashlib.sha256(s.encode()).hexdigest()' 2>> "$T/e" ||
		{ notok "pcollect of xz and python3"; cat "$T/e"; have_rec=0; }
fi
if [ $have_rec = 0 ]; then # the bundled real perf recording stands in
	IN=$SP_TOP/share/demo/perf-demo.txt.gz
	pfold -b "$IN" > "$T/a.sp"; pfold -b "$IN" | pfilter -v compress > "$T/b.sp"
fi
# (a sample whose Python frames changed while it was taken has the root
# "[python frame changed]" above its thread's name, in pfold's output and
# in the store alike; how many the python3 recording has is said)
nch=$(pfold "$T/b.sp" | grep -c '^\[python frame changed\];' || true)
echo "# python3's recording: $nch stacks rooted at [python frame changed]"
S=2026-11-26T10:00:00 S2=2026-11-26T11:00:00
pfleet put -q --service s --host web-1 --label dc=a --start $S $U "$T/a.sp" 2> "$T/e1"; r1=$?
pfleet put -q --service s --host web-2 --label dc=b --start $S $U "$T/b.sp" 2> "$T/e2"; r2=$?
pfleet put -q --service s --host web-2 --label dc=b --start $S2 $U "$T/a.sp" 2> "$T/e3"; r3=$?
[ $r1$r2$r3 = 000 ] && ok "three puts (xz, python3 as two hosts, two hours)" || { notok "puts ($r1 $r2 $r3)"; cat "$T/e1" "$T/e2" "$T/e3"; }

# which table did the last get read (in t): the server's query log,
# counted before and after it (its times are whole seconds)
nlog=0
read_table() {
	local h r i
	# (the server logs a query's end after its answer is sent: on a
	# loaded machine a flush right after the answer can miss it, so the
	# count is asked again, for up to 5 s, until it moves)
	for i in $(seq 25); do
		q "SYSTEM FLUSH LOGS" > /dev/null
		h=$(q "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'SELECT stack, toFloat64%FROM stackpipe.samples_hourly %'")
		r=$(q "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'SELECT stack, toFloat64%FROM stackpipe.samples %'")
		[ $((h + r)) != "$nlog" ] && break
		sleep 0.2
	done
	case "$((h + r - nlog)) $h" in
	"1 $((nlog_h + 1))") t="FROM stackpipe.samples_hourly" ;;
	"1 $nlog_h") t="FROM stackpipe.samples" ;;
	*) t="no single query ($h $r after $nlog)" ;;
	esac
	nlog=$((h + r)) nlog_h=$h
}
nlog_h=0
both() { # NAME WANT SINCE UNTIL ARGS...: the rollup's and the samples' answers equal WANT
	local name=$1 want=$2 since=$3 until=$4; shift 4
	pfleet get --service s "$@" --since @$since --until @$until $U 2> "$T/e" | pfold > "$T/r"; read_table
	[ "$t" = "FROM stackpipe.samples_hourly" ] && ok "$name: whole hours, every host: read from the rollup" || notok "$name: read $t"
	pfleet get --service s "$@" --since @$((since - 1)) --until @$until $U | pfold > "$T/raw"; read_table
	[ "$t" = "FROM stackpipe.samples" ] && ok "$name: a second earlier: read from the samples" || notok "$name: raw read $t"
	expect_eq "$name: the rollup's answer equals pmerge of the inputs" "$want" "$T/r"
	expect_eq "$name: the samples' answer equals it too" "$want" "$T/raw"
}
H0=$(date -u -d $S +%s)
pmerge "$T/a.sp" "$T/b.sp" | pfold > "$T/w1"
both "one hour" "$T/w1" $H0 $((H0 + 3600))
pmerge "$T/a.sp" "$T/b.sp" "$T/a.sp" | pfold > "$T/w2"
both "two hours" "$T/w2" $H0 $((H0 + 7200))
pfold "$T/a.sp" > "$T/w3"
both "--label dc=a" "$T/w3" $H0 $((H0 + 7200)) --label dc=a
q "OPTIMIZE TABLE stackpipe.samples_hourly FINAL" > /dev/null
n1=$(q "SELECT count() FROM stackpipe.samples_hourly")
both "after OPTIMIZE FINAL of the rollup ($n1 rows)" "$T/w2" $H0 $((H0 + 7200))
nk=$(q "SELECT count() FROM (SELECT DISTINCT service, toStartOfHour(bucket), labels, stack, value_name FROM stackpipe.samples)")
[ "$n1" -gt 0 ] && [ "$n1" = "$nk" ] && ok "the merged rollup has a row per service, hour, labels, stack and value column ($n1)" || notok "rollup $n1 rows, $nk keys"
# a rollup that disagrees with the samples (as after a server killed
# between an insert's two writes): said, and the samples answer
q "INSERT INTO stackpipe.samples_hourly SELECT hour, service, labels, stack, value_name, unit, 1, 1, 0 FROM stackpipe.samples_hourly LIMIT 1" > /dev/null
pfleet get --service s --since @$H0 --until @$((H0 + 7200)) $U 2> "$T/e" | pfold > "$T/r"; read_table
[ "$t" = "FROM stackpipe.samples" ] && grep -q '^pfleet: warning: the hourly rollup of stackpipe disagrees with its samples in this range' "$T/e" &&
	ok "a rollup that disagrees with the samples: said, read from the samples" || { notok "stale rollup: read $t"; cat "$T/e"; }
expect_eq "... and the answer is the samples' (pmerge of the inputs)" "$T/w2" "$T/r"
# --host or --by: the samples, as before
pfleet get --service s --host 'web-*' --since @$H0 --until @$((H0 + 3600)) $U > /dev/null; read_table
[ "$t" = "FROM stackpipe.samples" ] && ok "--host GLOB: read from the samples" || notok "--host read $t"

# the dictionary: every stack sent once over all the puts
sent() { # (read until two reads 0.3 s apart agree: see read_table)
	local a b=x i
	for i in $(seq 15); do
		q "SYSTEM FLUSH LOGS" > /dev/null
		a=$(q "SELECT sum(written_rows) FROM system.query_log WHERE type = 2 AND query LIKE 'INSERT INTO stackpipe.stacks %'")
		[ "$a" = "$b" ] && break
		b=$a; sleep 0.3
	done
	echo "$a"
}
before=$(sent)
pfleet put --service s --host web-3 --start $S $U "$T/a.sp" 2> "$T/e"; rc=$?
after=$(sent)
known=$(sed -n 's/.* 0 stacks sent to the dictionary (\([0-9]*\) it had already), [0-9]* hourly rollup rows$/\1/p' "$T/e")
[ $rc = 0 ] && [ -n "$known" ] && [ "$known" -gt 0 ] && ok "a put of stacks the dictionary has: '0 stacks sent ($known it had already)'" || { notok "put web-3 (exit $rc)"; cat "$T/e"; }
[ -n "$before" ] && [ "$before" = "$after" ] && ok "... and the server received no dictionary row ($before before and after)" || notok "dictionary rows received: $before -> $after"
pfleet get --service s --host web-3 --since @$H0 --until @$((H0 + 3600)) $U | pfold > "$T/g"
expect_eq "... and its slice has every frame" "$T/w3" "$T/g"
rows=$(q "SELECT sum(rows) FROM system.parts WHERE database = 'stackpipe' AND table = 'stacks' AND active")
uniq=$(q "SELECT uniqExact(id) FROM stackpipe.stacks")
q "SYSTEM FLUSH LOGS" > /dev/null
ins=$(q "SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE 'INSERT INTO stackpipe.stacks %'")
[ "$after" = "$uniq" ] && ok "every stack was sent once over the four puts ($uniq stacks, $after rows received in $ins inserts)" || notok "sent $after rows for $uniq stacks ($rows rows in parts)"
# the man page's rebuild of a day of the rollup, as written there
read_table # (the counts caught up with the gets since)
day=$(date -u -d $S +%Y-%m-%d)
sed -n '/^To rebuild a day of the rollup/,/^\.fi/p' "$SP_TOP/share/man/man1/pfleet.1" | sed -n '/^\.nf/,/^\.fi/p' | grep -v '^\.' |
	sed "s/'DAY'/'$day'/" | awk '/^ALTER/ {print > "'"$T"'/sql1"; next} {print > "'"$T"'/sql2"}'
q "$(cat "$T/sql1")" > "$T/o" && q "$(cat "$T/sql2")" >> "$T/o"
pfleet get --service s --since @$H0 --until @$((H0 + 7200)) $U 2> "$T/e" | pfold > "$T/r"; read_table
[ -s "$T/sql2" ] && [ ! -s "$T/o" ] && [ "$t" = "FROM stackpipe.samples_hourly" ] && [ ! -s "$T/e" ] && ok "pfleet(1)'s rebuild of the day: the rollup is read again, no warning" || { notok "rebuild: $t"; cat "$T/o" "$T/e"; }
pmerge "$T/a.sp" "$T/b.sp" "$T/a.sp" "$T/a.sp" | pfold > "$T/w4"
expect_eq "... and answers as pmerge of the inputs (web-3's too)" "$T/w4" "$T/r"
# a synthetic root of every sample (pmerge --tag's, as the marker): above
# the thread's name in pfold's output and in the store alike
pmerge --tag "$T/a.sp" > "$T/tag.sp"
pfleet put -q --service tagged --host web-9 --start 2026-11-26T10:00:00 $U "$T/tag.sp" 2> "$T/e" || { notok "put of the tagged input"; cat "$T/e"; }
pfleet get --service tagged --since 2026-11-26T10:00:00 --until 2026-11-26T11:00:00 $U | pfold > "$T/r"
pfold "$T/tag.sp" > "$T/w"
grep -q '^[^;]*a\.sp;[^;]*;' "$T/w" && expect_eq "a synthetic root frame (pmerge --tag) stays the root, above the thread's name, as pfold puts it" "$T/w" "$T/r" ||
	notok "pmerge --tag wrote no tag root: $(head -c 200 "$T/w")"
# one put of several files with --service reads its binary streams into one
# profile when their value columns are the same: streams of other columns
# (and other formats) are read apart, as three puts would store them
# (the same file put twice by two puts is stored once: a batch's id is its
# rows' hash, pfleet(1) FAILURES; here every file differs)
pfold "$T/a.sp" | sed 's/^/y;/' | pfold -b > "$T/one.sp"    # (folded text's one column, "value")
pfold -b "$T/b.sp" > "$T/two.sp"
pfold "$T/a.sp" | sed 's/^/x;/' > "$T/one.folded"
pfleet put -q --service mixa --host m --start 2026-11-26T10:00:00 $U "$T/one.sp" "$T/a.sp" "$T/two.sp" "$T/one.folded" 2> "$T/e" || { notok "put of mixed columns"; cat "$T/e"; }
for f in "$T/one.sp" "$T/a.sp" "$T/two.sp" "$T/one.folded"; do pfleet put -q --service mixb --host m --start 2026-11-26T10:00:00 $U "$f"; done
cols() { q "SELECT value_name, unit, sum(value) FROM stackpipe.samples WHERE service = '$1' GROUP BY value_name, unit ORDER BY value_name"; }
cols mixa > "$T/ca"; cols mixb > "$T/cb"
[ "$(wc -l < "$T/ca")" -ge 2 ] && expect_eq "one put of streams of other value columns stores what a put of each stores ($(cut -f1 "$T/ca" | tr '\n' ' '))" "$T/cb" "$T/ca" ||
	notok "mixed columns: $(cat "$T/ca")"
