#!/bin/bash
# preport --latency on pcollect --trace streams: call durations against the
# program's own clock_gettime measurements of the same calls, the JSON keys
# scripts read, --by a recorded argument, point probes as hit counts, and
# the refusal of an input without trace events.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build t62 t62-trace.c -O2 -fomit-frame-pointer -pthread || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "preport --latency" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi
if ! pcollect -q -F 0 --trace 'work(arg1)' -o "$T/d.sp" -- "$T/t62" durations 400 > "$T/d.out" 2> "$T/d.err"; then
	if grep -qE 'needs (system-wide )?uprobe events' "$T/d.err"; then
		skip "preport --latency" "$(head -1 "$T/d.err")"; exit 0; fi
	notok "pcollect --trace work: failed"; sed 's/^/  /' "$T/d.err"; exit 0
fi
preport --latency --json "$T/d.sp" > "$T/d.json" 2> "$T/d.jerr"; rc=$?
expect_rc "--latency --json: exit 0" 0 $rc
# the keys, exactly as scripts read them
if python3 - "$T/d.json" > "$T/keys" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["probes"][0]
print(sorted(d.keys()), sorted(p.keys()), p["probe"], p["kind"], p["count"])
PY
then expect_eq "--json: the keys of the issue" <(echo "['probes'] ['count', 'kind', 'max_us', 'min_us', 'p50_us', 'p90_us', 'p95_us', 'p99_us', 'probe'] work call 400") "$T/keys"
else notok "--json: not JSON"; sed 's/^/  /' "$T/keys" | head -5; fi
# durations against the program's own clock: the same 400 calls, measured
# around the call by the program and between the probes by the kernel
read -r own50 own95 own99 < <(sed -n 's/^own p50 \([0-9]*\) p95 \([0-9]*\) p99 \([0-9]*\)$/\1 \2 \3/p' "$T/d.out")
for q in 50 95 99; do
	eval own=\$own$q
	got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['probes'][0]['p${q}_us'])" "$T/d.json" 2>/dev/null)
	# the program's interval holds the probes' own cost, and whatever
	# preemption falls between its clock and the probe (an ASan CI run
	# under load: p95 traced 2519 us, the program's 2697): traced at most
	# 5 % + 30 us above, at most 10 % + 30 us below; on a machine loaded
	# beyond twice its CPUs 25 % below (a rehearsal at load 12 on 2 CPUs:
	# p99 traced 10800 us, the program's 12355 us: its clock holds the
	# preemptions of the longest calls, which the tail is made of)
	lo=0.9 why=
	if awk -v n="$(nproc)" '{ exit !($1 > 2 * n) }' /proc/loadavg; then lo=0.75 why=" (25 % below allowed: load average $(cut -d' ' -f1 /proc/loadavg))"; fi
	if [ -n "$own" ] && [ -n "$got" ] && awk -v o="$own" -v g="$got" -v lo=$lo 'BEGIN { o /= 1000; exit !(g <= 1.05 * o + 30 && g >= lo * o - 30) }'; then
		ok "p$q: traced $got us, the program's own $((own / 1000)) us$why"
	else notok "p$q: traced $got us, the program's own ${own:-?} ns$why"; fi
done
# text: the table and a log2 histogram
preport --latency "$T/d.sp" > "$T/d.txt" 2>&1
expect_grep "text: the summary line" '^work: 400 calls$' "$T/d.txt"
expect_grep "text: percentiles" '^  min [0-9.]+ us, p50 [0-9.]+ us, p90 .* p99 [0-9.]+ us, max [0-9.]+ us$' "$T/d.txt"
hist=$(awk '/->/ { s += $5 } END { print s + 0 }' "$T/d.txt")
expect_eq "text: the histogram holds every call" <(echo 400) <(echo "$hist")
# --by arg1: work(40000) 380 times, work(400000) 20 times
preport --latency --by arg1 --json "$T/d.sp" > "$T/by.json" 2>&1
python3 -c "
import json,sys
for p in json.load(open(sys.argv[1]))['probes']: print(p['by'], p['value'], p['count'])" "$T/by.json" 2>&1 | sort > "$T/by.got"
expect_eq "--by arg1: one group per argument value, counts as called" <(printf 'arg1 400000 20\narg1 40000 380\n' | sort) "$T/by.got"
# a point probe: hit counts
pcollect -q -F 0 --trace 'work+0' -o "$T/p.sp" -- "$T/t62" threads 25 > /dev/null 2>&1
preport --latency --json "$T/p.sp" > "$T/p.json" 2>&1
expect_grep "point probe: kind point, hit count" '"probe": "work\+0x0", "kind": "point", "count": 100\}' "$T/p.json"
# input without trace events
printf 'a;b 3\n' | pfold -b > "$T/n.sp"
preport --latency "$T/n.sp" > /dev/null 2> "$T/n.err"; rc=$?
expect_rc "no trace events: exit 2" 2 $rc
expect_grep "no trace events: says so" 'no trace events' "$T/n.err"
# exits whose entries were not recorded (calls begun before it): nothing measured, said, exit 1
preport --latency "$SP_TOP/tests/fuzz/corpus/fuzz_stream/threads-traces.sp" > "$T/x.out" 2> "$T/x.err"; rc=$?
expect_rc "only exits without entries: exit 1" 1 $rc
expect_grep "only exits without entries: says so, with the count" 'no call has both its entry and its exit in the input \(3 exits without' "$T/x.err"
preport --by arg1 "$T/n.sp" > /dev/null 2>&1; rc=$?
expect_rc "--by without --latency: usage error" 2 $rc
exit 0
