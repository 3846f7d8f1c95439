#!/bin/bash
# pprof in and out: pfold -O pprof read by the reference reader (go tool
# pprof -traces/-top/-tagfocus agree with our folded output of the same
# real perf recordings), profiles written by a Go program with runtime/pprof
# folded as go tool pprof shows them, round trips stream -> pprof -> pfold,
# other commands reading pprof, and bad input (byte offsets, exit 2).
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
THREADS=$SP_TOP/tests/data/t5-perf-threads.txt.gz
cd "$T" || exit 1

# ---- without Go: our writer and reader agree with each other ----
pfold -O pprof -o d.pb.gz "$DEMO" 2> e; rc=$?
if [ $rc = 0 ] && [ "$(head -c2 d.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ]; then ok "pfold -O pprof -o: gzip output, exit 0"; else notok "pfold -O pprof (exit $rc)"; cat e; fi
pfold "$DEMO" > want; pfold d.pb.gz > got 2> e
expect_eq "pprof read back (probed, gzip): the folded stacks of the perf script" want got
gzip -dc d.pb.gz > d.pb; pfold d.pb > got 2> e
expect_eq "uncompressed pprof probed and read" want got
pfold --tid "$DEMO" > want; pfold --tid d.pb.gz > got
expect_eq "threads (comm, pid, tid) kept as labels" want got
pfold --weight=count "$DEMO" > want; pfold --value=samples d.pb.gz > got
expect_eq "--value=samples: the sample counts" want got
pfold --value=0 d.pb.gz > got2
expect_eq "--value=0: the same column by index" got got2
pfold --value=nosuch d.pb.gz > o 2> e; rc=$?
if [ $rc = 2 ] && grep -q "^pfold: d.pb.gz: no sample type 'nosuch' (the profile has 0=samples/count, 1=cpu/nanoseconds)" e && [ ! -s o ]; then ok "--value unknown: error naming the types, exit 2"; else notok "--value unknown (exit $rc)"; cat e; fi

for src in "$DEMO" "$THREADS"; do
	n=$(basename "$src" .txt.gz)
	pfold -b "$src" > s.sp
	pfold -O pprof s.sp > r.pb.gz
	pfold --tid s.sp > want; pfold --tid r.pb.gz > got
	expect_eq "$n: stream -> pprof -> pfold equals pfold of the stream" want got
	pfold -O pprof r.pb.gz > rr.pb.gz; pfold --tid rr.pb.gz > got
	expect_eq "$n: pprof -> pprof keeps it" want got
done

# Python frames (function, file, line) and py-spy's synthetic roots
for src in "$SP_TOP/tests/data/pyspy-raw.txt" "$SP_TOP/tests/data/t5-pyspy.speedscope.json"; do
	n=$(basename "$src")
	pfold "$src" > want; pfold -O pprof "$src" > py.pb.gz; pfold py.pb.gz > got
	expect_eq "$n -> pprof -> pfold: the same stacks" want got
done
pfold -O pprof "$SP_TOP/tests/data/pyspy-raw.txt" | pfold -O stream | sp-dump > dump
if grep -q '^sample .*serve \[python server.py:41\]' dump; then ok "Python frames read back as Python frames with file and line"; else notok "Python frames lost their kind, file or line"; grep -m1 '^sample' dump; fi

# pmerge --tag: the tag is the root frame and a "tag" label
pfold -b "$DEMO" > host1.sp; pfold -b "$THREADS" > host2.sp
pmerge --tag host1.sp host2.sp > m.sp
pfold -O pprof m.sp > m.pb.gz
pfold m.sp > want; pfold m.pb.gz > got
expect_eq "pmerge --tag: tagged stacks read back the same" want got

# other commands read pprof
psvg d.pb.gz > o.svg 2> e; rc=$?
if [ $rc = 0 ] && grep -q 'handle_request' o.svg; then ok "psvg reads pprof"; else notok "psvg pprof (exit $rc)"; head -3 e; fi
pfilter -e tokenize d.pb.gz > o 2> e; rc=$?
if [ $rc = 0 ] && [ -s o ]; then ok "pfilter reads pprof"; else notok "pfilter pprof (exit $rc)"; head -3 e; fi

# other formats are not taken for pprof
pfold -f folded want > o1; pfold want > o2
expect_eq "folded input still probed as folded" o1 o2

# ---- bad input: one error with the byte offset, exit 2, nothing written ----
bad() { # name file pattern [pfold args]
	local name=$1 f=$2 pat=$3; shift 3
	pfold "$@" "$f" > o 2> e; local rc=$?
	if [ $rc = 2 ] && grep -qE -- "$pat" e && [ ! -s o ] && [ "$(wc -l < e)" = 1 ]; then ok "bad input: $name"; else
		notok "bad input: $name (exit $rc)"; sed 's/^/  /' e | head -3; fi
}
head -c 600 d.pb.gz > trunc.pb.gz
bad "truncated gzip" trunc.pb.gz '^pfold: trunc.pb.gz: .*(truncated|unexpected end|cannot tell)'
size=$(wc -c < d.pb); head -c $((size - 7)) d.pb > trunc.pb
bad "truncated protobuf" trunc.pb '^pfold: trunc.pb: offset [0-9]+: .*(runs past the end|truncated)' -f pprof
# sample_type { type: 1, unit: 2 } with the type as a string (wire type 2)
printf '\x0a\x04\x0a\x00\x10\x02\x32\x00' > wt.pb
bad "wrong wire type" wt.pb '^pfold: wt.pb: offset 2: field 1 of ValueType has wire type 2, expected 0' -f pprof
printf '\x0a\x02\x08\x05\x32\x00' > str.pb
bad "string index out of range" str.pb '^pfold: str.pb: offset 2: ValueType refers to string 5, past the string table' -f pprof
printf '\x0a\x04\x08\x01\x10\x02\x12\x05\x0a\x01\x07\x10\x01\x32\x00\x32\x07samples\x32\x05count' > loc.pb
bad "undefined location id" loc.pb '^pfold: loc.pb: offset 6: reference to location id 7, which is not defined' -f pprof
printf '\x0a\xff\xff\xff\xff\x0f\x08\x01' > len.pb
bad "absurd length" len.pb '^pfold: len.pb: offset 0: length 4294967295 of field 1 runs past the end of Profile \(2 bytes left\)' -f pprof
printf '\x0a\x04\x08\x01\x10\x02\x12\x04\x0a\x00\x10\x01\x2a\x04\x08\x01\x10\x09\x32\x00\x32\x01f\x32\x01g' > fn.pb
bad "function name past the string table" fn.pb '^pfold: fn.pb: offset [0-9]+: Function name refers to string 9' -f pprof

# ---- go tool pprof: the reference reader ----
if ! command -v go > /dev/null; then
	skip "go tool pprof" "golang-go is not installed (make deps installs it)"; exit 0
fi
export GOCACHE=${GOCACHE:-$SP_TOP/build/gocache} GOPATH=$T/gopath GO111MODULE=off
# go tool pprof -traces -> folded stacks, root first, summed; pprof's
# " (inline)" marks dropped (our inlined frames have the bare name).
cat > t2f.awk <<'EOF'
/^-----------\+/ { flush(); inst = 1; next }
inst && /^ *-?[0-9.]+[A-Za-z]*   [^ ]/ { flush(); v = $1; sub(/[A-Za-z]+$/, "", v); line = $0; sub(/^ *-?[0-9.]+[A-Za-z]*   /, "", line); n = 1; fr[1] = name(line); next }
inst && n && /^             [^ ]/ { line = $0; sub(/^             /, "", line); fr[++n] = name(line); next }
function name(s) { sub(/ \(inline\)$/, "", s); return s }
function flush(   s, i) { if (n) { s = fr[n]; for (i = n - 1; i >= 1; i--) s = s ";" fr[i]; sum[s] += v } n = 0 }
END { flush(); for (s in sum) print s, sum[s] }
EOF
traces() { # pprof-file go-pprof-args... -> folded on stdout
	local f=$1; shift
	go tool pprof -traces "$@" "$f" 2> gerr | awk -f t2f.awk | LC_ALL=C sort | grep -v ' 0$'
}
# Zero lines left out on both sides: pprof drops samples whose values are
# all zero, and prints a stack that is zero in the chosen type only.
ours() { pfold "$@" 2> oerr | grep -v ' 0$'; }

for src in "$DEMO" "$THREADS"; do
	n=$(basename "$src" .txt.gz)
	pfold -O pprof "$src" > g.pb.gz
	traces g.pb.gz -unit=ns > got; pfold --no-comm "$src" > want
	if [ -s got ]; then expect_eq "$n: go tool pprof -traces (cpu ns) = pfold --no-comm" want got; else notok "$n: go tool pprof -traces printed nothing"; head -3 gerr; fi
	traces g.pb.gz -sample_index=samples > got; pfold --no-comm --weight=count "$src" > want
	expect_eq "$n: go tool pprof -traces -sample_index=samples = pfold --weight=count" want got
	# -top: flat per function = our folded leaf sums
	go tool pprof -top -nodecount=100000 -nodefraction=0 -sample_index=samples g.pb.gz 2> gerr |
		awk 'f && NF >= 6 { s = $6; for (i = 7; i <= NF; i++) s = s " " $i; if ($1 + 0) print s, $1 } /^ *flat  flat%/ { f = 1 }' | LC_ALL=C sort > got
	awk '{ n = split($1, a, ";"); s[a[n]] += $NF } END { for (k in s) print k, s[k] }' want | LC_ALL=C sort > want.top
	if [ -s got ]; then expect_eq "$n: go tool pprof -top flat = our leaf sums" want.top got; else notok "$n: -top printed nothing"; head -3 gerr; fi
done
pfold -O pprof "$THREADS" > th.pb.gz
traces th.pb.gz -sample_index=samples -tagfocus=thread=parser > got
pfold --weight=count "$THREADS" | sed -n 's/^parser;//p' > want
if [ -s want ]; then expect_eq "-tagfocus thread=parser: that thread's stacks" want got; else notok "no parser thread in $THREADS"; fi
traces th.pb.gz -sample_index=samples -tagfocus=tid=$(zcat "$THREADS" | awk '$1 == "sleeper" { print $2; exit }' | cut -d/ -f2) > got
pfold --weight=count "$THREADS" | sed -n 's/^sleeper;//p' > want
expect_eq "-tagfocus tid=N (numeric label)" want got
traces m.pb.gz -sample_index=samples -tagfocus=tag=host2.sp > got
pfold --weight=count --no-comm "$THREADS" > want
sed 's/^host2.sp;//' got > got.x; expect_eq "pmerge --tag then -O pprof: -tagfocus tag=host2.sp is that input" want got.x

# recorded here: perf record and pcollect of a multi-threaded C program
if gcc -O2 -g -pthread -o burn "$SP_TOP/tests/progs/burn.c" 2> gerr; then
	if perf record -e cpu-clock -F 999 -g -o burn.data ./burn > /dev/null 2> perr && perf script -i burn.data > burn.txt 2> /dev/null && [ -s burn.txt ]; then
		pfold -O pprof burn.txt > b.pb.gz
		traces b.pb.gz -unit=ns > got; pfold --no-comm burn.txt | grep -v ' 0$' > want
		expect_eq "perf record here: go tool pprof -traces = pfold --no-comm" want got
		if grep -q 'leaf [0-9]' want && grep -q 'mid' want; then ok "perf record here: burn's leaf and mid"; else notok "perf record here: no leaf/mid"; fi
	else
		skip "perf record here" "perf record is not permitted: $(tail -1 perr)"
	fi
	if pcollect -d 2 -o pc.sp -- ./burn > /dev/null 2> perr; then
		pfold -O pprof pc.sp > pc.pb.gz
		traces pc.pb.gz -unit=ns > got; pfold --no-comm pc.sp | grep -v ' 0$' > want
		expect_eq "pcollect here: go tool pprof -traces = pfold --no-comm" want got
		go tool pprof -top pc.pb.gz > top 2> gerr
		if grep -q '^File: burn' top; then ok "pcollect here: pprof names the program (main binary first)"; else notok "pcollect: File is not burn"; head -2 top; fi
		pfold --tid pc.pb.gz > got; pfold --tid pc.sp > want
		expect_eq "pcollect here: stream -> pprof -> pfold --tid" want got
	else
		skip "pcollect here" "pcollect failed: $(tail -1 perr)"
	fi
else
	notok "build tests/progs/burn.c"; head -3 gerr
fi

# a CPU and a heap profile written by Go's runtime/pprof
cp "$SP_TOP/tests/progs/goprof.go" goprof.go
if ! go build -o goprof goprof.go > gerr 2>&1; then notok "go build of the runtime/pprof program"; head -5 gerr; exit 0; fi
./goprof cpu.pprof heap.pprof || { notok "the Go program did not run"; exit 0; }
traces cpu.pprof -unit=ns > want; ours cpu.pprof > got
if [ -s want ]; then expect_eq "Go CPU profile: pfold (default: cpu, the last type) = go tool pprof -traces" want got; else notok "Go CPU profile: no samples"; fi
if grep -qx 'pfold: cpu.pprof: pprof labels not kept (only thread, tid, pid and tag are): worker' oerr; then ok "Go's pprof.Do label: a warning says it is not kept"; else notok "no warning for the worker label"; cat oerr; fi
traces cpu.pprof -sample_index=samples > want; ours --value=samples cpu.pprof > got
expect_eq "Go CPU profile: --value=samples" want got
if grep -q 'main.hashLoop' got && grep -q 'main.sortLoop' got; then ok "Go CPU profile: both goroutines' functions"; else notok "Go CPU profile: main.hashLoop/main.sortLoop missing"; fi
for v in alloc_space alloc_objects inuse_objects; do
	traces heap.pprof -sample_index=$v -unit=B > want; ours --value=$v heap.pprof > got
	expect_eq "Go heap profile: --value=$v" want got
done
traces heap.pprof -unit=B > want; ours heap.pprof > got
expect_eq "Go heap profile: the default type is the last (inuse_space), as pprof's" want got
if grep -q 'main.allocate' want; then ok "Go heap profile: main.allocate holds memory"; else notok "Go heap profile: no main.allocate"; fi
pfold -O pprof cpu.pprof > re.pb.gz 2> /dev/null; traces re.pb.gz -unit=ns > got; traces cpu.pprof -unit=ns > want
expect_eq "Go CPU profile -> pfold -O pprof -> go tool pprof: the same traces" want got
pfold --value=alloc_space -O pprof heap.pprof > re.pb.gz 2> /dev/null; traces re.pb.gz -unit=B > got; traces heap.pprof -sample_index=alloc_space -unit=B > want
expect_eq "Go heap profile, one type -> pprof -> go tool pprof" want got
