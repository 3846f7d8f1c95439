#!/bin/bash
# --slow/--fast and pdiff --split on a real recording: tests/progs/slowreq.c
# handles 200 requests, exactly 10 of them (5%) slow (slow_path, 30 ms of
# CPU, against 4 ms in fast_path), recorded with
# `perf record -e cpu-clock -F 999 -g` and `pfold -b`.
. "$(dirname "$0")/../lib.sh"

if ! command -v perf >/dev/null; then skip "slow calls" "perf is not installed"; exit 0; fi
if ! command -v gcc >/dev/null; then skip "slow calls" "gcc is not installed"; exit 0; fi
gcc -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -o "$T/slowreq" \
	"$SP_TOP/tests/progs/slowreq.c" -lpthread || { notok "build tests/progs/slowreq.c"; exit 0; }
# A recording is a sample of a noisy machine: when other load makes the
# CPU time of a fast call look like a slow one's, record again (at most 3
# times, each attempt noted) before the exact checks below judge it.
for attempt in 1 2 3; do
	if ! perf record -e cpu-clock -F 999 -g -o "$T/perf.data" "$T/slowreq" > "$T/prog.out" 2> "$T/err"; then
		skip "slow calls" "perf record is not permitted here: $(tail -1 "$T/err")"; exit 0
	fi
	perf script -i "$T/perf.data" 2> /dev/null | pfold -b > "$T/s.sp" 2> "$T/e"
	pfilter --max-gap=100000 --cpu-time --slow handle_request:95 "$T/s.sp" 2>&1 >/dev/null | grep -q 'slow: 10 calls' && break
	echo "# recording $attempt was disturbed by other load (slow calls not told apart); recording again"
done
pfold "$T/s.sp" > "$T/all.folded"
if ! grep -q 'handle_request;slow_path' "$T/all.folded"; then
	skip "slow calls" "no handle_request;slow_path stacks in the recording (no frame pointers or symbols?)"; exit 0
fi
count() { awk -v re="$1" '$0 ~ re { n += 1 } END { print n + 0 }' "$2"; } # lines
weight() { awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }' "$2"; }

# The program is CPU-bound between calls, so calls are told apart by their
# stacks alone: a gap of any length (the machine's load deschedules the
# thread inside calls) does not end a call.  Calls are measured by their
# time on CPU: on a loaded machine a descheduled fast call can last longer
# on the wall clock than a slow one (that is latency, and the default).
pfilter --max-gap=100000 --cpu-time --slow handle_request:95 "$T/s.sp" 2> "$T/stats" | pfold > "$T/slow.folded"
pfilter --max-gap=100000 --cpu-time --fast handle_request:95 "$T/s.sp" 2> /dev/null | pfold > "$T/fast.folded"
sed 's/^/  /' "$T/stats"
expect_grep "calls found: 200, the number the program made" 'handle_request: 200 calls \(inferred.*durations on CPU' "$T/stats"
expect_grep "slow: 10 calls (exactly the slow ones)" 'slow: 10 calls' "$T/stats"
expect_grep "statistics: p50, p95, p99 and the threshold" 'p50 [0-9.]+ [mu]?s, p95 [0-9.]+ [mu]?s, p99 [0-9.]+ [mu]?s; threshold [0-9.]+ [mu]?s \(95th percentile\)' "$T/stats"
a=$(weight 'slow_path' "$T/all.folded") b=$(weight 'slow_path' "$T/slow.folded")
if [ "$a" = "$b" ] && [ "$a" != 0 ]; then ok "--slow keeps every slow_path sample ($b)"; else notok "--slow: slow_path $b of $a"; fi
if [ "$(count fast_path "$T/slow.folded")" = 0 ]; then ok "--slow keeps no fast_path sample"; else notok "--slow kept fast_path samples"; grep fast_path "$T/slow.folded" | head -3; fi
if [ "$(count 'between_requests|idle_loop' "$T/slow.folded")" = 0 ]; then ok "--slow keeps nothing outside handle_request"; else notok "--slow kept samples outside calls"; fi
a=$(weight 'fast_path' "$T/all.folded") b=$(weight 'fast_path' "$T/fast.folded")
if [ "$a" = "$b" ] && [ "$a" != 0 ]; then ok "--fast keeps every fast_path sample ($b)"; else notok "--fast: fast_path $b of $a"; fi
if [ "$(count slow_path "$T/fast.folded")" = 0 ]; then ok "--fast keeps no slow_path sample"; else notok "--fast kept slow_path samples"; fi
a=$(weight 'handle_request' "$T/all.folded") b=$(( $(weight . "$T/slow.folded") + $(weight . "$T/fast.folded") ))
if [ "$a" = "$b" ]; then ok "--slow + --fast = every sample inside handle_request"; else notok "--slow + --fast = $b, want $a"; fi
ps=$(weight 'parse_request' "$T/slow.folded") pa=$(weight 'parse_request' "$T/all.folded")
if [ "$ps" -gt 0 ] && [ $((ps * 5)) -lt "$pa" ]; then ok "--slow keeps parse_request of the slow calls only ($ps of $pa)"; else notok "parse_request in slow calls: $ps of $pa"; fi
preport -n 1 -O tsv "$T/slow.folded" | tail -1 | cut -f5 > "$T/o"
pfilter --max-gap=100000 --cpu-time --slow handle_request:95 "$T/s.sp" 2>/dev/null | preport --tree --min-share 5 > "$T/tree"
if grep -q ' slow_path$' "$T/tree" && ! grep -q fast_path "$T/tree"; then ok "preport of the slow calls shows the slow path"; else notok "preport of slow calls"; cat "$T/tree"; fi

# defaults (wall-clock durations, a gap of a few sampling periods): the
# calls are found (more when the thread was descheduled inside one), and
# the slowest include slow_path
pfilter --slow handle_request "$T/s.sp" 2> "$T/stats2" | pfold > "$T/wall.folded"
if [ "$(weight slow_path "$T/wall.folded")" -gt 0 ]; then ok "wall-clock --slow selects slow_path samples"; else notok "wall-clock --slow: no slow_path"; fi
n=$(grep -o 'handle_request: [0-9]* calls' "$T/stats2" | grep -o '[0-9]*')
if [ -n "$n" ] && [ "$n" -ge 200 ]; then ok "default gap: $n calls found (200 made; more when descheduled inside one)"; else notok "default gap: ${n:-no} calls found"; cat "$T/stats2"; fi

# pdiff --split: a = outside slow calls, b = inside, normalised
pdiff --max-gap=100000 --cpu-time --split handle_request:95 "$T/s.sp" 2> /dev/null > "$T/split.sp"
pfold "$T/split.sp" > "$T/split.folded"
if sp-dump "$T/split.sp" 2>/dev/null | head -1 | grep -q '^values a,b'; then ok "--split: binary in, two-value binary out"; else notok "--split output"; fi
awk '/slow_path/ && $(NF-1) != 0' "$T/split.folded" > "$T/o"
nb=$(awk '/slow_path/ && $NF > 0' "$T/split.folded" | wc -l)
if [ ! -s "$T/o" ] && [ "$nb" -gt 0 ]; then ok "--split: slow_path only in b ($nb stacks)"; else notok "--split: slow_path in a"; head -3 "$T/o"; fi
awk '/fast_path/ && $NF != 0' "$T/split.folded" > "$T/o"
na=$(awk '/fast_path/ && $(NF-1) > 0' "$T/split.folded" | wc -l)
if [ ! -s "$T/o" ] && [ "$na" -gt 0 ]; then ok "--split: fast_path only in a ($na stacks)"; else notok "--split: fast_path in b"; head -3 "$T/o"; fi
sa=$(awk '{s+=$(NF-1)} END {printf "%.0f", s}' "$T/split.folded"); sb=$(awk '{s+=$NF} END {printf "%.0f", s}' "$T/split.folded")
d=$((sa - sb)); d=${d#-}
if [ "$sb" -gt 0 ] && [ $((d * 1000)) -le "$sb" ]; then ok "--split: a is scaled to b's total ($sa ~ $sb)"; else notok "--split totals $sa vs $sb"; fi
