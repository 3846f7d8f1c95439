#!/bin/bash
# Byte-identical output: every deterministic command line of
# tests/golden/cases (pfold of each input of the corpus, folded and as a
# binary stream through sp-dump, and pfold's, pfilter's, pdiff's, pmerge's,
# psvg's, pspeedscope's, preport's and plive --once's options) gives the
# standard output, standard error and exit status whose sha256
# tests/golden/manifest holds.  A restructuring (issue 31) must leave them
# all unchanged; a deliberate change of output regenerates the manifest
# (tests/golden/README.md) in the commit that names it.  The "host: " cases
# (perf.data, named from this machine's kernel and libraries) are compared
# only on the machine kind the manifest was made on.  Last, the comparison
# itself is shown to fail: one byte changed in one case's output.
. "$(dirname "$0")/../lib.sh"
G=$SP_TOP/tests/golden
# Once per make check, in the plain pass (4 s; ~20 s with the ASan
# commands' start-up, 226 times): the same lines' code runs under ASan in
# the other tests and the fuzz runs, which start from the same corpus.
if [[ $SP_BIN == *asan* ]]; then
	echo "# golden outputs: compared in the plain pass (the corpus runs under ASan in the fuzz runs' seeds)"; exit 0
fi

SP_BIN=$SP_BIN bash "$G/golden.sh" > "$T/now" 2> "$T/err"
if [ -s "$T/err" ]; then notok "golden.sh ran cleanly"; head -5 "$T/err" | sed 's/^/  /'; fi
# compare MANIFEST NOW: prints "CASE" per case whose hash differs or is missing
compare() {
	awk 'NR == FNR { if ($1 != "host") want[substr($0, 67)] = $1; next }
		$1 != "host" { c = substr($0, 67); if (!(c in want)) print "new (not in the manifest): " c; else if (want[c] != $1) print "changed: " c; seen[c] = 1 }
		END { for (c in want) if (!(c in seen)) print "gone (in the manifest, not in the cases): " c }' "$1" "$2"
}
host_now=$(sed -n 's/^host //p' "$T/now") host_want=$(sed -n 's/^host //p' "$G/manifest")
if [ "$host_now" = "$host_want" ]; then
	cp "$T/now" "$T/cmp"
else
	# other kernel or C library: the host cases out of both sides
	n=$(grep -c '^[0-9a-f]*  host: ' "$T/now")
	skip "golden: the $n host: cases (perf.data)" "this machine (kernel $(uname -r), fingerprint $host_now) is not the manifest's ($host_want): perf.data frames are named from the host's kernel and binaries"
	grep -v '^[0-9a-f]*  host: ' "$T/now" > "$T/cmp"
	grep -v '^[0-9a-f]*  host: ' "$G/manifest" > "$T/want"
fi
[ -f "$T/want" ] || cp "$G/manifest" "$T/want"
compare "$T/want" "$T/cmp" > "$T/diff"
total=$(grep -vc '^host ' "$T/cmp")
if [ ! -s "$T/diff" ] && [ "$total" -ge 150 ]; then
	ok "golden: $total command lines, output byte-identical to tests/golden/manifest"
else
	notok "golden: $(wc -l < "$T/diff") of $total command lines differ from tests/golden/manifest (a deliberate change: bash tests/golden/golden.sh > tests/golden/manifest, said in the commit)"
	head -20 "$T/diff" | sed 's/^/  /'
fi

# The check can fail: a pfold that changes one byte of its output (the
# first character of its second line) fails its cases, and only those.
mkdir -p "$T/fake"
cat > "$T/fake/pfold" <<EOF
#!/bin/bash
"$SP_BIN/pfold" "\$@" | sed '2s/^./#/'
exit \${PIPESTATUS[0]}
EOF
chmod +x "$T/fake/pfold"
printf 'pfold $D/pyspy-raw.txt\npspeedscope $D/pyspy-raw.txt\n' > "$T/two"
SP_BIN=$T/fake PATH="$T/fake:$PATH" bash "$G/golden.sh" "$T/two" > "$T/bad" 2> /dev/null
compare "$G/manifest" "$T/bad" | grep -v '^gone' > "$T/baddiff"
if [ "$(cat "$T/baddiff")" = 'changed: pfold $D/pyspy-raw.txt' ]; then
	ok "golden: one byte changed in pfold's output fails its case ('changed: pfold \$D/pyspy-raw.txt'), not pspeedscope's"
else notok "golden: a one-byte change in pfold's output was not caught as that case alone"; sed 's/^/  /' "$T/baddiff"; fi
