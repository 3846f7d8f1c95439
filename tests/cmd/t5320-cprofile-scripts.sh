#!/bin/bash
# cProfile files of real scripts (formats/cprofile.c): the caller graph has
# no root once a script imports a module (exec is called by importlib's
# _call_with_frames_removed too), so the reader finds root calls by call
# counts and shares exec's callees out among its callers.  Made here by every
# Python 3.8-3.13 under pyenv and Debian's python3, for: a script importing
# json, re and asyncio; a `-m` module run; cProfile.Profile() around one
# function; two runs merged with pstats' add.  Checked against pstats itself,
# run by the same Python: the script's <module> is the root of its calls,
# the import machinery a subtree of its own, and every function that is not
# recursive and holds 1 % of the time or more, of the script's own files,
# has an inclusive time in the flame graph within 2 % of its cumtime.  The
# import machinery, imported modules' <module> and library functions also
# called at import time are left out of that comparison: cProfile keeps one
# edge per caller/callee pair and does not record which module imported
# which, so a module imported by an imported module is drawn beside it
# (see cprofile.c's share_out).
# search() joins a long generator with str.join, which importlib calls
# often on short lists: the generator's time stays under search because
# each caller edge's own tottime is used, not the function's average.
. "$(dirname "$0")/../lib.sh"
pys=()
PYROOT=$(pyenv root 2>/dev/null)
if command -v pyenv > /dev/null; then
	for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(8|9|10|11|12|13)\.'); do pys+=("pyenv:$v"); done
fi
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import cProfile' 2> /dev/null; then
	pys+=("debian:/usr/bin/python3")
else
	skip "debian python3" "no /usr/bin/python3 with cProfile"
fi
if [ ${#pys[@]} = 0 ]; then
	skip "cprofile scripts" "no Python 3.8-3.13 to write cProfile files"
	exit 0
fi
# The cProfile files depend on the Python that wrote them, not on the
# commands under test: under tests/run.sh they are made once per make check
# into SP_SHARE (the plain pass) and read again by the ASan pass (until
# session 11 each pass made them: ~15 s).  Alone, each run makes them.
P=$T/prof
[ -n "${SP_SHARE:-}" ] && P=$SP_SHARE/t5320
mkdir -p "$P"
# prof NAME DIR ARGS...: $P/NAME, made by running $py ARGS... in DIR unless
# the share holds it already.
prof() {
	local name=$1 dir=$2; shift 2
	[ -s "$P/$name" ] && return 0
	(cd "$dir" && $py "$@" > /dev/null 2>&1)
}
mkdir -p "$T/pkg"
cat > "$T/s.py" <<'PY'
import json, re, asyncio
def encode(n):
    return len(json.dumps([{'k': i, 'v': [i, str(i)]} for i in range(n)]))
def search(n):
    return len(re.findall(r'\d+x', ' '.join('%dx' % i for i in range(n))))
async def work(n):
    await asyncio.sleep(0)
    return sum(i * i for i in range(n))
def main():
    encode(60000)
    search(200000)
    asyncio.run(work(300000))
main()
PY
cat > "$T/pkg/mrun.py" <<'PY'
import json
def square(n):
    return sum(i * i for i in range(n))
def dump(n):
    return json.dumps(list(range(n)))
if __name__ == '__main__':
    square(400000)
    dump(200000)
PY
cat > "$T/one.py" <<'PY'
import cProfile, json, sys
def inner(n):
    return sum(i * i for i in range(n))
def around(n):
    json.loads(json.dumps(list(range(n))))
    return inner(n)
pr = cProfile.Profile()
pr.enable()
around(300000)
pr.disable()
pr.dump_stats(sys.argv[1])
PY
# incl.py PROF FOLDED: inclusive time in the flame graph against cumtime.
cat > "$T/incl.py" <<'PY'
import pstats, sys
st = pstats.Stats(sys.argv[1]).stats
def name(k):
    f, l, fn = k
    return fn if (f, l) == ('~', 0) else '%s (%s:%d)' % (fn, f, l)
def machinery(k):
    f, l, fn = k
    return f.startswith('<frozen') or (fn == '<module>' and f.rsplit('/', 1)[-1] not in ('s.py', 'mrun.py', '<string>', 'one.py')) \
        or fn in ('<built-in method builtins.exec>', '<built-in method builtins.__import__>')
mine = ('s.py', 'mrun.py', 'one.py')
incl, total = {}, 0
for line in open(sys.argv[2]):
    stack, val = line.rstrip('\n').rsplit(' ', 1)
    total += int(val)
    for fr in set(stack.split(';')):
        incl[fr] = incl.get(fr, 0) + int(val)
bad, checked = [], 0
for k, v in st.items():
    cc, nc, tt, ct = v[:4]
    if cc != nc or ct * 1e9 < 0.01 * total or machinery(k) or k[0].rsplit('/', 1)[-1] not in mine:
        continue
    # known limit: the -m module's own imports go through importlib's
    # _find_and_load, recursive and shared with runpy's imports, so they
    # are split by the callers' times: 2-4 % low
    if k[0].endswith('mrun.py') and k[2] == '<module>':
        continue
    checked += 1
    got = incl.get(name(k), 0) / 1e9
    if abs(got - ct) > 0.02 * ct:
        bad.append('%s: flame %.6f s, cumtime %.6f s' % (name(k), got, ct))
print('checked %d' % checked)
print('\n'.join(bad))
PY
check() { # LABEL PROF PYTHON MIN
	local label=$1 prof=$2 py=$3 min=$4 out f=$T/${2##*/}.f
	pfold "$prof" > "$f" 2> "$T/e"; rc=$?
	expect_rc "$label: pfold reads it" 0 $rc
	n=$(grep -c ';' "$f")
	if [ "$n" -ge 10 ]; then ok "$label: call stacks rebuilt ($n stacks with a caller)"; else notok "$label: only $n stacks with a caller"; fi
	out=$($py "$T/incl.py" "$prof" "$f" 2>&1)
	checked=$(echo "$out" | sed -n 's/^checked //p')
	if [ "${checked:-0}" -ge "$min" ] && [ "$(echo "$out" | sed 1d | grep -c .)" = 0 ]; then
		ok "$label: inclusive times = pstats' cumtime within 2 % ($checked functions)"
	else
		notok "$label: inclusive times against pstats (want >= $min functions checked)"; echo "$out" | head -10 | sed 's/^/  /'
	fi
}
for spec in "${pys[@]}"; do
	kind=${spec%%:*} v=${spec#*:}
	# (the interpreter itself, not pyenv's shim: a shell script, ~0.1 s a call)
	if [ "$kind" = pyenv ]; then py=$PYROOT/versions/$v/bin/python; vv=${v%.*}; else py=$v; vv=debian; fi
	prof s$vv.prof "$T" -m cProfile -o "$P/s$vv.prof" s.py
	if ! [ -s "$P/s$vv.prof" ]; then notok "python $vv: no cProfile file for s.py"; continue; fi
	check "python $vv: script importing json, re, asyncio" "$P/s$vv.prof" "$py" 6
	f=$T/s$vv.prof.f
	# the script's <module> under the root exec, its own calls below it
	expect_grep "python $vv: exec;<module> (s.py:1);main;encode" '^<built-in method builtins\.exec>;<module> \(s\.py:1\);main \(s\.py:[0-9]+\);encode \(s\.py:2\)' "$f"
	# importing json is a subtree of the script's <module>
	expect_grep "python $vv: import json under the script's <module>" '^<built-in method builtins\.exec>;<module> \(s\.py:1\);_find_and_load [^;]*;.*;<built-in method builtins\.exec>;<module> \([^)]*json/__init__\.py:1\)' "$f"
	if grep -qE '^<built-in method builtins\.exec>;<module> \([^)]*json/' "$f"; then
		notok "python $vv: an imported module beside the script"; else ok "python $vv: no imported module beside the script"; fi
	# a -m module run: runpy's exec runs the module
	prof m$vv.prof "$T/pkg" -m cProfile -o "$P/m$vv.prof" -m mrun
	if [ -s "$P/m$vv.prof" ]; then
		check "python $vv: -m module run" "$P/m$vv.prof" "$py" 3
		expect_grep "python $vv: -m: runpy;exec;<module> (mrun.py);square" '_run_code [^;]*;<built-in method builtins\.exec>;<module> \([^)]*mrun\.py:1\);square ' "$T/m$vv.prof.f"
	else
		notok "python $vv: no cProfile file for -m mrun"
	fi
	# Profile() around one function: that function is the root
	prof o$vv.prof "$T" one.py "$P/o$vv.prof"
	if [ -s "$P/o$vv.prof" ]; then
		check "python $vv: Profile() around one function" "$P/o$vv.prof" "$py" 3
		expect_grep "python $vv: around;inner is a root stack" '^around \([^)]*one\.py:4\);inner \(' "$T/o$vv.prof.f"
	else
		notok "python $vv: no cProfile file from Profile()"
	fi
	# two runs merged with pstats' add
	[ -s "$P/a$vv.prof" ] ||
		$py -c 'import pstats,sys; s=pstats.Stats(sys.argv[1]); s.add(sys.argv[2]); s.dump_stats(sys.argv[3])' "$P/s$vv.prof" "$P/s$vv.prof" "$P/a$vv.prof" 2> "$T/e"
	if [ -s "$P/a$vv.prof" ]; then
		check "python $vv: pstats.add of two runs" "$P/a$vv.prof" "$py" 6
	else
		notok "python $vv: pstats add"; head -3 "$T/e"
	fi
done
# the issue's repro, once more as a user types it
v=${pys[0]#*:}
printf 'import json\ndef f():\n return sum(i*i for i in range(10**6))\nf()\n' > "$T/r.py"
if [ "${pys[0]%%:*}" = pyenv ]; then py=$PYROOT/versions/$v/bin/python; else py=$v; fi
prof r.prof "$T" -m cProfile -o "$P/r.prof" r.py
n=$(pfold "$P/r.prof" | grep -c ';')
if [ "$n" -gt 0 ]; then ok "the issue's repro folds to $n stacks with callers (was 0)"; else notok "the issue's repro: no stack with a caller"; fi
