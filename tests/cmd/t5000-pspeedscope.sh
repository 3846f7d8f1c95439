#!/bin/bash
# pspeedscope and the speedscope JSON reader, without a browser (t5100 loads
# the output into the real speedscope).  Fixtures: t5-perf-threads.txt.gz is
# real perf script output of tests/data/t5-threads.c (t5-record.sh);
# t5-pyspy.speedscope.json follows py-spy's writer (src/speedscope.rs: serde
# field order, "Thread TID \"name\"" profiles, unit seconds, "col": null),
# since py-spy itself cannot be installed here.
. "$(dirname "$0")/../lib.sh"
D=$SP_TOP/tests/data
PERF=$D/t5-perf-threads.txt.gz
PYSPY=$D/t5-pyspy.speedscope.json
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

# py NAME SCRIPT FILE...: a python3 check that prints "ok" or a reason.
py() {
	local name=$1 script=$2; shift 2
	if [ $have_py = 0 ]; then skip "$name" "python3 is missing"; return; fi
	local r
	r=$(python3 -c "$script" "$@" 2>&1)
	if [ "$r" = ok ]; then ok "$name"; else notok "$name"; printf '%s\n' "$r" | head -10 | sed 's/^/  /'; fi
}

# ---- usage ----
pspeedscope --help > "$T/h" 2> "$T/he"; rc=$?
if [ $rc = 0 ] && grep -q '^usage: pspeedscope' "$T/h" && [ ! -s "$T/he" ]; then ok "--help: synopsis on stdout, exit 0"; else notok "--help (exit $rc)"; fi
pspeedscope --bogus < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'usage: pspeedscope' "$T/e" && [ ! -s "$T/o" ]; then ok "unknown option: usage on stderr, exit 2"; else notok "unknown option (exit $rc)"; fi
pspeedscope --side c < /dev/null > /dev/null 2> "$T/e"; rc=$?
expect_rc "--side c is a usage error" 2 $rc

# ---- folded input: one profile, unit none ----
printf 'main;parse;lex 30\nmain;parse 10\nmain;render 25\nmain;parse;lex 5\n' > "$T/a.folded"
pspeedscope "$T/a.folded" > "$T/a.json" 2> "$T/e"; rc=$?
expect_rc "folded input writes a file" 0 $rc
expect_grep "schema URL" '^\{"\$schema":"https://www.speedscope.app/file-format-schema.json"' "$T/a.json"
py "folded: one sampled profile, unit none, weights in input order, equal neighbours not merged across" '
import json,sys
d=json.load(open(sys.argv[1]))
p=d["profiles"]; f=[x["name"] for x in d["shared"]["frames"]]
assert len(p)==1 and p[0]["type"]=="sampled" and p[0]["unit"]=="none", p
st=[";".join(f[i] for i in s) for s in p[0]["samples"]]
assert st==["main;parse;lex","main;parse","main;render","main;parse;lex"], st
assert p[0]["weights"]==[30,10,25,5] and p[0]["endValue"]-p[0]["startValue"]==70, p[0]
assert d["activeProfileIndex"]==0 and d["name"]=="a.folded"
print("ok")' "$T/a.json"
printf 'a;b 2\na;b 3\na;c 1\na;b 4\n' | pspeedscope > "$T/m.json"
expect_grep "consecutive identical samples merge into one weighted sample" '"weights":\[5,1,4\]' "$T/m.json"
pfold "$T/a.json" > "$T/rt" 2> "$T/e"
pfold "$T/a.folded" > "$T/want"
expect_eq "folded -> speedscope -> pfold: same folded text" "$T/want" "$T/rt"
if grep -q 'null' "$T/a.json"; then notok "no null anywhere"; else ok "no null anywhere"; fi

# ---- escaping: control characters, quotes, invalid UTF-8 ----
printf 'main;q"uo\\te;tab\there;ctl\001x;caf\303\251;bad\377byte;over\300\257long;surr\355\240\200x;emoji\360\237\224\245 7\n' > "$T/esc.folded"
pspeedscope "$T/esc.folded" > "$T/esc.json" 2> "$T/e"; rc=$?
expect_rc "names with control characters and invalid UTF-8" 0 $rc
py "escaping: valid JSON and strict UTF-8; bad bytes become U+FFFD, the rest is kept" '
import json,sys
raw=open(sys.argv[1],"rb").read()
d=json.loads(raw.decode("utf-8"))
n=[x["name"] for x in d["shared"]["frames"]]
want=["main","q\"uo\\te","tab\there","ctl\x01x","caf\u00e9","bad\ufffdbyte","over\ufffd\ufffdlong","surr\ufffd\ufffd\ufffdx","emoji\U0001f525"]
assert n==want, n
assert all(b>=0x20 for b in raw.replace(b"\n",b"")), "raw control byte in the output"
print("ok")' "$T/esc.json"
pfold "$T/esc.json" > "$T/esc.rt" 2> "$T/e"
if grep -q '^main;q"uo\\te;tab	here;ctl.x;café;bad�byte' "$T/esc.rt"; then ok "escaped names read back"; else notok "escaped names read back"; cat "$T/esc.rt" "$T/e" | head -3 | sed 's/^/  /'; fi

# ---- perf script of a real three-thread program: per-thread profiles ----
pspeedscope "$PERF" > "$T/p.json" 2> "$T/e"; rc=$?
expect_rc "perf script input" 0 $rc
zcat "$PERF" | pfold --tid | awk '{n=split($1,a,";"); s[a[1]]+=$NF} END {for (k in s) print k, s[k]}' | sort > "$T/tid.want"
py "perf: one profile per thread named \"comm (tid)\", unit ns, busy weight = pfold --tid per thread" '
import json,sys,re
d=json.load(open(sys.argv[1]))
want={}
for l in open(sys.argv[2]):
    k,v=l.split(); m=re.match(r"(.*)-(\d+)/(\d+)$",k); want["%s (%s)"%(m.group(1),m.group(3))]=int(v)
got={}
for p in d["profiles"]:
    assert p["unit"]=="nanoseconds", p["unit"]
    assert len(p["samples"])==len(p["weights"])
    assert all(isinstance(w,int) and w>0 for w in p["weights"]), "non-integer or non-positive weight"
    assert p["endValue"]-p["startValue"]==sum(p["weights"]), "endValue-startValue != sum of weights"
    got[p["name"]]=sum(w for s,w in zip(p["samples"],p["weights"]) if s)
assert got==want, (got,want)
names=[p["name"] for p in d["profiles"]]
heavy=max(range(len(names)),key=lambda i:got[names[i]])
assert d["activeProfileIndex"]==heavy, (d["activeProfileIndex"],heavy)
print("ok")' "$T/p.json" "$T/tid.want"
py "perf: time order; idle gaps are empty samples (the sleeper thread), never frames; no equal neighbours" '
import json,sys
d=json.load(open(sys.argv[1]))
for p in d["profiles"]:
    s=p["samples"]
    assert all(s[i]!=s[i+1] for i in range(len(s)-1)), p["name"]+": equal neighbours not merged"
    idle=sum(w for x,w in zip(s,p["weights"]) if not x)
    if p["name"].startswith("sleeper"):
        assert idle > 0.3*sum(p["weights"]), "sleeper has too little idle time: %d"%idle
print("ok")' "$T/p.json"
zcat "$PERF" | pfold > "$T/perf.folded"
pfold "$T/p.json" > "$T/p.rt" 2> "$T/e"
expect_eq "perf -> speedscope -> pfold: same folded text" "$T/perf.folded" "$T/p.rt"

# ---- the binary stream ----
if zcat "$PERF" | pfold -b > "$T/p.sp" 2> "$T/e"; then
	pspeedscope --name x "$T/p.sp" > "$T/s.json" 2> "$T/e"; rc=$?
	expect_rc "binary stream input" 0 $rc
	pspeedscope --name x "$PERF" > "$T/p2.json"
	expect_eq "stream and perf script give the same speedscope file" "$T/p2.json" "$T/s.json"
	pfold "$T/s.json" > "$T/s.rt" 2> "$T/e"
	pfold "$T/p.sp" > "$T/s.want"
	expect_eq "stream -> speedscope -> pfold: same folded text as the stream" "$T/s.want" "$T/s.rt"
	pspeedscope "$T/s.json" > "$T/s2.json" 2> "$T/e"
	pfold "$T/s2.json" > "$T/s2.rt"
	expect_eq "speedscope -> speedscope again: same totals" "$T/s.want" "$T/s2.rt"
	cat "$T/p.sp" | pspeedscope --name x > "$T/s3.json" 2> "$T/e"
	expect_eq "stream on a pipe" "$T/s.json" "$T/s3.json"
else
	notok "pfold -b of the perf fixture failed"; sed 's/^/  /' "$T/e" | head -3
fi

# ---- thread selection ----
pspeedscope --thread '^sleeper' "$PERF" > "$T/t.json" 2> "$T/e"; rc=$?
n=$(grep -o '"type":"sampled","name":"[^"]*"' "$T/t.json" | wc -l)
if [ $rc = 0 ] && [ "$n" = 1 ] && grep -q '"name":"sleeper ([0-9]*)"' "$T/t.json"; then ok "--thread REGEX keeps the matching thread"; else notok "--thread (exit $rc, $n profiles)"; fi
tid=$(grep -o '"name":"parser ([0-9]*)"' "$T/p.json" | grep -o '[0-9]*')
pspeedscope -t "($tid)" "$PERF" | grep -o '"type":"sampled","name":"[^"]*"' > "$T/tn"
if [ "$(cat "$T/tn")" = "\"type\":\"sampled\",\"name\":\"parser ($tid)\"" ]; then ok "--thread matches the tid too"; else notok "--thread by tid"; cat "$T/tn" | sed 's/^/  /'; fi
pspeedscope --thread nosuchthread "$PERF" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q 'no thread matches' "$T/e"; then ok "--thread matching nothing: error, no output"; else notok "--thread matching nothing (exit $rc)"; fi
pspeedscope --thread '(' "$PERF" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'bad regular expression' "$T/e"; then ok "--thread with a bad regex: usage error"; else notok "bad regex (exit $rc)"; fi

# ---- --all-threads ----
pspeedscope --all-threads "$PERF" > "$T/all.json" 2> "$T/e"
py "--all-threads adds one merged profile (each stack under its comm) equal to the sum" '
import json,sys
d=json.load(open(sys.argv[1]))
p=d["profiles"]; f=[x["name"] for x in d["shared"]["frames"]]
assert len(p)==4 and p[3]["name"]=="all threads", [x["name"] for x in p]
busy=lambda q: sum(w for s,w in zip(q["samples"],q["weights"]) if s)
assert busy(p[3])==sum(busy(q) for q in p[:3])
assert all(s and f[s[0]] in ("parser","compressor","sleeper") for s in p[3]["samples"])
assert d["activeProfileIndex"]<3
print("ok")' "$T/all.json"

# ---- two-value (diff) input ----
printf 'a;b 3 5\na;c 4 1\n' > "$T/d.folded"
pspeedscope "$T/d.folded" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ ! -s "$T/o" ] && grep -q -- '--side a or --side b' "$T/e"; then ok "diff input refused: pick a side"; else notok "diff input (exit $rc)"; cat "$T/e" | sed 's/^/  /'; fi
pspeedscope --side a "$T/d.folded" > "$T/da.json" && pspeedscope --side b "$T/d.folded" > "$T/db.json"
if grep -q '"weights":\[3,4\]' "$T/da.json" && grep -q '"weights":\[5,1\]' "$T/db.json"; then ok "--side a / --side b"; else notok "--side a / --side b"; fi

# ---- deep stacks ----
awk 'BEGIN { s = "f0"; for (i = 1; i < 20000; i++) s = s ";f" i; print s, 3; print "f0;f1;f2", 2 }' > "$T/deep.folded"
pspeedscope -f folded "$T/deep.folded" > "$T/deep.json" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q '1 sample had stacks deeper than 3000 frames' "$T/e"; then ok "deep stack: cut with a warning"; else notok "deep stack (exit $rc)"; sed 's/^/  /' "$T/e"; fi
pfold "$T/deep.json" | awk '{print gsub(/;/, ";") + 1, $NF}' | sort -n > "$T/depths"
if [ "$(tr '\n' ' ' < "$T/depths")" = "3 2 3000 3 " ] && pfold "$T/deep.json" | grep -q ';f2998;\[truncated\] 3$'; then ok "deep stack: root-most 2999 frames + [truncated], weight kept"; else notok "deep stack shape"; cat "$T/depths" | sed 's/^/  /'; fi
pspeedscope -f folded --max-depth 50000 "$T/deep.folded" > /dev/null 2> "$T/e"
if [ ! -s "$T/e" ]; then ok "--max-depth raises the limit"; else notok "--max-depth"; fi

# ---- the reader: py-spy's speedscope output ----
pfold "$PYSPY" > "$T/py" 2> "$T/e"; rc=$?
expect_rc "py-spy speedscope file folds" 0 $rc
expect_grep "py-spy: thread name becomes the root, python frames keep file:line" '^MainThread;<module> \(app.py:88\);main \(app.py:80\);serve \(server.py:41\);handle \(server.py:22\);parse \(proto.py:10\) 60000000$' "$T/py"
total=$(awk '{s+=$NF} END {print s}' "$T/py")
if [ "$total" = 150000000 ]; then ok "py-spy: seconds become nanoseconds (15 samples x 10 ms)"; else notok "py-spy total $total"; fi
pspeedscope "$PYSPY" > "$T/py.json" 2> "$T/e"
pfold "$T/py.json" > "$T/py.rt"
expect_eq "py-spy -> pspeedscope -> pfold: same folded text" "$T/py" "$T/py.rt"
expect_grep "py-spy: threads keep their tid" '"name":"MainThread \(31337\)"' "$T/py.json"
expect_grep "frames keep file and line" '\{"name":"parse","file":"proto.py","line":10\}' "$T/py.json"
gzip -c "$PYSPY" > "$T/py.json.gz"
pfold "$T/py.json.gz" > "$T/pygz" 2>&1
expect_eq "gzip-compressed speedscope JSON" "$T/py" "$T/pygz"

# ---- the reader: evented profiles ----
cat > "$T/ev.json" <<'EOF'
{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"},{"name":"work","file":"w.c","line":3},{"name":"io"}]},
 "profiles":[{"type":"evented","name":"ev","unit":"milliseconds","startValue":0,"endValue":20,"events":[
 {"type":"O","frame":0,"at":0},{"type":"O","frame":1,"at":2},{"type":"C","frame":1,"at":7},{"type":"O","frame":2,"at":7},
 {"type":"C","frame":2,"at":8},{"type":"C","frame":0,"at":10},{"type":"O","frame":0,"at":15},{"type":"C","frame":0,"at":16}]}]}
EOF
pfold "$T/ev.json" > "$T/ev" 2> "$T/e"; rc=$?
printf 'main 5000000\nmain;io 1000000\nmain;work 5000000\n' > "$T/ev.want"
expect_eq "evented profile: open/close intervals become weights (ms -> ns)" "$T/ev.want" "$T/ev"
pspeedscope "$T/ev.json" > "$T/ev2.json" 2> "$T/e"
py "evented -> sampled: time order kept, the idle gap (10..15 ms) stays a gap" '
import json,sys
d=json.load(open(sys.argv[1])); p=d["profiles"][0]; f=[x["name"] for x in d["shared"]["frames"]]
st=[";".join(f[i] for i in s) for s in p["samples"]]
assert st==["main","main;work","main;io","main","","main"], st
assert p["weights"]==[2000000,5000000,1000000,2000000,5000000,1000000], p["weights"]
print("ok")' "$T/ev2.json"

# ---- the reader: bad input ----
head -c 300 "$PYSPY" > "$T/trunc.json"
pfold "$T/trunc.json" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'trunc.json: offset 300: malformed JSON: expected a value (line 1, column 301, at the end of the input)' "$T/e"; then ok "truncated JSON: error with byte offset, exit 2"; else notok "truncated JSON (exit $rc)"; sed 's/^/  /' "$T/e"; fi
if [ ! -s "$T/o" ]; then ok "truncated JSON: no output"; else notok "truncated JSON: output written"; fi
printf '{"$schema":"https://www.speedscope.app/file-format-schema.json",\n "shared":{"frames":[]},\n "profiles":[}\n' > "$T/bad.json"
pfold "$T/bad.json" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'offset 103: malformed JSON: expected a value (line 3, column 14' "$T/e"; then ok "syntax error: offset, line and column"; else notok "syntax error position (exit $rc)"; sed 's/^/  /' "$T/e"; fi
{ cat "$PYSPY"; echo '{}'; } > "$T/trail.json"
pfold "$T/trail.json" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'unexpected data after the JSON document' "$T/e"; then ok "trailing data is an error"; else notok "trailing data (exit $rc)"; fi
sed 's/\[0,1,2\]\]/[0,1,99]]/' "$PYSPY" > "$T/idx.json"
pfold "$T/idx.json" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'profiles\[0\].samples\[9\]\[2\]: not a frame index (the file has 11 frames)' "$T/e"; then ok "bad frame index: error names the element"; else notok "bad frame index (exit $rc)"; sed 's/^/  /' "$T/e"; fi
sed 's/{"type":"C","frame":0,"at":10},//' "$T/ev.json" > "$T/unbal.json"
pfold "$T/unbal.json" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'profiles\[0\].events\[5\]: "at" goes backwards\|not the innermost open frame\|still open' "$T/e"; then ok "unbalanced events: error"; else notok "unbalanced events (exit $rc)"; sed 's/^/  /' "$T/e"; fi
sed 's/"weights":\[0.01,/"weights":[0.01,0.01,/' "$PYSPY" > "$T/len.json"
pfold "$T/len.json" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '10 samples but 11 weights' "$T/e"; then ok "samples/weights length mismatch: error"; else notok "length mismatch (exit $rc)"; sed 's/^/  /' "$T/e"; fi
pspeedscope "$T/trunc.json" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && [ ! -s "$T/o" ]; then ok "pspeedscope on malformed JSON: exit 2, no output"; else notok "pspeedscope malformed (exit $rc)"; fi

# ---- output errors and empty input ----
pspeedscope < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'standard input: empty input' "$T/e"; then ok "empty input: error, exit 2"; else notok "empty input (exit $rc)"; fi
if [ -w /dev/full ]; then
	pspeedscope "$PERF" > /dev/full 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'No space left' "$T/e"; then ok "disk full: exit 2"; else notok "disk full (exit $rc)"; fi
else
	skip "disk full: exit 2" "/dev/full is not writable"
fi
pspeedscope -o "$T/out.json" "$T/d.folded" 2> /dev/null; rc=$?
if [ $rc = 2 ] && [ ! -e "$T/out.json" ]; then ok "-o FILE: no partial file left on error"; else notok "-o on error (exit $rc)"; fi
pspeedscope "$PERF" | head -c 100 > /dev/null; rc=${PIPESTATUS[0]}
expect_rc "| head: quiet, exit 0" 0 $rc

# ---- a large input stays bounded (the run spills to a temporary file) ----
zcat "$PERF" > "$T/p.txt"
for i in 1 2 3 4 5 6 7 8; do cat "$T/p.txt"; done > "$T/p8.txt"
TMPDIR=$T pspeedscope "$T/p8.txt" > "$T/p8.json" 2> "$T/e"; rc=$?
expect_rc "repeated input (8 copies)" 0 $rc
py "8 copies: each thread's busy weight is 8 times one copy" '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
busy=lambda q: sum(w for s,w in zip(q["samples"],q["weights"]) if s)
assert [8*busy(p) for p in a["profiles"]]==[busy(p) for p in b["profiles"]]
print("ok")' "$T/p.json" "$T/p8.json"
if [ -z "$(ls "$T" | grep -e pspeedscope -e stackpipe-)" ]; then ok "no temporary file left behind"; else notok "temporary file left in TMPDIR"; fi
pspeedscope "$T/p8.txt" 2> "$T/e" | head -c 100 > /dev/null; rc=${PIPESTATUS[0]}
if [ $rc = 0 ] && [ ! -s "$T/e" ]; then ok "| head on a large output: quiet, exit 0"; else notok "| head on a large output (exit $rc)"; sed 's/^/  /' "$T/e"; fi

# ---- the reader: JSON that takes the slow paths ----
cat > "$T/slow.json" <<'EOF2'
{ "exporter": {"nested": [1, {"x": [true, false, null]}]},
  "profiles": [ { "weights": [ 1e1, 2.5E0 , 0, 3 ], "unit": "none", "name": "solo", "type": "sampled",
                  "samples": [ [ 0 , 1.0 ], [0,2], [ ], [ 0, 1 ] ], "endValue": 15.5, "startValue": 0 } ],
  "shared": { "frames": [ {"name": "m\u00e9in", "line": null}, {"name": "tab\tquote\"", "file": "a\/b.c", "line": 7},
                          {"name": "\ud83d\udd25"} ] },
  "$schema": "https://www.speedscope.app/file-format-schema.json" }
EOF2
pfold "$T/slow.json" > "$T/slow" 2> "$T/e"; rc=$?
printf 'méin;tab\tquote" 13\nméin;🔥 2.5\n' > "$T/slow.want"
expect_eq "reader: any key order, escapes, exponents, spaces, 1.0 as an index, nested unknown keys" "$T/slow.want" "$T/slow"

# ---- the reader: every truncation of a file is an error, never a crash ----
n=$(wc -c < "$PYSPY"); bad=0; cnt=0
for off in $(seq 0 13 "$((n - 2))"); do
	head -c "$off" "$PYSPY" > "$T/cut.json"
	pfold -f speedscope "$T/cut.json" > /dev/null 2> "$T/e"; rc=$?
	cnt=$((cnt + 1))
	if [ $rc != 2 ] && ! { [ $off = 0 ] && [ $rc = 0 ]; }; then bad=$((bad + 1)); echo "  offset $off: exit $rc"; fi
done
if [ $bad = 0 ]; then ok "reader: $cnt truncations of the py-spy file all fail cleanly (exit 2)"; else notok "reader: $bad of $cnt truncations did not exit 2"; fi
