#!/bin/bash
# make bench — speed and memory of pfold on real perf-script text, as ratios
# against references run side by side (these machines are shared and noisy:
# medians of BENCH_RUNS runs).  Never fails on slowness; exits non-zero only
# when a command fails or outputs disagree.
#
#   BENCH_MB=100     size of the perf-script input to build (MB)
#   BENCH_RUNS=5     runs per measurement (the median is printed)
#   BENCH_BIG=1      also a 10x input (same stacks) to show RSS does not grow
#   STACKCOLLAPSE=/path/to/stackcollapse-perf.pl, INFERNO=/path/to/inferno-collapse-perf
#                    time the peers side by side (not shipped with stackpipe)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
W=$top/tests/bench/work
mkdir -p "$W"
MB=${BENCH_MB:-100}
RUNS=${BENCH_RUNS:-5}
PF=$top/bin/pfold

command -v perf >/dev/null || { echo "bench: perf is needed (apt-get install linux-perf)"; exit 2; }

# ---- 1. real recordings, cached in tests/bench/work ----
record() { # name, perf-record args...
	local name=$1; shift
	[ -s "$W/$name.txt" ] && return
	echo "bench: recording $name"
	perf record -q -o "$W/$name.data" "$@" > /dev/null 2>&1 || { echo "bench: perf record failed for $name"; exit 2; }
	perf script -i "$W/$name.data" > "$W/$name.txt" 2>/dev/null
	rm -f "$W/$name.data"
}
if [ ! -d "$W/src" ]; then
	git archive --format=tar HEAD | (mkdir -p "$W/src" && tar -x -C "$W/src")
fi
record make-gcc -e cpu-clock -F 999 -g -- sh -c "make -s -C '$W/src' clean; make -s -C '$W/src' -j2 all CFLAGS='-O2 -g'"
record make-clang -e cpu-clock -F 999 -g -- sh -c "make -s -C '$W/src' clean; make -s -C '$W/src' -j2 all CC=clang CFLAGS='-O1 -g'"
cat > "$W/py.py" <<'PY'
import json, re, zlib
def words(n):
    return [("w%d" % (i * 7919 % 1000)) * (i % 5 + 1) for i in range(n)]
def work():
    d = {}
    for w in words(200000):
        d[w] = d.get(w, 0) + 1
    s = json.dumps(d)
    for _ in range(30):
        zlib.compress(s.encode())
        re.findall(r"w[0-9]+", s)
for _ in range(4):
    work()
PY
record python -e cpu-clock -F 999 -g -- python3 "$W/py.py"
if [ ! -s "$W/system.txt" ]; then
	( make -s -C "$W/src" clean; make -s -C "$W/src" -j2 all ) > /dev/null 2>&1 &
	bg=$!
	record system -e cpu-clock -F 499 -a -g -- sleep 4
	wait $bg || true
fi
gcc -O2 -g -pthread -o "$W/burn" tests/progs/burn.c
record dwarf -e cpu-clock -F 999 --call-graph dwarf -- sh -c "'$W/burn'; '$W/burn'; '$W/burn'"
# One more field selection users pick, from the first recording's data.
if [ ! -s "$W/fields.txt" ]; then
	perf record -q -e cpu-clock -F 999 -g -o "$W/f.data" -- "$W/burn" > /dev/null 2>&1
	perf script -i "$W/f.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,symoff > "$W/fields.txt" 2>/dev/null ||
		perf script -i "$W/f.data" -F comm,pid,tid,time,period,event,ip,sym,dso,symoff > "$W/fields.txt"
	rm -f "$W/f.data"
fi

# ---- 2. the input: the recordings repeated up to BENCH_MB ----
IN=$W/input-$MB.txt
if [ ! -s "$IN" ] || [ $(( $(stat -c %s "$IN") / 1000000 )) -lt "$MB" ]; then
	: > "$IN"
	while [ $(stat -c %s "$IN") -lt $((MB * 1000000)) ]; do
		cat "$W"/make-gcc.txt "$W"/make-clang.txt "$W"/python.txt "$W"/system.txt "$W"/dwarf.txt "$W"/fields.txt >> "$IN"
	done
fi
size=$(stat -c %s "$IN")
mb=$(awk -v s="$size" 'BEGIN {printf "%.1f", s / 1e6}')
echo
echo "input: $IN"
echo "       $mb MB of real perf script text, $(wc -l < "$IN") lines, from: $(for f in make-gcc make-clang python system dwarf fields; do printf '%s %s MB, ' $f $(awk -v s=$(stat -c %s "$W/$f.txt") 'BEGIN {printf "%.1f", s/1e6}'); done)"
cat "$IN" > /dev/null # warm the page cache

# ---- 3. measurements ----
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# measure LABEL CMD...: median wall seconds and median peak RSS (KB)
measure() {
	local label=$1; shift
	local ts=() rs=()
	for _ in $(seq "$RUNS"); do
		# wall time from the shell's microsecond clock; peak RSS from time(1)
		local t0=$EPOCHREALTIME
		/usr/bin/time -f "%M" -o "$W/time" "$@" > /dev/null
		local t1=$EPOCHREALTIME
		read -r r < "$W/time"
		ts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')"); rs+=("$r")
	done
	local t r
	t=$(printf '%s\n' "${ts[@]}" | median)
	r=$(printf '%s\n' "${rs[@]}" | median)
	printf '%s %s %s\n' "$label" "$t" "$r" >> "$W/results"
}
: > "$W/results"
measure "wc -l" wc -l "$IN"
measure "pfold, 1 core (taskset -c 0, -j1)" taskset -c 0 "$PF" -j1 "$IN"
measure "pfold, 2 cores (-j2)" "$PF" -j2 "$IN"
# The big input repeats the recordings, so most samples repeat a stack text
# seen before (pfold's sample cache hits).  Each recording once, unrepeated,
# shows the speed on fresh data.
ONCE=$W/input-once.txt
cat "$W"/make-gcc.txt "$W"/make-clang.txt "$W"/python.txt "$W"/system.txt "$W"/dwarf.txt "$W"/fields.txt > "$ONCE"
once_mb=$(awk -v s=$(stat -c %s "$ONCE") 'BEGIN {printf "%.1f", s / 1e6}')
printf '%s\n' "$(RUNS=$RUNS; t=(); for _ in $(seq "$RUNS"); do t0=$EPOCHREALTIME; taskset -c 0 "$PF" -j1 "$ONCE" > /dev/null; t1=$EPOCHREALTIME; awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'; done | median)" > "$W/once"
if [ -n "${STACKCOLLAPSE:-}" ] && [ -f "$STACKCOLLAPSE" ]; then
	RUNS=1 measure "stackcollapse-perf.pl" perl "$STACKCOLLAPSE" "$IN"
fi
if [ -n "${INFERNO:-}" ] && [ -x "$INFERNO" ]; then
	measure "inferno-collapse-perf, 1 thread" taskset -c 0 "$INFERNO" "$IN"
	measure "inferno-collapse-perf, 2 threads" "$INFERNO" "$IN"
fi

# correctness: the thread count does not change the output
"$PF" -j1 "$IN" > "$W/j1.folded"
"$PF" -j2 "$IN" > "$W/j2.folded"
if ! cmp -s "$W/j1.folded" "$W/j2.folded"; then echo "bench: MISMATCH between -j1 and -j2 output"; exit 1; fi
stacks=$(wc -l < "$W/j1.folded")

wc_t=$(awk '$0 ~ /^wc -l/ {print $(NF-1)}' "$W/results")
echo
printf '%-36s %10s %10s %12s %10s\n' "command" "seconds" "MB/s" "vs wc -l" "peak RSS"
while read -r line; do
	r=${line##* }; rest=${line% *}; t=${rest##* }; label=${rest% *}
	printf '%-36s %10s %10.0f %11.1f%% %8.1f MB\n' "$label" "$t" "$(awk -v s="$size" -v t="$t" 'BEGIN {print (t > 0) ? s / 1e6 / t : 0}')" \
		"$(awk -v a="$wc_t" -v t="$t" 'BEGIN {print (t > 0) ? 100 * a / t : 0}')" "$(awk -v r="$r" 'BEGIN {print r / 1024}')"
done < "$W/results"
echo "(medians of $RUNS runs; 'vs wc -l' = pfold's throughput as a share of the line-scan floor)"
echo "distinct stacks in the output: $stacks; -j1 and -j2 outputs are identical"
ot=$(cat "$W/once")
echo "fresh data (each recording once, $once_mb MB, 1 core): $ot s, $(awk -v m="$once_mb" -v t="$ot" 'BEGIN {printf "%.0f", m / t}') MB/s (includes start-up)"
echo
echo "reference figures measured on this machine kind (issue 2), same kind of input:"
echo "  wc -l ~4000 MB/s; stackcollapse-perf.pl 21 MB/s, 27 MB RSS;"
echo "  inferno-collapse-perf 160 MB/s (1 thread), 239 MB/s (2 threads), 32 MB RSS"
echo "  targets: >= 3x inferno on one core (>= 480 MB/s), >= 4x with both (>= 956 MB/s)"

if [ -n "${BENCH_BIG:-}" ]; then
	BIG=$W/input-big.txt
	[ -s "$BIG" ] || for _ in $(seq 10); do cat "$IN"; done > "$BIG"
	echo
	echo "memory vs input size (same stacks, 10x the input):"
	: > "$W/results"
	RUNS=1 measure "pfold -j2 on $mb MB" "$PF" -j2 "$IN"
	RUNS=1 measure "pfold -j2 on 10x that" "$PF" -j2 "$BIG"
	while read -r line; do
		r=${line##* }; rest=${line% *}; t=${rest##* }; label=${rest% *}
		printf '  %-36s %8s s %8.1f MB RSS\n' "$label" "$t" "$(awk -v r="$r" 'BEGIN {print r / 1024}')"
	done < "$W/results"
	rm -f "$BIG"
fi
