#!/bin/bash
# --help is the man page's synopsis, for every command (each cmd/*.c, and
# sp-dump): --help exits 0 and starts with "usage: CMD"; its usage lines
# equal the SYNOPSIS of CMD(1) as groff renders it (an entry that wraps is
# one entry; a trailing "   (see ...)" pointer of --help is not part of
# it); every long option --help lists is in CMD(1).  (These checks were
# copied into t4000, t4010, t4020, t4030, t8010 and t0150, for 6 of the 10
# commands, until session 11.)
. "$(dirname "$0")/../lib.sh"

MAN=$SP_TOP/share/man/man1
cmds=$(cd "$SP_TOP/cmd" && ls *.c | sed 's/\.c$//')
[ -n "$cmds" ] || { notok "man vs --help: no command found in cmd/"; exit 0; }
have_groff=1
command -v groff > /dev/null || { have_groff=; skip "man SYNOPSIS vs --help" "groff is not installed (make deps installs groff-base)"; }

# entries: one synopsis entry a line (lines not starting with CMD continue
# the one before), blanks squeezed.
entries() {
	awk -v c="$1" '{ sub(/^ +/, ""); sub(/ +\(see [^)]*\)$/, ""); gsub(/ +/, " ") }
		index($0, c " ") == 1 || $0 == c { if (e != "") print e; e = $0; next }
		{ e = e " " $0 } END { if (e != "") print e }'
}
for c in $cmds sp-dump; do
	page=$MAN/$c.1
	"$c" --help > "$T/h" 2> "$T/h.err"; rc=$?
	if [ $rc = 0 ] && grep -q "^usage: $c\\b" "$T/h" && [ ! -s "$T/h.err" ]; then ok "$c --help: exit 0, 'usage: $c ...' on standard output"
	else notok "$c --help: exit $rc, first line '$(head -1 "$T/h")'"; head -3 "$T/h.err" | sed 's/^/  /'; fi
	if [ ! -f "$page" ]; then notok "$c: no man page $c.1"; continue; fi
	if [ -n "$have_groff" ]; then
		awk 'NR == 1 && /^usage: / { sub(/^usage: /, ""); print; next } NR > 1 && /^ / { print; next } { exit }' "$T/h" | entries "$c" > "$T/hs"
		groff -man -Tascii -P-cbou -rLL=300n -rHY=0 "$page" 2> /dev/null |
			awk '/^SYNOPSIS/ { on = 1; next } on && /^[^ ]/ { exit } on && NF' | entries "$c" > "$T/ms"
		if [ -s "$T/ms" ] && cmp -s "$T/ms" "$T/hs"; then ok "$c(1) SYNOPSIS equals --help's ($(wc -l < "$T/ms") usage lines)"
		else notok "$c(1) SYNOPSIS differs from --help's usage lines (< man, > --help)"; diff "$T/ms" "$T/hs" | head -8 | sed 's/^/  /'; fi
	fi
	grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z0-9][a-z0-9-]*' "$T/h" | grep -oE -- '--[a-z0-9-]+' | sort -u > "$T/opts"
	if [ "$c" = sp-dump ] && [ ! -s "$T/opts" ]; then continue; fi # its options are in the usage line
	[ -s "$T/opts" ] || { notok "$c --help lists no long option"; continue; }
	sed 's/\\-/-/g' "$page" > "$T/page"
	missing=
	while read -r o; do grep -qE -- "$o([^a-z0-9-]|\$)" "$T/page" || missing="$missing $o"; done < "$T/opts"
	if [ -z "$missing" ]; then ok "$c: the $(wc -l < "$T/opts") long options of --help are in $c(1)"
	else notok "$c: options of --help not in $c(1):$missing"; fi
done
