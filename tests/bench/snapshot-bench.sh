#!/bin/bash
# snapshot-bench.sh — how long a stack snapshot stops the target, measured,
# never asserted: `pcollect --snapshot`, `eu-stack -p` and
# `gdb -p PID -batch -ex 'thread apply all bt'` on the same process with 1,
# 10 and 100 threads (tests/progs/t7-bench.c, -O2 -fomit-frame-pointer).
#
# The target measures it itself: its main thread wakes every 100 us and
# keeps the longest gap between two wake-ups, which is how long the process
# stood still (a tool that stops threads one at a time, like eu-stack, is
# measured by the pause of the main thread).  Also printed: each tool's
# wall-clock time, and pcollect's own report (-v) of its stop window.
# Medians of RUNS runs, tools interleaved.
#
#   RUNS=7 PCOLLECT=bin/pcollect   (environment)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-7}
PC=${PCOLLECT:-$top/bin/pcollect}
W=$(mktemp -d)
TP=""
trap '[ -n "$TP" ] && kill "$TP" 2>/dev/null; rm -rf "$W"' EXIT
gcc -O2 -g -fomit-frame-pointer -pthread -o "$W/target" tests/progs/t7-bench.c

# the peers: eu-stack (elfutils) and gdb, installed when we may
need=""
command -v eu-stack > /dev/null || need="$need elfutils"
command -v gdb > /dev/null || need="$need gdb"
if [ -n "$need" ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
	echo "# installing:$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need > /dev/null 2>&1 || true
fi
tools="pcollect"
if command -v eu-stack > /dev/null; then tools="$tools eu-stack"; else echo "# eu-stack not installed (apt-get install elfutils): skipped"; fi
if command -v gdb > /dev/null; then tools="$tools gdb"; else echo "# gdb not installed: skipped"; fi

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
# gap: ask the target for the longest pause since the last ask (us)
gap() {
	local before
	before=$(grep -c '^gap' "$W/out" || true)
	kill -USR1 "$TP"
	for _ in $(seq 200); do
		[ "$(grep -c '^gap' "$W/out" || true)" -gt "$before" ] && break
		sleep 0.01
	done
	grep '^gap' "$W/out" | tail -1 | awk '{ print $2 }'
}
run_tool() {
	case $1 in
	pcollect) "$PC" --snapshot -v -p "$TP" > "$W/snap.txt" 2> "$W/snap.err" ;;
	eu-stack) eu-stack -p "$TP" > /dev/null 2>&1 ;;
	gdb) gdb -p "$TP" -batch -ex 'thread apply all bt' > /dev/null 2>&1 ;;
	none) sleep 0.01 ;;
	esac
}

printf '%-8s %-9s %12s %12s %14s\n' threads tool "paused(ms)" "wall(ms)" "pcollect -v(ms)"
for n in 1 10 100; do
	: > "$W/out"
	"$W/target" "$n" > "$W/out" &
	TP=$!
	for _ in $(seq 200); do grep -q ready "$W/out" && break; sleep 0.01; done
	for t in none $tools; do : > "$W/g.$t"; : > "$W/w.$t"; done
	: > "$W/self"
	for _ in $(seq "$RUNS"); do
		for t in none $tools; do
			gap > /dev/null
			sleep 0.05
			a=$(now)
			run_tool "$t"
			b=$(now)
			sleep 0.05
			g=$(gap)
			echo "$g" | awk '{ printf "%.3f\n", $1 / 1000 }' >> "$W/g.$t"
			echo "$a $b" | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' >> "$W/w.$t"
			if [ "$t" = pcollect ]; then
				sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' "$W/snap.txt" | head -1 >> "$W/self"
			fi
		done
	done
	for t in none $tools; do
		self="-"
		[ "$t" = pcollect ] && self=$(median < "$W/self")
		printf '%-8s %-9s %12s %12s %14s\n' "$n" "$t" "$(median < "$W/g.$t")" "$(median < "$W/w.$t")" "$self"
	done
	kill "$TP"; wait "$TP" 2>/dev/null || true
	TP=""
done
echo "# paused = longest stall the target's main thread saw (median of $RUNS; 'none' = no tool: the noise floor)"
