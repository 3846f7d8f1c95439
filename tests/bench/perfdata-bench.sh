#!/bin/bash
# perfdata-bench.sh — `pfold perf.data` against `perf script -i perf.data |
# pfold`, measured, never asserted.
#
# Three recordings of at least PD_MB megabytes, made here and cached in
# tests/bench/work/perfdata/ (delete it to re-record):
#   fp       perf record -g (frame pointers) of `make -j2` building a copy of
#            this project with gcc: many processes, deep and varied stacks
#   dwarf    perf record --call-graph dwarf of the same build: ~2,500 samples
#            of 8 KB stack copies in a hundred processes (gcc, cc1, as, ld)
#   dwarf1   perf record --call-graph dwarf of tests/progs/pd-threads.c built
#            without frame pointers: one process, 37 distinct stacks, so
#            fixed costs (reading libc's DWARF, kallsyms) dominate
# Runs alternate between the two pipelines (RUNS each; at most 3 for dwarf,
# whose perf script takes minutes); medians of wall and of CPU seconds
# (user + sys, which a busy machine distorts less), their ratios, and
# pfold's peak RSS are printed.  Targets from the issue: >= 5x for fp, >= 3x
# for dwarf.
#
#   PD_MB=20 RUNS=5 PFOLD=bin/pfold PD_KINDS="fp dwarf dwarf1"   (environment;
#   PD_KINDS chooses the recordings made and measured)
# Exits non-zero only when a command fails or the two outputs' totals differ.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
MB=${PD_MB:-20}
RUNS=${RUNS:-5}
PF=${PFOLD:-$top/bin/pfold}
KINDS=${PD_KINDS:-fp dwarf dwarf1}
want() { case " $KINDS " in *" $1 "*) return 0 ;; esac; return 1; }
W=$top/tests/bench/work/perfdata
mkdir -p "$W"
say() { printf 'perfdata-bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }
[ -x "$PF" ] || die "$PF not built (run: make)"
command -v perf > /dev/null || die "perf is not installed"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"

size_of() { stat -c %s "$1" 2> /dev/null || echo 0; }

# fp: the build of a copy of this project, at a rate that makes >= MB
if want fp && [ "$(size_of "$W/fp.data")" -lt $((MB * 1000000)) ]; then
	rm -rf "$W/src"; mkdir -p "$W/src"
	git archive --format=tar HEAD | tar -x -C "$W/src"
	hz=2000
	while :; do
		make -s -C "$W/src" clean > /dev/null 2>&1 || true
		say "recording fp: perf record -F $hz -g make -j2 (a copy of this project)"
		perf record -q -e cpu-clock -F $hz -g -o "$W/fp.data" -- \
			make -s -C "$W/src" -j2 all CC=gcc CFLAGS="-O2 -g" > /dev/null 2>&1 || die "perf record failed"
		[ "$(size_of "$W/fp.data")" -ge $((MB * 1000000)) ] && break
		[ $hz -ge 16000 ] && break
		hz=$((hz * 2))
	done
fi
# dwarf: the same build, DWARF stack copies, at a rate that makes >= MB
if want dwarf && [ "$(size_of "$W/dwarf.data")" -lt $((MB * 1000000)) ]; then
	if [ ! -f "$W/src/Makefile" ]; then
		rm -rf "$W/src"; mkdir -p "$W/src"
		git archive --format=tar HEAD | tar -x -C "$W/src"
	fi
	hz=100
	while :; do
		make -s -C "$W/src" clean > /dev/null 2>&1 || true
		say "recording dwarf: perf record -F $hz --call-graph dwarf make -j2 (a copy of this project)"
		perf record -q -e cpu-clock -F $hz --call-graph dwarf -o "$W/dwarf.data" -- \
			make -s -C "$W/src" -j2 all CC=gcc CFLAGS="-O2 -g" > /dev/null 2>&1 || die "perf record failed"
		[ "$(size_of "$W/dwarf.data")" -ge $((MB * 1000000)) ] && break
		[ $hz -ge 1600 ] && break
		hz=$((hz * 2))
	done
fi
# dwarf1: tests/progs/pd-threads.c without frame pointers (three threads),
# long enough for >= MB
if want dwarf1 && [ "$(size_of "$W/dwarf1.data")" -lt $((MB * 1000000)) ]; then
	gcc -O2 -g -fomit-frame-pointer -pthread -o "$W/pd-threads" tests/progs/pd-threads.c
	reps=1500
	while :; do
		say "recording dwarf: perf record --call-graph dwarf -F 999 pd-threads $reps"
		perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$W/dwarf1.data" -- \
			"$W/pd-threads" "$reps" > /dev/null 2>&1 || die "perf record failed"
		[ "$(size_of "$W/dwarf1.data")" -ge $((MB * 1000000)) ] && break
		[ $reps -ge 48000 ] && break
		reps=$((reps * 2))
	done
fi
rm -f "$W"/*.data.old

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
secs_of() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", b - a}'; }

printf '\n%-6s %8s %8s  %-28s %-36s %7s %9s %9s\n' "" "MB" "samples" "pfold perf.data: median s" "perf script | pfold: median s" "ratio" "pfold RSS" "stacks"
for kind in $KINDS; do
	data=$W/$kind.data
	cat "$data" > /dev/null
	a=() b=() rss=() ca=() cb=()
	runs=$RUNS
	[ $kind = dwarf ] && [ "$runs" -gt 3 ] && runs=3
	for r in $(seq "$runs"); do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M %U %S' -o "$W/rss" "$PF" "$data" > "$W/a.folded" 2> "$W/a.err" || { cat "$W/a.err" >&2; die "pfold $data failed"; }
		t1=$EPOCHREALTIME
		a+=("$(secs_of "$t0" "$t1")"); rss+=("$(cut -d' ' -f1 "$W/rss")")
		ca+=("$(awk '{printf "%.2f", $2 + $3}' "$W/rss")")
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%U %S' -o "$W/cpu" bash -c 'perf script -i "$1" 2> /dev/null | "$2" > "$3" 2> /dev/null' _ "$data" "$PF" "$W/b.folded"
		t1=$EPOCHREALTIME
		b+=("$(secs_of "$t0" "$t1")")
		cb+=("$(awk '{printf "%.2f", $1 + $2}' "$W/cpu")")
	done
	ta=$(printf '%s\n' "${a[@]}" | median) tb=$(printf '%s\n' "${b[@]}" | median)
	r=$(printf '%s\n' "${rss[@]}" | median)
	tca=$(printf '%s\n' "${ca[@]}" | median) tcb=$(printf '%s\n' "${cb[@]}" | median)
	na=$(awk '{s+=$NF} END {print s+0}' "$W/a.folded") nb=$(awk '{s+=$NF} END {print s+0}' "$W/b.folded")
	samples=$(perf report -i "$data" --stats 2> /dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	printf '%-6s %8.1f %8s  %-28s %-36s %6.1fx %6.1f MB %9s\n' "$kind" "$(awk -v s="$(size_of "$data")" 'BEGIN {print s / 1e6}')" \
		"$samples" "$ta ($(printf '%s ' "${a[@]}"))" "$tb ($(printf '%s ' "${b[@]}"))" \
		"$(awk -v a="$ta" -v b="$tb" 'BEGIN {print (a > 0) ? b / a : 0}')" "$(awk -v r="$r" 'BEGIN {print r / 1024}')" \
		"$(wc -l < "$W/a.folded")"
	printf '%-6s %8s %8s  %-28s %-36s %6.1fx   (CPU seconds, user + sys: what a busy machine does not distort)\n' "" "" "" "$tca cpu" "$tcb cpu" \
		"$(awk -v a="$tca" -v b="$tcb" 'BEGIN {print (a > 0) ? b / a : 0}')"
	if [ "$na" != "$nb" ]; then
		say "$kind: totals differ: pfold perf.data $na, perf script | pfold $nb"
		[ "$kind" = fp ] && exit 1
	fi
	if ! cmp -s <(sort "$W/a.folded") <(sort "$W/b.folded"); then
		echo "       $kind: folded outputs differ on $(diff <(sort "$W/a.folded") <(sort "$W/b.folded") | grep -c '^>') of $(wc -l < "$W/b.folded") stacks (see pfold(1): by design)"
	else
		echo "       $kind: folded outputs identical"
	fi
done
echo "(medians of $RUNS alternating runs, at most 3 for dwarf; targets: fp >= 5x, dwarf >= 3x; dwarf1 shows the fixed costs)"
. "$top/tests/bench/self-flame.sh"
for kind in $KINDS; do self_flame "pfold-$kind.data" "$PF" "$W/$kind.data"; done
