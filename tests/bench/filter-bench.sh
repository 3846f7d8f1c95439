#!/bin/bash
# filter-bench — throughput (MB/s) and peak RSS of pfilter, pdiff, pmerge
# and preport on a >= BENCH_MB (default 100) MB input, next to grep -v on
# the same folded file.  Inputs (in tests/bench/work/filter/, made once):
#   folded  the folded stacks of inferno's perf-example fixture (real perf
#           data, 710 distinct stacks), repeated up to BENCH_MB
#   binary  the bundled demo recording (share/demo) as a binary stream,
#           concatenated up to BENCH_MB (concatenated streams read as their
#           union; every copy re-defines its strings, frames and stacks)
# Medians of BENCH_RUNS (default 3) runs.  Never fails on slowness; exits
# non-zero when a command fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
B=$top/bin
W=$top/tests/bench/work/filter
MB=${BENCH_MB:-100}
RUNS=${BENCH_RUNS:-3}
CONF=${SP_CONFORMANCE:-$top/../shared/conformance}
mkdir -p "$W"
[ -x /usr/bin/time ] || { echo "filter-bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

if [ ! -s "$W/in.folded" ] || [ "$(($(stat -c %s "$W/in.folded") >> 20))" -lt "$MB" ]; then
	"$B/pfold" "$CONF/inferno/perf-example-perf-stacks/input.txt.gz" > "$W/one.folded" 2>/dev/null
	: > "$W/in.folded"
	while [ "$(($(stat -c %s "$W/in.folded") >> 20))" -lt "$MB" ]; do
		for i in $(seq 1 64); do cat "$W/one.folded"; done >> "$W/in.folded"
	done
fi
if [ ! -s "$W/in.sp" ] || [ "$(($(stat -c %s "$W/in.sp") >> 20))" -lt "$MB" ]; then
	"$B/pfold" -b "$top/share/demo/perf-demo.txt.gz" > "$W/one.sp" 2>/dev/null
	for i in $(seq 1 64); do cat "$W/one.sp"; done > "$W/64.sp"
	: > "$W/in.sp"
	while [ "$(($(stat -c %s "$W/in.sp") >> 20))" -lt "$MB" ]; do cat "$W/64.sp" >> "$W/in.sp"; done
fi

# run NAME FILE CMD...: median seconds and max RSS over RUNS runs
run() {
	local name=$1 file=$2; shift 2
	local size secs=() rss=0 i
	size=$(stat -c %s "$file")
	for i in $(seq 1 "$RUNS"); do
		/usr/bin/time -f '%e %M' -o "$W/time" "$@" > "$W/out" 2> "$W/err" || { echo "filter-bench: $name failed:" >&2; cat "$W/err" >&2; exit 1; }
		read -r s m < "$W/time"
		secs+=("$s")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	rm -f "$W/out"
	local med
	med=$(printf '%s\n' "${secs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	awk -v n="$name" -v sz="$size" -v s="$med" -v r="$rss" \
		'BEGIN { printf "%-44s %8.1f MB/s %8.0f MB in %6.2f s  peak RSS %6.1f MB\n", n, (s > 0 ? sz/1048576/s : 0), sz/1048576, s, r/1024 }'
}

F=$W/in.folded S=$W/in.sp
echo "filter-bench: folded $(($(stat -c %s "$F") >> 20)) MB, binary $(($(stat -c %s "$S") >> 20)) MB, $RUNS runs each"
run "grep -v idle (folded)" "$F" grep -v idle "$F"
run "pfilter -v idle (folded)" "$F" "$B/pfilter" -v idle "$F"
run "pfilter --focus/--hide/--replace (folded)" "$F" "$B/pfilter" --focus java --hide '^\[unknown\]$' --replace 's/::.*//' "$F"
run "pfilter --min-share 1 (folded, two passes)" "$F" "$B/pfilter" --min-share 1 "$F"
run "pfilter -v checksum (binary)" "$S" "$B/pfilter" -v checksum "$S"
run "pfilter --thread worker --last 1 (binary)" "$S" "$B/pfilter" --thread worker --last 1 "$S"
run "pfilter --slow handle_request (binary, 3 passes)" "$S" "$B/pfilter" -q --slow handle_request "$S"
run "pdiff A A (folded, 2 inputs)" "$F" "$B/pdiff" "$F" "$F"
run "pdiff --split handle_request (binary)" "$S" "$B/pdiff" -q --split handle_request "$S"
run "pmerge A A (binary, 2 inputs)" "$S" "$B/pmerge" "$S" "$S"
run "preport (binary)" "$S" "$B/preport" "$S"
