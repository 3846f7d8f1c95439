#!/bin/bash
# tests/golden/golden.sh [CASES] — run every command line of tests/golden/cases
# (or of the file CASES) and print the manifest: a line "host FINGERPRINT" (this
# machine's kernel release and C library, which the "host: " cases depend
# on), then one line "SHA256  CASE" per case, the hash of its standard
# output, its standard error and its exit status.  The commands are those in
# SP_BIN (default: the project's bin/).
#
# Regenerate the manifest only for a deliberate change of a command's
# output, named in the commit that changes it:
#     bash tests/golden/golden.sh > tests/golden/manifest
# t0160-golden.sh compares a fresh run with it.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cases=${1:-$top/tests/golden/cases}
export PATH="${SP_BIN:-$top/bin}:$PATH"
export LC_ALL=C TZ=UTC
cd "$top" || exit 2
C=tests/fuzz/corpus D=tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -o pipefail
echo "host $( { uname -r; cat /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 2> /dev/null; } | sha256sum | cut -c1-16)"
while IFS= read -r line; do
	case "$line" in '' | '#'*) continue ;; esac
	cmd=${line#host: }
	rm -rf "$tmp/w"; mkdir "$tmp/w"; W=$tmp/w
	(eval "$cmd") > "$tmp/out" 2> "$tmp/err" < /dev/null
	rc=$?
	sum=$( { cat "$tmp/out"; printf '\0stderr\0'; cat "$tmp/err"; printf '\0exit %d\n' $rc; } | sha256sum | cut -c1-64)
	printf '%s  %s\n' "$sum" "$line"
done < "$cases"
