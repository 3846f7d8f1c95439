#!/bin/bash
# Every fuzz seed and fixed fuzz finding (tests/fuzz/corpus/TARGET/*) through
# the commands, so the findings stay fixed in the ASan+UBSan build of the
# commands too (make check runs this with SP_BIN=build-asan/bin): pfold
# with the target's format either folds it (exit 0) or rejects it with one
# error naming the file (exit 2); psvg --cp takes any palette map (bad lines
# are skipped) and adds the new names; nothing else, no sanitizer report.
. "$(dirname "$0")/../lib.sh"
C=$SP_TOP/tests/fuzz/corpus

n=0 bad=0
for dir in "$C"/fuzz_*; do
	case ${dir##*/} in
	fuzz_perf) fmt=perf ;; fuzz_folded) fmt=folded ;; fuzz_pyspy) fmt=pyspy ;;
	fuzz_speedscope) fmt=speedscope ;; fuzz_stream) fmt=stream ;; fuzz_palette) fmt=palette ;;
	fuzz_perfdata) fmt=perf.data ;; fuzz_pprof) fmt=pprof ;; fuzz_cprofile) fmt=cprofile ;; fuzz_du) fmt=du ;;
	*) notok "${dir##*/}: a corpus without a known format"; continue ;;
	esac
	for f in "$dir"/*; do
		n=$((n + 1))
		if [ $fmt = palette ]; then # psvg --cp reads ./palette.map
			rm -rf "$T/cp"; mkdir "$T/cp"; cp "$f" "$T/cp/palette.map"
			(cd "$T/cp" && printf 'main;work 3\nmain;io 1\n' | psvg --cp > "$T/o" 2> "$T/e"); rc=$?
			[ $rc = 0 ] && grep -q '^main->rgb(' "$T/cp/palette.map" && continue
		else
			pfold -q -f $fmt "$f" > "$T/o" 2> "$T/e"; rc=$?
			if [ $rc = 0 ] || { [ $rc = 2 ] && [ "$(grep -c "^pfold: $f" "$T/e")" -ge 1 ]; }; then
				continue
			fi
		fi
		bad=$((bad + 1))
		notok "pfold -f $fmt ${f#"$C"/}: exit $rc"
		head -5 "$T/e" | sed 's/^/  /'
	done
done
if [ $n -gt 20 ] && [ $bad = 0 ]; then ok "$n fuzz seeds through pfold -f FORMAT / psvg --cp: exit 0, or 2 with a FILE: error"; else
	notok "fuzz seeds: $bad of $n failed (or too few seeds: $n)"; fi

# The speedscope findings of issue 18: a time past 2^64 ns is an error with
# its offset, not an undefined conversion.
pfold "$C/fuzz_speedscope/ub-evented-at-huge.json" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q ': offset [0-9]*: profiles\[0\]\.events\[1\]: "at" (2e+51) is out of range$' "$T/e" && [ ! -s "$T/o" ]; then
	ok "speedscope event time out of range: error with offset, exit 2, no output"
else notok "speedscope event time out of range (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'; fi
pfold "$C/fuzz_speedscope/ub-sampled-start-huge.json" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q ': offset [0-9]*: profiles\[0\]\.weights\[0\]: the sample.s time (1e+39 ns) is out of range$' "$T/e"; then
	ok "speedscope sample time out of range: error with offset, exit 2"
else notok "speedscope sample time out of range (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'; fi
# ...and the same times in range still read (the limit is not too tight).
sed 's/1e30/1e9/g' "$C/fuzz_speedscope/ub-sampled-start-huge.json" > "$T/ok.json"
pfold "$T/ok.json" > "$T/o" 2> "$T/e"; rc=$?
printf 'main 1000000000\n' > "$T/w"
if [ $rc = 0 ]; then expect_eq "speedscope: a start of 1e9 s still reads" "$T/w" "$T/o"; else
	notok "speedscope: a start of 1e9 s (exit $rc)"; head -3 "$T/e" | sed 's/^/  /'; fi
