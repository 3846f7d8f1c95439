#!/bin/sh
# Install the Debian packages stackpipe needs to build and test, if missing.
# Prints the exact command when it cannot run it (not root, no apt-get).
sh "$(dirname "$0")/speedscope/setup.sh" || echo "deps: the speedscope browser test (t5100) will be skipped" >&2
sh "$(dirname "$0")/browser/setup.sh" || echo "deps: the psvg browser tests (t3100) will be skipped" >&2

# golang-go: go tool pprof, the reference pprof reader, and Go's runtime/pprof
# for t5200.  Optional: without it those checks skip, saying so.
if ! command -v go >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing: golang-go"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go >/dev/null 2>&1; } ||
		echo "deps: golang-go could not be installed: t5200's go tool pprof checks will be skipped" >&2
	else
		echo "deps: golang-go is missing (apt-get install golang-go as root): t5200's go tool pprof checks will be skipped" >&2
	fi
fi

# man-db and groff-base: t0150 checks every man page with man --warnings and
# groff -ww.  Optional: without them t0150 skips, saying so.
if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing: man-db groff-base"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends man-db groff-base >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends man-db groff-base >/dev/null 2>&1; } ||
		echo "deps: man-db could not be installed: t0150's man page checks will be skipped" >&2
	else
		echo "deps: man-db is missing (apt-get install man-db groff-base as root): t0150's man page checks will be skipped" >&2
	fi
fi

need=""
for p in libdw-dev libelf-dev libxxhash-dev libcjson-dev zlib1g-dev pkg-config gcc make clang libclang-rt-14-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need="$need $p"
done
[ -z "$need" ] && exit 0
cmd="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing:$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >/dev/null 2>&1 ||
	{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >/dev/null; } ||
	{ echo "deps: failed; run as root: $cmd" >&2; exit 1; }
else
	echo "deps: missing packages; run as root: $cmd" >&2
	exit 1
fi
