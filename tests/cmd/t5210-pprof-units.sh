#!/bin/bash
# Units from pprof (issue 28 item 4): a Go program's own runtime/pprof CPU
# and heap profiles (tests/progs/goprof.go) read by preport, psvg, plive and
# pspeedscope show time and bytes as for our own streams, and the totals are
# the ones go tool pprof -top prints for the same file.  --weight picks a
# sample type by its column name; an unknown one is an error naming them.
. "$(dirname "$0")/../lib.sh"
cd "$T" || exit 1

if ! command -v go > /dev/null; then
	skip "units of Go profiles" "golang-go is not installed (make deps installs it)"; exit 0
fi
export GOCACHE=${GOCACHE:-$SP_TOP/build/gocache} GOPATH=$T/gopath GO111MODULE=off
cp "$SP_TOP/tests/progs/goprof.go" goprof.go
if ! go build -o goprof goprof.go > gerr 2>&1; then notok "go build of the runtime/pprof program"; head -5 gerr; exit 0; fi
./goprof cpu.pprof heap.pprof || { notok "the Go program did not run"; exit 0; }

# "of 1090ms total" / "of 4310584B total" / "of 2090 total" -> the number
pprof_total() { go tool pprof -top "$@" 2> /dev/null | sed -n 's/.* of \([0-9.]*\)[A-Za-z]* total$/\1/p'; }
# "total 1.09 s, ..." -> ms; "total 4,310,584 bytes, ..." -> 4310584
ours_ms() { sed -n '1s/^total \([0-9.]*\) \(s\|ms\), .*/\1 \2/p' "$1" | awk '{ print ($2 == "s" ? $1 * 1000 : $1) }'; }
ours_n() { sed -n "1s/^total \\([0-9,]*\\) $2, .*/\\1/p" "$1" | tr -d ,; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d * 200 <= b) }'; } # within 0.5 %

# ---- preport: seconds and bytes, the totals of go tool pprof ----
preport cpu.pprof > r 2> e; rc=$?
want=$(pprof_total -unit=ms cpu.pprof) got=$(ours_ms r)
if [ $rc = 0 ] && [ -n "$want" ] && [ -n "$got" ] && near "$got" "$want"; then
	ok "preport of a Go CPU profile: '$(head -1 r)' = go tool pprof's ${want}ms"
else notok "preport cpu.pprof: '$(head -1 r)' (exit $rc), go tool pprof says ${want}ms"; head -3 e; fi
# (ms or s: a function's total reaches 1.00 s when the Go program's share
# of the 2 s falls so)
expect_grep "preport cpu.pprof: cells in time units (ms, s), as for our streams" '^ +[0-9.]+% +[0-9.]+ m?s +[0-9.]+% +[0-9.]+ m?s  main\.' r
if grep -q 'events' r; then notok "preport cpu.pprof still says events"; else ok "preport cpu.pprof: no 'events'"; fi
preport heap.pprof > r 2> e
want=$(pprof_total -unit=B heap.pprof) got=$(ours_n r bytes)
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "preport of a Go heap profile: $got bytes in use, as go tool pprof"
else notok "preport heap.pprof: '$(head -1 r)', go tool pprof: ${want}B"; fi
preport --weight=alloc_space heap.pprof > r 2> e
want=$(pprof_total -unit=B -sample_index=alloc_space heap.pprof) got=$(ours_n r bytes)
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "preport --weight=alloc_space: $got bytes, as go tool pprof -sample_index=alloc_space"
else notok "preport --weight=alloc_space: '$(head -1 r)', go tool pprof: ${want}B"; fi
preport --weight=alloc_objects heap.pprof > r 2> e
want=$(pprof_total -sample_index=alloc_objects heap.pprof) got=$(ours_n r alloc_objects)
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "preport --weight=alloc_objects: a count named by its type ($got)"
else notok "preport --weight=alloc_objects: '$(head -1 r)', go tool pprof: $want"; fi
preport --weight=samples cpu.pprof > r 2> e
want=$(pprof_total -sample_index=samples cpu.pprof) got=$(ours_n r samples)
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "preport --weight=samples cpu.pprof: $got samples"
else notok "preport --weight=samples: '$(head -1 r)', go tool pprof: $want"; fi

# ---- the stream keeps the units; psvg, pspeedscope, plive show them ----
pfold -b cpu.pprof 2> /dev/null | sp-dump > d
expect_grep "pfold -b of a Go CPU profile: units samples,ns in the stream" '^units samples,ns$' d
pfold -b heap.pprof 2> /dev/null | sp-dump > d
expect_grep "pfold -b of a Go heap profile: space in bytes, objects by name" '^units bytes,alloc_objects,bytes,inuse_objects$' d
# (rows of equal weight may come in another order: compared sorted)
pfold -b cpu.pprof 2> /dev/null | preport -n 0 | sort > r2; preport -n 0 cpu.pprof 2> /dev/null | sort > r
expect_eq "preport of the stream made from it: the same table" r r2
psvg cpu.pprof > o.svg 2> e
expect_grep "psvg cpu.pprof: time for the script (ms/s)" 'unit:"ns"' o.svg
psvg heap.pprof > o.svg 2> e
expect_grep "psvg heap.pprof: bytes" 'unit:"bytes"' o.svg
psvg --weight=samples cpu.pprof > o.svg 2> e
expect_grep "psvg --weight=samples cpu.pprof: samples" 'unit:"samples"' o.svg
pspeedscope cpu.pprof > o.json 2> e
expect_grep "pspeedscope cpu.pprof: unit nanoseconds" '"unit":"nanoseconds"' o.json
# speedscope's weights of the CPU profile add up to pprof's total
tot=$(node -e 'const j = JSON.parse(require("fs").readFileSync("o.json")); let s = 0;
	for (const p of j.profiles) for (const w of p.weights) s += w; console.log(s / 1e6)' 2> /dev/null)
want=$(pprof_total -unit=ms cpu.pprof)
if ! command -v node > /dev/null; then skip "pspeedscope cpu.pprof: weights" "node is not installed (make deps)"
elif [ -n "$tot" ] && near "$tot" "$want"; then ok "pspeedscope cpu.pprof: weights add up to ${tot} ms (go tool pprof: ${want}ms)"
else notok "pspeedscope cpu.pprof: weights ${tot} ms, go tool pprof ${want}ms"; fi
pspeedscope heap.pprof > o.json 2> e
expect_grep "pspeedscope heap.pprof: unit bytes" '"unit":"bytes"' o.json
plive --once --speed 0 cpu.pprof > p 2> e
expect_grep "plive cpu.pprof: OwnTime/TotalTime in seconds" '^ +%Own +%Total +OwnTime +TotalTime' p
expect_grep "plive cpu.pprof: rows in seconds" '^ +[0-9.]+% +[0-9.]+% +[0-9.]+s +[0-9.]+s  main\.' p

# ---- --weight names a column; an unknown one lists them, exit 2 ----
for cmd in psvg preport pspeedscope "plive --once --speed 0" pfold; do
	$cmd --weight=cpu_time cpu.pprof > o 2> e; rc=$?
	if [ $rc = 2 ] && grep -q -- "--weight=cpu_time: the input has no such value column (its columns: samples, period)" e; then
		ok "$cmd --weight=cpu_time: exit 2, the columns named"
	else notok "$cmd --weight=cpu_time (exit $rc)"; head -3 e; fi
done
