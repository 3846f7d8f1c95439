#!/bin/bash
# self-flame.sh — sourced by the benches: self_flame NAME CMD... runs CMD
# (its standard output thrown away) under pcollect, sampling at 999 Hz, and
# keeps in tests/bench/work/self/ NAME.sp (the stream), NAME.folded and
# NAME.svg (its flame graph, made by psvg), then prints where they are and
# the functions most samples were in, so the next person sees where a
# tool's time goes.  Never fails a bench: when pcollect cannot sample here
# it says why and goes on.
self_flame() {
	local name=$1; shift
	local top_dir; top_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	local dir=$top_dir/tests/bench/work/self
	mkdir -p "$dir"
	if ! "$top_dir/bin/pcollect" -F 999 -o "$dir/$name.sp" -- "$@" > /dev/null 2> "$dir/$name.err"; then
		printf '  own profile of %s: not made (pcollect: %s)\n' "$name" "$(tail -1 "$dir/$name.err")"
		return 0
	fi
	"$top_dir/bin/pfold" "$dir/$name.sp" > "$dir/$name.folded" 2>> "$dir/$name.err" &&
		"$top_dir/bin/psvg" --title "$name: its own run, sampled by pcollect" "$dir/$name.sp" > "$dir/$name.svg" 2>> "$dir/$name.err" ||
		{ printf '  own profile of %s: pfold or psvg failed (%s)\n' "$name" "$(tail -1 "$dir/$name.err")"; return 0; }
	# the leaf functions with the most samples
	local hot
	hot=$(awk '{n = $NF; sub(/ [0-9.]+$/, ""); k = split($0, f, ";"); s[f[k]] += n; t += n}
		END {for (x in s) printf "%.0f %s\n", 100 * s[x] / (t ? t : 1), x}' "$dir/$name.folded" |
		sort -rn | head -5 | awk '{printf "%s%s %s%%", (NR > 1 ? ", " : ""), $2, $1}')
	printf '  own profile of %s: %s (hottest: %s)\n' "$name" "${dir#"$top_dir"/}/$name.svg" "$hot"
}
