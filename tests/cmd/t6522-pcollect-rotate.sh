#!/bin/bash
# pcollect --rotate=SECONDS -o PATTERN (issue 29, item 3): one whole
# stream per period, named by the pattern (strftime, or .YYYYmmdd-HHMMSS
# before the extension), never replacing a file; no sample lost or written
# twice between files: the files' samples add up to pcollect -v's total,
# per thread too.  Only counts are compared; the workload (gzip | xz of
# 3 MB, repeated) runs for 3 s of wall time whatever the machine's speed
# (one pass took 0.9 s on a CI machine: one file), so rotated every second
# it makes at least 2 files.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
for c in gzip xz; do
	if ! command -v $c > /dev/null; then skip "--rotate" "$c is not installed"; exit 0; fi
done
head -c 3000000 /dev/urandom > "$T/big"
# gzip | xz of the data until 3 s have passed (a second pass may start
# just before: at most ~4 s)
work='end=$(($(date +%s) + 3)); while [ "$(date +%s)" -lt $end ]; do gzip -9 < "$1" | xz -9 > /dev/null; done'
mkdir "$T/r"
TZ=UTC pcollect -v -F 199 --rotate 1 -o "$T/r/x.sp" -- sh -c "$work" sh "$T/big" \
	2> "$T/err"; rc=$?
files=$(ls "$T/r" | wc -l)
total=$(sed -n 's/^pcollect: \([0-9]*\) samples of .*/\1/p' "$T/err")
sum=0 bad=
for f in "$T"/r/*; do
	n=$(pfold --weight=count "$f" 2> /dev/null | awk '{s += $NF} END {print s + 0}') || bad="$bad $f"
	sp-dump "$f" > /dev/null 2>&1 || bad="$bad $(basename "$f")"
	sum=$((sum + n))
done
if [ $rc = 0 ] && [ "$files" -ge 2 ] && [ -z "$bad" ] && [ -n "$total" ] && [ "$sum" = "$total" ] && [ "$total" -gt 0 ]; then
	ok "--rotate 1: $files files, each a whole stream; their samples add up to -v's total ($sum = $total)"
else notok "--rotate 1: exit $rc, $files files, sum $sum, -v total ${total:-?}, unreadable:$bad"; sed 's/^/  /' "$T/err"; fi
if [ -z "$(ls "$T/r" | grep -vE '^x\.[0-9]{8}-[0-9]{6}(-[0-9]+)?\.sp$')" ] && [ -z "$(ls -A "$T/r" | grep '^\.')" ]; then
	ok "--rotate: names x.YYYYmmdd-HHMMSS.sp, no temporary left"
else notok "--rotate: names: $(ls -A "$T/r" | tr '\n' ' ')"; fi
# Per thread: the files' union is one uninterrupted stream's content.
cat "$T"/r/* | pfold --weight=count --tid 2> /dev/null | awk '{split($1, a, ";"); n[a[1]] += $NF} END {for (k in n) print k, n[k]}' | sort > "$T/per-thread"
if [ "$(awk '{s += $2} END {print s}' "$T/per-thread")" = "$total" ] && [ "$(wc -l < "$T/per-thread")" -ge 2 ]; then
	ok "--rotate: the files concatenated read as one stream: per thread $(tr '\n' ' ' < "$T/per-thread")"
else notok "--rotate: per thread: $(tr '\n' ' ' < "$T/per-thread") (total $total)"; fi

# A strftime pattern coarser than the period: -1, -2... rather than replacing.
mkdir "$T/y"
pcollect -q -F 99 --rotate 1 -o "$T/y/api-%Y.sp" -- sh -c "$work" sh "$T/big"; rc=$?
y=$(date +%Y)
n=$(ls "$T/y" | wc -l)
if [ $rc = 0 ] && [ "$n" -ge 2 ] && [ -e "$T/y/api-$y.sp" ] && [ -e "$T/y/api-$y-1.sp" ]; then
	ok "--rotate -o api-%Y.sp: $n files, api-$y.sp then api-$y-1.sp...: none replaced"
else notok "--rotate -o api-%Y.sp: exit $rc: $(ls "$T/y" | tr '\n' ' ')"; fi

pcollect --rotate 1 -d 1 -- true > /dev/null 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "^pcollect: --rotate writes one file per period: it needs -o PATTERN" "$T/err"; then
	ok "--rotate without -o: usage error, exit 2"
else notok "--rotate without -o: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect --rotate 0.5 -o "$T/z.sp" -- true 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "^pcollect: --rotate needs a number of seconds >= 1, not '0.5'" "$T/err"; then
	ok "--rotate 0.5: usage error, exit 2"
else notok "--rotate 0.5: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect --rotate 5 -o "$T/nodir/x.sp" -- true 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "nodir" "$T/err"; then ok "--rotate into a missing directory: said, exit 2"
else notok "--rotate into a missing directory: exit $rc"; sed 's/^/  /' "$T/err"; fi
