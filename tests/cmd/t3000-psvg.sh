#!/bin/bash
# psvg: options, layout data, escaping, errors.  The SVG's frame data is
# decoded here (by a small Python reader of the format in formats/svg.c)
# and turned back into folded stacks, so every frame is checked, not only
# the ones the overview draws.  Browser behaviour: t3100-psvg-browser.sh.
. "$(dirname "$0")/../lib.sh"

INF=$CONF/inferno
if ! command -v python3 > /dev/null; then
	skip psvg "python3 is needed to decode the SVG's data (apt-get install python3)"
	exit 0
fi
cat > "$T/chk.py" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
T = "0123456789abcdefghijklmnopqrstuv"; C = "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$%"
LUT = {c: i for i, c in enumerate(T)}; LUT.update({c: 32 + i for i, c in enumerate(C)})

def load(path):
    root = ET.parse(path).getroot()          # raises on any XML error
    data = [s.text for s in root.iter(NS + 'script') if s.text and 'var spflame=' in s.text][0]
    d = {}
    for k in ('n', 'diff', 'neg', 'chart', 'removed', 'total', 'total2', 'scale', 'factor', 'W', 'minpx', 'inv', 'fh', 'maxdelta'):
        m = re.search(r'[{,\s]' + k + r':([-0-9.e+]+)', data)
        d[k] = float(m.group(1))
    for k in ('unit', 'nametype', 'sc'):
        m = re.search(r'[{,\s]' + k + r':("(?:[^"\\]|\\.)*")', data)
        d[k] = json.loads(m.group(1))
    d['names'] = json.loads(re.search(r'names:(\[.*?\]),\ncolours:', data, re.S).group(1))
    d['colours'] = re.search(r'colours:"([0-9a-f]*)"', data).group(1)
    s = re.search(r'frames:"([^"]*)"', data).group(1)
    p = [0]
    def num():
        v = 0
        while True:
            c = LUT[s[p[0]]]; p[0] += 1
            if c < 32: return v * 32 + c
            v = v * 32 + c - 32
    n = int(d['n'])
    fr = [dict(depth=0, name=0, x=0, w=d['total'], other=d['total2'], sd=0, parent=-1)]
    cur = {1: 0}; anc = {0: 0}; prev = 0
    for i in range(1, n):
        dep = prev + 1 - num(); nm = num(); x = cur[dep] + num(); w = num()
        f = dict(depth=dep, name=nm, x=x, w=w, parent=anc[dep - 1])
        if d['diff']:
            f['other'] = num(); z = num(); f['sd'] = -(z + 1) // 2 if z % 2 else z // 2
        cur[dep] = x + w; cur[dep + 1] = x; anc[dep] = i; prev = dep
        fr.append(f)
    assert p[0] == len(s), 'trailing frame data'
    d['frames'] = fr
    d['root'] = root
    return d

def num_text(v):
    return str(int(v)) if v == int(v) else repr(v)

def folded(d):
    fr = d['frames']; names = d['names']; sc = d['scale']
    kid_w = [0] * len(fr); kid_o = [0] * len(fr)
    for f in fr[1:]:
        kid_w[f['parent']] += f['w']; kid_o[f['parent']] += f['other'] if d['diff'] else 0
        pf = fr[f['parent']]
        assert f['x'] >= pf['x'] and f['x'] + f['w'] <= pf['x'] + pf['w'], 'child outside its parent'
    out = []
    for i, f in enumerate(fr):
        if i == 0: continue
        path = []; j = i
        while j > 0: path.append(names[fr[j]['name']]); j = fr[j]['parent']
        st = ';'.join(reversed(path))
        sw = (f['w'] - kid_w[i]) / sc
        if d['diff']:
            so = (f['other'] - kid_o[i]) / sc
            a, b = (sw, so) if d['removed'] else (so, sw)
            if a or b: out.append(st + ' ' + num_text(a) + ' ' + num_text(b))
        elif sw: out.append(st + ' ' + num_text(sw))
    return out

def static_rects(d):
    g = [e for e in d['root'].iter(NS + 'g') if e.get('id') == 'frames'][0]
    return g.findall(NS + 'rect')

cmd, path = sys.argv[1], sys.argv[2]
if cmd == 'xml':
    ET.parse(path); print('ok'); sys.exit(0)
d = load(path)
if cmd == 'xml': print('ok')
elif cmd == 'folded':
    for l in sorted(folded(d), key=lambda s: s.encode('utf-8', 'surrogateescape')): print(l)
elif cmd == 'get': print(d[sys.argv[3]])
elif cmd == 'names':
    for nm in d['names']: print(nm)
elif cmd == 'colour':
    i = d['names'].index(sys.argv[3]); print(d['colours'][6 * i:6 * i + 6])
elif cmd == 'static': print(len(static_rects(d)))
elif cmd == 'visible':
    # frames the overview must draw: w*ppu >= minpx, whole subtrees skipped
    ppu = (d['W'] - 20) / d['frames'][0]['w']; hidden = set(); cnt = 0
    for i, f in enumerate(d['frames']):
        if f['parent'] in hidden or f['w'] <= 0 or f['w'] * ppu < d['minpx']: hidden.add(i); continue
        if i == 0 or f['w'] * ppu >= 3: cnt += 1     # narrower: on the sliver grid, not a rect
    print(cnt)
elif cmd == 'texts':
    g = [e for e in d['root'].iter(NS + 'g') if e.get('id') == 'frames'][0]
    for t in g.findall(NS + 'text'): print(t.text)
elif cmd == 'first-children':
    fr = d['frames']
    for f in fr[1:]:
        if f['parent'] == 0: print(d['names'][f['name']], f['x'], f['w'])
elif cmd == 'refcolours':
    # colours of inferno's reference SVG (same --hash formula) vs ours
    ref = ET.parse(sys.argv[3]).getroot(); want = {}
    for g in ref.iter(NS + 'g'):
        t = g.find(NS + 'title'); r = g.find(NS + 'rect')
        if t is None or r is None: continue
        nm = t.text.rsplit(' (', 1)[0]
        m = re.match(r'rgb\((\d+),(\d+),(\d+)\)', r.get('fill'))
        if m and nm != 'all': want[nm] = '%02x%02x%02x' % tuple(int(v) for v in m.groups())
    same = diff = 0
    for nm, c in want.items():
        if nm not in d['names']: continue
        i = d['names'].index(nm)
        if d['colours'][6 * i:6 * i + 6] == c: same += 1
        else: diff += 1; print('differs:', nm, c, d['colours'][6 * i:6 * i + 6], file=sys.stderr)
    print(same, diff)
PY
chk() { python3 "$T/chk.py" "$@"; }
# pfold's folded text as psvg names frames: annotations (_[k] ...) dropped
strip_ann() { sed -E 's/_\[[kjiw]\](;| )/\1/g' | LC_ALL=C sort; }

# --help and usage errors
psvg --help > "$T/h" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '^usage: psvg' "$T/h" && grep -q -- '--show-removed' "$T/h"; then ok "--help prints the synopsis, exit 0"; else notok "--help (exit $rc)"; fi
for bad in --no-such-option "--colors=plaid" "--sort=size" "--bgcolors=pink" "--width=abc" "--minwidth=x%" "--search-color=red"; do
	psvg "$bad" < /dev/null > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q '^usage: psvg' "$T/e" && [ ! -s "$T/o" ]; then ok "usage error $bad: exit 2, synopsis, no output"; else notok "usage error $bad (exit $rc)"; fi
done
psvg "$T/missing" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^psvg: $T/missing: No such file or directory" "$T/e" && [ ! -s "$T/o" ]; then ok "missing file: clear error, exit 2, no output"; else notok "missing file (exit $rc)"; cat "$T/e"; fi

if [ ! -d "$INF" ]; then
	skip "psvg fixtures" "conformance fixtures not found at $CONF"
	exit 0
fi
VX=$INF/svg-sorted-input/input.folded
JAVA=$INF/svg-colors-java/input.folded
DIFF=$INF/svg-differential/input.folded

# Every frame survives: the decoded tree, folded again, is the input folded.
for f in "$VX" "$JAVA" "$INF/svg-colors-js/input.folded" "$INF/svg-example-perf-stacks/input.folded" "$INF/svg-austin/input.folded"; do
	[ -f "$f" ] || { skip "round trip $(basename "$(dirname "$f")")" "no input"; continue; }
	psvg "$f" > "$T/o.svg" 2> "$T/e"
	pfold "$f" | strip_ann > "$T/want"
	chk folded "$T/o.svg" > "$T/got" 2> "$T/e2"
	expect_eq "every frame is in the data: $(basename "$(dirname "$f")")" "$T/want" "$T/got"
done
psvg "$DIFF" > "$T/d.svg"
pfold "$DIFF" | strip_ann > "$T/want"; chk folded "$T/d.svg" > "$T/got"
expect_eq "differential: both values of every frame are in the data" "$T/want" "$T/got"
psvg --reverse "$VX" > "$T/o.svg"
# (one blank before the count: a frame may end in a space, "write0_[j];  3" has a last frame " ")
awk '{ n=$NF; sub(/[ \t][0-9.]+$/, ""); sub(/;$/, ""); k=split($0, a, ";"); s=a[k]; for (i=k-1; i>=1; i--) s=s ";" a[i]; print s " " n }' "$VX" | pfold | strip_ann > "$T/want"
chk folded "$T/o.svg" > "$T/got"
expect_eq "--reverse merges the stacks leaf first" "$T/want" "$T/got"

# The overview draws exactly the frames at least --minwidth wide.
psvg "$VX" > "$T/o.svg"
a=$(chk static "$T/o.svg"); b=$(chk visible "$T/o.svg")
if [ "$a" = "$b" ] && [ "$a" -gt 100 ]; then ok "the overview draws the $a frames >= 3 px as rects (as the script would)"; else notok "overview draws $a frames, want $b"; fi
psvg --minwidth=2% "$VX" > "$T/m.svg"
a=$(chk static "$T/m.svg"); b=$(chk visible "$T/m.svg"); n1=$(chk get "$T/o.svg" n); n2=$(chk get "$T/m.svg" n)
if [ "$a" = "$b" ] && [ "$a" -lt "$(chk static "$T/o.svg")" ] && [ "$n1" = "$n2" ]; then ok "--minwidth=2% draws fewer frames ($a) but keeps all $n2 in the data"; else notok "--minwidth=2%: drew $a (want $b), data $n2 vs $n1"; fi

# Determinism, stdin, gzip
psvg "$VX" > "$T/a.svg"; psvg < "$VX" > "$T/b.svg"
expect_eq "same input, same bytes (stdin or file)" "$T/a.svg" "$T/b.svg"
gzip -c "$VX" > "$T/vx.gz"; psvg "$T/vx.gz" > "$T/b.svg"
expect_eq "gzip input is read transparently" "$T/a.svg" "$T/b.svg"
tac "$VX" | psvg > "$T/b.svg"
expect_eq "input order does not matter (sorted by name)" "$T/a.svg" "$T/b.svg"

# Options
psvg --title 'T <&> "q"' --subtitle 'S & <sub>' --countname 'bytes<>' --nametype 'Fn&:' "$VX" > "$T/o.svg"
if chk xml "$T/o.svg" > /dev/null && grep -q '<text id="title" [^>]*>T &lt;&amp;&gt; &quot;q&quot;</text>' "$T/o.svg" &&
   grep -q '<text id="subtitle" [^>]*>S &amp; &lt;sub&gt;</text>' "$T/o.svg" && [ "$(chk get "$T/o.svg" unit)" = 'bytes<>' ] &&
   [ "$(chk get "$T/o.svg" nametype)" = 'Fn&:' ]; then ok "--title, --subtitle, --countname, --nametype (escaped)"; else notok "title/subtitle/countname/nametype"; fi
psvg --inverted "$VX" > "$T/o.svg"; psvg --flamechart "$VX" > "$T/c.svg"
if grep -q '>Icicle Graph</text>' "$T/o.svg" && grep -q '>Flame Chart</text>' "$T/c.svg" && [ "$(chk get "$T/o.svg" inv)" = 1.0 ]; then ok "--inverted and --flamechart: default titles, icicle layout flag"; else notok "inverted/flamechart titles"; fi
psvg --width 800 --height 20 --fontsize 10 --fonttype 'Andale Mono, monospace' "$VX" > "$T/o.svg"
if grep -q 'width="800" height="[0-9.]*" viewBox="0 0 800 ' "$T/o.svg" && grep -q 'height="19" fill=' "$T/o.svg" &&
   grep -q 'font-family:"Andale Mono", monospace;font-size:10px' "$T/o.svg"; then ok "--width, --height, --fontsize, --fonttype (quoted unless generic)"; else notok "width/height/font options"; fi
psvg --fonttype 'x";}</style><script>alert(1)</script>' "$VX" > "$T/o.svg"
if chk xml "$T/o.svg" > /dev/null && ! grep -q '<script>alert' "$T/o.svg"; then ok "--fonttype cannot end the style sheet"; else notok "--fonttype escaping"; fi
psvg --notes 'a -- b --> <c> -' "$VX" > "$T/o.svg"
if chk xml "$T/o.svg" > /dev/null && grep -q '^<!-- NOTES: a - - b - -> <c> -  -->$' "$T/o.svg"; then ok "--notes is an XML comment that cannot be ended early"; else notok "--notes"; grep NOTES "$T/o.svg"; fi
psvg --factor 2.5 "$VX" > "$T/o.svg"
if [ "$(chk get "$T/o.svg" factor)" = 2.5 ]; then ok "--factor reaches the labels' data"; else notok "--factor"; fi
psvg --sort=weight "$VX" > "$T/o.svg"
chk first-children "$T/o.svg" > "$T/fc"
if [ "$(head -1 "$T/fc" | cut -d' ' -f1)" = java ] && awk 'NR>1 && $3 > prev { bad=1 } { prev=$3 } END { exit bad }' "$T/fc"; then ok "--sort=weight: heaviest first"; else notok "--sort=weight"; cat "$T/fc"; fi
psvg "$VX" > "$T/o.svg"; chk first-children "$T/o.svg" | cut -d' ' -f1 > "$T/fc"
if LC_ALL=C sort -c "$T/fc"; then ok "default order: by name"; else notok "default order not by name"; fi
psvg --bgcolors '#123456' "$VX" > "$T/o.svg"; psvg --bgcolors blue "$VX" > "$T/b.svg"
if grep -q 'stop-color="#123456" offset="5%"/><stop stop-color="#123456"' "$T/o.svg" && grep -q 'stop-color="#e0e0ff"' "$T/b.svg"; then ok "--bgcolors flat and gradient"; else notok "--bgcolors"; fi
psvg --search-color '#7d7d7d' "$VX" > "$T/o.svg"
if [ "$(chk get "$T/o.svg" sc)" = '#7d7d7d' ]; then ok "--search-color"; else notok "--search-color"; fi

# Colours: --hash is flamegraph.pl's (and inferno's) name hash
for c in svg-sorted-input svg-colors-java svg-colors-js; do
	args=$(tr '\n' ' ' < "$INF/$c/args")
	(cd "$INF/$c" && psvg $args input.folded) > "$T/o.svg" 2> /dev/null
	zcat -f "$INF/$c/expected.svg"* > "$T/ref.svg" 2> /dev/null
	set -- $(chk refcolours "$T/o.svg" "$T/ref.svg" 2> "$T/e") x x
	if [ "${1:-0}" -ge 10 ] && [ "${2:-1}" = 0 ]; then ok "--hash colours equal inferno's reference ($c: $1 names)"; else notok "--hash colours of $c: $1 same, $2 differ"; head -3 "$T/e"; fi
done
psvg --colors java "$JAVA" > "$T/o.svg"
k=$(chk colour "$T/o.svg" sys_write); j=$(chk names "$T/o.svg" | grep -m1 '^Lorg/\|^org/')
if [ "${k:4:2}" = 00 ] && [ -n "$j" ]; then ok "--colors java: kernel frames (_[k]) orange"; else notok "--colors java kernel colour $k"; fi
printf 'main;PyEval_EvalFrameDefault;run (app.py:12);sys_read_[k] 5\nmain;foo_[i] 2\nmain;jitted_[j] 1\nmain;libc_read 1\n' > "$T/py.folded"
psvg --colors python "$T/py.folded" > "$T/o.svg"
set -- $(for nm in 'run (app.py:12)' sys_read foo jitted libc_read PyEval_EvalFrameDefault; do chk colour "$T/o.svg" "$nm"; done)
# py-spy's three families: Python green, kernel orange, native (inlined,
# JIT, libc, the interpreter) blue
fam=$(for c in "$@"; do r=$((16#${c:0:2})) g=$((16#${c:2:2})) b=$((16#${c:4:2}))
	if [ $g -gt $r ] && [ $g -gt $b ]; then echo green; elif [ $b = 0 ] && [ $r -gt $g ]; then echo orange
	elif [ $b -gt $r ] && [ $b -gt $g ]; then echo blue; else echo other; fi; done | paste -sd' ')
if [ "$fam" = "green orange blue blue blue blue" ]; then ok "--colors python: Python frames green, kernel orange, native blue"; else notok "--colors python families: $fam ($*)"; fi
psvg --colors mem "$VX" > "$T/o.svg"
if grep -q 'stop-color="#e0ffe0"' "$T/o.svg"; then ok "--colors mem: green background by default"; else notok "mem background"; fi
psvg "$VX" > "$T/a.svg"; psvg "$JAVA" > "$T/b.svg"
if [ "$(chk colour "$T/a.svg" java_start)" = "$(chk colour "$T/b.svg" java_start)" ]; then ok "default colours are fixed per name, across graphs"; else notok "default colour differs between graphs"; fi

# --cp: palette.map read, extended, written sorted
mkdir -p "$T/cp"; printf 'java_start->rgb(1,2,3)\nbad line\nx->rgb(300,0,0)\n' > "$T/cp/palette.map"
(cd "$T/cp" && psvg --cp "$VX" > o.svg 2> e); rc=$?
if [ $rc = 0 ] && [ "$(chk colour "$T/cp/o.svg" java_start)" = 010203 ] && grep -q 'ignored 2 lines with invalid format' "$T/cp/e" &&
   grep -q '^sys_write_\[k\]->rgb(' "$T/cp/palette.map" && LC_ALL=C sort -c "$T/cp/palette.map" && ! grep -q 'bad line' "$T/cp/palette.map"; then
	ok "--cp: colours from palette.map, bad lines reported, new names added, sorted"
else notok "--cp (exit $rc)"; cat "$T/cp/e"; fi
cp "$T/cp/palette.map" "$T/cp/p1"; (cd "$T/cp" && psvg --cp "$VX" > o2.svg 2> /dev/null)
if cmp -s "$T/cp/p1" "$T/cp/palette.map" && cmp -s "$T/cp/o.svg" "$T/cp/o2.svg"; then ok "--cp is stable on a second run"; else notok "--cp second run changed"; fi

# Differential
psvg "$DIFF" > "$T/d.svg"; psvg --negate "$DIFF" > "$T/n.svg"
if [ "$(chk get "$T/d.svg" diff)" = 1.0 ] && [ "$(chk get "$T/n.svg" neg)" = 1.0 ]; then ok "two-value input draws a differential graph; --negate"; else notok "diff flags"; fi
printf 'a;b 5 5\na;gone;deep 7 0\na;new 0 3\n' > "$T/rm.folded"
psvg "$T/rm.folded" > "$T/o.svg"; psvg --show-removed "$T/rm.folded" > "$T/r.svg"
if grep -q '>1 path of the first profile (7) is gone from the second: psvg --show-removed draws them<' "$T/o.svg" &&
   grep -q 'class="gone"' "$T/r.svg" && [ "$(chk get "$T/r.svg" total)" = 12.0 ] && [ "$(chk get "$T/o.svg" total)" = 8.0 ]; then
	ok "vanished paths are announced; --show-removed draws the first profile's shape, dashed"
else notok "removed paths"; grep removed "$T/o.svg"; fi
pfold "$T/rm.folded" > "$T/want"; chk folded "$T/r.svg" > "$T/got"
expect_eq "--show-removed keeps both values of every frame" "$T/want" "$T/got"

# Flame chart: input order, adjacent frames merge
printf 'a;b 1\na;b 2\nc 1\na;b 1\n' | psvg --flamechart > "$T/c.svg"
chk first-children "$T/c.svg" > "$T/got"
printf 'a 0 3\nc 3 1\na 4 1\n' > "$T/want"
expect_eq "--flamechart: time order, only adjacent samples merge" "$T/want" "$T/got"

printf 'prog 100 [000] 3.000000: 1 cpu-clock:\n\t    1000 late (/bin/x)\n\t    2000 main (/bin/x)\n\nprog 100 [000] 1.000000: 1 cpu-clock:\n\t    1100 early (/bin/x)\n\t    2000 main (/bin/x)\n\nprog 100 [000] 2.000000: 1 cpu-clock:\n\t    1100 early (/bin/x)\n\t    2000 main (/bin/x)\n\n' > "$T/t.perf"
psvg --flamechart "$T/t.perf" > "$T/c.svg" 2> /dev/null
python3 - "$T/chk.py" "$T/c.svg" > "$T/got" <<'PY'
import sys
src = open(sys.argv[1]).read().split("cmd, path = sys.argv[1]")[0]
exec(src)
d = load(sys.argv[2])
for f in d['frames'][1:]: print(d['names'][f['name']], f['depth'], int(f['x']), int(f['w']))
PY
printf 'prog 1 0 3\nmain 2 0 3\nearly 3 0 2\nlate 3 2 1\n' > "$T/want"
expect_eq "--flamechart orders samples by timestamp (perf script), thread root first" "$T/want" "$T/got"
if pfold -b "$T/t.perf" > "$T/t.sp" 2> /dev/null && psvg --flamechart "$T/t.sp" > "$T/c2.svg" 2> /dev/null; then
	expect_eq "--flamechart from the binary stream uses its timestamps" "$T/c.svg" "$T/c2.svg"
else skip "--flamechart from the binary stream" "pfold -b failed"; fi

# Hostile names: valid XML, nothing markup-like reaches the document
printf 'root;<script>alert(1)</script> 3\nroot;]]><script>alert(2)</script>;x 2\nroot;a\0b\033[31mc\255d\377\300\257e 4\nroot;"q" & '"'"'s'"'"' 1\nroot;</text></g><svg onload=alert(3)> 2\nroot;\342\200\250line\355\240\200 1\n' > "$T/evil.folded"
psvg --title '<script>alert(4)</script>&' "$T/evil.folded" > "$T/e.svg" 2> "$T/err"; rc=$?
chk names "$T/e.svg" > "$T/names" 2> "$T/e2"
cat > "$T/want" <<'W'
all
root
<script>alert(1)</script>
]]><script>alert(2)</script>
x
a\x00b\x1b[31mc\xadd\xff\xc0\xafe
"q" & 's'
</text></g><svg onload=alert(3)>
line\xed\xa0\x80
W
printf '\342\200\250' > "$T/ls"; sed -i "s/^line/$(cat "$T/ls")line/" "$T/want"
LC_ALL=C sort "$T/want" > "$T/w2"; LC_ALL=C sort "$T/names" > "$T/n2"
if [ $rc = 0 ] && chk xml "$T/e.svg" > /dev/null; then ok "hostile names: the SVG is well-formed XML"; else notok "hostile names: not well-formed (exit $rc)"; cat "$T/e2" | tail -2; fi
expect_eq "hostile names: invalid bytes shown as \\xHH, the rest kept as text" "$T/w2" "$T/n2"
if ! grep -q '<script>alert\|<svg onload' "$T/e.svg"; then ok "hostile names: no markup from names or title in the document"; else notok "markup from names leaked"; fi
long=$(printf 'std::map<%.0s' $(seq 1 3000))
printf 'a;%s 5\n' "$long" | psvg > "$T/o.svg" 2> /dev/null
if chk xml "$T/o.svg" > /dev/null && [ "$(chk names "$T/o.svg" | awk 'length > 20000' | wc -l)" = 1 ]; then ok "a 27 kB template name is kept whole"; else notok "long name"; fi

# Other inputs: perf script (thread root frames), the binary stream
PERF=$CONF/flamegraph/perf-cycles-instructions-01/input.txt
if [ -f "$PERF" ]; then
	psvg "$PERF" > "$T/p.svg" 2> /dev/null
	pfold "$PERF" | strip_ann > "$T/want"; chk folded "$T/p.svg" > "$T/got"
	expect_eq "perf script input: same stacks as pfold, comm as root frame" "$T/want" "$T/got"
	if pfold -b "$PERF" > "$T/p.sp" 2> /dev/null; then
		psvg "$T/p.sp" > "$T/s.svg" 2> /dev/null
		expect_eq "binary stream input draws the same graph as perf script input" "$T/p.svg" "$T/s.svg"
	else skip "binary stream input" "pfold -b failed"; fi
fi

# Errors and bad input
: | psvg > "$T/o.svg" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'standard input: empty input' "$T/e" && grep -q 'ERROR: No valid input' "$T/o.svg" && chk xml "$T/o.svg" > /dev/null; then ok "empty input: error, exit 2, an SVG that says so"; else notok "empty input (exit $rc)"; fi
printf 'a;b 0\n' | psvg > "$T/o.svg" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'no stack counts' "$T/e" && grep -q 'ERROR: No valid input' "$T/o.svg"; then ok "input without counts: error, exit 2, an SVG that says so"; else notok "no counts (exit $rc)"; fi
printf 'a;b 1\nno count here\na;c 2\n' > "$T/bad.folded"
psvg "$T/bad.folded" > "$T/o.svg" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && grep -q "^psvg: $T/bad.folded:2: " "$T/e" && grep -q '^psvg: 1 bad line skipped' "$T/e" && [ "$(chk folded "$T/o.svg" | wc -l)" = 2 ]; then ok "a bad line is reported as FILE:LINE, skipped and counted"; else notok "bad line (exit $rc)"; cat "$T/e"; fi
printf 'a;b 1.5\na;c 0.25\n' | psvg > "$T/o.svg"
printf 'a;b 1.5\na;c 0.25\n' > "$T/want"; chk folded "$T/o.svg" > "$T/got"
expect_eq "fractional counts are kept exactly" "$T/want" "$T/got"
{ cat "$INF/svg-huge-sample-counts/input.folded"; echo 'a;c 9007199254740993'; } | psvg > "$T/o.svg" 2> "$T/e"; rc=$?
if [ $rc = 0 ] && chk xml "$T/o.svg" > /dev/null && [ "$(chk folded "$T/o.svg" | wc -l)" = 3 ]; then ok "huge counts (above 2^53) render"; else notok "huge counts (exit $rc)"; cat "$T/e"; fi
if [ -w /dev/full ]; then
	psvg "$VX" > /dev/full 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'write error' "$T/e"; then ok "disk full: 'write error', exit 2"; else notok "disk full not reported (exit $rc)"; fi
else skip "disk full" "/dev/full not writable"; fi
psvg -o "$T/out.svg" "$VX" && cmp -s "$T/out.svg" "$T/a.svg"
if [ $? = 0 ]; then ok "-o FILE writes the same document"; else notok "-o FILE"; fi
