#!/bin/bash
# The README's first command on a machine that lacks the -dev packages:
# a plain `make` says what is missing, and `make demo` installs it and works
# the first time (it used to fail: pkg-config ran before deps installed).
# This removes and reinstalls Debian packages, so it runs only where asked
# (.ci/run sets SP_FIRSTRUN=1 when it runs as root).
. "$(dirname "$0")/../lib.sh"
if [ -n "$SP_LABEL" ]; then exit 0; fi # once is enough (not under the asan pass)
name="fresh machine: make demo works the first time"
if [ "${SP_FIRSTRUN:-}" != 1 ]; then
	skip "$name" "removes Debian packages; runs in CI (.ci/run as root sets SP_FIRSTRUN=1)"; exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	skip "$name" "needs root and apt-get"; exit 0
fi
restore() { sh "$SP_TOP/tests/deps.sh" >/dev/null 2>&1 || true; rm -rf "$T/clone"; sp_cleanup; }
trap restore EXIT
git clone -q "$SP_TOP" "$T/clone" 2>"$T/err" || { notok "$name (git clone failed)"; sed 's/^/  /' "$T/err"; exit 0; }
DEBIAN_FRONTEND=noninteractive dpkg -r libcjson-dev libxxhash-dev > "$T/log" 2>&1
if pkg-config --exists libcjson || pkg-config --exists libxxhash; then
	notok "$name (could not remove libcjson-dev libxxhash-dev)"; sed 's/^/  /' "$T/log" | tail -5; exit 0
fi
make -C "$T/clone" all > "$T/make.out" 2>&1; rc=$?
expect_rc "plain make without the -dev packages fails" 2 "$rc"
expect_grep "... names the missing packages" "missing development packages for: .*libxxhash" "$T/make.out"
expect_grep "... and says to run 'make deps'" "run 'make deps'" "$T/make.out"
make -C "$T/clone" demo > "$T/demo.out" 2>&1; rc=$?
expect_rc "$name" 0 "$rc"
expect_grep "... its fold step ran" 'distinct stacks, total weight' "$T/demo.out"
[ $rc = 0 ] || tail -15 "$T/demo.out" | sed 's/^/  /'
if pkg-config --exists libcjson libxxhash; then ok "make demo installed the missing packages"
else notok "make demo did not install libcjson-dev libxxhash-dev"; fi
