#!/bin/sh
# Set up psvg's browser tests (tests/cmd/t3100-psvg-browser.sh): Debian's
# chromium, node and npm, and playwright-core from npm in this directory
# (it drives /usr/bin/chromium; no browser is ever downloaded).
# Idempotent.  Exits 0 when ready; otherwise prints why and the command to
# run, and exits 1 (the browser tests then skip, saying why).
cd "$(dirname "$0")" || exit 1
say() { echo "psvg browser setup: $*" >&2; }

need=""
[ -x /usr/bin/chromium ] || need=" chromium"
command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
if [ -n "$need" ]; then
	cmd="apt-get install -y --no-install-recommends$need"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing:$need"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >/dev/null 2>&1; } ||
		{ say "apt-get could not install:$need; run as root: $cmd"; exit 1; }
	else
		say "missing:$need; run as root: $cmd"
		exit 1
	fi
fi
[ -x /usr/bin/chromium ] || { say "/usr/bin/chromium is still missing"; exit 1; }

ready() { [ -f node_modules/playwright-core/package.json ] && node -e 'require("playwright-core")' >/dev/null 2>&1; }
if ! ready; then
	say "installing playwright-core with npm (package-lock.json)"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm.log ||
		{ say "npm ci failed (network or registry?):"; tail -5 npm.log >&2; exit 1; }
	rm -f npm.log
	ready || { say "npm ci finished but playwright-core does not load"; exit 1; }
fi
exit 0
