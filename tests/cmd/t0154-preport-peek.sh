#!/bin/bash
# preport --callers F / --callees F (pprof -peek, speedscope's sandwich):
# the rows, in the table's columns, are checked against an awk reading of
# the same profile's folded text (each caller or callee counted once per
# stack; self where the pair ends the stack), on a small hand-made profile
# with recursion and on a pcollect recording of a pyenv CPython running
# stdlib work (json, zlib, re).
. "$(dirname "$0")/../lib.sh"

# peek FOLDED F up|down: "self total name" rows as defined in preport(1)
peek() {
	awk -v F="$2" -v up=$([ "$3" = up ] && echo 1 || echo 0) '{
		v = $NF; s = substr($0, 1, length($0) - length($NF) - 1); n = split(s, f, ";")
		delete seen
		for (k = 1; k <= n; k++) {
			if (f[k] != F) continue
			if (up) { o = k > 1 ? f[k - 1] : "(root)" } else { if (k == n) continue; o = f[k + 1] }
			if (!(o in seen)) { seen[o] = 1; tot[o] += v }
			if ((up && k == n) || (!up && k + 1 == n)) self[o] += v
		}
	} END { for (o in tot) printf "%d %d %s\n", self[o], tot[o], o }' "$1" | sort
}
# rows TSV RELATION: the same from preport -O tsv
rows() { awk -F'\t' -v r="$2" '$2 == r { printf "%d %d %s\n", $3, $5, $7 }' "$1" | sort; }

printf 'p;main;a;f;g 5\np;main;b;f 3\np;main;f;f;h 2\np;main;b 1\nf;x 4\n' > "$T/c.folded"
preport --callers f --callees f -n 0 -O tsv "$T/c.folded" > "$T/c.tsv" 2> "$T/c.err"; rc=$?
expect_rc "preport --callers f --callees f: exit 0" 0 $rc
peek "$T/c.folded" f up > "$T/up.want"; rows "$T/c.tsv" caller > "$T/up.got"
expect_eq "callers of f (recursion counted once per stack; (root) for a root frame)" "$T/up.want" "$T/up.got"
peek "$T/c.folded" f down > "$T/dn.want"; rows "$T/c.tsv" callee > "$T/dn.got"
expect_eq "callees of f" "$T/dn.want" "$T/dn.got"
preport --callers f "$T/c.folded" > "$T/c.txt"
grep -E '  f$' "$T/c.txt" | head -1 > "$T/own.got"
preport -n 0 "$T/c.folded" | grep -E '  f$' > "$T/own.want"
expect_eq "text: f's own row is its row of the table" "$T/own.want" "$T/own.got"
expect_grep "... 20% self, 93.33% total" '^ *20\.00% +3 +93\.33% +14  f$' "$T/own.got"
expect_grep "text: callers sorted by total, shares of the whole" '^ *0\.00% +0 +33\.33% +5  a$' "$T/c.txt"
preport --callers f -O json "$T/c.folded" > "$T/c.json"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["functions"][0]; assert f["name"]=="f" and f["total"]==14 and {c["name"]:c["total"] for c in f["callers"]}=={"a":5,"b":3,"main":2,"f":2,"(root)":4}' "$T/c.json" 2> "$T/j.err"
then ok "JSON: f with its callers"; else notok "JSON: f with its callers"; head -3 "$T/j.err" "$T/c.json" | sed 's/^/  /'; fi
preport --callers 'nosuch' "$T/c.folded" > "$T/n.out" 2> "$T/n.err"; rc=$?
expect_rc "no function matches: exit 2" 2 $rc
expect_grep "... and says so" "^preport: --callers: no function matches 'nosuch' \(of 8 functions\)$" "$T/n.err"
preport --callers '^[ab]$' -O tsv "$T/c.folded" | cut -f1 | sort -u > "$T/re.got"
printf 'a\nb\nof\n' > "$T/re.want"
expect_eq "a regular expression: every function it matches" "$T/re.want" "$T/re.got"
preport --callers f --tree "$T/c.folded" > /dev/null 2> "$T/u.err"; rc=$?
expect_rc "--callers with --tree: usage error" 2 $rc

# A real recording: pcollect of a pyenv CPython.
. "$SP_TOP/tests/cmd/t6-lib.sh"
PYROOT=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
PY=$(ls -d "$PYROOT"/versions/3.1[0-3].*/bin/python3 2>/dev/null | sort -V | tail -1)
[ -n "$PY" ] || { skip "preport --callers on CPython" "no pyenv CPython 3.10-3.13 in $PYROOT/versions"; exit 0; }
t6_probe || exit 0
pcollect -q -F 499 --python=off -o "$T/py.sp" -- "$PY" "$SP_TOP/tests/progs/t015-stdlib.py" 1 > /dev/null 2> "$T/pc.err" ||
	{ notok "pcollect -- python"; head -3 "$T/pc.err" | sed 's/^/  /'; exit 0; }
pfold --weight=count "$T/py.sp" > "$T/py.folded"
for F in _PyEval_EvalFrameDefault PyUnicode_New; do
	if ! grep -q ";$F[; ]" "$T/py.folded"; then skip "$F" "not sampled in this recording"; continue; fi
	preport --weight samples --callers $F --callees $F -n 0 -O tsv "$T/py.sp" > "$T/py.tsv" 2> "$T/py.err"
	peek "$T/py.folded" $F up > "$T/u.want"; rows "$T/py.tsv" caller > "$T/u.got"
	expect_eq "CPython: $(wc -l < "$T/u.want") callers of $F as in its folded text" "$T/u.want" "$T/u.got"
	peek "$T/py.folded" $F down > "$T/d.want"; rows "$T/py.tsv" callee > "$T/d.got"
	expect_eq "CPython: $(wc -l < "$T/d.want") callees of $F as in its folded text" "$T/d.want" "$T/d.got"
done
