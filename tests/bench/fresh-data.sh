#!/bin/bash
# fresh-data.sh — make (or find cached) >= BENCH_FRESH_MB (default 100) MB of
# real `perf script` text in which nothing is repeated: distinct recordings of
# distinct real programs, concatenated once each.  Prints the path of the
# text on stdout; progress goes to stderr.
#
# Recordings (perf record -g -e cpu-clock -F 3999), one round after another
# until the size is reached; round R varies every workload (flags, data,
# seeds), so no two recordings are alike:
#   gcc      make -j2 of a copy of this project with gcc -O2 (round R: -O(1+R%3))
#   clang    the same build with clang (gcc -O0 when clang is missing)
#   xz       xz, bzip2, gzip -9 and zstd -19 compressing generated text
#   python   a CPU-bound python3 script (dicts, json, re, zlib, sort, fib)
#   progs    tests/progs/*.c built with gcc and clang at -O0 and -O2
#   system   perf record -a (system-wide) while a build and python run
#
# Cached in BENCH_FRESH_DIR (default build/bench-fresh; delete it to record
# anew).  Exits 2 when perf cannot record.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
D=${BENCH_FRESH_DIR:-$top/build/bench-fresh}
MB=${BENCH_FRESH_MB:-100}
OUT=$D/fresh.txt
say() { printf 'fresh-data: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }
mkdir -p "$D/rec"
if [ -s "$OUT" ] && [ "$(stat -c %s "$OUT")" -ge $((MB * 1000000)) ]; then
	echo "$OUT"
	exit 0
fi
command -v perf > /dev/null 2>&1 || die "perf is needed (apt-get install linux-perf)"
perf version > /dev/null 2>&1 || die "perf does not run"

if [ ! -f "$D/src/Makefile" ]; then
	rm -rf "$D/src"; mkdir -p "$D/src"
	git archive --format=tar HEAD | tar -x -C "$D/src"
fi
if command -v clang > /dev/null 2>&1; then CC2=clang; else CC2=gcc; fi
export D CC2

# record NAME ARGS... : perf record, then perf script to rec/NAME.txt
record() {
	local name=$1; shift
	[ -s "$D/rec/$name.txt" ] && return 0
	say "recording $name"
	perf record -q -e cpu-clock -F "${BENCH_FRESH_FREQ:-3999}" -g -o "$D/rec/$name.data" "$@" > "$D/rec/$name.log" 2>&1 ||
		{ cat "$D/rec/$name.log" >&2; die "perf record failed for $name"; }
	perf script -i "$D/rec/$name.data" > "$D/rec/$name.tmp" 2> /dev/null || die "perf script failed for $name"
	[ -s "$D/rec/$name.tmp" ] || die "perf script gave nothing for $name"
	mv "$D/rec/$name.tmp" "$D/rec/$name.txt"
	rm -f "$D/rec/$name.data" "$D/rec/$name.data.old"
}

cat > "$D/work.py" <<'PY'
import json, re, zlib, hashlib, random, sys
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
r = random.Random(seed)
def words(n):
    return [("w%d" % (r.randrange(1000 + seed))) * (i % 5 + 1) for i in range(n)]
def count(ws):
    d = {}
    for w in ws:
        d[w] = d.get(w, 0) + 1
    return d
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def crunch(d):
    s = json.dumps(d)
    for _ in range(10 + seed % 7):
        zlib.compress(s.encode(), 1 + seed % 9)
        re.findall(r"w[0-9]+", s)
        hashlib.sha256(s.encode() * 20).hexdigest()
    return s
def shuffle_sort(n):
    a = [r.random() for _ in range(n)]
    for _ in range(3):
        r.shuffle(a)
        a.sort()
    return a
for _ in range(3):
    crunch(count(words(150000)))
    fib(22 + seed % 4)
    shuffle_sort(150000)
PY
cat > "$D/build.sh" <<'SH'
#!/bin/bash
# build.sh CC CFLAGS: one clean build of the copy of the sources
make -s -C "$D/src" clean > /dev/null 2>&1 || true
make -s -C "$D/src" -j2 all CC="$1" CFLAGS="$2" > /dev/null 2>&1 || true
SH
cat > "$D/squeeze.sh" <<'SH'
#!/bin/bash
# squeeze.sh R: compressors over R-dependent generated text
f=$D/squeeze.$1
{ git -C "$D/src" ls-files > /dev/null 2>&1 || true
  for i in $(seq 1 $((20 + $1))); do cat "$D"/src/*/*.c; seq "$i" 7 400000; done; } > "$f"
xz -T1 -$((5 + $1 % 3)) -c "$f" > /dev/null
bzip2 -9 -c "$f" > /dev/null
gzip -9 -c "$f" > /dev/null
zstd -q -$((15 + $1 % 4)) -c "$f" > /dev/null 2>&1 || true
rm -f "$f"
SH
cat > "$D/progs.sh" <<'SH'
#!/bin/bash
# progs.sh R: compile tests/progs with both compilers and several levels
o=$D/progs.$1; mkdir -p "$o"
for f in "$D"/src/tests/progs/*.c "$D"/src/tests/progs/*.cpp; do
	for cc in gcc "$CC2"; do
		case $f in *.cpp) c=${cc/gcc/g++}; c=${c/clang/clang++} ;; *) c=$cc ;; esac
		for O in 0 $((1 + $1 % 3)); do
			"$c" -O$O -g -pthread -c -o "$o/x.o" "$f" > /dev/null 2>&1 || true
		done
	done
done
rm -rf "$o"
SH
chmod +x "$D/build.sh" "$D/squeeze.sh" "$D/progs.sh"

size_now() { cat "$D"/rec/*.txt 2> /dev/null | wc -c; }
r=0
while [ "$(size_now)" -lt $((MB * 1000000)) ]; do
	[ $r -lt 20 ] || die "20 rounds did not give $MB MB"
	record "gcc-$r" "$D/build.sh" gcc "-O$((1 + r % 3)) -g"
	[ "$(size_now)" -ge $((MB * 1000000)) ] && break
	record "clang-$r" "$D/build.sh" "$CC2" "-O$((r % 2)) -g"
	record "xz-$r" "$D/squeeze.sh" "$r"
	record "python-$r" python3 "$D/work.py" "$((r + 1))"
	record "progs-$r" "$D/progs.sh" "$r"
	if [ ! -s "$D/rec/system-$r.txt" ]; then
		( "$D/build.sh" gcc "-O2 -g"; python3 "$D/work.py" $((r + 11)) ) > /dev/null 2>&1 &
		bg=$!
		sleep 0.5
		record "system-$r" -a -- sleep 8
		wait $bg || true
	fi
	r=$((r + 1))
done
cat "$D"/rec/*.txt > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
say "$OUT: $(stat -c %s "$OUT") bytes from $(ls "$D"/rec/*.txt | wc -l) recordings"
echo "$OUT"
