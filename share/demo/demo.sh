#!/bin/bash
# make demo — the stackpipe pipeline on a bundled real perf recording.
#
# Input: share/demo/perf-demo.txt.gz, real `perf script` output of
# share/demo/demo-prog.c (two workers and a logger thread) recorded with
# `perf record -e cpu-clock -F 999 -g`; share/demo/record.sh re-records it.
# Outputs go to ./demo-out/ (gitignored).
#
# Each stage is a function step_NAME; DEMO_STEPS picks and orders them
# (default: all).  A stage whose command is not built yet says so and is
# skipped.  To add a stage (SVG, live collection, ...), write step_NAME and
# add NAME to STEPS.
#
#   DEMO_STEPS="fold top"   only those stages
#   DEMO_OUT=dir            output directory (default demo-out)
#   DEMO_INPUT=file         another perf script / folded input
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$PWD/bin
OUT=${DEMO_OUT:-demo-out}
IN=${DEMO_INPUT:-share/demo/perf-demo.txt.gz}
STEPS="fold top stream threads svg live snapshot"
mkdir -p "$OUT"

have() { [ -x "$BIN/$1" ]; }
title() { printf '\n== %s\n' "$*"; }
skip() { printf '   (skipped: %s)\n' "$*"; }
indent() { sed 's/^/   /'; }
# top N FILE: the N heaviest lines of a folded file, weight as a share of the total
top() {
	awk -v n="$1" '{w = $NF; t += w; s = $0; sub(/ [0-9]+$/, "", s); print w "\t" s}
		END {printf "%.0f\tTOTAL\n", t}' "$2" |
		sort -t$'\t' -k1,1gr |
		awk -F'\t' -v n="$1" 'NR == 1 {t = $1; next} NR <= n + 1 {printf "%5.1f%%  %s\n", 100 * $1 / t, $2}'
}

step_fold() {
	title "perf script text (gzip) | pfold > $OUT/demo.folded"
	"$BIN/pfold" "$IN" > "$OUT/demo.folded"
	awk '{n++; s += $NF} END {printf "   %d distinct stacks, total weight %.0f (cpu-clock ns: periods are summed)\n", n, s}' "$OUT/demo.folded"
	"$BIN/pfold" --weight=count "$IN" > "$OUT/demo.count.folded"
	awk '{s += $NF} END {printf "   %.0f samples (pfold --weight=count > %s)\n", s, FILENAME}' "$OUT/demo.count.folded"
}

step_top() {
	[ -s "$OUT/demo.folded" ] || step_fold
	title "the 10 heaviest stacks (share of all cpu time)"
	top 10 "$OUT/demo.folded" | indent
}

step_stream() {
	title "pfold -b > $OUT/demo.sp: the lossless binary stream (threads, times, periods)"
	"$BIN/pfold" -b "$IN" > "$OUT/demo.sp"
	local text
	text=$(gzip -dcf "$IN" | wc -c)
	echo "   $(wc -c < "$OUT/demo.sp") bytes (the perf script text: $text bytes)"
	if have sp-dump; then
		echo "   first records (bin/sp-dump):"
		"$BIN/sp-dump" "$OUT/demo.sp" | sed -n '1,6p' | cut -c1-150 | indent
	fi
}

step_threads() {
	title "time per thread (pfold --tid: root frame comm-PID/TID)"
	"$BIN/pfold" --tid "$IN" > "$OUT/demo.tid.folded"
	awk '{split($1, f, ";"); w[f[1]] += $NF; t += $NF}
		END {for (k in w) printf "%-28s %5.1f%%\n", k, 100 * w[k] / t}' "$OUT/demo.tid.folded" | sort | indent
}

step_svg() {
	title "pfold -b | psvg > $OUT/demo.svg (the stream keeps the unit: ms, not a bare number)"
	have psvg || { skip "bin/psvg not built yet"; return 0; }
	"$BIN/pfold" -b "$IN" | "$BIN/psvg" > "$OUT/demo.svg"
	echo "   open file://$PWD/$OUT/demo.svg in a browser"
}

step_live() {
	title "live: pcollect -d 2 -- demo-prog | pfold > $OUT/live.folded"
	have pcollect || { skip "bin/pcollect not built yet"; return 0; }
	gcc -O2 -g -pthread -o "$OUT/demo-prog" share/demo/demo-prog.c
	"$BIN/pcollect" -d 2 -- "$OUT/demo-prog" | "$BIN/pfold" > "$OUT/live.folded"
	top 5 "$OUT/live.folded" | indent
}

step_snapshot() {
	title "snapshot: pcollect --snapshot -p PID of a hung process (who holds the lock?)"
	have pcollect || { skip "bin/pcollect not built yet"; return 0; }
	gcc -O2 -g -fomit-frame-pointer -pthread -o "$OUT/hang" tests/progs/t7-hang.c
	"$OUT/hang" mutex > "$OUT/hang.out" &
	local hp=$! i
	for i in $(seq 100); do
		case "$(cat "/proc/$hp/task/$hp/syscall" 2>/dev/null)" in 202\ *) break ;; esac
		sleep 0.05
	done
	if "$BIN/pcollect" --snapshot -p "$hp" > "$OUT/snapshot.txt" 2> "$OUT/snapshot.err"; then
		grep -E '^(process|thread|  waits|  owner)|hold_lock_and_sleep|main_blocked_on_mutex' "$OUT/snapshot.txt" |
			cut -c1-110 | indent
		echo "   (the whole report: $OUT/snapshot.txt)"
	else
		skip "$(head -1 "$OUT/snapshot.err")"
	fi
	kill "$hp" 2> /dev/null || true
	wait "$hp" 2> /dev/null || true
}

[ -x "$BIN/pfold" ] || { echo "demo: bin/pfold is not built (run: make)" >&2; exit 2; }
[ -r "$IN" ] || { echo "demo: no input $IN" >&2; exit 2; }
echo "stackpipe demo on $IN"
for s in ${DEMO_STEPS:-$STEPS}; do
	declare -F "step_$s" > /dev/null || { echo "demo: no step '$s' (steps: $STEPS)" >&2; exit 2; }
	"step_$s"
done
echo
echo "outputs are in $PWD/$OUT/:"
ls -l "$OUT" | tail -n +2 | indent
