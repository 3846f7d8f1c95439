#!/bin/bash
# ptimeline's Chrome trace JSON loaded into the real speedscope app in
# headless Chromium (tests/speedscope/driver.mjs, as t5100).  speedscope
# imports a trace with "samples" as the samples (one sampled profile per
# thread) and one without (--no-samples) as the calls (one evented profile
# per thread), and --sample-slices as the calls with the samples' frames
# nested in them: all are checked, the calls' durations as speedscope measured
# them against the stream's (tests/progs/tlgen.c: call k lasts 5 + k % 7 us,
# on thread w(k % 4)).  Odd names load too.
. "$(dirname "$0")/../lib.sh"
S=$SP_TOP/tests/speedscope
LIB=$SP_TOP/build/libstackpipe.a
why=""
if [ ! -x /usr/bin/chromium ]; then why="/usr/bin/chromium is missing (run tests/speedscope/setup.sh as root)"
elif ! command -v node >/dev/null 2>&1; then why="node is missing (apt-get install nodejs npm)"
elif [ ! -f "$S/node_modules/speedscope/dist/release/index.html" ] || [ ! -d "$S/node_modules/playwright-core" ]; then
	why="speedscope/playwright-core are not installed (run tests/speedscope/setup.sh)"
elif ! command -v python3 >/dev/null 2>&1; then why="python3 is missing (it reads the driver's report)"
elif [ ! -f "$LIB" ]; then why="$LIB not built"
fi
if [ -n "$why" ]; then
	skip "ptimeline in real speedscope" "$why"
	exit 0
fi
PKGS="libdw libelf libxxhash libcjson zlib"
if ! cc -std=gnu11 -D_GNU_SOURCE $(printf -- "-I%s " "$SP_TOP"/lib/*/ "$SP_TOP/formats") $(pkg-config --cflags $PKGS) -o "$T/tlgen" \
	"$SP_TOP/tests/progs/tlgen.c" "$LIB" $(pkg-config --libs $PKGS) -lpthread -lm 2> "$T/cc"; then
	notok "build tests/progs/tlgen.c"; sed 's/^/  /' "$T/cc" | head -5; exit 0
fi
"$T/tlgen" bench 2000 > "$T/b.sp" && "$T/tlgen" bad > "$T/bad.sp" || { notok "tlgen"; exit 0; }
ptimeline "$T/b.sp" > "$T/samples.json" 2> /dev/null
ptimeline --no-samples "$T/b.sp" > "$T/calls.json" 2> /dev/null
ptimeline --sample-slices "$T/b.sp" > "$T/slices.json" 2> /dev/null
ptimeline --no-samples "$T/bad.sp" > "$T/odd.json" 2> /dev/null
( cd "$S" && timeout 300 node driver.mjs "$T/samples.json" "$T/calls.json" "$T/slices.json" "$T/odd.json" ) > "$T/report" 2> "$T/driver.err"; rc=$?
if [ $rc = 2 ] || [ ! -s "$T/report" ]; then
	notok "the speedscope driver could not run (exit $rc)"
	tail -5 "$T/driver.err" | sed 's/^/  /'
	exit 0
fi

want() {
	local name=$1 file=$2 check=$3 r
	r=$(python3 - "$T/report" "$T/$file.json" <<EOF 2>&1
import json, sys
rep = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in rep if x["file"] == sys.argv[2]][0]
try:
    assert r["ok"], "speedscope did not load it: %s" % r["errors"]
$check
    print("ok")
except AssertionError as e:
    print("got", json.dumps({k: r[k] for k in ("profiles", "names", "totals", "errors")})[:600])
    print("why", e)
EOF
)
	if [ "$r" = ok ]; then ok "speedscope: $name"; else notok "speedscope: $name"; printf '%s\n' "$r" | head -6 | sed 's/^/  /'; fi
}

want "with samples: one sampled profile per thread, named after it" samples '
    assert r["profiles"] == 4, r["profiles"]
    assert all(any("w%d (tid %d)" % (i, 101 + i) in n for n in r["names"]) for i in range(4)), r["names"]'
want "--no-samples: one profile per thread, 500 calls each, durations = the stream's" calls '
    assert r["profiles"] == 4, r["profiles"]
    for i in range(4):
        p = [j for j, n in enumerate(r["names"]) if "w%d (tid %d)" % (i, 101 + i) in n][0]
        got = sorted(round(v, 3) for k, vs in r["spans"][p].items() if k.startswith("handle") for v in vs)
        want = sorted(5.0 + k % 7 for k in range(i, 2000, 4))
        assert got == want, (i, got[:5], want[:5], len(got))'
want "--sample-slices: the same calls, with the frames of the samples inside" slices '
    assert r["profiles"] == 4 and not r["errors"], (r["profiles"], r["errors"])
    for i in range(4):
        p = [j for j, n in enumerate(r["names"]) if "w%d (tid %d)" % (i, 101 + i) in n][0]
        got = sorted(round(v, 3) for k, vs in r["spans"][p].items() if k.startswith("handle") for v in vs)
        assert got == sorted(5.0 + k % 7 for k in range(i, 2000, 4)), i
    assert all("step%d_%d" % (i, j) in r["frames"] for i in range(4) for j in range(5)), r["frames"][:20]'
want "odd names: loads, the thread named with its quote and control bytes" odd '
    assert r["profiles"] == 2, r["profiles"]
    assert any("q\"uo" in n for n in r["names"]), r["names"]'
