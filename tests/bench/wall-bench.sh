#!/bin/bash
# wall-bench.sh — a thread-per-request Python server's throughput under
# pcollect --wall at the default rate (issue 35 item 2: within 5 % of
# unprofiled).  Measured, never asserted.
# Server: tests/progs/t66-httpserver.py (the standard library's
# ThreadingHTTPServer, handlers of 1-6 ms of CPU drawn at random) under a
# pyenv CPython 3.11-3.13 (Python frames merged); client: N requests, two
# at a time.  Each pair: the server alone, then with `pcollect --wall -p
# PID` attached after it said ready (the order alternates each pair).
# Printed: the medians of the client's elapsed time for N requests, the
# ratio (profiled / alone) per pair and its median, and pcollect's own CPU
# (user + sys, /usr/bin/time).  Then an idle server's cost: pcollect's CPU
# over 6 s less over 1 s, per second (median of 3).
#   RUNS=5 N=300 PCOLLECT=bin/pcollect PY=python3 PCARGS= (more pcollect options)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
RUNS=${RUNS:-5}
N=${N:-300}
PCARGS=${PCARGS:-}
PC=${PCOLLECT:-$top/bin/pcollect}
PYROOT=$(pyenv root 2> /dev/null || echo "$HOME/.pyenv")
PY=${PY:-$(ls -d "$PYROOT"/versions/3.1[1-3].*/bin/python3 2> /dev/null | sort -V | tail -1)}
PY=${PY:-python3}
PROG=$top/tests/progs/t66-httpserver.py
W=$(mktemp -d)
SP=
trap '[ -n "$SP" ] && kill -9 $SP 2> /dev/null; rm -rf "$W"' EXIT
say() { printf '%s\n' "$*"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one() { # one alone|wall -> "ELAPSED PCOLLECT_CPU"
	"$PY" "$PROG" > "$W/s.out" & SP=$!
	for _ in $(seq 300); do grep -q '^ready' "$W/s.out" 2> /dev/null && break; sleep 0.05; done
	local port pc=
	port=$(awk '/^ready/ { print $2 }' "$W/s.out")
	if [ "$1" = wall ]; then
		/usr/bin/time -f %U+%S -o "$W/t" "$PC" -q --wall $PCARGS -p $SP -o "$W/x.sp" 2> "$W/pc.err" & pc=$!
		# attached: pcollect has opened its events once it reads the target
		sleep 0.5
	fi
	local t0 t1
	t0=$(date +%s.%N)
	if ! "$PY" "$PROG" client "$port" "$N" 2; then
		kill -9 $SP; [ -n "$pc" ] && kill $pc
		say "the client failed (server port '$port')" >&2; exit 1
	fi
	t1=$(date +%s.%N)
	wait $SP; SP=
	local cpu=0
	if [ -n "$pc" ]; then
		local rc=0; wait $pc || rc=$?
		[ $rc = 0 ] || { say "pcollect failed: exit $rc: $(head -3 "$W/pc.err") $(cat "$W/t")" >&2; exit 1; }
		cpu=$(awk -F+ '{ print $1 + $2 }' "$W/t")
	fi
	echo "$t0 $t1 $cpu" | awk '{ printf "%.3f %.3f\n", $2 - $1, $3 }'
}

if ! "$PC" -q --wall -o "$W/x.sp" -- true 2> "$W/e"; then
	say "wall-bench: skipped: $(head -1 "$W/e")"; exit 0; fi

say "== --wall on a ThreadingHTTPServer: $N requests two at a time, $RUNS pairs ($("$PY" -V 2>&1))"
say "$(uptime)"
: > "$W/pairs"
for i in $(seq "$RUNS"); do
	if [ $((i % 2)) = 1 ]; then a=$(one alone); w=$(one wall); else w=$(one wall); a=$(one alone); fi
	echo "$a $w" >> "$W/pairs"
	say "  pair $i: alone $(echo $a | cut -d' ' -f1) s, --wall $(echo $w | cut -d' ' -f1) s (pcollect CPU $(echo $w | cut -d' ' -f2) s)"
done
ma=$(awk '{ print $1 }' "$W/pairs" | median)
mw=$(awk '{ print $3 }' "$W/pairs" | median)
mr=$(awk '{ print $3 / $1 }' "$W/pairs" | median)
mc=$(awk '{ print $4 }' "$W/pairs" | median)
say "$(printf '  medians: alone %.3f s, --wall %.3f s; per-pair ratio %.3f (throughput %+.1f %%); pcollect CPU %.2f s' \
	"$ma" "$mw" "$mr" "$(awk -v r="$mr" 'BEGIN { print 100 * (1 / r - 1) }')" "$mc")"

idle() { # idle SECONDS -> pcollect's CPU seconds on an idle server
	"$PY" "$PROG" > "$W/s.out" & SP=$!
	for _ in $(seq 300); do grep -q '^ready' "$W/s.out" 2> /dev/null && break; sleep 0.05; done
	/usr/bin/time -f %U+%S -o "$W/t" "$PC" -q --wall -p $SP -d "$1" -o "$W/x.sp" 2> /dev/null || true
	kill $SP; wait $SP 2> /dev/null || true; SP=
	awk -F+ '{ print $1 + $2 }' "$W/t"
}
for i in 1 2 3; do echo "$(idle 1) $(idle 6)"; done > "$W/idle"
say "$(printf '  idle server (serve_forever polling every 50 ms): pcollect --wall %.1f %% of a CPU' \
	"$(awk '{ print 100 * ($2 - $1) / 5 }' "$W/idle" | median)")"
