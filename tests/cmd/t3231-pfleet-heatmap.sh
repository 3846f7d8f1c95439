#!/bin/bash
# The fleet's heat map from a real store: a private clickhouse-server
# (tests/fleet/ch.sh), recordings of real programs (xz, gzip, python3's
# json and zlib, by pcollect) stored as hosts web-1, web-2, web-10 over
# three minutes, then pfleet get --by host --by time | psvg --heatmap (the
# hosts map, chosen by itself for pfleet's streams).  Every cell equals the
# per-host sum of that minute's slice asked of the store on its own (pfleet
# get --by host --since M --until M+1 | pfold, summed here with awk); the
# --function shares likewise; in headless Chromium, a rectangle of cells
# selected with two clicks draws exactly that slice's stacks
# (tests/browser/fleetheat.test.js).
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/fleet/ch.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
cells() { python3 "$SP_TOP/tests/cmd/t323-cells.py" "$@" | LC_ALL=C sort; }
if ! command -v python3 > /dev/null; then skip "pfleet heat map" "python3 is not installed (it reads the SVG's cells)"; exit 0; fi
ch_test_server "pfleet heat map"
pfleet init $U 2> "$T/e" || { notok "pfleet init"; cat "$T/e"; exit 0; }

# real programs nobody here wrote
head -c 2000000 /usr/bin/perl > "$T/blob" 2> /dev/null || head -c 2000000 /bin/bash > "$T/blob"
if t6_probe; then
	pcollect -q -F 499 -o "$T/r0.sp" -- xz -6 -T1 -c "$T/blob" > /dev/null 2> "$T/e" &&
	pcollect -q -F 499 -o "$T/r1.sp" -- gzip -9 -c "$T/blob" > /dev/null 2>> "$T/e" &&
	pcollect -q -F 499 -o "$T/r2.sp" -- python3 -c 'import json, zlib, sys
d = [{"k": i, "v": str(i) * 20} for i in range(60000)]
for _ in range(3): zlib.compress(json.dumps(d).encode(), 9)' 2>> "$T/e" || { notok "pcollect of xz, gzip, python3"; cat "$T/e"; exit 0; }
else # the bundled real perf recording stands in (t6_probe said why)
	for i in 0 1 2; do pfold -b "$SP_TOP/share/demo/perf-demo.txt.gz" > "$T/r$i.sp"; done
fi
# hosts x minutes 10:00 .. 10:02, each a different recording
k=0
for m in 0 1 2; do
	for h in 1 2 10; do
		pfleet put -q --service comp --host web-$h --start 2026-11-26T10:0$m:05 $U "$T/r$((k % 3)).sp" 2>> "$T/put" || { notok "put web-$h 10:0$m"; cat "$T/put"; exit 0; }
		k=$((k + 1))
	done
	k=$((k + 1))
done
ok "9 recordings of xz, gzip and python3 stored as web-1, web-2, web-10 x 3 minutes"
R="--service comp --since 2026-11-26T10:00 --until 2026-11-26T10:03"
pfleet get $R --by host --by time $U > "$T/f.sp" 2> "$T/e"; rc=$?
expect_rc "pfleet get --by host --by time: exit 0" 0 $rc
psvg --heatmap -o "$T/f.svg" "$T/f.sp" 2> "$T/e"; rc=$?
expect_rc "psvg --heatmap of it: exit 0" 0 $rc
grep -q '^var spheat={v:1,mode:"hosts",' "$T/f.svg" && ok "pfleet's stream: the hosts map without being asked" || notok "auto: hosts"
grep -q 'rowNames:\["web-1","web-2","web-10"\]' "$T/f.svg" && grep -q '3 hosts x 3 buckets of 60 s from 2026-11-26 10:00:00 UTC' "$T/f.svg" &&
	grep -q '>10:01</text>' "$T/f.svg" && ok "rows web-1, web-2, web-10 (in that order); 3 one-minute buckets labelled by UTC time" ||
	{ notok "rows and buckets"; grep -o 'rowNames:[^]]*]' "$T/f.svg"; }

# each minute's slice asked of the store on its own, summed per host from pfold's output
t0=$(date -u -d 2026-11-26T10:00:00Z +%s)
F=$(pfold "$T/r0.sp" | sort -t' ' -k2 -n | tail -1 | sed 's/ [0-9]*$//; s/.*;//')
for w in period samples; do
	: > "$T/want"
	for m in 0 1 2; do
		pfleet get --service comp --by host --since 2026-11-26T10:0$m --until 2026-11-26T10:0$((m + 1)) $U | pfold --weight=$w |
			awk -v t=$((t0 + 60 * m)) -v f="$F" '{ v = $NF; s = substr($0, 1, length($0) - length(v) - 1); n = split(s, a, ";")
				hit = 0; for (i = 2; i <= n; i++) if (a[i] == f) hit = 1
				w[a[1]] += v; if (hit) fw[a[1]] += v }
				END { for (h in w) printf "%s %d %d %d\n", h, t, w[h], fw[h] }' >> "$T/want"
	done
	LC_ALL=C sort -o "$T/want" "$T/want"
	psvg --heatmap --weight=$w --function="$F" -o "$T/fw.svg" "$T/f.sp" 2> "$T/e"
	cells "$T/fw.svg" "$F" > "$T/got"
	if [ "$(wc -l < "$T/want")" = 9 ] && cmp -s "$T/want" "$T/got"; then
		ok "--weight=$w: all 9 cells = each minute's per-host sums (pfleet get --by host --since M | pfold), and the share of $F"; else
		notok "--weight=$w cells"; diff "$T/want" "$T/got" | head -10; fi
done

# the browser: web-2 .. web-10 x 10:01 .. 10:02, two clicks
browser_ready "fleet heat map browser tests" || exit 0
for h in web-2 web-10; do pfleet get --service comp --by host --host $h --since 2026-11-26T10:01 --until 2026-11-26T10:03 $U | pfold --weight=period; done > "$T/slice.folded"
(cd "$SP_TOP/tests/browser" && timeout 300 node fleetheat.test.js "$T/f.svg" web-2 web-10 1 2 "$T/slice.folded" \
	"web-2 .. web-10 (2 hosts), 10:01 .. 10:03 UTC") 2>&1
[ $? = 124 ] && notok "fleet heat map browser tests timed out"
exit 0
