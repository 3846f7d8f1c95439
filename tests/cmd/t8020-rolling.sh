#!/bin/bash
# Rolling renders: psvg --last and pspeedscope --last draw what
# pfilter --last selects (byte for byte); psvg --every rewrites its -o file
# atomically as a live pcollect stream grows, each version complete.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
pfold -b "$DEMO" > "$T/d.sp" 2> "$T/e" || { notok "pfold -b of the demo"; exit 0; }
# psvg --last names its window in the title (the rest is pfilter --last's)
untitle() { sed -i '/<text id="title"/d' "$@"; }
for s in 1 0.25; do
	psvg --last $s "$T/d.sp" > "$T/a.svg" 2> "$T/e"; rc=$?
	want=$(awk -v s=$s 'BEGIN { printf "last %g s (t=%.1f\xe2\x80\x932.5 s)", s, 2.5 - s }')
	if grep -qF ">Flame Graph: $want</text>" "$T/a.svg"; then ok "psvg --last $s: the title says \"$want\""; else
		notok "psvg --last $s: the title says \"$want\""; grep 'id="title"' "$T/a.svg" | sed 's/^/  /'; fi
	pfilter --last $s "$T/d.sp" | psvg > "$T/b.svg" 2>&1
	untitle "$T/a.svg" "$T/b.svg"
	if [ $rc = 0 ] && [ -s "$T/a.svg" ] && cmp -s "$T/a.svg" "$T/b.svg"; then ok "psvg --last $s = pfilter --last $s | psvg"; else notok "psvg --last $s (exit $rc)"; head -3 "$T/e"; fi
	pspeedscope --last $s "$T/d.sp" > "$T/a.json" 2> "$T/e"; rc=$?
	pfilter --last $s "$T/d.sp" | pspeedscope --name d.sp > "$T/b.json" 2>&1
	if [ $rc = 0 ] && [ -s "$T/a.json" ] && cmp -s "$T/a.json" "$T/b.json"; then ok "pspeedscope --last $s = pfilter --last $s | pspeedscope"; else notok "pspeedscope --last $s (exit $rc)"; head -3 "$T/e"; fi
done
psvg "$T/d.sp" > "$T/all.svg" 2>&1
if ! cmp -s "$T/all.svg" "$T/a.svg"; then ok "--last 0.25 draws less than the whole"; else notok "--last 0.25 is the whole"; fi
psvg --last 100 "$T/d.sp" > "$T/a.svg" 2>&1
expect_grep "psvg --last longer than the recording: the title says it all (t=0.0-2.5 s)" '>Flame Graph: last 100 s \(t=0.0.{1,3}2.5 s\)</text>' "$T/a.svg"
cp "$T/all.svg" "$T/all-untitled.svg"
untitle "$T/a.svg" "$T/all-untitled.svg"
expect_eq "psvg --last longer than the recording: the whole" "$T/all-untitled.svg" "$T/a.svg"
psvg --last 0.5 --flamechart "$T/d.sp" > "$T/a.svg" 2>&1
pfilter --last 0.5 "$T/d.sp" | psvg --flamechart > "$T/b.svg" 2>&1
untitle "$T/a.svg" "$T/b.svg"
expect_eq "psvg --last --flamechart: in time order, = pfilter --last | psvg --flamechart" "$T/b.svg" "$T/a.svg"

# no timestamps: one sentence, exit 2
pfold "$DEMO" > "$T/d.folded" 2>/dev/null
for c in psvg pspeedscope; do
	$c --last 1 "$T/d.folded" > "$T/o" 2> "$T/e"; rc=$?
	if [ $rc = 2 ] && grep -q "^$c: $T/d.folded: the input has no timestamps (--last needs" "$T/e"; then ok "$c --last of folded text: exit 2, says timestamps are needed"; else
		notok "$c --last folded (exit $rc)"; cat "$T/e"; fi
done
psvg --every 1 "$T/d.sp" > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q 'give it with -o FILE' "$T/e"; then ok "psvg --every without -o: usage error"; else notok "--every without -o (exit $rc)"; fi
psvg --last 0 "$T/d.sp" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "psvg --last 0: exit 2" 2 $rc

# --every over a file: the last version is the whole graph
psvg --every 0.5 -o "$T/ev.svg" "$T/d.sp" 2> "$T/e"; rc=$?
expect_rc "psvg --every 0.5 -o FILE: exit 0" 0 $rc
expect_eq "--every: the final file = psvg of the whole input" "$T/all.svg" "$T/ev.svg"
if ls "$T" | grep -v '^ev.svg$' | grep -q 'ev.svg'; then notok "--every left temporary files"; ls "$T"; else ok "--every: no temporary left beside FILE"; fi

# --every on a live stream: pcollect -- t80-phases 3 s of phase_one, 1.5 s
# of phase_two; a watcher copies each new version (a new inode: renamed over)
t6_build phases t80-phases.c -O2 -g || exit 0
t6_probe || exit 0
rm -f "$T/live.svg"
( pcollect -q -- "$T/phases" 3 1.5 2> "$T/pc.err" | psvg --every 0.5 -o "$T/live.svg" 2> "$T/live.err"; echo $? > "$T/live.rc" ) > /dev/null &
mkdir "$T/v"
last=
for _ in $(seq 300); do
	if [ -e "$T/live.svg" ]; then
		ino=$(stat -c %i "$T/live.svg" 2>/dev/null)
		if [ -n "$ino" ] && [ "$ino" != "$last" ]; then
			cp "$T/live.svg" "$T/v/$ino.svg" 2>/dev/null && last=$ino
		fi
	fi
	[ -s "$T/live.rc" ] && break
	sleep 0.05
done
wait
expect_rc "pcollect | psvg --every 0.5 -o FILE: exit 0" 0 "$(cat "$T/live.rc" 2>/dev/null)"
n=$(ls "$T/v" | wc -l)
bad=0
for f in "$T"/v/*.svg; do [ -e "$f" ] || continue; [ "$(tail -c 7 "$f")" = "</svg>" ] || bad=$((bad + 1)); done
if [ "$n" -ge 2 ] && [ $bad = 0 ]; then ok "--every: $n versions seen while the stream grew, each a complete SVG"; else
	notok "--every live: $n versions, $bad incomplete"; cat "$T/live.err"; fi
early=0
for f in "$T"/v/*.svg; do [ -e "$f" ] && grep -q 'phase_one' "$f" && ! grep -q 'phase_two' "$f" && early=$((early + 1)); done
if [ $early -ge 1 ]; then ok "--every: $early version(s) drew phase_one only (before the switch)"; else notok "--every: no version of phase_one only"; fi
if grep -q phase_two "$T/live.svg" && grep -q phase_one "$T/live.svg"; then ok "--every: the final file has both phases"; else notok "--every: final file"; fi
