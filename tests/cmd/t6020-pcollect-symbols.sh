#!/bin/bash
# pcollect's symbols: a library dlopen'ed mid-run (followed through
# PERF_RECORD_MMAP2), JIT code named by /tmp/perf-PID.map, a binary deleted
# while it runs (read through /proc/PID/map_files), C++ names demangled.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

t6_build dlo t6-dlopen.c -O2 -g -fomit-frame-pointer -ldl || exit 0
t6_build libt6dl.so t6-dllib.c -O2 -g -fomit-frame-pointer -shared -fPIC || exit 0
t6_probe || exit 0

pcollect -F 499 -o "$T/d.sp" -- "$T/dlo" "$T/libt6dl.so" 0.5 2> "$T/e"; rc=$?
pfold --weight=count "$T/d.sp" > "$T/d.folded" 2>/dev/null
expect_rc "dlopen: exit 0" 0 $rc
expect_grep "dlopen: the library's functions are named under main" ';main;dl_outer;dl_inner_spin( |;)' "$T/d.folded"
expect_grep "dlopen: and what ran before it" ';main;before_dlopen( |;)' "$T/d.folded"
# a frame without a symbol is "[unknown]" or named by its module, "[libt6dl.so]"
unk=$(awk '/(^|;)\[[^];]*\]( |;)/ {s+=$NF} END {print s+0}' "$T/d.folded")
all=$(awk '{s+=$NF} END {print s+0}' "$T/d.folded")
if [ "$all" -gt 0 ] && [ $((unk * 20)) -le "$all" ]; then ok "dlopen: $unk of $all samples with a frame without a symbol"; else
	notok "dlopen: $unk of $all samples with a frame without a symbol"; grep -E '(^|;)\[[^];]*\]( |;)'  "$T/d.folded" | head -3 | cut -c1-150 | sed 's/^/  /'; fi
sp-dump "$T/d.sp" > "$T/d.txt" 2>&1
expect_grep "dlopen: frames name their module" "dl_inner_spin \\[native $T/libt6dl.so\\]" "$T/d.txt"

# JIT code, named in /tmp/perf-PID.map.
if [ "$(uname -m)" = x86_64 ]; then
	t6_build jit t6-jit.c -O2 -g || exit 0
	# keep: the map stays until pcollect is done (it may read it late).
	pcollect -F 499 -o "$T/j.sp" -- "$T/jit" 0.4 0 keep 2>/dev/null > "$T/jit.map"
	rm -f "$(cat "$T/jit.map")"
	pfold --jit "$T/j.sp" > "$T/j.folded" 2>/dev/null
	expect_grep "JIT: /tmp/perf-PID.map names the JIT frame (_[j])" '(^|;)jit_spin_loop_\[j\]( |;)' "$T/j.folded"
	# The map written after the code first ran: the frames sampled before
	# are [unknown], the later ones named (no stack is cached unnamed).
	pcollect -F 499 -o "$T/jl.sp" -- "$T/jit" 1 0.3 keep 2>/dev/null > "$T/jit.map"
	rm -f "$(cat "$T/jit.map")"
	pfold --jit "$T/jl.sp" > "$T/jl.folded" 2>/dev/null
	expect_grep "JIT: code named after it first ran is named from then on" '(^|;)jit_spin_loop_\[j\]( |;)' "$T/jl.folded"
else
	skip "JIT" "the test's machine code is x86-64"
fi

# A binary deleted while it runs still symbolises (map_files), when the
# kernel lets us open map_files (root or CAP_CHECKPOINT_RESTORE).
t6_build gone t6-shares.c -O2 -g -fomit-frame-pointer -pthread || exit 0
if t6_start gone 0.3 wait; then
	rm -f "$T/gone"
	pcollect -p "$TPID" -d 0.6 -F 499 -o "$T/g.sp" 2>/dev/null
	kill -9 "$TPID"; wait "$TPID" 2>/dev/null
	pfold "$T/g.sp" > "$T/g.folded" 2>/dev/null
	if [ -r "/proc/self/map_files" ] && ls /proc/self/map_files/ > /dev/null 2>&1; then
		expect_grep "deleted binary: symbolised through /proc/PID/map_files" ';hot_caller;hot_loop( |;)' "$T/g.folded"
	else
		skip "deleted binary" "/proc/PID/map_files is not readable here"
	fi
else
	notok "deleted binary: the target did not start"
fi

# C++: names as perf prints them (demangled, no parameters).
if command -v g++ > /dev/null; then
	if g++ -O2 -g -o "$T/cxx" "$SP_TOP/tests/progs/inline-cxx.cpp" 2> "$T/cc.err"; then
		pcollect -F 499 -o "$T/c.sp" -- "$T/cxx" 10 2>/dev/null
		pfold "$T/c.sp" > "$T/c.folded" 2>/dev/null
		expect_grep "C++: demangled without parameters" ';ns::spin<unsigned long>(;| )' "$T/c.folded"
	else notok "build tests/progs/inline-cxx.cpp"; fi
else
	skip "C++" "g++ is not installed"
fi
