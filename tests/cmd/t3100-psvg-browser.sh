#!/bin/bash
# psvg in a real browser: Debian's headless Chromium driven by playwright-core
# (tests/browser/psvg.test.js): click-zoom, search and its percentages,
# Ctrl-I, Esc, the URL, zoom revealing narrow frames, differential colours,
# and a file of hostile names that must execute nothing.
. "$(dirname "$0")/../lib.sh"

B=$SP_TOP/tests/browser
browser_ready "psvg browser tests" || exit 0
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
