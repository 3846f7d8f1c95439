#!/bin/bash
# The library's rooms and the one-way rule between them (README.md, Layout):
# a file in lib/ROOM/ or formats/ includes headers of its own room or of a
# room of a lower layer, never of a higher one or of another room of its own
# layer.  Layers, bottom up:
#   0 core                         util, profile, input, heap
#   1 formats                      readers and writers of stack formats
#   2 transform | capture          profiles to profiles | the machine's state
#   3 python | fleet               CPython frames (over capture) | the store
#   4 engine                       sampling: capture + python into profiles
#   5 cli                          what commands share
# cmd/ (the commands) may include any room.  The check is run once on a
# copy with a wrong include planted, so it is shown to fail.
. "$(dirname "$0")/../lib.sh"

declare -A rank=([core]=0 [formats]=1 [transform]=2 [capture]=2 [python]=3 [fleet]=3 [engine]=4 [cli]=5)

# check TOP: one line per include against the rule; exit 1 if any
check() {
	local top=$1 bad=0 f room h hroom n
	declare -A where=()
	for f in "$top"/lib/*/*.h "$top"/formats/*.h; do
		h=$(basename "$f")
		if [ -n "${where[$h]:-}" ]; then echo "  $h is in two rooms: ${where[$h]} and $(basename "$(dirname "$f")")"; bad=1; fi
		where[$h]=$(basename "$(dirname "$f")")
	done
	for d in "$top"/lib/*/; do
		room=$(basename "$d")
		[ -n "${rank[$room]:-}" ] || { echo "  lib/$room/: a room without a layer in this test"; bad=1; }
	done
	for f in "$top"/lib/*/*.[ch] "$top"/formats/*.[ch]; do
		room=$(basename "$(dirname "$f")")
		[ -n "${rank[$room]:-}" ] || continue
		n=0
		while IFS= read -r h; do
			n=$((n + 1))
			hroom=${where[$h]:-}
			if [ -z "$hroom" ]; then
				echo "  ${f#"$top"/}: includes \"$h\", which is in no room"; bad=1
			elif [ "$hroom" != "$room" ] && [ "${rank[$hroom]}" -ge "${rank[$room]}" ]; then
				echo "  ${f#"$top"/}: $room (layer ${rank[$room]}) includes $hroom's $h (layer ${rank[$hroom]})"; bad=1
			fi
		done < <(sed -n 's/^#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f")
	done
	return $bad
}

if check "$SP_TOP" > "$T/out"; then
	ok "every include of lib/ and formats/ goes down the layers ($(ls "$SP_TOP"/lib/*/*.[ch] "$SP_TOP"/formats/*.[ch] | wc -l) files)"
else
	notok "includes against the layers"; sed 's/^/  /' "$T/out"
fi
# Planted: formats/ including an engine header must be found.
mkdir -p "$T/top"
cp -r "$SP_TOP/lib" "$SP_TOP/formats" "$T/top/"
printf '#include "collect.h"\n' >> "$T/top/formats/folded.c"
if check "$T/top" > "$T/out2"; then notok "a planted include of the engine in formats/ is not found"
elif grep -q 'formats/folded.c: formats (layer 1) includes engine.s collect.h (layer 4)' "$T/out2"; then
	ok "a planted include of the engine in formats/ is found and named"
else notok "a planted include: $(head -3 "$T/out2")"; fi
# cmd/ includes library headers by name (a path only into its own parts'
# folder, as pcollect.c includes pcollect/pcollect.h).
if grep -nE '^#[ \t]*include[ \t]*"(\.\./|lib/|formats/)' "$SP_TOP"/cmd/*.c "$SP_TOP"/cmd/*/*.[ch] > "$T/paths"; then
	notok "commands include headers by path: $(head -3 "$T/paths")"
else ok "commands include library headers by name only"; fi
