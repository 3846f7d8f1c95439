#!/bin/bash
# py-spy `record --format raw` input.  The fixture follows py-spy's writer
# (src/flamegraph.rs: frames "NAME (FILE:LINE)", main.rs: "thread (TID): NAME",
# stack_trace.rs: "process PID:\"CMDLINE\""); py-spy itself cannot be
# installed here (no PyPI), so the fixture was written from its source.
. "$(dirname "$0")/../lib.sh"
D=$SP_TOP/tests/data

pfold "$D/pyspy-raw.txt" > "$T/o" 2> "$T/e"; rc=$?
expect_rc "py-spy raw input folds" 0 $rc
n=$(wc -l < "$T/o")
if [ "$n" = 5 ]; then ok "equal stacks merge (6 lines in, 5 stacks out)"; else notok "got $n stacks, want 5"; fi
expect_grep "python frames keep py-spy's spelling" '^process 31337:"python3 app.py --port 8080";thread \(31337\): MainThread;<module> \(app.py:88\);main \(app.py:80\);serve \(server.py:41\);handle \(server.py:22\);parse \(proto.py:10\) 44$' "$T/o"
total=$(awk '{s+=$NF} END {print s}' "$T/o")
if [ "$total" = 141 ]; then ok "total weight kept (141)"; else notok "total $total, want 141"; fi
pfold -f folded "$D/pyspy-raw.txt" > "$T/f"
expect_eq "read as py-spy or as plain folded: same text" "$T/f" "$T/o"
if pfold -b "$D/pyspy-raw.txt" > "$T/b" 2>/dev/null && sp-dump "$T/b" > "$T/d" 2>&1; then
	if grep -q 'python' "$T/d" && grep -q 'proto.py' "$T/d"; then ok "binary stream marks python frames with their file"; else notok "binary dump lacks python frame data"; head -5 "$T/d" | sed 's/^/  /'; fi
else
	notok "pfold -b / sp-dump on py-spy input failed"
fi
