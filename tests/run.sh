#!/bin/bash
# The test runner of `make check`.  Runs, in order:
#   1. C unit tests (build/tests/*), then the same under ASan+UBSan
#      (build-asan/tests/*);
#   2. command tests tests/cmd/t*.sh with SP_BIN=bin, then SP_BIN=build-asan/bin;
#   3. a short libFuzzer run of every target in build/fuzz/.
# Every test prints one line: "ok - NAME", "not ok - NAME" or
# "skip - NAME # reason".  The last line is "N passed, N failed, N skipped".
cd "$(dirname "$0")/.."
top=$PWD
pass=0 fail=0 skip=0
failed_names=()
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

tally() { # reads test output lines on stdin, echoes them, counts
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case "$line" in
		"ok "*) pass=$((pass + 1)) ;;
		"not ok "*) fail=$((fail + 1)); failed_names+=("$line") ;;
		"skip "*) skip=$((skip + 1)) ;;
		esac
	done
}

run_units() { # dir label
	local t
	for t in "$1"/tests/*; do
		[ -x "$t" ] || continue
		local name="$2$(basename "$t")"
		if ! "$t" >"$log/out" 2>"$log/err"; then
			sed "s/^/  /" "$log/err" | head -20
			grep -q '^not ok' "$log/out" || echo "not ok - $name exited non-zero" >>"$log/out"
		fi
		sed "s/^\(ok\|not ok\|skip\) - /\1 - $name: /" "$log/out" | grep -E '^(ok|not ok|skip) ' > "$log/lines"
		tally < "$log/lines"
	done
}

run_cmds() { # bindir label
	local t
	for t in tests/cmd/t*.sh; do
		[ -f "$t" ] || continue
		SP_TOP=$top SP_BIN=$top/$1 SP_LABEL=$2 bash "$t" > "$log/out" 2>"$log/err"
		rc=$?
		grep -E '^(ok|not ok|skip) ' "$log/out" > "$log/lines"
		if [ $rc -ne 0 ] && ! grep -q '^not ok' "$log/lines"; then
			echo "not ok - $2$(basename "$t") exited $rc" >> "$log/lines"
			sed "s/^/  /" "$log/err" | tail -20
		fi
		grep -E '^  ' "$log/out" | head -60
		tally < "$log/lines"
	done
}

echo "# unit tests"
run_units build ""
if [ -z "$SP_NO_ASAN" ] && [ -d build-asan/tests ]; then
	echo "# unit tests under ASan+UBSan"
	ASAN_OPTIONS=detect_leaks=1 run_units build-asan "asan:"
fi
echo "# command tests"
run_cmds bin ""
if [ -z "$SP_NO_ASAN" ] && [ -d build-asan/bin ]; then
	echo "# command tests under ASan+UBSan"
	ASAN_OPTIONS=detect_leaks=1 run_cmds build-asan/bin "asan:"
fi
if [ -z "$SP_NO_FUZZ" ]; then
	echo "# short fuzz runs (${SP_FUZZ_SECONDS:-10}s each; 'make fuzz' runs long ones)"
	found=0
	for f in build/fuzz/*; do
		[ -x "$f" ] || continue
		found=1
		n=$(basename "$f")
		mkdir -p "$log/corpus/$n"
		seeds=tests/fuzz/corpus/$n
		[ -d "$seeds" ] || seeds=
		if "$f" -max_total_time="${SP_FUZZ_SECONDS:-10}" -rss_limit_mb=2048 "$log/corpus/$n" $seeds >"$log/fz" 2>&1; then
			echo "ok - fuzz $n ($(grep -o 'Done [0-9]* runs' "$log/fz" | head -1))" | tally
		else
			tail -30 "$log/fz"
			echo "not ok - fuzz $n found a crash (see above)" | tally
		fi
	done
	[ $found = 1 ] || echo "skip - fuzz # no fuzz targets built (clang with libFuzzer missing?)" | tally
fi
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failures:"
	printf '#   %s\n' "${failed_names[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
