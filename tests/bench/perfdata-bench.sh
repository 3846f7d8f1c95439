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
#   xz       perf record -g of Debian's xz -6 compressing 8 MB of base64 text
#            (a few MB: the issue's recording kind, one process)
#   sqlite   perf record -g of Debian's sqlite3 inserting 200,000 rows into
#            an in-memory table and indexing them
# Runs alternate between the pipelines (RUNS each; at most 3 for dwarf,
# whose perf script takes minutes): `pfold perf.data`, `perf script |
# pfold`, `perf script > /dev/null` alone (not for dwarf), and `perf script |
# inferno-collapse-perf` when inferno is installed.  perf script alone is a
# lower bound of any `perf script | collapser` pipeline's time, so a ratio
# against it is at most the ratio against `perf script | inferno`.  Medians
# of wall and of CPU seconds (user + sys, which a busy machine distorts
# less), their ratios, and pfold's peak RSS are printed.  Targets from the
# issue: >= 5x for fp, >= 3x for dwarf, >= 10x against `perf script |
# inferno-collapse-perf` for a frame-pointer recording of a few MB.
#
#   PD_MB=20 RUNS=5 PFOLD=bin/pfold PD_KINDS="fp dwarf dwarf1 xz sqlite"
#   (environment; PD_KINDS chooses the recordings made and measured)
# Exits non-zero only when a command fails or the two outputs' totals differ.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
MB=${PD_MB:-20}
RUNS=${RUNS:-5}
PF=${PFOLD:-$top/bin/pfold}
KINDS=${PD_KINDS:-fp dwarf dwarf1 xz sqlite}
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
# xz and sqlite: Debian's binaries on generated input, at 10 kHz
if want xz && [ ! -s "$W/xz.data" ]; then
	command -v xz > /dev/null || die "xz is not installed"
	head -c 6000000 /dev/urandom | base64 > "$W/xz-input.txt"
	say "recording xz: perf record -F 10000 -g xz -6 (8 MB of base64 text)"
	perf record -q -e cpu-clock -F 10000 -g -o "$W/xz.data" -- xz -6 -T1 -c "$W/xz-input.txt" > /dev/null 2>&1 ||
		die "perf record failed"
	rm -f "$W/xz-input.txt"
fi
if want sqlite && [ ! -s "$W/sqlite.data" ]; then
	command -v sqlite3 > /dev/null || die "sqlite3 is not installed (apt-get install sqlite3)"
	awk 'BEGIN {srand(1); print "create table t(a integer, b text, c real); begin;"
		for (i = 0; i < 200000; i++) printf "insert into t values(%d, \047%x\047, %f);\n", i, int(rand() * 1e9), rand()
		print "commit; create index ib on t(b); select count(*), sum(c) from t where b like \047a%\047;"}' > "$W/sqlite.sql"
	say "recording sqlite: perf record -F 10000 -g sqlite3 :memory: (200,000 inserts, an index)"
	perf record -q -e cpu-clock -F 10000 -g -o "$W/sqlite.data" -- sqlite3 :memory: < "$W/sqlite.sql" > /dev/null 2>&1 ||
		die "perf record failed"
	rm -f "$W/sqlite.sql"
fi
rm -f "$W"/*.data.old

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
secs_of() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", b - a}'; }

# CPU seconds (user + sys) of the shell's waited-for children so far, from
# the builtin times (getrusage, to the millisecond; /usr/bin/time's %U %S
# are to 10 ms, too coarse for a run of 20 ms)
# (run in this shell, not in a $(...) subshell, whose children are others)
child_cpu() {
	times > "$W/times"
	awk 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.4f", u[1] * 60 + u[2] + s[1] * 60 + s[2]}' "$W/times" > "$W/cpu"
}
# timed WALLVAR CPUVAR CMD...: one run's wall and CPU seconds
timed() {
	local -n tw=$1 tc=$2
	shift 2
	local c0 t0 t1
	child_cpu
	c0=$(cat "$W/cpu") t0=$EPOCHREALTIME
	"$@" || return 1
	t1=$EPOCHREALTIME
	child_cpu
	tw=$(secs_of "$t0" "$t1") tc=$(awk -v a="$c0" -v b="$(cat "$W/cpu")" 'BEGIN {printf "%.4f", b - a}')
}
inferno=$(command -v inferno-collapse-perf || true)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1fx", (a > 0) ? b / a : 0}'; }

printf '\n%-6s %8s %8s  %-28s %-36s %7s %9s %9s\n' "" "MB" "samples" "pfold perf.data: median s" "perf script | pfold: median s" "ratio" "pfold RSS" "stacks"
for kind in $KINDS; do
	data=$W/$kind.data
	cat "$data" > /dev/null
	a=() b=() rss=() ca=() cb=() sa=() sc=() ia=() ic=()
	runs=$RUNS
	[ $kind = dwarf ] && [ "$runs" -gt 3 ] && runs=3
	for r in $(seq "$runs"); do
		timed w c /usr/bin/time -f '%M' -o "$W/rss" "$PF" "$data" > "$W/a.folded" 2> "$W/a.err" ||
			{ cat "$W/a.err" >&2; die "pfold $data failed"; }
		a+=("$w") ca+=("$c") rss+=("$(cat "$W/rss")")
		timed w c bash -c 'perf script -i "$1" 2> /dev/null | "$2" > "$3" 2> /dev/null' _ "$data" "$PF" "$W/b.folded"
		b+=("$w") cb+=("$c")
		if [ $kind != dwarf ]; then # (its perf script takes minutes: the pipe's ratio says enough)
			timed w c bash -c 'perf script -i "$1" > /dev/null 2>&1' _ "$data"
			sa+=("$w") sc+=("$c")
		fi
		if [ -n "$inferno" ]; then
			timed w c bash -c 'perf script -i "$1" 2> /dev/null | "$2" > /dev/null 2>&1' _ "$data" "$inferno"
			ia+=("$w") ic+=("$c")
		fi
	done
	ta=$(printf '%s\n' "${a[@]}" | median) tb=$(printf '%s\n' "${b[@]}" | median)
	r=$(printf '%s\n' "${rss[@]}" | median)
	tca=$(printf '%s\n' "${ca[@]}" | median) tcb=$(printf '%s\n' "${cb[@]}" | median)
	tsa=0 tsc=0
	[ ${#sa[@]} -gt 0 ] && tsa=$(printf '%s\n' "${sa[@]}" | median) tsc=$(printf '%s\n' "${sc[@]}" | median)
	na=$(awk '{s+=$NF} END {print s+0}' "$W/a.folded") nb=$(awk '{s+=$NF} END {print s+0}' "$W/b.folded")
	samples=$(perf report -i "$data" --stats 2> /dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	printf '%-6s %8.1f %8s  %-28s %-36s %7s %6.1f MB %9s\n' "$kind" "$(awk -v s="$(size_of "$data")" 'BEGIN {print s / 1e6}')" \
		"$samples" "$ta ($(printf '%s ' "${a[@]}"))" "$tb ($(printf '%s ' "${b[@]}"))" \
		"$(ratio "$ta" "$tb")" "$(awk -v r="$r" 'BEGIN {print r / 1024}')" \
		"$(wc -l < "$W/a.folded")"
	printf '%-6s %8s %8s  %-28s %-36s %7s   (CPU seconds, user + sys: what a busy machine does not distort)\n' "" "" "" "$tca cpu" "$tcb cpu" \
		"$(ratio "$tca" "$tcb")"
	[ ${#sa[@]} -gt 0 ] && printf '%-6s %8s %8s  perf script alone (> /dev/null): wall %s s (%s), cpu %s s: pfold perf.data is %s its wall, %s its CPU\n' \
		"" "" "" "$tsa" "$(printf '%s ' "${sa[@]}" | sed 's/ $//')" "$tsc" "$(ratio "$ta" "$tsa")" "$(ratio "$tca" "$tsc")"
	if [ -n "$inferno" ]; then
		tia=$(printf '%s\n' "${ia[@]}" | median) tic=$(printf '%s\n' "${ic[@]}" | median)
		printf '%-6s %8s %8s  perf script | inferno-collapse-perf (%s): wall %s s, cpu %s s: pfold perf.data is %s its wall, %s its CPU\n' \
			"" "" "" "$("$inferno" --version 2> /dev/null | head -1)" "$tia" "$tic" "$(ratio "$ta" "$tia")" "$(ratio "$tca" "$tic")"
	fi
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
[ -n "$inferno" ] || echo "(inferno-collapse-perf is not installed here: perf script alone, a lower bound of the time of perf script | inferno-collapse-perf, stands for it; a ratio against it is at most the ratio against that pipeline)"
echo "(medians of $RUNS alternating runs, at most 3 for dwarf; targets: fp >= 5x, dwarf >= 3x, a few MB of -g >= 10x perf script | inferno; dwarf1 shows the fixed costs)"
. "$top/tests/bench/self-flame.sh"
for kind in $KINDS; do self_flame "pfold-$kind.data" "$PF" "$W/$kind.data"; done
