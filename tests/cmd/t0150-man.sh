#!/bin/bash
# Every man page renders without a warning from man --warnings (man-db, at 80
# columns, as a user reads it) and groff -ww; no option entry runs into the
# paragraph before it (a missing .TP: pcollect(1)'s --trace once read as part
# of --wall's text).  --help against the man pages: t0161.
. "$(dirname "$0")/../lib.sh"

MAN="$SP_TOP/share/man"
pages=$(ls "$MAN"/man*/*.[1-9])
[ -n "$pages" ] || { notok "man pages: none found under $MAN"; exit 0; }

if ! command -v groff > /dev/null; then
	skip "groff -ww" "groff is not installed (make deps installs groff-base)"
else
	for f in $pages; do
		n=${f#"$MAN"/}
		groff -ww -man -z "$f" > "$T/g.err" 2>&1
		if [ -s "$T/g.err" ]; then notok "groff -ww $n"; head -5 "$T/g.err" | sed 's/^/  /'
		else ok "groff -ww $n"; fi
	done
fi

if ! command -v man > /dev/null; then
	skip "man --warnings" "man is not installed (make deps installs man-db)"
else
	for f in $pages; do
		n=${f#"$MAN"/}
		MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$f" > "$T/m.out" 2> "$T/m.err"
		if [ -s "$T/m.err" ] || [ ! -s "$T/m.out" ]; then notok "man --warnings -l $n"; head -5 "$T/m.err" | sed 's/^/  /'
		else ok "man --warnings -l $n"; fi
	done
fi

# An option heading (".B \-x" / ".BI \-\-x= V") after a sentence's end,
# followed by a sentence that starts anew, without .TP/.TQ/.IP before it:
# the entry renders inside the previous option's paragraph.
for f in $pages; do
	n=${f#"$MAN"/}
	awk 'NR > 1 && /^\.(B|BI|BR) +"?\\-/ && prev ~ /[.:]"?$/ && prev !~ /^\.(TP|TQ|PD|IP)/ { cand = NR; cl = $0; prev = $0; next }
	     cand && NR == cand + 1 { if ($0 ~ /^[A-Z]/) print FILENAME ":" cand ": " cl; cand = 0 }
	     { prev = $0 }' "$f" > "$T/tp.out"
	if [ -s "$T/tp.out" ]; then notok "$n: option entries without .TP"; sed 's/^/  /' "$T/tp.out"
	else ok "$n: every option entry starts with .TP"; fi
done

