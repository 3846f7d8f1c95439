#!/bin/bash
# ptimeline on streams no recording here produces (tests/progs/tlgen.c):
# names with quotes and control bytes (the JSON parses, the names come back
# whole), nested calls nested, recorded values in args, a line-probe hit as
# an instant with its variable, calls without an exit or an entry and an
# abandoned call kept and marked, lost hits marked; a samples-only stream
# (said); a cut stream (--partial); input without timestamps; the
# selection options on 2,000 calls; usage errors.
. "$(dirname "$0")/../lib.sh"

LIB=$SP_TOP/build/libstackpipe.a
if [ ! -f "$LIB" ]; then skip "tlgen streams" "$LIB not built"; exit 0; fi
if ! command -v python3 > /dev/null; then skip "ptimeline" "python3 is missing (it reads the JSON)"; exit 0; fi
PKGS="libdw libelf libxxhash libcjson zlib"
if ! cc -std=gnu11 -D_GNU_SOURCE $(printf -- "-I%s " "$SP_TOP"/lib/*/ "$SP_TOP/formats") $(pkg-config --cflags $PKGS) -o "$T/tlgen" \
	"$SP_TOP/tests/progs/tlgen.c" "$LIB" $(pkg-config --libs $PKGS) -lpthread -lm 2> "$T/cc"; then
	notok "build tests/progs/tlgen.c"; sed 's/^/  /' "$T/cc" | head -5; exit 0
fi
"$T/tlgen" bad > "$T/bad.sp" && "$T/tlgen" samples > "$T/smp.sp" && "$T/tlgen" bench 2000 > "$T/b.sp" || { notok "tlgen"; exit 0; }

# check NAME FILE PYTHON: d is FILE's JSON, ev its events, X its complete events by name
check() {
	local name=$1 file=$2 r
	r=$(python3 - "$file" <<EOF 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
X = {}
for e in ev:
    if e["ph"] == "X": X.setdefault(e["name"], []).append(e)
try:
$3
    print("ok")
except AssertionError as e:
    print("why", e)
EOF
)
	if [ "$r" = ok ]; then ok "$name"; else notok "$name"; printf '%s\n' "$r" | tail -3 | sed 's/^/  /'; fi
}

ptimeline "$T/bad.sp" > "$T/bad.json" 2> "$T/bad.err"; rc=$?
expect_rc "odd stream: exit 0" 0 $rc
check "odd names: the JSON parses, the names come back whole" "$T/bad.json" '
    names = [e["args"]["name"] for e in ev if e["ph"] == "M"]
    assert "q\"uo\\te\ttab\x01ctl\nnl" in names, names
    assert "we\"ird\\name\x02" in X, list(X)'
check "nested calls nest, recorded values in args" "$T/bad.json" '
    o, i = X["outer"][0], X["inner"][0]
    assert o["ts"] < i["ts"] and i["ts"] + i["dur"] < o["ts"] + o["dur"], (o, i)
    assert o["dur"] == 100.0 and i["dur"] == 20.0, (o["dur"], i["dur"])
    assert o["args"] == {"arg1": 5, "ret": 0} and i["args"] == {"ret": 9}, (o["args"], i["args"])'
check "a line-probe hit: an instant with its variable" "$T/bad.json" '
    p = [e for e in ev if e["ph"] == "i" and e["name"] == "calls.c:42"]
    assert len(p) == 1 and p[0]["args"] == {"x": -3} and p[0]["ts"] == 25.0, p'
check "no call dropped: unfinished, begun before, abandoned, marked" "$T/bad.json" '
    assert X["never_returns"][0]["cat"] == "unfinished" and X["never_returns"][0]["dur"] == 40.0, X["never_returns"]
    assert X["begun"][0]["cat"] == "begun-before" and X["begun"][0]["ts"] == 0.0, X["begun"]
    assert X["jumped"][0]["cat"] == "abandoned", X["jumped"]'
check "lost hits: a marked global instant" "$T/bad.json" '
    l = [e for e in ev if e.get("cat") == "lost"]
    assert len(l) == 1 and l[0]["s"] == "g" and l[0]["args"] == {"lost": 7} and "inner" in l[0]["name"], l'
expect_grep "said: a call without an exit" "1 call without an exit" "$T/bad.err"
expect_grep "said: an exit without an entry" "1 exit without an entry" "$T/bad.err"

ptimeline "$T/smp.sp" > "$T/smp.json" 2> "$T/smp.err"; rc=$?
expect_rc "samples only: exit 0" 0 $rc
expect_grep "samples only: said" "no trace events in the input: a timeline of its 6 samples on 2 threads" "$T/smp.err"
check "samples only: 6 samples on 2 tracks" "$T/smp.json" '
    assert len(d["samples"]) == 6 and len({s["tid"] for s in d["samples"]}) == 2, d["samples"]
    assert [s["ts"] for s in d["samples"]] == [0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]'

head -c 300 "$T/bad.sp" > "$T/cut.sp"
ptimeline "$T/cut.sp" > "$T/cut.json" 2> "$T/cut.err"; rc=$?
expect_rc "cut stream: refused" 2 $rc
expect_grep "cut stream: says where" "cut.sp: offset [0-9]*: truncated stream" "$T/cut.err"
ptimeline --partial "$T/cut.sp" > "$T/cut.json" 2> "$T/cut.err"; rc=$?
expect_rc "cut stream with --partial: exit 0" 0 $rc
check "cut stream with --partial: the calls before the cut, open ones unfinished" "$T/cut.json" '
    assert "outer" in X and X["outer"][0]["cat"] == "unfinished", X.get("outer")'

printf 'main;f 3\n' > "$T/f.folded"
ptimeline "$T/f.folded" > "$T/f.json" 2> "$T/f.err"; rc=$?
expect_rc "no timestamps: refused" 2 $rc
expect_grep "no timestamps: said" "no timestamps" "$T/f.err"

ptimeline --slowest 10 "$T/b.sp" > "$T/s10.json" 2> "$T/s10.err"
check "--slowest 10 of 2,000: 10 calls of 11 us, their 20 samples" "$T/s10.json" '
    assert len(X["handle"]) == 10 and all(e["dur"] == 11.0 for e in X["handle"]), X["handle"]
    assert len(d["samples"]) == 20, len(d["samples"])'
ptimeline --percentile 90 --context 40us "$T/b.sp" > "$T/p90.json" 2> /dev/null
check "--percentile 90 --context 40us: the calls of 11 us (1/7), with their neighbours" "$T/p90.json" '
    slow = [e for e in X["handle"] if e["cat"] == "slow"]
    assert len(slow) == 285 and all(e["dur"] == 11.0 for e in slow), len(slow)
    assert len(X["handle"]) > len(slow), len(X["handle"])'
ptimeline --slower-than 9us --from +0.001 --to +0.002 "$T/b.sp" > "$T/w.json" 2> /dev/null
check "--slower-than 9us in --from/--to: calls of 10 and 11 us inside the window" "$T/w.json" '
    assert X["handle"] and all(e["dur"] >= 9.0 and 1000 - 11 <= e["ts"] <= 2000 for e in X["handle"]), X["handle"]'

ptimeline --slowest 3 --func nosuch "$T/b.sp" > "$T/n.json" 2> "$T/n.err"; rc=$?
expect_rc "--func with no such call: error" 2 $rc
expect_grep "--func with no such call: said" "no traced call of nosuch in the input \\(2000 calls\\)" "$T/n.err"
ptimeline --sample-slices "$T/b.sp" > "$T/sl.json" 2> /dev/null
check "--sample-slices: each call holds its samples' frames below it, B/E nested, a period long or 1 ns short of the call's end" "$T/sl.json" '
    st, sl = {}, []
    for e in ev:
        if e["ph"] == "B": st.setdefault(e["tid"], []).append(e)
        elif e["ph"] == "E":
            b = st[e["tid"]].pop()
            assert b["name"] == e["name"], (b, e)
            sl.append((e["tid"], b["ts"], e["ts"], e["name"]))
    assert not any(st.values()) and "samples" not in d, "unbalanced, or samples left"
    assert len(sl) == 2000 * 5, len(sl)
    for c in X["handle"]:
        i = c["args"]["arg1"]
        mine = sorted(n for t, a, b, n in sl if t == c["tid"] and c["ts"] <= a and b <= c["ts"] + c["dur"])
        assert mine == ["step%d_%d" % (i % 4, j) for j in range(5)], (c, mine)
        # samples at +1 and +3 us, 2 us apart (the period): a slice from
        # +1 to +5 us, or to 1 ns before the end of a call of 5 us
        end = min(5.0, c["dur"] - 0.001)
        assert all(round(a - c["ts"], 3) == 1.0 and round(b - c["ts"], 3) == end for t, a, b, n in sl if t == c["tid"] and c["ts"] <= a and b <= c["ts"] + c["dur"]), c'
ptimeline --slowest 0 "$T/b.sp" > /dev/null 2> "$T/u.err"; rc=$?
expect_rc "--slowest 0: usage error" 2 $rc
ptimeline --context 5ms "$T/b.sp" > /dev/null 2> "$T/u.err"; rc=$?
expect_rc "--context without a selection: usage error" 2 $rc
ptimeline --slower-than 5parsecs "$T/b.sp" > /dev/null 2> "$T/u.err"; rc=$?
expect_rc "--slower-than 5parsecs: error" 2 $rc
expect_grep "--slower-than 5parsecs: said" "not a duration" "$T/u.err"
