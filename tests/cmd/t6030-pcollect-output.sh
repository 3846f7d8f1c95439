#!/bin/bash
# pcollect's output file and write errors (issue 10, items 2 and 6): -o is
# a temporary renamed at the end, so an error, SIGINT/SIGTERM before any
# sample, or a SIGKILL leave the old file as it was; write errors name the
# output once (-o /dev/full, > /dev/full, also with --snapshot); a usage
# error about -p says one thing.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build shares t6-shares.c -O2 -g -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0
if ! t6_start shares 0.3 wait; then notok "output: the target did not start"; exit 0; fi
trap 'kill -9 $TPID 2>/dev/null; sp_cleanup' EXIT
mkdir "$T/d"
printf 'precious\n' > "$T/precious"

# An error leaves the old file (was: truncated to 0 bytes).
cp "$T/precious" "$T/d/keep.sp"
pcollect -p 999999 -d 1 -o "$T/d/keep.sp" 2> "$T/err"; rc=$?
if [ $rc = 2 ] && cmp -s "$T/precious" "$T/d/keep.sp" && [ "$(ls -A "$T/d" | wc -l)" = 1 ]; then
	ok "-o: 'no process' leaves the old file as it was, no temporary beside it"
else notok "-o: no process: exit $rc, file now $(wc -c < "$T/d/keep.sp") bytes, $(ls -A "$T/d" | wc -l) files"; fi
pcollect -o "$T/d/keep.sp" -- "$T/no-such-command" 2> "$T/err"; rc=$?
if [ $rc = 127 ] && cmp -s "$T/precious" "$T/d/keep.sp" && [ "$(ls -A "$T/d" | wc -l)" = 1 ]; then
	ok "-o: a command that cannot run leaves the old file as it was"
else notok "-o: command not found: exit $rc, file now $(wc -c < "$T/d/keep.sp") bytes"; fi

# Success replaces it, keeping its permissions.
chmod 640 "$T/d/keep.sp"
pcollect -p "$TPID" -d 0.5 -F 199 -o "$T/d/keep.sp" 2> "$T/err"; rc=$?
if [ $rc = 0 ] && sp-dump "$T/d/keep.sp" > /dev/null 2>&1 && [ "$(stat -c %a "$T/d/keep.sp")" = 640 ] &&
	[ "$(ls -A "$T/d" | wc -l)" = 1 ]; then
	ok "-o: a complete run renames a complete stream over the file, mode 640 kept"
else notok "-o: complete run: exit $rc, mode $(stat -c %a "$T/d/keep.sp"), $(ls -A "$T/d")"; sed 's/^/  /' "$T/err"; fi

# flowing NAME: wait (up to 15 s) until samples are flowing: the temporary
# beside $T/d/NAME.sp grows past 2000 bytes.  Not a fixed sleep: ASan on a
# loaded machine (load 14) had not sampled after 1 s, and a SIGINT before
# any sample rightly exits 1 (as t6010 waits).
flowing() {
	for _ in $(seq 150); do
		[ "$(cat "$T"/d/.$1.sp.* 2>/dev/null | wc -c)" -gt 2000 ] && return 0
		sleep 0.1
	done
}

# SIGINT: the trailer is written, then the rename.
cp "$T/precious" "$T/d/keep.sp"
pcollect -p "$TPID" -F 199 -o "$T/d/keep.sp" 2> /dev/null &
pc=$!
flowing keep
if cmp -s "$T/precious" "$T/d/keep.sp"; then ok "-o: while running, the old file is still there"
else notok "-o: while running, the file was already replaced"; fi
kill -INT $pc; wait $pc; rc=$?
if [ $rc = 0 ] && sp-dump "$T/d/keep.sp" > /dev/null 2>&1 && [ "$(ls -A "$T/d" | wc -l)" = 1 ]; then
	ok "-o: SIGINT ends with a complete stream in the file"
else notok "-o: SIGINT: exit $rc, $(ls -A "$T/d")"; fi

# SIGKILL: nothing can be written, the old file stays.
cp "$T/precious" "$T/d/keep.sp"
pcollect -p "$TPID" -F 199 -o "$T/d/keep.sp" 2> /dev/null &
pc=$!
flowing keep
kill -KILL $pc; wait $pc 2>/dev/null
if cmp -s "$T/precious" "$T/d/keep.sp"; then ok "-o: SIGKILL leaves the old file as it was"
else notok "-o: SIGKILL: the file now holds $(wc -c < "$T/d/keep.sp") bytes"; fi
rm -f "$T"/d/.keep.sp.*

# --no-rename: the file grows in place, readable while pcollect runs.
pcollect -p "$TPID" -F 199 --no-rename -o "$T/d/grow.sp" 2> /dev/null &
pc=$!
for _ in $(seq 150); do [ "$(stat -c %s "$T/d/grow.sp" 2>/dev/null || echo 0)" -gt 2000 ] && break; sleep 0.1; done
n=$(stat -c %s "$T/d/grow.sp" 2>/dev/null || echo 0)
kill -INT $pc; wait $pc
if [ "$n" -gt 0 ] && sp-dump "$T/d/grow.sp" > /dev/null 2>&1 && [ "$(ls -A "$T/d" | grep -c grow)" = 1 ]; then
	ok "--no-rename: the file itself grows while sampling ($n bytes before the SIGINT), complete at the end"
else notok "--no-rename: $n bytes while running"; fi

# Write errors: one line naming the output (was 'standard output' for -o,
# 'unknown error' for --snapshot).
pcollect -p "$TPID" -d 0.3 -o /dev/full 2> "$T/err"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qx 'pcollect: write error on /dev/full: No space left on device' "$T/err"; then
	ok "-o /dev/full: one message naming /dev/full"
else notok "-o /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
pcollect -p "$TPID" -d 0.3 > /dev/full 2> "$T/err"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qx 'pcollect: write error on standard output: No space left on device' "$T/err"; then
	ok "> /dev/full: one message naming standard output"
else notok "> /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
for f in text folded stream; do
	pcollect --snapshot -p "$TPID" -O $f > /dev/full 2> "$T/err"; rc=$?
	if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qx 'pcollect: write error on standard output: No space left on device' "$T/err"; then
		ok "--snapshot -O $f > /dev/full: one message naming standard output and why"
	else notok "--snapshot -O $f > /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
done
pcollect --snapshot -p "$TPID" -c 2 -i 0.1 -o /dev/full 2> "$T/err"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qx 'pcollect: write error on /dev/full: No space left on device' "$T/err"; then
	ok "--snapshot -o /dev/full: one message naming /dev/full"
else notok "--snapshot -o /dev/full: exit $rc"; sed 's/^/  /' "$T/err"; fi
cp "$T/precious" "$T/d/snap.txt"
pcollect --snapshot -p 999999 -o "$T/d/snap.txt" 2> /dev/null
pcollect --snapshot -p "$TPID" -o "$T/d/snap2.txt" 2> /dev/null
if cmp -s "$T/precious" "$T/d/snap.txt" && grep -q '^thread ' "$T/d/snap2.txt"; then
	ok "--snapshot -o: an error leaves the old file, success writes it"
else notok "--snapshot -o: $(head -c 100 "$T/d/snap.txt")"; fi

# -p with no value: one message, not two that contradict each other.
pcollect -p -d 1 2> "$T/err"; rc=$?
if [ $rc = 2 ] && [ "$(grep -c '^pcollect: ' "$T/err")" = 1 ] && grep -q "^pcollect: -p needs a process id, not '-d'" "$T/err"; then
	ok "-p -d 1: one message (-p needs a process id)"
else notok "-p -d 1: exit $rc"; grep '^pcollect' "$T/err" | sed 's/^/  /'; fi
