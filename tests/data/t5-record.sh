#!/bin/sh
# Re-record tests/data/t5-perf-threads.txt.gz: real `perf script` output of
# tests/data/t5-threads.c (three named threads, one with idle gaps).  Needs
# gcc and perf (root or perf_event_paranoid <= 1).  Built in a fixed
# directory so the recording names a stable path.
set -e
cd "$(dirname "$0")"
dir=/tmp/stackpipe-t5
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$dir/t5-threads" t5-threads.c
(cd "$dir" && perf record -q -e cpu-clock -F 999 -g -o perf.data ./t5-threads > /dev/null)
(cd "$dir" && perf script --header -F +pid -i perf.data) > "$dir/perf.txt"
gzip -9n < "$dir/perf.txt" > t5-perf-threads.txt.gz
echo "tests/data/t5-perf-threads.txt.gz: $(grep -c 'cpu-clock:' "$dir/perf.txt") samples," \
	"$(wc -c < "$dir/perf.txt") bytes of text, $(wc -c < t5-perf-threads.txt.gz) gzipped"
