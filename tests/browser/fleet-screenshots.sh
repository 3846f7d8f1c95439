#!/bin/bash
# The README's fleet screenshots, from a real store:
#
#   tests/browser/fleet-screenshots.sh [OUT_DIR]      (default share/examples)
#
# Starts a private clickhouse-server (tests/fleet/ch.sh: 127.0.0.1, its own
# ports and temporary data directory) and a small real fleet: 6 "hosts",
# web-1 .. web-6, each a running service process (tests/browser/fleet-work.py:
# Python's standard library at work -- JSON, zlib, sha256 -- a request every
# 0.2 s, web-2 every 0.1 s, a hot shard) under pyenv's CPython 3.12 (Python
# frames merged; else python3).  Every round ("minute") each host is
# sampled with pcollect -p PID -d 12 and stored with pfleet put --start
# 2026-11-26T10:0M:05 (the minute it stands for), 8 rounds; before 10:04, web-4 ..
# web-6 are restarted on release 2 (it also validates every batch).  Then:
#   fleet-heatmap.png: pfleet get --by host --by time | psvg --heatmap, in
#     headless Chromium, the cells of web-4 .. web-6 from 10:04 selected,
#     "validate" searched;
#   fleet-diff.png: pdiff <(get --label release=1) <(get --label release=2) | psvg.
# FLEET_KEEP=DIR keeps the streams read from the store and the SVGs there.
# Needs: make (bin/), clickhouse-server, chromium and playwright-core (make deps).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$top/bin:$PATH
out=$(mkdir -p "${1:-$top/share/examples}" && cd "${1:-$top/share/examples}" && pwd)
T=$(mktemp -d /tmp/fleet-shots.XXXXXX)
. "$top/tests/fleet/ch.sh"
declare -A pid rel
cleanup() {
	local rc=$? h
	set +e
	for h in "${pid[@]}"; do kill "$h" 2> /dev/null; done
	ch_stop_all
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
why=$(ch_available) || { echo "fleet-screenshots: $why" >&2; exit 1; }
ch_start_free "$T/ch" || { echo "fleet-screenshots: clickhouse-server does not start" >&2; exit 1; }
U=http://127.0.0.1:$CH_HTTP
export PFLEET_SPOOL=$T/spool TMPDIR=$T # put's per-host lock files, removed with the rest
pfleet init $U 2> /dev/null
PY=$(ls ~/.pyenv/versions/3.12.*/bin/python3.12 2> /dev/null | head -1)
[ -x "$PY" ] || PY=python3
start() { # start HOST RELEASE: (re)start the service of web-HOST
	if [ -n "${pid[$1]}" ]; then kill "${pid[$1]}"; wait "${pid[$1]}" 2> /dev/null || true; fi
	local iv=0.2; [ "$1" = 2 ] && iv=0.1
	"$PY" "$top/tests/browser/fleet-work.py" "$2" $iv & pid[$1]=$!
	rel[$1]=$2
}
for h in 1 2 3 4 5 6; do start $h 1; done
sleep 2
for m in 0 1 2 3 4 5 6 7; do
	if [ $m = 4 ]; then for h in 4 5 6; do start $h 2; done; sleep 2; fi
	rec=""
	for h in 1 2 3 4 5 6; do pcollect -q -F 99 -p "${pid[$h]}" -d 12 -o "$T/web-$h.sp" & rec="$rec $!"; done
	for r in $rec; do wait $r; done
	for h in 1 2 3 4 5 6; do
		pfleet put -q --service archive --host web-$h --label release=${rel[$h]} --start 2026-11-26T10:0$m:05 $U "$T/web-$h.sp"
	done
	echo "fleet-screenshots: minute $((m + 1)) of 8 stored" >&2
done
R="--service archive --since 2026-11-26T10:00 --until 2026-11-26T10:08"
keep=${FLEET_KEEP:-$T}
mkdir -p "$keep"
pfleet get $R --by host --by time $U > "$keep/fleet.sp"
pfleet get $R --label release=1 $U > "$keep/release1.sp"
pfleet get $R --label release=2 $U > "$keep/release2.sp"
psvg --heatmap --title 'pfleet get --by host --by time | psvg --heatmap' -o "$keep/fleet-heatmap.svg" "$keep/fleet.sp"
pdiff "$keep/release1.sp" "$keep/release2.sp" |
	psvg --title 'pdiff <(pfleet get --label release=1) <(pfleet get --label release=2) | psvg' -o "$keep/fleet-diff.svg"
cd "$top/tests/browser" && node fleet-screenshots.js "$keep/fleet-heatmap.svg" "$keep/fleet-diff.svg" "$out"
ls -l "$out/fleet-heatmap.png" "$out/fleet-diff.png"
