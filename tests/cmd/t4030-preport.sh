#!/bin/bash
# preport: top functions (self, total) checked against awk over folded
# text of a real recording, --tree, --per-thread, tsv and json.
. "$(dirname "$0")/../lib.sh"

DEMO=$SP_TOP/share/demo/perf-demo.txt.gz
preport -O xml < /dev/null > "$T/o" 2> "$T/e"; rc=$?
if [ $rc = 2 ] && grep -q '^usage: preport' "$T/e"; then ok "bad -O: usage error, exit 2"; else notok "bad -O (exit $rc)"; fi

pfold --weight=count "$DEMO" > "$T/d.folded" 2>/dev/null
# expected self and total per function, by awk over the folded lines
awk '{ n=$NF; $NF=""; sub(/ $/,""); k=split($0, f, ";"); tot+=n; self[f[k]]+=n; delete seen;
       for (i=1;i<=k;i++) if (!(f[i] in seen)) { seen[f[i]]=1; total[f[i]]+=n } }
     END { for (x in total) printf "%d\t%d\t%s\n", self[x], total[x], x }' "$T/d.folded" | sort -t'	' -k3 > "$T/w"
preport -O tsv -n 0 "$T/d.folded" | tail -n +2 | awk -F'\t' '{ printf "%d\t%d\t%s\n", $1, $3, $5 }' | sort -t'	' -k3 > "$T/o"
expect_eq "self and total of every function, as counted by awk" "$T/w" "$T/o"
preport -n 3 "$T/d.folded" > "$T/o"
top=$(sort -t'	' -k1,1nr "$T/w" | head -1 | cut -f3)
if sed -n 3p "$T/o" | grep -q " $top\$" && [ "$(wc -l < "$T/o")" = 5 ]; then ok "text: -n 3 rows, the top self function first ($top)"; else notok "text top"; cat "$T/o"; fi
preport --sort total -n 1 -O tsv "$T/d.folded" | tail -1 | cut -f5 > "$T/o"
sort -t'	' -k2,2nr "$T/w" | head -1 | cut -f3 > "$T/w1"
expect_eq "--sort total" "$T/w1" "$T/o"
if pfold -b "$DEMO" > "$T/d.sp" 2>/dev/null; then
	# the stream's table has no row for a process or thread name (its
	# threads are not frames); folded text's root frames are rows
	preport --weight samples -O tsv -n 0 "$T/d.sp" | tail -n +2 | awk -F'\t' '{ printf "%d\t%d\t%s\n", $1, $3, $5 }' | sort -t'	' -k3 > "$T/o"
	grep -v '	worker-N$' "$T/w" > "$T/w2" # (logger is a function too)
	expect_eq "binary input, --weight samples: the same counts, no row for the thread names" "$T/w2" "$T/o"
	preport --per-thread -O tsv -n 0 "$T/d.sp" --weight samples | awk -F'\t' '$1=="logger" {s+=$2} END {print s}' > "$T/o"
	grep '^logger;' "$T/d.folded" | awk '{s+=$NF} END {print s}' > "$T/w3"
	expect_eq "--per-thread: the logger table sums to the logger's samples" "$T/w3" "$T/o"
	preport -O json "$T/d.sp" > "$T/j"
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["functions"])==20 and d["unit"]=="ns"' "$T/j" 2>/dev/null; then ok "json: 20 functions, unit ns (cpu-clock period is time)"; else notok "json top"; head -c 200 "$T/j"; fi
else skip "preport binary" "pfold -b failed"; fi
preport --tree --min-share 0 "$T/d.folded" > "$T/t"
n=$(grep -c . "$T/t")
if head -3 "$T/t" | tail -1 | grep -q '^ *[0-9.]*% .*  logger$\|^ *[0-9.]*% .*  worker-[12N]$' && [ "$n" -gt 10 ]; then ok "--tree: thread roots first, $n lines"; else notok "--tree"; head -5 "$T/t"; fi
preport --tree -O tsv --min-share 0 "$T/d.folded" | awk -F'\t' 'NR>1 && $1==1 {s+=$2} END {print s}' > "$T/o"
awk '{s+=$NF} END {print s}' "$T/d.folded" > "$T/w"
expect_eq "--tree tsv: the roots sum to the total" "$T/w" "$T/o"
a=$(preport --tree --min-share 0 "$T/d.folded" | wc -l); b=$(preport --tree --min-share 10 "$T/d.folded" | wc -l)
if [ "$b" -lt "$a" ] && [ "$b" -gt 2 ]; then ok "--tree --min-share 10 prunes ($a -> $b lines)"; else notok "--min-share pruning ($a -> $b)"; fi
preport --tree -O json "$T/d.folded" > "$T/j"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert sum(c["total"] for c in d["children"])==d["total"]' "$T/j" 2>/dev/null; then ok "--tree json parses and adds up"; else notok "--tree json"; head -c 300 "$T/j"; fi
