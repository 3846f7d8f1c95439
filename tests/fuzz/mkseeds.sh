#!/bin/bash
# tests/fuzz/mkseeds.sh — (re)make the "real-*" seeds of tests/fuzz/corpus/
# from real programs run on this machine: `perf record` + `perf script` of
# tests/data/t5-threads.c and of gzip, pcollect of the same program, psvg --cp's palette, and the
# stacks of a real Python program (see below).  Needs gcc, perf, python3 and
# a built bin/ (make); root or perf_event_paranoid <= 1 for kernel frames.
#
# Seeds are cut small (a few KB, at a sample boundary where the format has
# one): libFuzzer's default maximum input length follows the largest seed,
# and short inputs run faster.  Binary streams and JSON cannot be cut, so
# they come from short recordings.
#
# py-spy cannot be installed here (no PyPI), so the py-spy seed is made by
# sampling a real Python program (threads doing zlib, json and sorting) from
# inside it with sys._current_frames(), written in py-spy's `record --format
# raw` spelling (the one tests/data/pyspy-raw.txt follows): the stacks,
# files, lines, thread ids and names are real, the writer is ours.
set -eu
cd "$(dirname "$0")/../.."
top=$PWD
C=tests/fuzz/corpus
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export PATH=$top/bin:$PATH
need() { command -v "$1" > /dev/null || { echo "mkseeds: $1 is needed" >&2; exit 2; }; }
need gcc; need perf; need python3; need pfold; need pcollect; need pdiff; need pspeedscope; need psvg

# head_samples FILE BYTES: the first samples of perf script text (blank-line
# separated), at most BYTES long but at least one sample.
head_samples() {
	awk -v max="$2" 'BEGIN { RS = ""; ORS = "\n\n" } { n += length($0) + 2; if (NR > 1 && n > max) exit; print }' "$1"
}

gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$dir/t5-threads" tests/data/t5-threads.c
(cd "$dir" && perf record -q -e cpu-clock -F 999 -g -o fp.data ./t5-threads > /dev/null 2>&1)
(cd "$dir" && perf record -q -e cpu-clock -F 999 --call-graph dwarf,4096 -o dwarf.data ./t5-threads > /dev/null 2>&1)
head -c 3000000 /usr/bin/perf > "$dir/blob"
(cd "$dir" && perf record -q -e cpu-clock -F 4999 -g -o gz.data -- gzip -9 -c blob > /dev/null 2>&1)
perf script -i "$dir/fp.data" -F +pid > "$dir/fp.txt" 2> /dev/null
perf script -i "$dir/dwarf.data" --inline > "$dir/dwarf.txt" 2> /dev/null
perf script -i "$dir/gz.data" --header > "$dir/gz.txt" 2> /dev/null
perf script -i "$dir/gz.data" -F comm,tid,time,period,event,ip,sym,symoff,dso > "$dir/gz-fields.txt" 2> /dev/null

# perf script text: frame pointers (user+kernel), dwarf with inlines, a
# header, custom fields; one gzipped (the input layer inflates it).
head_samples "$dir/fp.txt" 4000 > $C/fuzz_perf/real-threads-fp
head_samples "$dir/dwarf.txt" 4000 > $C/fuzz_perf/real-threads-dwarf-inline
{ grep '^#' "$dir/gz.txt"; grep -v '^#' "$dir/gz.txt" > "$dir/gz-body.txt"; head_samples "$dir/gz-body.txt" 2500; } |
	head -c 6000 > $C/fuzz_perf/real-gzip-header
head_samples "$dir/gz-fields.txt" 3000 > $C/fuzz_perf/real-gzip-fields
head_samples "$dir/fp.txt" 3000 | gzip -9n > $C/fuzz_perf/real-threads-fp.gz

# folded text from the same recordings, and a two-value diff of them.
pfold --tid "$dir/fp.txt" | head -c 3000 | sed '$d' > $C/fuzz_folded/real-threads-tid
pfold --all "$dir/gz.txt" | head -c 3000 | sed '$d' > $C/fuzz_folded/real-gzip-all
pfold "$dir/fp.txt" > "$dir/a.folded"
pfold "$dir/dwarf.txt" > "$dir/b.folded"
pdiff "$dir/a.folded" "$dir/b.folded" | head -c 3000 | sed '$d' > $C/fuzz_folded/real-diff

# binary streams: pcollect of the threads program (threads, metadata, file
# and line frames), and pfold -b of perf text.
pcollect -q -F 49 --lines -o "$dir/t5.sp" -- "$dir/t5-threads" > /dev/null
cp "$dir/t5.sp" $C/fuzz_stream/real-pcollect-lines.sp
head_samples "$dir/gz-fields.txt" 3000 | pfold -b > $C/fuzz_stream/real-gzip.sp

# speedscope JSON: pspeedscope of the pcollect recording.
pspeedscope "$dir/t5.sp" > $C/fuzz_speedscope/real-pcollect.speedscope.json

# psvg --cp's palette map, as psvg writes it for the perf profiles above.
pfold "$dir/gz.txt" > "$dir/gz.folded"
(cd "$dir" && psvg --cp --hash < a.folded > /dev/null && psvg --cp --colors java < gz.folded > /dev/null)
head -c 3000 "$dir/palette.map" | sed '$d' > $C/fuzz_palette/real-cp-palette.map

# py-spy raw: a real Python program's stacks (see the top of this file).
cat > "$dir/app.py" <<'EOF'
import json, os, sys, threading, time, zlib
from collections import Counter

def compress(data):
    return zlib.compress(data, 9)

def encode(n):
    return json.dumps([{"id": i, "name": str(i) * 5} for i in range(n)])

def worker(stop):
    data = os.urandom(1 << 16)
    while not stop.is_set():
        compress(data)

def sorter(stop):
    while not stop.is_set():
        sorted(encode(2000))

def sample(stop, out):
    me = threading.get_ident()
    names = {}
    while not stop.is_set():
        for t in threading.enumerate():
            names[t.ident] = (t.native_id, t.name)
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            stack = []
            while frame:
                code = frame.f_code
                stack.append("%s (%s:%d)" % (code.co_name, os.path.basename(code.co_filename), frame.f_lineno))
                frame = frame.f_back
            tid, name = names.get(ident, (ident, "?"))
            out[(tid, name, tuple(reversed(stack)))] += 1
        time.sleep(0.002)

def main():
    stop = threading.Event()
    out = Counter()
    threads = [threading.Thread(target=worker, args=(stop,), name="compress-1"),
               threading.Thread(target=sorter, args=(stop,), name="json-sort")]
    s = threading.Thread(target=sample, args=(stop, out), name="sampler")
    for t in threads + [s]:
        t.start()
    end = time.time() + 1.0
    while time.time() < end:
        encode(500)
    stop.set()
    for t in threads + [s]:
        t.join()
    cmd = " ".join(["python3"] + sys.argv)
    for (tid, name, stack), n in out.items():
        print('process %d:"%s";thread (%d): %s;%s %d' % (os.getpid(), cmd, tid, name, ";".join(stack), n))

main()
EOF
(cd "$dir" && python3 app.py) | head -c 4000 | sed '$d' > $C/fuzz_pyspy/real-python-threads
for f in $C/*/real-*; do printf '%6d %s\n' "$(wc -c < "$f")" "$f"; done
