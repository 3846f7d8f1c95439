#!/bin/bash
# psvg on a Python profile (pcollect -- Debian's python3 running json, zlib
# and hashlib): the python palette by default (Python frames green, native
# blue, kernel orange), --root='<module>' opening at the script's first
# frame with the interpreter's start-up frames still in the data, and the
# "Python" button (in Chromium); the view starts at the widest match.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/t6-lib.sh"

PY=/usr/bin/python3
if [ ! -x $PY ]; then skip "psvg on a Python profile" "$PY is not installed"; exit 0; fi
t6_probe || exit 0
cat > "$T/work.py" <<'PYEOF'
import hashlib, json, time, zlib
def encode(n):
    return json.dumps({"k%d" % i: list(range(i % 50)) for i in range(n)})
def digest(s):
    return hashlib.sha256(zlib.compress(s.encode(), 9)).hexdigest()
end = time.time() + 2
while time.time() < end:
    digest(encode(300))
PYEOF
pcollect -q -o "$T/py.sp" -- $PY "$T/work.py" 2> "$T/pc.err"
expect_rc "pcollect -- python3 work.py" 0 $?
psvg "$T/py.sp" > "$T/plain.svg" 2> "$T/e"
expect_rc "psvg of the Python profile" 0 $?
psvg --root='^<module>' "$T/py.sp" > "$T/root.svg" 2> "$T/e"
expect_rc "psvg --root='^<module>'" 0 $?
# the colours of the data, by name: "name rrggbb"
python3 - "$T/plain.svg" > "$T/colours" <<'PYEOF'
import json, re, sys
d = open(sys.argv[1]).read()
names = json.loads(re.search(r'names:(\[.*?\]),\ncolours:', d, re.S).group(1))
col = re.search(r'colours:"([0-9a-f]*)"', d).group(1)
for i, n in enumerate(names):
    print(col[6 * i:6 * i + 6], n)
PYEOF
fam() { python3 -c '
import re, sys
n = {}
for line in open(sys.argv[2]):
    c, name = line.rstrip("\n").split(" ", 1)
    if not re.search(sys.argv[1], name): continue
    r, g, b = int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
    f = "green" if g > r and g > b else "orange" if b == 0 and r > g else "blue" if b > r and b > g else "other"
    n[f] = n.get(f, 0) + 1
print(" ".join("%s:%d" % kv for kv in sorted(n.items())))' "$1" "$T/colours"; }
py=$(fam '\.py:[0-9]+\)$'); nat=$(fam '^(_start|Py_RunMain|PyEval_EvalCode|__libc_start_main(_impl)?|\[python3[.0-9]*\])$')
if [[ "$py" =~ ^green:[0-9]+$ ]]; then ok "default palette: every Python frame green ($py)"; else notok "default palette: Python frames green ($py)"; fi
if [[ "$nat" =~ ^blue:[0-9]+$ ]]; then ok "default palette: native frames blue ($nat)"; else notok "default palette: native frames blue ($nat)"; fi
psvg --colors hot "$T/py.sp" > "$T/hot.svg"
if ! cmp -s "$T/hot.svg" "$T/plain.svg" && ! grep -q 'colors' "$T/e"; then ok "--colors hot still draws hot"; else notok "--colors hot"; fi
if grep -q '<text id="pyroot"[^>]*>Python</text>' "$T/plain.svg"; then ok "the SVG has a Python button"; else notok "the SVG has a Python button"; fi
pfold "$T/py.sp" | grep -v -e '\.py:' -e '<frozen ' > "$T/native.folded"
psvg "$T/native.folded" > "$T/nat.svg" 2> /dev/null
if ! grep -q 'id="pyroot"' "$T/nat.svg" && ! grep -q ',py:\[' "$T/nat.svg"; then ok "a profile without Python frames: no button, hot palette"; else notok "no Python frames: no button"; fi
psvg --root='(' "$T/py.sp" > /dev/null 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q "^psvg: --root: '(' is not a regular expression" "$T/e"; then ok "--root with a bad regex: usage error"; else notok "--root='(' (exit $rc)"; cat "$T/e"; fi

browser_ready "psvg Python views in Chromium" || exit 0
(cd "$SP_TOP/tests/browser" && timeout 300 node pyroot.test.js "$T/root.svg" "$T/plain.svg") 2>&1
[ $? = 124 ] && notok "psvg Python browser checks timed out"
exit 0
