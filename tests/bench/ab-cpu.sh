#!/bin/bash
# ab-cpu.sh N 'COMMAND A' 'COMMAND B' [...]: compare commands by CPU time,
# run in turn N times each (alternating, so a burst of load on this shared
# machine hits them alike), each timed by `perf stat -e task-clock` (CPU
# milliseconds of the command and its children).  Prints the minimum, the
# first quartile and the median per command.  On the VMs of this project
# the machine's speed drifts by a quarter or more within minutes: a change
# of a few percent needs N of 15-25 to show, and the minimum and first
# quartile are steadier than the median.  Used for pfold's speed work
# (session 8); not part of `make bench`.
#
#   bash tests/bench/ab-cpu.sh 20 'old/pfold -j1 big.txt' 'bin/pfold -j1 big.txt'
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: ab-cpu.sh N 'COMMAND' ['COMMAND'...]" >&2; exit 2; }
command -v perf > /dev/null || { echo "ab-cpu.sh: perf is needed" >&2; exit 2; }
n=$1; shift
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
for i in $(seq "$n"); do
	for j in $(seq $#); do
		c=${!j}
		perf stat -x, -o "$t/stat" -e task-clock bash -c "$c > /dev/null" ||
			{ echo "ab-cpu.sh: failed: $c" >&2; exit 2; }
		v=$(awk -F, '/task-clock/ {print $1}' "$t/stat")
		[ -n "$v" ] || { echo "ab-cpu.sh: no measurement for: $c" >&2; exit 2; }
		echo "$v" >> "$t/$j"
	done
done
for j in $(seq $#); do
	sort -g "$t/$j" | awk -v c="${!j}" '{a[NR] = $1} END {printf "min %8.1f  p25 %8.1f  median %8.1f ms  %s\n", a[1], a[int(NR / 4) + 1], a[int((NR + 1) / 2)], c}'
done
