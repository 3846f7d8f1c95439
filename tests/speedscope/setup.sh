#!/bin/sh
# Set up the browser test of pspeedscope: the real speedscope app (npm
# package `speedscope`, which ships the built app), playwright-core to drive
# a browser, and Debian's chromium (never a downloaded browser).
# Idempotent: does nothing when everything is there.  Exits 0 when ready;
# otherwise prints the reason and the command to run, and exits 1.
cd "$(dirname "$0")" || exit 1
say() { echo "speedscope setup: $*" >&2; }

if [ ! -x /usr/bin/chromium ]; then
	cmd="apt-get install -y --no-install-recommends chromium"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing chromium"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; } ||
		{ say "apt-get could not install chromium; run as root: $cmd"; exit 1; }
	else
		say "/usr/bin/chromium is missing; run as root: $cmd"
		exit 1
	fi
	[ -x /usr/bin/chromium ] || { say "chromium installed but /usr/bin/chromium is missing"; exit 1; }
fi

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
	{ say "node and npm are needed; run as root: apt-get install -y nodejs npm"; exit 1; }

ready() {
	[ -f node_modules/speedscope/dist/release/index.html ] &&
	[ -f node_modules/playwright-core/package.json ] &&
	node -e 'require("playwright-core")' >/dev/null 2>&1
}
if ! ready; then
	say "installing speedscope and playwright-core with npm"
	# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing by
	# itself, but say so in case a future version changes its mind.
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error >/dev/null 2>npm.log ||
		{ say "npm install failed (network or registry?):"; tail -5 npm.log >&2; exit 1; }
	rm -f npm.log
	ready || { say "npm install finished but speedscope's built app or playwright-core is missing"; exit 1; }
fi
exit 0
