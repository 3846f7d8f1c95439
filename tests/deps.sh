#!/bin/sh
# Install the Debian packages stackpipe needs to build and test, if missing.
# Prints the exact command when it cannot run it (not root, no apt-get).
sh "$(dirname "$0")/speedscope/setup.sh" || echo "deps: the speedscope browser test (t5100) will be skipped" >&2
sh "$(dirname "$0")/browser/setup.sh" || echo "deps: the psvg browser tests (t3100) will be skipped" >&2

# optional PACKAGES -- PRESENT-CHECK -- WHAT-SKIPS: installs Debian packages a
# test needs but the build does not; without them those tests skip, saying so.
optional() {
	pkgs=$1 present=$2 skips=$3
	sh -c "$present" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing: $pkgs"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs >/dev/null 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive apt-get update >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs >/dev/null 2>&1; } ||
		echo "deps: $pkgs could not be installed: $skips will be skipped" >&2
	else
		echo "deps: $pkgs missing (apt-get install $pkgs as root): $skips will be skipped" >&2
	fi
}
# golang-go: go tool pprof, the reference pprof reader, and Go's runtime/pprof.
optional golang-go 'command -v go' "t5200's go tool pprof checks"
# man-db and groff-base: t0150 checks every man page with man --warnings and groff -ww.
optional "man-db groff-base" 'command -v man && command -v groff' "t0150's man page checks"
# clickhouse-server, clickhouse-client: the store of pfleet's tests (private
# servers) and of tests/bench/fleet-bench.sh.
optional "clickhouse-server clickhouse-client" 'command -v clickhouse-server || [ -x /usr/sbin/clickhouse-server ]' "the pfleet tests (t9010-t9030)"

# libc6-dbg: glibc's symbol tables, as perf reads them (test_symbols' _fini
# check; t0153 compares pfold with perf script on a recording through libc).
optional libc6-dbg 'dpkg-query -W -f="\${Status}" libc6-dbg | grep -q "ok installed"' "test_symbols' _fini check"
# bpftrace: the per-hit reference of tests/bench/trace-bench.sh (issue 41).
optional bpftrace 'command -v bpftrace' "trace-bench's per-hit reference (make bench; skipped there, said)"

# The accuracy suite's peers and programs (make accuracy; their quick
# variants in make check): perf record, Debian's sqlite3, node.
optional linux-perf 'command -v perf' "the tests against perf record (t0153, t8091, t8092)"
optional sqlite3 'command -v sqlite3' "t8091 (sqlite3 against perf)"
optional nodejs 'command -v node' "t8092 (node against perf)"

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
