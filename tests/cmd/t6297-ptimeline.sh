#!/bin/bash
# ptimeline on a real recording: pcollect -F 499 --trace handle of
# tests/progs/calls.c (2,000 calls on threads worker-a and worker-b).  The
# JSON parses; its handle events are 2,000, 1,000 on each thread's track;
# their p50/p95 are preport --latency's within 2 %; samples fall inside
# them, with handle in their stacks; --slowest picks the slowest calls and
# only their samples; -z is the same JSON gzipped; the real speedscope app
# (Chromium, as t5100) opens it, and with --no-samples or --sample-slices
# shows each worker's 1,000 calls with the stream's durations.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

if ! command -v python3 > /dev/null; then skip "ptimeline" "python3 is missing (it reads the JSON)"; exit 0; fi
t6_build calls calls.c -O2 -fno-omit-frame-pointer -pthread || exit 0
t6_probe || exit 0
if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
	skip "ptimeline" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 0; fi
if ! pcollect -q -F 499 --trace handle -o "$T/s.sp" -- "$T/calls" 2000 > "$T/out" 2> "$T/err"; then
	if grep -qE 'needs (system-wide )?uprobe events' "$T/err"; then
		skip "ptimeline" "$(head -1 "$T/err")"; exit 0; fi
	notok "pcollect --trace handle: failed"; sed 's/^/  /' "$T/err" | head -5; exit 0
fi
ptimeline "$T/s.sp" > "$T/t.json" 2> "$T/t.err"; rc=$?
expect_rc "exit 0" 0 $rc
preport --latency --json "$T/s.sp" > "$T/lat.json" 2> /dev/null
# check NAME PYTHON: d is the JSON, lat preport's report, X the handle events
check() {
	local name=$1 r
	r=$(python3 - "$T/t.json" "$T/lat.json" <<EOF 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
lat = json.load(open(sys.argv[2]))["probes"][0]
ev = d["traceEvents"]
X = [e for e in ev if e["ph"] == "X" and e["name"] == "handle"]
tname = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
def pct(v, q):
    v = sorted(v); i = int(len(v) * q / 100.0); return v[min(i, len(v) - 1)]
try:
$2
    print("ok")
except AssertionError as e:
    print("why", e)
EOF
)
	if [ "$r" = ok ]; then ok "$name"; else notok "$name"; printf '%s\n' "$r" | tail -3 | sed 's/^/  /'; fi
}
check "2,000 handle events, 1,000 on each worker's track" '
    assert len(X) == 2000, len(X)
    per = {}
    for e in X: per[tname.get(e["tid"])] = per.get(tname.get(e["tid"]), 0) + 1
    assert per == {"worker-a": 1000, "worker-b": 1000}, per'
check "p50 and p95 of the events = preport --latency's within 2 %" '
    for q in (50, 95):
        ours, theirs = pct([e["dur"] for e in X], q), lat["p%d_us" % q]
        assert abs(ours - theirs) <= 0.02 * theirs, (q, ours, theirs)'
check "samples inside the calls, with handle in their stacks" '
    sf = d["stackFrames"]
    def names(i):
        out = []
        while i is not None:
            f = sf[str(i)]; out.append(f["name"]); i = f.get("parent")
        return out
    calls = {}
    for e in X: calls.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    inside = [s for s in d["samples"] if any(a <= s["ts"] <= b for a, b in calls.get(s["tid"], []))]
    assert len(inside) >= 20, "only %d samples inside calls" % len(inside)
    held = sum(1 for s in inside if "handle" in names(s["sf"]))
    assert held >= 0.9 * len(inside), "%d of %d samples inside calls have handle in their stack" % (held, len(inside))'

cp "$T/t.json" "$T/full.json"
ptimeline --slowest 20 "$T/s.sp" > "$T/t.json" 2> "$T/slow.err"
check "--slowest 20: the 20 slowest calls, only samples inside them" '
    assert len(X) == 20, len(X)
    assert all(e["cat"] == "slow" for e in X), "a picked call not marked slow"
    full = sorted((e["dur"] for e in json.load(open("'"$T/full.json"'"))["traceEvents"] if e.get("name") == "handle"), reverse=True)
    assert sorted((e["dur"] for e in X), reverse=True) == full[:20], "not the 20 slowest"
    ivs = [(e["tid"], e["ts"], e["ts"] + e["dur"]) for e in X]
    assert d["samples"], "no samples kept"
    assert all(any(t == s["tid"] and a <= s["ts"] <= b for t, a, b in ivs) for s in d["samples"]), "a sample outside the picked calls"'
expect_grep "--slowest: says what it picked" "picked 20 of 2000 calls" "$T/slow.err"

ptimeline -z "$T/s.sp" > "$T/t.json.gz" 2> /dev/null
ptimeline "$T/s.sp" > "$T/t2.json" 2> /dev/null
if zcat "$T/t.json.gz" | cmp -s - "$T/t2.json"; then ok "-z: the same JSON, gzipped"; else notok "-z: the same JSON, gzipped"; fi

# off-CPU time: pcollect --wall's [blocked] intervals are slices inside the
# calls that slept (calls 40 sleep: inner sleeps 1 ms in each call)
if pcollect -q --wall --trace 'handle(arg1)' -o "$T/w.sp" -- "$T/calls" 40 sleep > /dev/null 2> "$T/w.err"; then
	ptimeline "$T/w.sp" > "$T/t.json" 2> /dev/null
	check "--wall: each call holds a [blocked] slice with its stack, arg1 in its args" '
    off = [e for e in ev if e["ph"] == "X" and e["cat"] == "off-cpu"]
    assert len(X) == 40 and sorted(e["args"]["arg1"] for e in X) == list(range(40)), len(X)
    assert all(o["name"] in ("[blocked]", "[preempted]") and o["sf"] for o in off), off[:2]
    held = [c for c in X if any(o["name"] == "[blocked]" and o["tid"] == c["tid"] and c["ts"] <= o["ts"] and o["ts"] + o["dur"] <= c["ts"] + c["dur"] for o in off)]
    assert len(held) >= 38, "%d of 40 calls hold an off-CPU slice" % len(held)'
else notok "pcollect --wall --trace handle"; head -3 "$T/w.err" | sed 's/^/  /'; fi

# ---- the real speedscope app (Chromium) opens the recording's timeline ----
S=$SP_TOP/tests/speedscope
if [ ! -x /usr/bin/chromium ] || ! command -v node > /dev/null || [ ! -f "$S/node_modules/speedscope/dist/release/index.html" ]; then
	skip "speedscope opens the recording's timeline" "chromium, node or the speedscope package is missing (tests/speedscope/setup.sh)"; exit 0
fi
ptimeline --no-samples "$T/s.sp" > "$T/calls.json" 2> /dev/null
ptimeline --sample-slices "$T/s.sp" > "$T/slices.json" 2> /dev/null
( cd "$S" && timeout 300 node driver.mjs "$T/t2.json" "$T/calls.json" "$T/slices.json" ) > "$T/report" 2> "$T/driver.err"; rc=$?
if [ $rc = 2 ] || [ ! -s "$T/report" ]; then notok "the speedscope driver could not run (exit $rc)"; tail -3 "$T/driver.err" | sed 's/^/  /'; exit 0; fi
r=$(python3 - "$T/report" "$T/calls.json" <<'PY' 2>&1
import collections, json, sys
rep = [json.loads(l) for l in open(sys.argv[1])]
d = json.load(open(sys.argv[2]))
try:
    assert all(r["ok"] for r in rep), [r["errors"] for r in rep]
    for r in rep:
        assert r["profiles"] == 2 and sorted(n.split("), ")[-1].split(" (")[0] for n in r["names"]) == ["worker-a", "worker-b"], r["names"]
        assert all(n.startswith("calls (pid ") for n in r["names"]), "the process is not named calls: %s" % r["names"]
    for r in rep[1:]:
        for p, name in enumerate(r["names"]):
            got = sorted(round(v, 3) for k, vs in r["spans"][p].items() if k.startswith("handle") for v in vs)
            want = sorted(e["dur"] for e in d["traceEvents"] if e["ph"] == "X" and e["name"] == "handle" and name.endswith("(tid %d)" % e["tid"]))
            if r is rep[1]:
                assert len(got) == 1000 and all(abs(a - b) <= 0.002 for a, b in zip(got, want)), (name, len(got), got[:3], want[:3])
            else:
                # a sample of handle outside its traced interval (the
                # probes' edges) is a top-level slice named handle too
                missing = collections.Counter(round(w, 3) for w in want) - collections.Counter(got)
                assert len(want) == 1000 and not missing, (name, list(missing.items())[:3])
    assert "burn" in rep[2]["frames"], "--sample-slices: no burn among the frames"
    print("ok")
except AssertionError as e:
    print("why", e)
PY
)
if [ "$r" = ok ]; then ok "speedscope opens it: a profile per worker; with --no-samples and --sample-slices 1,000 handle calls each, durations = the stream's (with burn inside)"
else notok "speedscope opens the recording's timeline"; printf '%s\n' "$r" | tail -3 | sed 's/^/  /'; fi
