#!/bin/bash
# pspeedscope's output loaded into the real speedscope app (the npm package's
# built app, served on 127.0.0.1) in headless Debian Chromium, driven by
# playwright-core (tests/speedscope/driver.mjs).  The numbers checked are the
# ones speedscope itself computed: the driver exports speedscope's model of
# the loaded file (Ctrl+S) and reports its profiles and each one's total
# weight.  Set up by tests/speedscope/setup.sh (make deps).
. "$(dirname "$0")/../lib.sh"
D=$SP_TOP/tests/data
S=$SP_TOP/tests/speedscope
PERF=$D/t5-perf-threads.txt.gz
PYSPY=$D/t5-pyspy.speedscope.json
why=""
if [ ! -x /usr/bin/chromium ]; then why="/usr/bin/chromium is missing (run tests/speedscope/setup.sh as root)"
elif ! command -v node >/dev/null 2>&1; then why="node is missing (apt-get install nodejs npm)"
elif [ ! -f "$S/node_modules/speedscope/dist/release/index.html" ] || [ ! -d "$S/node_modules/playwright-core" ]; then
	why="speedscope/playwright-core are not installed (run tests/speedscope/setup.sh)"
elif ! command -v python3 >/dev/null 2>&1; then why="python3 is missing (it reads the driver's report)"
fi
if [ -n "$why" ]; then
	skip "real speedscope in Chromium" "$why"
	exit 0
fi

# ---- the files ----
printf 'main;parse;lex 30\nmain;parse 10\nmain;render 25\nmain;parse;lex 5\n' > "$T/a.folded"
pspeedscope "$T/a.folded" > "$T/folded.json"
pspeedscope "$PERF" > "$T/perf.json"
zcat "$PERF" | pfold -b | pspeedscope > "$T/stream.json"
pspeedscope --all-threads "$PERF" > "$T/all.json"
pspeedscope "$PYSPY" > "$T/pyspy.json"
cp "$PYSPY" "$T/pyspy-original.json"
printf 'main;q"uo\\te;tab\there;ctl\001x;caf\303\251;bad\377byte 7\n' > "$T/esc.folded"
pspeedscope "$T/esc.folded" > "$T/esc.json"
awk 'BEGIN { s = "f0"; for (i = 1; i < 20000; i++) s = s ";f" i; print s, 3; print "f0;f1;f2", 2 }' > "$T/deep.folded"
pspeedscope -f folded "$T/deep.folded" > "$T/deep.json" 2> /dev/null
files="folded perf stream all pyspy pyspy-original esc deep"
args=()
for f in $files; do args+=("$T/$f.json"); done
( cd "$S" && timeout 600 node driver.mjs "${args[@]}" ) > "$T/report" 2> "$T/driver.err"; rc=$?
if [ $rc = 2 ] || [ ! -s "$T/report" ]; then
	notok "the speedscope driver could not run (exit $rc)"
	tail -5 "$T/driver.err" | sed 's/^/  /'
	exit 0
fi

# want NAME FILE CHECK: CHECK is python over r (the driver's report for FILE)
# and d (FILE itself, as pspeedscope wrote it).
want() {
	local name=$1 file=$2 check=$3 r
	r=$(python3 - "$T/report" "$T/$file.json" <<EOF 2>&1
import json, sys
rep = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in rep if x["file"] == sys.argv[2]][0]
d = json.load(open(sys.argv[2]))
busy = lambda q: sum(w for s, w in zip(q["samples"], q["weights"]) if s)
try:
    assert r["ok"], "speedscope did not load it: %s" % r["errors"]
$check
    print("ok")
except AssertionError as e:
    print("got", json.dumps({k: r[k] for k in ("profiles", "names", "totals", "nonIdle", "errors", "schemaErrors")})[:600])
    print("why", e)
EOF
)
	if [ "$r" = ok ]; then ok "speedscope: $name"; else notok "speedscope: $name"; printf '%s\n' "$r" | head -6 | sed 's/^/  /'; fi
}

want "folded: 1 profile, total weight 70, valid against speedscope's schema" folded '
    assert r["profiles"] == 1 and r["totals"] == [70] and r["units"] == ["none"], r["totals"]
    assert r["schemaErrors"] == [], r["schemaErrors"]'
zcat "$PERF" | pfold --tid | awk '{n=split($1,a,";"); s[a[1]]+=$NF} END {for (k in s) print k, s[k]}' | sort > "$T/tid"
want "perf: 3 thread profiles, speedscope's totals = ours, busy weight = pfold --tid" perf '
    import re
    tid = {}
    for l in open("'"$T/tid"'"):
        k, v = l.split(); m = re.match(r"(.*)-(\d+)/(\d+)$", k); tid["%s (%s)" % (m.group(1), m.group(3))] = int(v)
    assert r["profiles"] == 3, r["profiles"]
    assert r["names"] == [p["name"] for p in d["profiles"]]
    assert r["totals"] == [p["endValue"] - p["startValue"] for p in d["profiles"]], "total weight differs"
    assert r["nonIdle"] == [tid[n] for n in r["names"]], "busy weight differs from pfold --tid"
    assert r["units"] == ["nanoseconds"] * 3
    assert r["schemaErrors"] == []'
want "binary stream: same profiles and totals as from perf script" stream '
    p = json.load(open("'"$T/perf.json"'"))
    assert r["profiles"] == 3 and r["totals"] == [q["endValue"] - q["startValue"] for q in p["profiles"]]
    assert r["nonIdle"] == [busy(q) for q in p["profiles"]]'
want "--all-threads: 4 profiles, the merged one weighs the sum" all '
    assert r["profiles"] == 4 and r["names"][3] == "all threads"
    assert r["totals"][3] == sum(r["nonIdle"][:3]) == r["nonIdle"][3]'
want "py-spy file read and rewritten: 2 threads, 100 ms and 50 ms" pyspy '
    assert r["profiles"] == 2 and r["names"] == ["MainThread (31337)", "log-writer (31342)"], r["names"]
    assert r["totals"] == [100000000, 50000000] and r["units"] == ["nanoseconds"] * 2
    assert r["schemaErrors"] == []'
want "py-spy's own file: same totals (in seconds); its nulls break the schema, ours do not" pyspy-original '
    assert r["profiles"] == 2 and [round(t, 6) for t in r["totals"]] == [0.1, 0.05], r["totals"]
    assert any("null" in e for e in r["schemaErrors"]), "expected schema errors for null"'
want "escaped names arrive intact (U+FFFD for the invalid byte)" esc '
    assert r["totals"] == [7]
    assert r["frames"] == ["main", "q\"uo\\te", "tab\there", "ctl\x01x", "caf\u00e9", "bad\ufffdbyte"], r["frames"]'
want "a 20000-frame stack, cut at 3000, loads" deep '
    assert r["profiles"] == 1 and r["totals"] == [5]
    assert "[truncated]" in r["frames"]'
