#!/bin/bash
# One option vocabulary (stackpipe(7)): the shared options mean the same
# and read the same in every command; --version; short usage errors;
# --partial on a truncated stream.
. "$(dirname "$0")/../lib.sh"
CMDS="pfold pfilter pdiff pmerge preport psvg pspeedscope ptimeline"
for c in $CMDS pcollect sp-dump; do
	$c --version > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && grep -qx "$c (stackpipe) [0-9.]*" "$T/o" && [ ! -s "$T/e" ]; then ok "$c --version"
	else notok "$c --version (exit $rc)"; head -3 "$T/o" "$T/e" | sed 's/^/  /'; fi
	$c --no-such-option > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && [ ! -s "$T/o" ] && [ "$(wc -l < "$T/e")" -le 3 ] && grep -Eq "^$c: (unrecognized|unknown) option '--no-such-option'" "$T/e" &&
	   grep -q "^usage: $c" "$T/e" && grep -q "^Try '$c --help'" "$T/e"; then ok "$c: an unknown option gives one reason, the usage line and a hint"
	else notok "$c unknown option (exit $rc)"; head -5 "$T/e" | sed 's/^/  /'; fi
done
# the shared options are described in the same words everywhere
for opt in '  -o, --output=FILE ' '  -q, --quiet ' '      --partial ' '  -V, --version ' '  -h, --help ' '  -f, --format=NAME '; do
	want=
	for c in $CMDS; do
		line=$($c --help | grep -F -- "$opt" | head -1)
		[ -n "$want" ] || want=$line
		if [ -z "$line" ]; then notok "$c --help lacks '${opt## }'"; continue; fi
		case "$opt" in *-q,*) continue ;; esac # -q's effect differs by command; its letter does not
		[ "$line" = "$want" ] || notok "$c --help: '$line' differs from '$want'"
	done
	ok "every reading command has '${opt## }'"
done
for c in $CMDS; do
	$c --help | grep -q 'speedscope' && ok "$c --help lists speedscope among its inputs" || notok "$c --help omits speedscope"
done
# one meaning per letter: -t is a thread filter, -n a top N (pdiff: --normalize, as difffolded.pl)
printf 'main;a 3\nmain;b 1\n' > "$T/x.folded"
pmerge -t "$T/x.folded" > /dev/null 2>&1 && notok "pmerge -t still means --tag" || ok "pmerge: -t is not --tag (use --tag)"
preport -n 1 -O tsv "$T/x.folded" | tail -n +2 | wc -l | grep -qx 1 && ok "preport -n 1: one row" || notok "preport -n"
pfold -b "$T/x.folded" | pfilter -t 'no-such-thread' > /dev/null 2>&1; rc=$?
[ $rc = 1 ] && ok "pfilter -t REGEX filters threads" || notok "pfilter -t (exit $rc)"
# --partial: a cut stream is refused by default, used up to the cut with it
gzip -dc "$SP_TOP/share/demo/perf-demo.txt.gz" | pfold -b > "$T/full.sp"
head -c $(( $(wc -c < "$T/full.sp") * 2 / 3 )) "$T/full.sp" > "$T/cut.sp"
for c in "pfold" "pfilter -v idle" "pdiff $T/full.sp" "pmerge" "preport" "psvg" "pspeedscope" "ptimeline" "sp-dump"; do
	label=${c//$T\//}
	$c "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q 'cut.sp: offset [0-9]*: truncated stream.*--partial uses the [0-9]* samples' "$T/e"; then ok "$label: a truncated stream is refused, naming the offset and --partial"
	else notok "$label truncated (exit $rc)"; sed 's/^/  /' "$T/e" | head -3; fi
	$c --partial "$T/cut.sp" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 0 ] && [ -s "$T/o" ] && grep -q 'using the [0-9]* samples before the cut (--partial)' "$T/e"; then ok "$label --partial: used, with a warning"
	else notok "$label --partial (exit $rc)"; sed 's/^/  /' "$T/e" | head -3; fi
done
n=$(pfold --partial --weight=count "$T/cut.sp" 2> "$T/e" | awk '{s += $NF} END {print s}')
said=$(sed -n 's/.*using the \([0-9]*\) samples.*/\1/p' "$T/e")
full=$(pfold --weight=count "$T/full.sp" | awk '{s += $NF} END {print s}')
if [ -n "$said" ] && [ "$n" = "$said" ] && [ "$n" -gt 0 ] && [ "$n" -lt "$full" ]; then ok "--partial folds exactly the $n samples it announces (of $full)"
else notok "--partial folded $n samples, announced '$said', full $full"; fi
pfold --partial -q --weight=count "$T/cut.sp" 2>&1 >/dev/null | grep -q 'before the cut' && ok "-q does not hide the --partial warning" || notok "-q hid the cut"
# every command has a man page that lists the shared options and points to stackpipe(7)
for c in $CMDS sp-dump; do
	m=$SP_TOP/share/man/man1/$c.1
	if [ -f "$m" ] && grep -q '^\.B \\-\\-partial' "$m" && grep -q '\\-V ", " \\-\\-version' "$m" && grep -q 'stackpipe (7)' "$m"; then
		ok "$c(1) lists --partial and --version and refers to stackpipe(7)"
	else notok "$c(1): missing, or without --partial/--version/stackpipe(7)"; fi
done
[ -f "$SP_TOP/share/man/man7/stackpipe.7" ] && grep -q 'OPTION VOCABULARY' "$SP_TOP/share/man/man7/stackpipe.7" && ok "stackpipe(7) holds the option vocabulary" || notok "stackpipe(7) missing"
