#!/bin/bash
# pdiff of two builds of one program (./v1, ./v2: tests/progs/t015-versions.c)
# matches their root frames (process names) when each input is one process,
# and says so in one line; --roots=keep|drop|FROM=TO; pmerge --roots.  Before
# this, every stack was new: --report led with "v1 -100", "v2 +100".  Also on
# a real pair no one here wrote: Debian's python3 against a pyenv CPython
# running the same stdlib work (roots "python3" and "python3.12").
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

for v in 1 2; do t6_build v$v t015-versions.c -O2 -g -DV=$v || exit 0; done
t6_probe || exit 0
for v in 1 2; do
	(cd "$T" && pcollect -q -o v$v.sp -- ./v$v 0.6) > /dev/null 2> "$T/pc.err" ||
		{ notok "pcollect -- ./v$v"; head -3 "$T/pc.err" | sed 's/^/  /'; exit 0; }
	pfold "$T/v$v.sp" > "$T/v$v.folded"
done
cd "$T" || exit 0
# The report's first rows: parse shrank and render grew (2/3 -> 1/3).
pdiff --report --top=2 v1.sp v2.sp > r.out 2> r.err; rc=$?
expect_rc "pdiff --report v1.sp v2.sp: exit 0" 0 $rc
expect_grep "... says in one line that the roots were matched" "^pdiff: matched the roots: v1.sp's process 'v1' as v2.sp's 'v2' \(--roots=keep keeps them apart\)$" r.err
if [ "$(wc -l < r.err)" = 1 ]; then ok "... one line"; else notok "... one line"; sed 's/^/  /' r.err; fi
if grep -qE '  v[12]$' r.out; then notok "... v1 and v2 are not rows of the report"; sed 's/^/  /' r.out
else ok "... v1 and v2 are not rows of the report"; fi
expect_grep "... parse: total share down" '^ +[0-9.]+% +[0-9.]+% +[-+][0-9.]+ +[0-9.]+% +[0-9.]+% +-[0-9.]+  parse$' r.out
expect_grep "... render: total share up" '^ +[0-9.]+% +[0-9.]+% +[-+][0-9.]+ +[0-9.]+% +[0-9.]+% +\+[0-9.]+  render$' r.out
# The profile: every stack under v2, with both columns.
pdiff v1.folded v2.folded > d.out 2> d.err
expect_grep "folded input: matched the same way" "matched the roots: v1.folded's process 'v1' as v2.folded's 'v2'" d.err
if cut -d';' -f1 d.out | sort -u | grep -qvx v2; then notok "... every stack under v2"; cut -d';' -f1 d.out | sort | uniq -c | sed 's/^/  /'
else ok "... every stack under v2"; fi
awk '{ a += $(NF-1); b += $NF } END { print a, b }' d.out > d.sum
awk '{ s += $NF } END { printf "%s ", s }' v1.folded > d.want; awk '{ s += $NF } END { print s }' v2.folded >> d.want
expect_eq "... a and b sum to v1's and v2's totals" d.want d.sum
pdiff --report --roots=keep v1.sp v2.sp > k.out 2> k.err
expect_grep "--roots=keep: v1 gone (-100)" '^ +[0-9.]+% +[0-9.]+% +[-+][0-9.]+ +100\.00% +0\.00% +-100\.00  v1$' k.out
if [ -s k.err ]; then notok "--roots=keep: nothing said"; cat k.err | sed 's/^/  /'; else ok "--roots=keep: nothing said"; fi
pdiff --roots=drop v1.folded v2.folded > dr.out 2> dr.err
if grep -qE '^(v1|v2);' dr.out || ! grep -q '^_start;' dr.out; then notok "--roots=drop: stacks start at _start"; head -2 dr.out | sed 's/^/  /'
else ok "--roots=drop: stacks start at _start"; fi
pdiff -O folded --roots=v1=v2 v1.sp v2.folded > m.out 2> m.err
if cut -d';' -f1 m.out | sort -u | grep -qvx v2; then notok "--roots=v1=v2 (stream against folded): every stack under v2"
else ok "--roots=v1=v2 (stream against folded): every stack under v2"; fi
pdiff --roots=zz=v2 v1.sp v2.sp > z.out 2> z.err; rc=$?
expect_rc "--roots=zz=v2: exit 2" 2 $rc
expect_grep "... A has no root zz" "^pdiff: --roots=zz=v2: v1.sp has no root frame \(process name\) 'zz'$" z.err
pdiff --roots=bogus v1.sp v2.sp > /dev/null 2> u.err; rc=$?
expect_rc "--roots=bogus: usage error" 2 $rc
# Several processes with no root in common: said, not matched.
printf 'x;a 1\ny;b 2\n' > m1.folded; printf 'z;a 1\nw;b 2\n' > m2.folded
pdiff m1.folded m2.folded > mm.out 2> mm.err
expect_grep "two processes each, no root in common: said" "no root frame \(process name\) of m1.folded is in m2.folded: every stack differs" mm.err
expect_grep "... and not matched" '^x;a 1 0$' mm.out

# pmerge --roots
pmerge --roots=v1=v2 v1.sp v2.sp | pfold > pm.out 2> pm.err
if cut -d';' -f1 pm.out | sort -u | grep -qvx v2; then notok "pmerge --roots=v1=v2: one root"
else ok "pmerge --roots=v1=v2: one root"; fi
awk '{ s += $NF } END { print s }' pm.out > pm.sum; cat v1.folded v2.folded | awk '{ s += $NF } END { print s }' > pm.want
expect_eq "... the total is both runs'" pm.want pm.sum
pmerge --roots=drop v1.folded v2.folded > pd.out
if grep -qE '^(v1|v2);' pd.out; then notok "pmerge --roots=drop"; else ok "pmerge --roots=drop"; fi
pmerge --roots=zz=v2 v1.sp v2.sp -o pz.out 2> pz.err; rc=$?
expect_rc "pmerge --roots=zz=v2: exit 2" 2 $rc
[ -e pz.out ] && notok "... no output file" || ok "... no output file"

# Debian's python3 against a pyenv CPython run as python3.N: roots python3 /
# python3.N.
PYROOT=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
PY=$(ls -d "$PYROOT"/versions/3.1[0-3].*/bin/python3.1[0-3] 2>/dev/null | sort -V | tail -1)
if [ -z "$PY" ] || [ ! -x /usr/bin/python3 ]; then skip "python3 against pyenv" "needs /usr/bin/python3 and a pyenv CPython 3.10-3.13"; exit 0; fi
pcollect -q -F 199 -o deb.sp -- /usr/bin/python3 "$SP_TOP/tests/progs/t015-stdlib.py" 0.6 > /dev/null 2>&1
pcollect -q -F 199 -o pyenv.sp -- "$PY" "$SP_TOP/tests/progs/t015-stdlib.py" 0.6 > /dev/null 2>&1
pdiff --report --top=5 deb.sp pyenv.sp > py.out 2> py.err
pn=$(pfold pyenv.sp | head -1 | cut -d';' -f1)
expect_grep "python3 against $pn: roots matched" "matched the roots: deb.sp's process 'python3' as pyenv.sp's '$pn'" py.err
if grep -qE "  (python3|$pn)\$" py.out; then notok "... the process names are not rows"; sed 's/^/  /' py.out
else ok "... the process names are not rows"; fi
