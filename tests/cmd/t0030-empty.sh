#!/bin/bash
# An empty input is an error with one sentence; an empty result says so.
. "$(dirname "$0")/../lib.sh"
: > "$T/empty"
printf 'main;work 3\n' > "$T/one.folded"
for c in pfold "pfold -b" pfilter\ -v\ idle preport pmerge "pdiff $T/one.folded" pspeedscope ptimeline sp-dump; do
	label=${c//$T\//}
	$c "$T/empty" > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "$T/empty: empty input (0 bytes)" "$T/err"; then
		ok "$label on a 0-byte file: exit 2, one sentence naming it"
	else notok "$label on a 0-byte file: exit $rc"; sed 's/^/  /' "$T/err" | head -3; fi
	$c - < /dev/null > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 2 ] && grep -q "standard input: empty input (0 bytes)" "$T/err"; then
		ok "$label on empty standard input: exit 2, says so"
	else notok "$label on empty standard input: exit $rc"; sed 's/^/  /' "$T/err" | head -3; fi
done
pdiff "$T/one.folded" "$T/empty" > "$T/out" 2> "$T/err"; rc=$?
if [ $rc = 2 ] && grep -q "$T/empty: empty input" "$T/err"; then ok "pdiff: an empty second input is an error too"
else notok "pdiff empty second input: exit $rc"; fi
# pfilter: nothing selected is exit 1 with a sentence, as grep
pfilter zzz "$T/one.folded" > "$T/out" 2> "$T/err"; rc=$?
if [ $rc = 1 ] && [ ! -s "$T/out" ] && grep -q 'no sample selected (of 1 read)' "$T/err"; then ok "pfilter selecting nothing: exit 1, says so"
else notok "pfilter selecting nothing: exit $rc"; sed 's/^/  /' "$T/err"; fi
pfilter work "$T/one.folded" > "$T/out" 2> "$T/err"; rc=$?
if [ $rc = 0 ] && [ ! -s "$T/err" ]; then ok "pfilter selecting something: exit 0, quiet"; else notok "pfilter selecting: exit $rc"; fi
pfold -b "$T/one.folded" | pfilter zzz | sp-dump > "$T/out" 2> "$T/err"
if grep -q '^end$' "$T/out"; then ok "pfilter selecting nothing from a stream writes a complete empty stream"; else notok "pfilter empty stream"; fi
