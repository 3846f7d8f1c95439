#!/bin/bash
# fleet-warm-bench.sh — what `pcollect -a` costs once warm, beside
# `perf record -a -g` in the same paired runs; measured, never asserted.
#
# A mixed load of real programs (about 1.5 busy CPUs at most): xz -6
# compressing a file over and over, python3 doing json, a python3 HTTP
# server asleep in accept and a few sleeping shells.  Then RUNS pairs, in
# alternating order: `pcollect -a -F HZ -d SECS -o x.sp` and
# `perf record -a -g -F HZ -o p.data -- sleep SECS`.  Each tool's own CPU
# time (utime + stime of its process, /proc/PID/stat) is read at START
# seconds and at SECS - 0.5 s; /usr/bin/time gives the whole run (with
# the children, and perf's build-id pass at its end).  Printed: medians
# over the runs of
#   start  CPU seconds in the first START seconds,
#   warm   CPU time from START to SECS - 0.5 s, as a % of one CPU,
#   whole  CPU time of the whole run, as a % of one CPU over its wall time.
#
# With PCOLLECT_REF=another/pcollect (an older build), that one too in each
# run: a change side by side with the build before it.
#
#   SECS=20 RUNS=5 HZ=49 START=2 PCOLLECT=bin/pcollect PCOLLECT_REF=   (environment)
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
SECS=${SECS:-20}
RUNS=${RUNS:-5}
HZ=${HZ:-49}
START=${START:-2}
PC=${PCOLLECT:-$top/bin/pcollect}
say() { printf '%s\n' "$*"; }
[ -x "$PC" ] || { say "fleet-warm-bench: $PC not built (run: make)"; exit 2; }
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	say "fleet-warm-bench: skipped: -a needs root or kernel.perf_event_paranoid <= 0"
	exit 0
fi
[ -x /usr/bin/time ] || { say "fleet-warm-bench: /usr/bin/time missing (apt-get install time)"; exit 2; }
have_perf=0
W=$(mktemp -d)
if command -v perf > /dev/null && perf record -q -a -o "$W/p.data" -- true > /dev/null 2>&1; then have_perf=1; fi
pids=()
cleanup() {
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2> /dev/null || :
	wait 2> /dev/null || :
	rm -rf "$W"
}
trap cleanup EXIT

# ---- the load ----
head -c 3000000 /dev/urandom | base64 > "$W/data"
cat > "$W/load.py" << 'PY'
import json, time
doc = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)], "v": i * 0.5} for i in range(3000)]
while True:
    t = time.monotonic()
    while time.monotonic() - t < 0.05:
        json.loads(json.dumps(doc))
    time.sleep(0.05)  # about half a CPU
PY
python3 "$W/load.py" & pids+=($!)
sh -c 'while :; do xz -6 -T1 -c "$1" > /dev/null; done' sh "$W/data" & pids+=($!)
python3 -m http.server --bind 127.0.0.1 0 > /dev/null 2>&1 & pids+=($!)
for _ in 1 2 3 4 5; do sleep 3600 & pids+=($!); done
sleep 1
running=$(ps -e --no-headers | wc -l)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2> /dev/null || echo -; }
hz=$(getconf CLK_TCK)
# one run: NAME CMD... -> a line "start_s warm_pct whole_pct" in $W/NAME
one() {
	local name=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$W/t" "$@" > /dev/null 2> "$W/err" &
	local tp=$! p=
	for _ in $(seq 50); do
		p=$(pgrep -P "$tp" | head -1) && [ -n "$p" ] && break
		sleep 0.02
	done
	local t0 w0 w1 e0 e1
	t0=$(date +%s.%N)
	sleep "$START"
	w0=$(ticks "$p") e0=$(date +%s.%N)
	sleep "$(awk -v s="$SECS" -v a="$START" 'BEGIN { print s - a - 0.5 }')"
	w1=$(ticks "$p") e1=$(date +%s.%N)
	wait "$tp" || { cat "$W/err"; exit 2; }
	cat "$W/err" >> "$W/errs"
	awk -v w0="$w0" -v w1="$w1" -v e0="$e0" -v e1="$e1" -v t0="$t0" -v hz="$hz" '
		{ printf "%.3f %.3f %.3f\n", w0 / hz, (w1 - w0) / hz / (e1 - e0) * 100, ($1 + $2) / $3 * 100 }' "$W/t" >> "$W/$name"
}
for r in $(seq "$RUNS"); do
	pc() { one pc "$PC" -a -v -F "$HZ" -d "$SECS" -o "$W/x.sp"; }
	pf() { [ $have_perf = 0 ] || one perf perf record -q -a -g -F "$HZ" -o "$W/p.data" -- sleep "$SECS"; }
	ref() { [ -z "${PCOLLECT_REF:-}" ] || one ref "$PCOLLECT_REF" -a -v -F "$HZ" -d "$SECS" -o "$W/x.sp"; }
	if [ $((r % 2)) = 1 ]; then pc; pf; ref; else ref; pf; pc; fi
done

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$W/$1" | median; }
say "# pcollect -a once warm: $(uname -r), $(nproc) CPUs, $running processes, -F $HZ, $SECS s runs," \
	"median of $RUNS paired runs (alternating order), load average $load0 at the start," \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the end"
say ""
printf '| %-30s | %14s | %16s | %16s |\n' "collector" "start: CPU s" "warm: % of 1 CPU" "whole: % of 1 CPU"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 32))" "$(printf -- '-%.0s' $(seq 16))" "$(printf -- '-%.0s' $(seq 18))" "$(printf -- '-%.0s' $(seq 18))"
row() { [ -s "$W/$2" ] && printf '| %-30s | %14.2f | %16.2f | %16.2f |\n' "$1" "$(col "$2" 1)" "$(col "$2" 2)" "$(col "$2" 3)" || :; }
row "pcollect -a (dwarf)" pc
row "pcollect -a, PCOLLECT_REF" ref
row "perf record -a -g" perf
[ $have_perf = 1 ] || say "(perf is not installed or not permitted: no perf row)"
say "(start: the first $START s; warm: from $START s to $SECS - 0.5 s, /proc/PID/stat; whole: /usr/bin/time)"
say "each run, pcollect (start s, warm %, whole %): $(tr '\n' ';' < "$W/pc")"
[ -z "${PCOLLECT_REF:-}" ] || say "each run, PCOLLECT_REF: $(tr '\n' ';' < "$W/ref")"
[ $have_perf = 0 ] || say "each run, perf: $(tr '\n' ';' < "$W/perf")"
grep -h 'samples of' "$W/errs" | head -3 | sed 's/^/  /'
