#!/bin/bash
# tests/fuzz/fuzz.sh — run libFuzzer targets so that a finding is a failure.
# Used by `make fuzz` (long runs) and by tests/run.sh (`make check`, short runs).
#
#   bash tests/fuzz/fuzz.sh SECONDS TARGET...
#
# Each TARGET (a binary of build/fuzz/) runs for SECONDS on a working corpus
# $FUZZ_CORPUS/NAME (default build/corpus/NAME, kept between runs, grows)
# plus the seeds of tests/fuzz/corpus/NAME (read only).  One line per target:
#   ok - fuzz NAME (N runs, corpus M units)
#   not ok - fuzz NAME: WHAT; reproducer: PATH
# and on failure the end of libFuzzer's log, indented.
#
# A run fails on a crash, an ASan/UBSan/LSan report, a leak, an input slower
# than $FUZZ_TIMEOUT seconds (default 25), more than 2 GB of memory, a non-zero
# exit, a missing "Done N runs" line — and on any sanitizer report text in the
# log whatever the exit status, so a binary built without
# -fno-sanitize-recover cannot pass by printing and carrying on.  Reproducers
# go to $FUZZ_ARTIFACTS/NAME/ (default build/fuzz-artifacts/NAME/), which is
# kept; rerun one with `build/fuzz/NAME PATH`.  Exit status: 0 if every
# target passed, 1 otherwise, 2 on a usage error.
cd "$(dirname "$0")/../.." || exit 2
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
	echo "usage: bash tests/fuzz/fuzz.sh SECONDS TARGET..." >&2
	exit 2
fi
secs=$1
shift
corpus_root=${FUZZ_CORPUS:-build/corpus}
art_root=${FUZZ_ARTIFACTS:-build/fuzz-artifacts}
timeout=${FUZZ_TIMEOUT:-25}
# halt_on_error makes UBSan fatal even in a build that could recover;
# detect_leaks is libFuzzer's default under ASan, made explicit.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
report='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: UndefinedBehaviorSanitizer|ERROR: libFuzzer|SUMMARY: [A-Za-z]*Sanitizer'

fails=0
for f in "$@"; do
	n=$(basename "$f")
	if ! [ -f "$f" ] || ! [ -x "$f" ]; then
		echo "not ok - fuzz $n: $f is not an executable fuzz target"
		fails=$((fails + 1))
		continue
	fi
	work=$corpus_root/$n
	art=$art_root/$n
	mkdir -p "$work" "$art"
	seeds=tests/fuzz/corpus/$n
	[ -d "$seeds" ] || seeds=
	log=$art/last.log
	before=$(ls "$art" | grep -v '^last\.log$' | sort)
	"$f" -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art/" "$work" $seeds >"$log" 2>&1
	rc=$?
	why=
	if grep -qE "$report" "$log"; then
		why=$(grep -oE 'runtime error: .*|ERROR: [A-Za-z]*(Sanitizer|libFuzzer): [^(]*' "$log" | head -1)
		[ -n "$why" ] || why="sanitizer report"
		[ $rc -eq 0 ] && why="$why (exit 0: the report did not stop the run)"
	elif [ $rc -ne 0 ]; then
		why="exit $rc"
	elif ! grep -q '^Done [0-9]* runs' "$log"; then
		why="no 'Done N runs' line from libFuzzer"
	fi
	if [ -z "$why" ]; then
		runs=$(grep -o '^Done [0-9]* runs' "$log" | grep -o '[0-9]*')
		units=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
		echo "ok - fuzz $n ($runs runs in ${secs}s, corpus ${units:-?} units)"
		continue
	fi
	fails=$((fails + 1))
	# libFuzzer names the reproducer it wrote; else look for a new file.
	repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
	if [ -z "$repro" ]; then
		repro=$(comm -13 <(echo "$before") <(ls "$art" | grep -v '^last\.log$' | sort) | head -1)
		[ -n "$repro" ] && repro=$art/$repro
	fi
	grep -vE '^#[0-9]+' "$log" | tail -40 | sed 's/^/  /'
	echo "  (whole log: $log)"
	echo "not ok - fuzz $n: $why; reproducer: ${repro:-none written}"
done
[ $fails -eq 0 ]
