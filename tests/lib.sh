# tests/lib.sh — helpers for command tests (sourced by tests/cmd/t*.sh).
# SP_BIN is the directory of the commands under test, SP_TOP the project.
# Each check prints exactly one line: ok / not ok / skip with a reason.
set -u
: "${SP_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SP_BIN:=$SP_TOP/bin}"
: "${SP_LABEL:=}"
export PATH="$SP_BIN:$PATH"
T=$(mktemp -d)
# A sanitizer report in any file the test kept (a command's captured stderr)
# fails the test, whatever exit status it checked: under tests/run.sh the
# build-asan commands make every report fatal, but a test that expects a
# failing exit or reads only a pipeline's output would not notice.  (A test
# that sets its own EXIT trap should call sp_cleanup from it.)
sp_cleanup() {
	local f re='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer'
	grep -rlIE -- "$re" "$T" 2>/dev/null | while IFS= read -r f; do # text files: a Go binary holds "runtime error:"
		echo "not ok - $SP_LABEL$(basename "$0"): sanitizer report in ${f#"$T"/}"
		grep -aE -A10 -- "$re" "$f" | head -24 | sed 's/^/  /'
	done
	rm -rf "$T"
}
trap sp_cleanup EXIT
CONF=${SP_CONFORMANCE:-$SP_TOP/../shared/conformance}

ok() { echo "ok - $SP_LABEL$*"; }
notok() { echo "not ok - $SP_LABEL$*"; }
skip() { local n=$1; shift; echo "skip - $SP_LABEL$n # $*"; }

# expect_eq NAME EXPECTED_FILE ACTUAL_FILE: byte comparison, diff on failure
expect_eq() {
	if cmp -s "$2" "$3"; then ok "$1"; else
		notok "$1"; diff -u "$2" "$3" | head -20 | sed 's/^/  /'; fi
}
# expect_rc NAME WANT GOT
expect_rc() {
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1 (exit $3, want $2)"; fi
}
# expect_grep NAME PATTERN FILE
expect_grep() {
	if grep -qE -- "$2" "$3"; then ok "$1"; else
		notok "$1 (no match for /$2/)"; head -5 "$3" | sed 's/^/  /'; fi
}
# within WANT GOT PCT: |GOT - WANT| <= PCT % of WANT (WANT > 0; numbers,
# decimals too)
within() { awk -v w="$1" -v g="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d * 100 <= p * w) }'; }
# line MARK: the number of the line of $PROG (a test program) that ends in
# the comment "# MARK"
line() { grep -n "# $1\$" "$PROG" | cut -d: -f1; }
# once_per_check WHAT: run this test once per make check.  For a test
# whose checks do not depend on the build (what the output says, with no
# timing bound an ASan build meets less easily): when an ASan pass follows
# (tests/run.sh sets SP_ASAN_FOLLOWS=1 in the plain pass), the plain pass
# leaves it to that pass, saying so on a '# ' line, and the ASan pass runs
# it with the sanitizers on; alone, this pass runs it.  Sets SP_ONCE=1
# (t6_asan_pythons then keeps every interpreter).
once_per_check() {
	if [ -z "$SP_LABEL" ] && [ "${SP_ASAN_FOLLOWS:-}" = 1 ]; then
		echo "# $1: run once, in the ASan pass that follows (the same checks, sanitizers on)"; exit 0
	fi
	SP_ONCE=1
}
# browser_ready NAME: node, /usr/bin/chromium and tests/browser's
# playwright-core are installed; otherwise prints why NAME is skipped, false.
browser_ready() {
	local why=
	if ! command -v node > /dev/null; then
		why="node is not installed (make deps runs tests/browser/setup.sh: nodejs, npm, chromium)"
	elif [ ! -x /usr/bin/chromium ]; then
		why="/usr/bin/chromium is not installed (make deps: apt-get install chromium)"
	elif [ ! -d "$SP_TOP/tests/browser/node_modules/playwright-core" ]; then
		why="playwright-core is not installed (make deps runs tests/browser/setup.sh: npm ci)"
	fi
	[ -z "$why" ] && return 0
	skip "$1" "$why"
	return 1
}
