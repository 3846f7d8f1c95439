#!/bin/sh
# Re-record share/demo/perf-demo.txt.gz from demo-prog.c (needs gcc and perf).
set -e
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -mno-omit-leaf-frame-pointer -pthread -o "$tmp/demo-prog" demo-prog.c
perf record -e cpu-clock -F 999 -g -o "$tmp/perf.data" "$tmp/demo-prog" > /dev/null
perf script -i "$tmp/perf.data" --header | sed "s|$tmp/|/usr/local/bin/|g" | gzip -9 > perf-demo.txt.gz
ls -l perf-demo.txt.gz
