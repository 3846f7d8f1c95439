#!/bin/bash
# cProfile/pstats files (formats/cprofile.c): made here by every Python
# 3.8-3.13 that pyenv has, from tests/progs/t53-calls.py (a known call graph),
# and checked against pstats itself: preport's table rows are pstats'
# print_stats rows byte for byte, the flame graph's own time per function is
# tottime to the nanosecond, every parent->child pair of a rebuilt stack is a
# caller edge of the file, and a subtree holds its edge's cumulative time.
. "$(dirname "$0")/../lib.sh"
P=$SP_TOP/tests/progs/t53-calls.py
pys=()
if command -v pyenv > /dev/null; then
	for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(8|9|10|11|12|13)\.'); do pys+=("$v"); done
fi
if [ ${#pys[@]} = 0 ]; then
	skip "cprofile" "no Python 3.8-3.13 under pyenv to write cProfile files"
	exit 0
fi
# check.py FILE FOLDED: compares the folded flame graph with the file itself.
cat > "$T/check.py" <<'PY'
import marshal, sys
st = marshal.load(open(sys.argv[1], 'rb'))
def name(k):
    f, l, fn = k
    return fn if (f, l) == ('~', 0) else '%s (%s:%d)' % (fn, f, l)
byname = {name(k): k for k in st}
edges = {(name(c), name(k)) for k, v in st.items() for c in v[4]}
own, sub, bad = {}, {}, []
for line in open(sys.argv[2]):
    stack, val = line.rstrip('\n').rsplit(' ', 1)
    fr = stack.split(';')
    own[fr[-1]] = own.get(fr[-1], 0) + int(val)
    for i in range(1, len(fr)):
        if (fr[i - 1], fr[i]) not in edges:
            bad.append('not an edge: %s -> %s' % (fr[i - 1], fr[i]))
    if len(set(fr)) != len(fr):
        bad.append('a function twice on one stack: ' + stack)
    for i in range(len(fr)):
        sub[tuple(fr[:i + 1])] = sub.get(tuple(fr[:i + 1]), 0) + int(val)
for n, k in byname.items():
    want = round(st[k][2] * 1e9)
    if own.get(n, 0) != want:
        bad.append('own time of %s: %d ns, tottime %d ns' % (n, own.get(n, 0), want))
# main's direct subtrees hold the edges' cumulative time (main is entered
# once, with all its time, so the scale is 1); 0.1 % for rounding.
mains = [s for s in sub if len(s) >= 2 and s[-1].startswith('main (')]
if len(mains) != 1:
    bad.append('main should have one context, has %d' % len(mains))
else:
    m = mains[0]
    mk = byname[m[-1]]
    for ck, cv in st.items():
        if mk in cv[4]:
            got = sub.get(m + (name(ck),), 0) / 1e9
            want = cv[4][mk][3]
            if abs(got - want) > 1e-3 * st[mk][3] + 1e-6:
                bad.append('subtree main;%s: %.6f s, edge cumtime %.6f s' % (name(ck), got, want))
print('\n'.join(bad) if bad else 'consistent')
PY
cat > "$T/rows.py" <<'PY'
import pstats, sys, io
s = io.StringIO()
pstats.Stats(sys.argv[1], stream=s).sort_stats('tottime').print_stats()
print(s.getvalue())
PY
for v in "${pys[@]}"; do
	vv=${v%.*}
	(cd "$T" && PYENV_VERSION=$v python -m cProfile -o "$T/p$vv.cprof" "$P" > /dev/null 2>&1)
	if ! [ -s "$T/p$vv.cprof" ]; then
		notok "python $vv: no cProfile file written"
		continue
	fi
	rows='^ +[0-9]+(/[0-9]+)? +[0-9]+\.[0-9]{3} '
	PYENV_VERSION=$v python "$T/rows.py" "$T/p$vv.cprof" 2>&1 | grep -E "$rows" | sort > "$T/want$vv"
	preport -n 0 "$T/p$vv.cprof" > "$T/rep$vv" 2> "$T/e"; rc=$?
	expect_rc "python $vv: preport reads the cProfile file" 0 $rc
	grep -E "$rows" "$T/rep$vv" | sort > "$T/got$vv"
	if [ "$(wc -l < "$T/want$vv")" -ge 8 ]; then
		expect_eq "python $vv: preport's rows are pstats' rows (calls, tottime, percall, cumtime)" "$T/want$vv" "$T/got$vv"
	else
		notok "python $vv: pstats printed too few rows"; sed 's/^/  /' "$T/want$vv" | head
	fi
	pfold "$T/p$vv.cprof" > "$T/f$vv" 2> "$T/e"; rc=$?
	expect_rc "python $vv: pfold reads it" 0 $rc
	PYENV_VERSION=$v python "$T/check.py" "$T/p$vv.cprof" "$T/f$vv" > "$T/c$vv" 2>&1
	if [ "$(cat "$T/c$vv")" = consistent ]; then
		ok "python $vv: own time = tottime per function, stacks follow caller edges, main's subtrees = edge cumtime"
	else
		notok "python $vv: flame graph vs the file"; head -10 "$T/c$vv" | sed 's/^/  /'
	fi
done
last=$T/p${vv}.cprof
f=$T/f$vv
# the known call graph: leaf under a, under b directly and via a, under rec;
# recursion folded into the outermost rec
for s in 'main \([^)]*\);a \([^)]*\);leaf \(' 'main \([^)]*\);b \([^)]*\);leaf \(' 'main \([^)]*\);b \([^)]*\);a \([^)]*\);leaf \(' \
	'main \([^)]*\);rec \([^)]*\);leaf \(' 'main \([^)]*\);<built-in method time.sleep> '; do
	expect_grep "known stack /$s/" "$s" "$f"
done
if grep -q 'rec ([^)]*);rec (' "$f"; then notok "recursion should fold into the outermost rec"; else ok "recursion folded (no rec;rec)"; fi
# every command reads it
psvg "$last" > "$T/s.svg" 2> "$T/e"; rc=$?
expect_rc "psvg reads a cProfile file" 0 $rc
expect_grep "psvg draws leaf" 'leaf \(' "$T/s.svg"
pspeedscope "$last" > "$T/s.json" 2> "$T/e"; rc=$?
expect_rc "pspeedscope reads a cProfile file" 0 $rc
expect_grep "pspeedscope: time in nanoseconds" '"unit":"nanoseconds"' "$T/s.json"
pfilter -f cprofile 'leaf' "$last" 2> "$T/e" | pfold > "$T/fl"; rc=${PIPESTATUS[0]}
expect_rc "pfilter reads a cProfile file (-f cprofile)" 0 $rc
if [ -s "$T/fl" ] && ! grep -qv 'leaf (' "$T/fl"; then ok "pfilter keeps the stacks through leaf"; else notok "pfilter output"; head -3 "$T/fl"; fi
preport --tree "$last" > "$T/tree" 2> "$T/e"; rc=$?
expect_rc "preport --tree shows the rebuilt tree" 0 $rc
expect_grep "preport --tree: times in ms" 'ms' "$T/tree"
preport -O tsv --sort=total -n 2 "$last" > "$T/tsv" 2> "$T/e"
if [ "$(sed -n 2p "$T/tsv" | cut -f7)" = '<built-in method builtins.exec>' ] && [ "$(wc -l < "$T/tsv")" = 3 ]; then
	ok "preport -O tsv --sort=total -n 2: header + 2 rows, exec first"; else notok "preport tsv"; cat "$T/tsv"; fi
# callers as call counts (the pure-Python profile module's layout): the
# edge's time is the callee's cumtime split by calls
PYENV_VERSION=$v python -c 'import marshal,sys; sys.stdout.buffer.write(marshal.dumps({("m.py", 1, "main"): (1, 1, 0.25, 1.0, {}), ("m.py", 5, "x"): (1, 1, 0.5, 0.5, {("m.py", 1, "main"): 1}), ("m.py", 9, "y"): (4, 4, 0.25, 0.25, {("m.py", 1, "main"): 3, ("m.py", 5, "x"): 1})}))' > "$T/counts.prof"
pfold "$T/counts.prof" > "$T/pf" 2> "$T/e"; rc=$?
expect_rc "callers as call counts (profile module layout) read" 0 $rc
printf '%s\n' 'main (m.py:1) 250000000' 'main (m.py:1);x (m.py:5) 500000000' 'main (m.py:1);x (m.py:5);y (m.py:9) 62500000' 'main (m.py:1);y (m.py:9) 187500000' > "$T/pw"
sort "$T/pf" > "$T/pfs"
expect_eq "call-count edges: y split 3:1 between main and x, own times exact" "$T/pw" "$T/pfs"
python -m profile -o "$T/prof.out" "$P" > /dev/null 2>&1
if [ -s "$T/prof.out" ]; then
	pfold "$T/prof.out" > /dev/null 2> "$T/e"; rc=$?
	expect_rc "the profile module's real output (a code object in a key): exit 2" 2 $rc
	expect_grep "... and says why" 'offset [0-9]+: a code object .*only cProfile' "$T/e"
fi
# bad input: FILE: offset N: what, exit 2
head -c 200 "$last" > "$T/cut.cprof"
pfold "$T/cut.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "truncated file: exit 2" 2 $rc
expect_grep "truncated file: FILE: offset N: truncated" '^pfold: .*cut\.cprof: offset [0-9]+: truncated' "$T/e"
preport "$T/cut.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "preport on a truncated file: exit 2" 2 $rc
PYENV_VERSION=$v python -c 'import marshal,sys; sys.stdout.buffer.write(marshal.dumps({("a.py", 1, "f"): (1, 1, 0.5, 0.5, {("b.py", 2, "g"): (1, 1, 0.1, 0.1)})}))' > "$T/nocaller.cprof"
pfold "$T/nocaller.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "a caller missing from the file: exit 2" 2 $rc
expect_grep "a caller missing: said so with its offset" 'offset [0-9]+: a caller that is not a function of the file' "$T/e"
PYENV_VERSION=$v python -c 'import marshal,sys; sys.stdout.buffer.write(marshal.dumps({("a.py", 1, "f"): (1, 1, "x", 0.5, {})}))' > "$T/str.cprof"
pfold -f cprofile "$T/str.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "a string where tottime goes: exit 2" 2 $rc
expect_grep "names what is wrong" 'offset [0-9]+: function entry: calls and times must be numbers' "$T/e"
printf '{\xa9\x03\xda\x01x' > "$T/junk.cprof"
pfold "$T/junk.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "a cut key: exit 2" 2 $rc
(cat "$last"; printf 'N') > "$T/tail.cprof"
pfold "$T/tail.cprof" > /dev/null 2> "$T/e"; rc=$?
expect_rc "data after the dict: exit 2, not ignored" 2 $rc
expect_grep "data after the dict: said so" 'offset [0-9]+: data after the pstats dict' "$T/e"
# A function's own time past what nanoseconds in 64 bits hold (a fuzzed
# file: 5e222 s; UBSan caught the overflow): an error naming the function.
pfold "$SP_TOP/tests/fuzz/corpus/fuzz_cprofile/ub-huge-time.prof" > "$T/huge.out" 2> "$T/e"; rc=$?
expect_rc "a time out of range: exit 2" 2 $rc
expect_grep "a time out of range: FILE: FUNCTION: said so" '^pfold: .*ub-huge-time\.prof: .*: its own time, [0-9.e+]+ s, is out of range$' "$T/e"
