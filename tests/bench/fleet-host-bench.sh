#!/bin/bash
# fleet-host-bench.sh — what `pcollect -a` (every process of the machine)
# costs at a fleet rate, measured, never asserted.
#
# The machine gets NPROC real processes for the run: mostly sleeping ones
# (sleep, cat on a pipe, a few python3 interpreters asleep in time.sleep)
# and three busy real programs so that there are samples to unwind and
# name: python3 doing stdlib work (json, hashlib, re, zlib), gzip -9 and
# xz -6 compressing a file over and over.  Over the same processes,
# interleaved, RUNS times each for SECS seconds at -F HZ:
#   pcollect -a --call-graph dwarf (the default), the same with --no-inline
#   (no look-up of inlined functions in DWARF), pcollect -a --call-graph fp,
#   perf record -a -g (fp), perf record -a --call-graph dwarf
# and the collector's own CPU time (user + system, /usr/bin/time: the
# process and its children; perf record's includes its build-id pass at
# the end) as a percentage of one CPU over the run, median of RUNS.  The
# kernel's own work at each sample (copying the stack) is charged to the
# sampled process, for every collector alike.
#
#   NPROC=200 SECS=20 RUNS=3 HZ=49 PCOLLECT=bin/pcollect   (environment)
# Exits non-zero only when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
NPROC=${NPROC:-200}
SECS=${SECS:-20}
RUNS=${RUNS:-3}
HZ=${HZ:-49}
PC=${PCOLLECT:-$top/bin/pcollect}
say() { printf '%s\n' "$*"; }
[ -x "$PC" ] || { say "fleet-host-bench: $PC not built (run: make)"; exit 2; }
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	say "fleet-host-bench: skipped: -a needs root or kernel.perf_event_paranoid <= 0"
	exit 0
fi
[ -x /usr/bin/time ] || { say "fleet-host-bench: /usr/bin/time missing (apt-get install time)"; exit 2; }
W=$(mktemp -d)
pids=()
cleanup() {
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2> /dev/null || :
	wait 2> /dev/null || :
	rm -rf "$W"
}
trap cleanup EXIT

# ---- the processes ----
head -c 4000000 /dev/urandom | base64 > "$W/data" # compressible, not trivially
cat > "$W/work.py" << 'PY'
import hashlib, json, re, zlib
doc = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)]} for i in range(2000)]
while True:
    s = json.dumps(doc)
    json.loads(s)
    hashlib.sha256(s.encode()).hexdigest()
    re.findall(r"item(\d+)", s)
    zlib.compress(s.encode())
PY
busy=3
python3 "$W/work.py" & pids+=($!)
sh -c 'while :; do gzip -9 -c "$1" > /dev/null; done' sh "$W/data" & pids+=($!)
sh -c 'while :; do xz -6 -T1 -c "$1" > /dev/null; done' sh "$W/data" & pids+=($!)
mkfifo "$W/fifo"
exec 9<> "$W/fifo" # keeps the pipe open: the cats block on it
npy=5
for i in $(seq $npy); do python3 -c 'import time; time.sleep(3600)' & pids+=($!); done
ncat=20
for i in $(seq $ncat); do cat "$W/fifo" > /dev/null & pids+=($!); done
nsleep=$((NPROC - busy - npy - ncat - 3)) # the 3: the two loops' shells count as processes, and xz/gzip
for i in $(seq $nsleep); do sleep 3600 & pids+=($!); done
sleep 1
running=$(ps -e --no-headers | wc -l)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# cpu% of one CPU: utime+stime over the run's wall time
run() { # file cmd...
	local f=$1
	shift
	/usr/bin/time -f '%U %S %e' -o "$W/t" "$@" > /dev/null 2> "$W/err" || { cat "$W/err"; exit 2; }
	awk '{printf "%.3f %.3f %.3f\n", ($1 + $2) / $3 * 100, $1 + $2, $3}' "$W/t" >> "$f"
	cat "$W/err" >> "$W/errs"
}
have_perf=0
if command -v perf > /dev/null && perf record -q -a -o "$W/p.data" -- true > /dev/null 2>&1; then have_perf=1; fi
for r in $(seq "$RUNS"); do
	run "$W/pc-dwarf" "$PC" -a -v -F "$HZ" -d "$SECS" -o /dev/null
	run "$W/pc-noinline" "$PC" -a -v -F "$HZ" -d "$SECS" --no-inline -o /dev/null
	run "$W/pc-fp" "$PC" -a -v -F "$HZ" -d "$SECS" --call-graph fp -o /dev/null
	if [ $have_perf = 1 ]; then
		run "$W/perf-fp" perf record -q -a -F "$HZ" -g -o "$W/p.data" -- sleep "$SECS"
		run "$W/perf-dwarf" perf record -q -a -F "$HZ" --call-graph dwarf -o "$W/p.data" -- sleep "$SECS"
	fi
done

# Warm: the first seconds of a run read each binary's symbols and DWARF
# once; a host runs it all day.  One run of 3 x SECS, its CPU time between
# SECS and the end (from /proc/PID/stat) is the cost once warm.
"$PC" -a -q -F "$HZ" -d $((3 * SECS)) -o /dev/null & wp=$!
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2> /dev/null; }
sleep "$SECS"
w0=$(ticks $wp) t0=$(date +%s.%N)
sleep $((2 * SECS - 2))
w1=$(ticks $wp) t1=$(date +%s.%N)
wait $wp
warm=$(awk -v a="$w0" -v b="$w1" -v s="$t0" -v e="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz / (e - s) * 100 }')

say "# pcollect -a benchmark: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
	"$running processes running ($NPROC started: $busy busy, the rest asleep), -F $HZ, $SECS s, median of $RUNS," \
	"load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
say ""
printf '| %-42s | %12s | %8s |\n' "collector" "% of one CPU" "CPU s"
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' $(seq 44))" "$(printf -- '-%.0s' $(seq 14))" "$(printf -- '-%.0s' $(seq 10))"
row() { # name file
	[ -s "$2" ] || return 0
	printf '| %-42s | %12.2f | %8.3f |\n' "$1" "$(awk '{print $1}' "$2" | median)" "$(awk '{print $2}' "$2" | median)"
}
row "pcollect -a (dwarf)" "$W/pc-dwarf"
row "pcollect -a --no-inline" "$W/pc-noinline"
row "pcollect -a --call-graph fp" "$W/pc-fp"
row "perf record -a -g" "$W/perf-fp"
row "perf record -a --call-graph dwarf" "$W/perf-dwarf"
[ $have_perf = 1 ] || say "(perf is not installed or not permitted: no perf rows)"
say ""
say "pcollect -a (dwarf), warm: $warm % of one CPU from ${SECS} s to $((3 * SECS - 2)) s of one $((3 * SECS)) s run"
say ""
say "pcollect's own summaries (-v) of the runs:"
grep -h 'samples of' "$W/errs" | sed 's/^/  /'
