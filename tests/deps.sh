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

# clickhouse-server, clickhouse-client: the store of pfleet's tests
# (t9010-t9030 start private servers) and of tests/bench/fleet-bench.sh.
# Optional: without them those tests skip, saying so.
if ! command -v clickhouse-server >/dev/null 2>&1 && [ ! -x /usr/sbin/clickhouse-server ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing: clickhouse-server clickhouse-client"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends clickhouse-server clickhouse-client >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends clickhouse-server clickhouse-client >/dev/null 2>&1; } ||
		echo "deps: clickhouse-server could not be installed: the pfleet tests (t9010-t9030) will be skipped" >&2
	else
		echo "deps: clickhouse-server is missing (apt-get install clickhouse-server clickhouse-client as root): the pfleet tests (t9010-t9030) will be skipped" >&2
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
