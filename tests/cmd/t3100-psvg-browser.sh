#!/bin/bash
# psvg in a real browser: Debian's headless Chromium driven by playwright-core
# (tests/browser/psvg.test.js): click-zoom, search and its percentages,
# Ctrl-I, Esc, the URL, zoom revealing narrow frames, differential colours,
# and a file of hostile names that must execute nothing.
. "$(dirname "$0")/../lib.sh"

B=$SP_TOP/tests/browser
if ! command -v node > /dev/null; then
	skip "psvg browser tests" "node is not installed (make deps runs tests/browser/setup.sh: nodejs, npm, chromium)"
	exit 0
fi
if [ ! -x /usr/bin/chromium ]; then
	skip "psvg browser tests" "/usr/bin/chromium is not installed (make deps: apt-get install chromium)"
	exit 0
fi
if [ ! -d "$B/node_modules/playwright-core" ]; then
	skip "psvg browser tests" "playwright-core is not installed (make deps runs tests/browser/setup.sh: npm ci)"
	exit 0
fi
if [ ! -d "$CONF/inferno" ]; then
	skip "psvg browser tests" "conformance fixtures not found at $CONF"
	exit 0
fi
# A browser that cannot start here (no /dev/shm, seccomp) is a failure of
# the run, reported by the script as "not ok - browser run".
(cd "$B" && timeout 300 node psvg.test.js "$SP_BIN/psvg" "$CONF") 2>&1
rc=$?
[ $rc = 124 ] && notok "psvg browser tests timed out"
exit 0
