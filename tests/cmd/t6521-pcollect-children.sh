#!/bin/bash
# pcollect --children (issue 29, item 3): with -p, the processes the target
# forked before pcollect attached (python3's multiprocessing.Pool workers;
# the gzip and xz of `sh -c 'gzip -9 < big | xz -9 > /dev/null'`), each under
# its own root (pfold --pid); without it, the parent only.  With a COMMAND,
# the end waits for the children it left running.
# Load: the workers run for 60 s and are killed; sampling lasts 3 s at
# 199 Hz; a pipeline member that got less than 3 ticks of CPU in the window
# (blocked on its pipe on a loaded machine) is not required to show.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_probe || exit 0
P= S= G= X= w1= w2=
trap '{ kill -9 $P $w1 $w2 $S $G $X; wait; } 2>/dev/null; sp_cleanup' EXIT

# roots FILE: the root frames of a stream, "comm-PID", one per line.
roots() { pfold --pid --weight=count "$1" 2> /dev/null | cut -d';' -f1 | sort -u; }

if ! command -v python3 > /dev/null; then
	skip "--children multiprocessing.Pool" "python3 is not installed"
elif ! t6_spawn "$T/pool.ready" python3 "$SP_TOP/tests/progs/t652-pool.py" 60; then
	notok "--children: the Pool program did not start"
else
	P=$TPID
	read -r _ w1 w2 < "$T/pool.ready"
	if [ -z "$w2" ]; then notok "--children: the Pool's workers are not named in its ready line"; fi
	pcollect -F 199 -d 3 -p "$P" --children -o "$T/kids.sp" 2> "$T/err"; rc=$?
	pfold --pid --weight=count "$T/kids.sp" > "$T/kids.folded" 2> /dev/null
	if [ $rc = 0 ] && grep -q "^[^;]*-$P;.*parent_spin" "$T/kids.folded" &&
		grep -q "^[^;]*-$w1;.*worker_hash" "$T/kids.folded" && grep -q "^[^;]*-$w2;.*worker_hash" "$T/kids.folded"; then
		ok "-p POOL --children: the parent's parent_spin and both workers' worker_hash, each under its own root ($(roots "$T/kids.sp" | tr '\n' ' '))"
	else notok "-p POOL --children: exit $rc, roots: $(roots "$T/kids.sp" | tr '\n' ' ') (workers $w1 $w2)"; sed 's/^/  /' "$T/err"; fi
	if grep -q "^[^;]*-$w1;.*\(sha256\|libcrypto\|deflate\|libz\)" "$T/kids.folded"; then
		ok "-p POOL --children: a worker's native hashlib/zlib frames under its Python frames"
	else notok "-p POOL --children: no hashlib/zlib frames in worker $w1"; fi
	if sp-dump "$T/kids.sp" | grep -qx "meta pids=$P,$w1,$w2" || sp-dump "$T/kids.sp" | grep -qx "meta pids=$P,$w2,$w1"; then
		ok "-p POOL --children: the pids found at the attach in the metadata"
	else notok "-p POOL --children: metadata"; sp-dump "$T/kids.sp" | grep '^meta pids' | sed 's/^/  /'; fi
	pcollect -F 199 -d 2 -p "$P" -o "$T/parent.sp" 2> "$T/err"; rc=$?
	pfold --pid --weight=count "$T/parent.sp" > "$T/parent.folded" 2> /dev/null
	if [ $rc = 0 ] && grep -q "^[^;]*-$P;.*parent_spin" "$T/parent.folded" &&
		[ "$(roots "$T/parent.sp" | grep -cv -- "-$P$")" = 0 ] && ! grep -q worker_hash "$T/parent.folded"; then
		ok "-p POOL without --children: the parent only"
	else notok "-p POOL without --children: exit $rc, roots: $(roots "$T/parent.sp" | tr '\n' ' ')"; sed 's/^/  /' "$T/err"; fi
	kill -9 "$P" $w1 $w2 2> /dev/null; wait "$P" 2> /dev/null; P= w1= w2=
fi

for c in gzip xz; do
	if ! command -v $c > /dev/null; then skip "--children sh -c 'gzip | xz'" "$c is not installed"; exit 0; fi
done
head -c 20000000 /dev/urandom > "$T/big"
sh -c 'gzip -9 < "$1" | xz -9 > /dev/null' sh "$T/big" & S=$!
for _ in $(seq 100); do
	G=$(pgrep -P "$S" -x gzip); X=$(pgrep -P "$S" -x xz)
	[ -n "$G" ] && [ -n "$X" ] && break
	sleep 0.1
done
if [ -z "$G" ] || [ -z "$X" ]; then notok "--children: the sh pipeline did not start"; exit 0; fi
g0=$(t6_cpu "$G"); x0=$(t6_cpu "$X")
pcollect -F 199 -d 3 -p "$S" --children -o "$T/pipe.sp" 2> "$T/err"; rc=$?
g1=$(t6_cpu "$G"); x1=$(t6_cpu "$X")
r=$(roots "$T/pipe.sp" | tr '\n' ' ')
pfold --pid --weight=count "$T/pipe.sp" > "$T/pipe.folded" 2> /dev/null
want=
[ $((x1 - x0)) -ge 3 ] && want="$want xz-$X"
[ $((g1 - g0)) -ge 3 ] && want="$want gzip-$G"
miss=
for w in $want; do grep -q "^$w;" "$T/pipe.folded" || miss="$miss $w"; done
if [ $rc = 0 ] && [ -n "$want" ] && [ -z "$miss" ] && grep -q "^xz-$X;.*lzma" "$T/pipe.folded" &&
	[ "$(roots "$T/pipe.sp" | grep -cvE -- "^(sh-$S|gzip-$G|xz-$X)$")" = 0 ]; then
	ok "-p SH --children: the pipeline's processes under their own roots ($r; CPU ticks gzip $((g1 - g0)), xz $((x1 - x0)))"
else notok "-p SH --children: exit $rc, roots: $r, missing:$miss (CPU ticks gzip $((g1 - g0)), xz $((x1 - x0)))"; sed 's/^/  /' "$T/err"; fi
pcollect -F 199 -d 1 -p "$S" -o "$T/sh.sp" 2> "$T/err"; rc=$?
if [ $rc = 1 ] && [ -z "$(roots "$T/sh.sp")" ] && grep -q "^pcollect: no samples: process $S used" "$T/err"; then
	ok "-p SH without --children: sh only (waiting: no samples, exit 1)"
else notok "-p SH without --children: exit $rc, roots: $(roots "$T/sh.sp" | tr '\n' ' ')"; sed 's/^/  /' "$T/err"; fi
kill -9 "$G" "$X" "$S" 2> /dev/null; wait "$S" 2> /dev/null; S= G= X=

# COMMAND --children: the end waits for the child the command left running.
if command -v python3 > /dev/null; then
	pcollect -F 199 --children -o "$T/bg.sp" -- sh -c 'python3 "$1" 3 > /dev/null & exit 0' sh \
		"$SP_TOP/tests/progs/t652-spin.py" 2> "$T/err"; rc=$?
	if [ $rc = 0 ] && roots "$T/bg.sp" | grep -qE '^(MainThread|python[0-9.]*)-'; then
		ok "COMMAND --children: the child left running after the command's exit is sampled until its end"
	else notok "COMMAND --children: exit $rc"; sed 's/^/  /' "$T/err"; fi
fi
