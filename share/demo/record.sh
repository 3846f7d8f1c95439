#!/bin/sh
# Re-record share/demo/perf-demo.txt.gz: real `perf script` output of
# share/demo/demo-prog.c (needs gcc and perf; root or perf_event_paranoid <= 1).
# The program is built in a fixed directory so the recording names a stable
# path (/tmp/stackpipe-demo/demo-prog), and the text is kept as perf wrote it
# (perf script --header -F +pid: every sample names its pid/tid).
set -e
cd "$(dirname "$0")"
dir=/tmp/stackpipe-demo
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
# -O0: gcc 12 at -O1 and above sets up no frame in leaf functions even with
# -fno-omit-frame-pointer, so a frame-pointer (-g) stack sampled in a leaf
# loses the leaf's caller; -O0 keeps every call path of the demo whole.
gcc -O0 -g -fno-omit-frame-pointer -pthread -o "$dir/demo-prog" demo-prog.c
(cd "$dir" && perf record -q -e cpu-clock -F 999 -g -o perf.data ./demo-prog > /dev/null)
(cd "$dir" && perf script --header -F +pid -i perf.data) > "$dir/perf-demo.txt"
gzip -9n < "$dir/perf-demo.txt" > perf-demo.txt.gz
echo "share/demo/perf-demo.txt.gz: $(grep -c 'cpu-clock:' "$dir/perf-demo.txt") samples," \
	"$(wc -c < "$dir/perf-demo.txt") bytes of text, $(wc -c < perf-demo.txt.gz) gzipped"
