#!/bin/bash
# The test runner of `make check`.  Runs, in order:
#   1. C unit tests (build/tests/*), then the same under ASan+UBSan
#      (build-asan/tests/*);
#   2. command tests tests/cmd/t*.sh with SP_BIN=bin, then SP_BIN=build-asan/bin;
#   3. a short libFuzzer run of every target in build/fuzz/ (tests/fuzz/fuzz.sh).
# SP_NO_ASAN=1 and SP_NO_FUZZ=1 leave out the ASan and fuzz steps,
# SP_NO_UNITS=1 the unit tests (make accuracy),
# (without SP_NO_ASAN a few tests run some cases in one pass only: a '# '
# line says which),
# SP_CMD_TESTS='tests/cmd/t02*.sh' chooses command tests, SP_FUZZ_SECONDS
# sets the length of each fuzz run (10).  Command tests get SP_SHARE, a
# directory kept from the plain pass to the ASan pass, for inputs that do
# not depend on the commands under test (t5320's cProfile files): made once.
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
		[ -n "$2" ] && san_check "$name" "$log/out" "$log/err" >> "$log/lines"
		tally < "$log/lines"
	done
}

# Sanitizer reports are failures wherever they end up.  Under ASan+UBSan
# (ASAN_OPTIONS/UBSAN_OPTIONS below): every report is fatal (halt_on_error), ASan and LSan
# reports go to files $log/san/asan.PID as well as ending the process with
# exit 86, UBSan ones (gcc's libubsan ignores log_path) to stderr with exit
# 87 — no command exits 86 or 87 itself, so a test that checks the exit
# status fails; tests/lib.sh fails a test whose captured output files hold a
# report, and san_check fails it for a report file or report text in the
# test's own output.
SAN_RE='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: [A-Za-z]*Sanitizer'
mkdir -p "$log/san" "$log/share"
san_asan=detect_leaks=1:halt_on_error=1:exitcode=86:log_path=$log/san/asan
san_ubsan=halt_on_error=1:print_stacktrace=1:exitcode=87
san_check() { # name files...: "not ok" if a sanitizer reported anything
	local name=$1; shift
	local reports=("$log"/san/asan.*)
	[ -e "${reports[0]}" ] || reports=()
	if [ ${#reports[@]} -gt 0 ] || grep -qE "$SAN_RE" "$@" 2>/dev/null; then
		{ cat "${reports[@]}" /dev/null; grep -hE -A12 "$SAN_RE" "$@" 2>/dev/null; } | head -40 | sed 's/^/  /'
		echo "not ok - $name: sanitizer report (above)"
		rm -f "${reports[@]}"
	fi
}

run_cmds() { # bindir label
	local t
	local start=$(date +%s) t0
	for t in ${SP_CMD_TESTS:-tests/cmd/t*.sh}; do
		[ -f "$t" ] || continue
		t0=$(date +%s)
		SP_TOP=$top SP_BIN=$top/$1 SP_LABEL=$2 SP_ASAN_FOLLOWS=$asan_follows SP_SHARE=$log/share bash "$t" > "$log/out" 2>"$log/err"
		rc=$?
		grep -E '^(ok|not ok|skip) ' "$log/out" > "$log/lines"
		if [ $rc -ne 0 ] && ! grep -q '^not ok' "$log/lines"; then
			echo "not ok - $2$(basename "$t") exited $rc" >> "$log/lines"
			sed "s/^/  /" "$log/err" | tail -20
		fi
		grep -E '^(  |# )' "$log/out" | head -60 # details and '# ' notes
		[ -n "$2" ] && san_check "$2$(basename "$t")" "$log/out" "$log/err" >> "$log/lines"
		tally < "$log/lines"
		# its wall time, so the next person sees where the time goes
		echo "# $2$(basename "$t"): $(($(date +%s) - t0)) s"
	done
	echo "# command tests${2:+ ($2)}: $(($(date +%s) - start)) s"
}

suite_start=$(date +%s)
if [ -z "${SP_NO_UNITS:-}" ]; then
	echo "# unit tests"
	run_units build ""
fi
if [ -z "${SP_NO_UNITS:-}" ] && [ -z "$SP_NO_ASAN" ] && [ -d build-asan/tests ]; then
	echo "# unit tests under ASan+UBSan"
	ASAN_OPTIONS=$san_asan UBSAN_OPTIONS=$san_ubsan run_units build-asan "asan:"
fi
echo "# command tests"
# SP_ASAN_FOLLOWS=1 tells a plain-pass test that the same test runs again
# under ASan (t0156 then runs its lines once, in that pass)
asan_follows=
[ -z "$SP_NO_ASAN" ] && [ -d build-asan/bin ] && asan_follows=1
run_cmds bin ""
asan_follows=
if [ -z "$SP_NO_ASAN" ] && [ -d build-asan/bin ]; then
	echo "# command tests under ASan+UBSan"
	ASAN_OPTIONS=$san_asan UBSAN_OPTIONS=$san_ubsan run_cmds build-asan/bin "asan:"
fi
if [ -z "$SP_NO_FUZZ" ]; then
	echo "# short fuzz runs (${SP_FUZZ_SECONDS:-10}s each; 'make fuzz' runs long ones)"
	fuzz_start=$(date +%s)
	found=0 running=()
	for f in build/fuzz/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		found=$((found + 1))
		# tests/fuzz/fuzz.sh fails on a crash, a sanitizer report (even
		# one that did not stop the run), a leak or a slow input (25 s:
		# far beyond what a second run beside it costs), and names the
		# reproducer it kept under build/fuzz-artifacts/.  Two targets
		# at a time (each is one process, fuzzing for a fixed time, its
		# own corpus and artifacts), their lines printed in order.
		FUZZ_CORPUS=$log/corpus bash tests/fuzz/fuzz.sh "${SP_FUZZ_SECONDS:-10}" "$f" > "$log/fuzz.$found" 2>&1 &
		running+=($!)
		if [ ${#running[@]} -ge 2 ]; then wait "${running[0]}"; running=("${running[@]:1}"); fi
	done
	wait
	# (tally < FILE, not ... | tally: a pipe would run tally in a subshell
	# and lose its counts.)
	for i in $(seq $found); do tally < "$log/fuzz.$i"; done
	[ $found -gt 0 ] || tally <<< "skip - fuzz # no fuzz targets built (clang with libFuzzer missing?)"
	echo "# fuzz runs: $(($(date +%s) - fuzz_start)) s"
fi
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "# failures:"
	printf '#   %s\n' "${failed_names[@]}"
fi
echo "# total: $(($(date +%s) - suite_start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
