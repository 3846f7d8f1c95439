# t6-lib.sh — shared by the pcollect tests (t6*.sh); sourced after lib.sh.
# (Not a test: it only defines helpers; the runner finds it by its t*.sh name
# and runs it harmlessly, printing nothing.)

# t6_build NAME SOURCE CFLAGS...: compile tests/progs/SOURCE into $T/NAME.
t6_build() {
	local name=$1 src=$2; shift 2
	if ! command -v gcc > /dev/null; then skip "pcollect" "gcc is not installed"; return 1; fi
	if ! gcc "$@" -o "$T/$name" "$SP_TOP/tests/progs/$src" 2> "$T/cc.err"; then
		notok "build tests/progs/$src"; head -5 "$T/cc.err" | sed 's/^/  /'; return 1
	fi
}

# t6_probe: skip (loudly) when this machine does not let us sample at all;
# any other failure is left to the tests, which then fail.
t6_probe() {
	pcollect -q -o "$T/probe.sp" -- true 2> "$T/probe.err" && return 0
	if grep -qE 'not permitted|refused|no cpu-clock|without perf events' "$T/probe.err"; then
		skip "pcollect" "perf_event_open is not usable here: $(head -1 "$T/probe.err")"
		return 1
	fi
	return 0
}

# t6_spawn FILE CMD ARGS...: run CMD in the background, in its own process
# group, its output in FILE, and wait (up to 10 s) for it to print "ready";
# sets TPID.
t6_spawn() {
	local out=$1; shift
	: > "$out"
	setsid "$@" > "$out" 2>/dev/null &
	TPID=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$out" && return 0
		sleep 0.1
	done
	return 1
}

# t6_start NAME ARGS...: t6_spawn of $T/NAME, its output in $T/NAME.ready.
t6_start() { local name=$1; shift; t6_spawn "$T/$name.ready" "$T/$name" "$@"; }

# t6_alive PID: the process exists and is not stopped or a zombie.
t6_alive() {
	local st
	st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)
	case "$st" in R|S|D) return 0 ;; *) return 1 ;; esac
}

# t6_cpu PID: user+system CPU ticks of the process.
t6_cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
# t6_ticks PID N: wait until PID has used N more clock ticks of CPU (at most
# 60 s of waiting: a loaded machine gives it less)
t6_ticks() {
	local c0 _
	c0=$(t6_cpu "$1")
	for _ in $(seq 600); do [ $(($(t6_cpu "$1") - c0)) -ge "$2" ] && break; sleep 0.1; done
}

# t6_pythons: the CPython interpreters to test, as "label path" in the
# array pys: pyenv's newest 3.8 to 3.13 and Debian's /usr/bin/python3,
# each missing one skipped with its reason.  PYROOT is pyenv's root.
t6_pythons() {
	local v p
	PYROOT=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	pys=()
	for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
		p=$(ls -d "$PYROOT"/versions/$v.*/bin/python3 2>/dev/null | sort -V | tail -1)
		if [ -n "$p" ]; then pys+=("$v $p"); else skip "python $v" "pyenv has no Python $v installed"; fi
	done
	if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(not (3, 8) <= sys.version_info[:2] <= (3, 13))'; then
		pys+=("debian /usr/bin/python3")
	else skip "python debian" "/usr/bin/python3 is missing or not 3.8-3.13"; fi
	t6_asan_pythons
}

# t6_asan_pythons: under ASan (the second pass of make check) leave 3.9
# out of pys, saying so on a '# ' line: the plain pass checks it, and every
# branch of lib/python/python.c it takes is taken by 3.8 as well (both read
# PyFrameObject chains and co_lnotab, and differ only in the numbers of
# their offset tables); each other version has code of its own: 3.10
# co_linetable, 3.11 _PyInterpreterFrame and cframe, 3.12 tagged managed
# dicts and frames owned by the C stack, 3.13 the debug offsets, Debian's
# stripped 3.11 no DWARF.
# A test run once per make check (once_per_check, SP_ONCE) keeps them all.
t6_asan_pythons() {
	[[ $SP_BIN == *asan* ]] || return 0
	[ -n "${SP_ONCE:-}" ] && return 0
	local e keep=() left=
	for e in "${pys[@]}"; do
		case "${e%% *}" in 3.9) left="$left ${e%% *}" ;; *) keep+=("$e") ;; esac
	done
	[ -n "$left" ] && echo "# under ASan, Python${left} left out: the plain pass checks it; 3.8 takes the same code paths"
	pys=("${keep[@]}")
}

# wanted FILE NAME N: what a tests/progs/t64 program printed of NAME: its
# line "NAME calls C bytes B", field N (1: C, 2: B)
wanted() { sed -n "s/^$2 calls \([0-9]*\) bytes \([0-9]*\)$/\\$3/p" "$1"; }

# t6_pystart PYTHON PROG ARGS...: t6_spawn of a Python program, its output
# in $T/ready.
t6_pystart() { t6_spawn "$T/ready" "$@"; }

# t6_pyblocked PID N: the process has N threads or more, every one asleep
# in futex (202), clock_nanosleep (230) or select/pselect6 (23, 270:
# time.sleep before 3.11).
t6_pyblocked() {
	local f n=0 b=0
	for f in /proc/$1/task/*/syscall; do
		n=$((n + 1))
		case "$(cut -d' ' -f1 "$f" 2>/dev/null)" in 202|230|23|270) b=$((b + 1)) ;; esac
	done
	[ $n -ge $2 ] && [ $b = $n ]
}

# t6_pystop: kill the program t6_pystart started (its process group).
t6_pystop() { kill -9 -- -$TPID 2> /dev/null; wait $TPID 2> /dev/null; return 0; }

# t6_uprobes NAME COMMAND...: skip NAME (loudly) when this machine cannot
# trace: no uprobe PMU, or no permission for system-wide uprobe events
# (pcollect --trace main on COMMAND tells); any other failure is left to
# the tests.
t6_uprobes() {
	local name=$1; shift
	if [ ! -e /sys/bus/event_source/devices/uprobe/type ]; then
		skip "$name" "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; return 1; fi
	if ! pcollect -q -F 0 --trace main -o "$T/probe.sp" -- "$@" > /dev/null 2> "$T/probe.err" &&
		grep -qE 'needs (system-wide )?uprobe events' "$T/probe.err"; then
		skip "$name" "$(head -1 "$T/probe.err")"; return 1; fi
	return 0
}

# t6_shared_loss ERRFILE: true when pcollect -v's messages in ERRFILE show
# that other processes hit the probes (system-wide probes, before they were
# per target) or hits were lost (per probe); prints why, for a skip.  On a busy machine the kernel drops
# some hits of a shared probe without reporting them (t6400 saw 130 of
# 4000 malloc calls missing, 16 reported lost, 17,285 hits of others), so
# exact counts through libc are only asserted on a quiet machine.
t6_shared_loss() {
	local foreign lost
	foreign=$(sed -n 's/.* \([0-9]*\) hits of other processes$/\1/p' "$1" | tail -1)
	lost=$(sed -n 's/^pcollect: probe .*: \([0-9]*\) of its [0-9]* hits lost.*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }')
	[ "${foreign:-0}" -gt 0 ] || [ "${lost:-0}" -gt 0 ] || return 1
	echo "${foreign:-0} hits of other processes, ${lost:-0} hits reported lost"
}

# t6_split LABEL OWNFILE MIN A B C: the samples A, B, C of t61-shares.py's
# a60/b30/c10 against the split it measured itself (OWNFILE, "own A B C"
# in seconds, written where T61_OWN names it).  Each share within 4
# binomial deviations of the program's own, at least MIN points: samples
# are drawn at random intervals (pcollect's per-CPU periods), so a share
# of N samples varies as a binomial's, sqrt(p(1-p)/N); 4 deviations keep
# a false failure below 1 in 10,000 checks.
t6_split() {
	local label=$1 own=$2 min=$3 a=$4 b=$5 c=$6 msg
	if [ ! -s "$own" ]; then notok "$label: the program did not write its own split ($own)"; return; fi
	msg=$(awk -v a="$a" -v b="$b" -v c="$c" -v m="$min" '{ oa = $2; ob = $3; oc = $4 } END {
		n = a + b + c; o = oa + ob + oc; bad = (n < 150 || o <= 0)
		split(a " " b " " c, s, " "); split(oa " " ob " " oc, w, " ")
		for (i = 1; i <= 3; i++) {
			p = (o > 0 ? w[i] / o : 0); q = (n > 0 ? s[i] / n : 0)
			t = 400 * sqrt(p * (1 - p) / (n > 0 ? n : 1)); if (t < m) t = m
			d = 100 * (q > p ? q - p : p - q); if (d > t) bad = 1
			got = got sprintf("%s%.1f", i > 1 ? "/" : "", 100 * q); want = want sprintf("%s%.1f", i > 1 ? "/" : "", 100 * p)
			tol = tol sprintf("%s%.1f", i > 1 ? "/" : "", t)
		}
		printf "%d a60/b30/c10 %s %% of %d samples, the program'\''s own %s (want within %s points: 4 binomial deviations, at least %s)", bad, got, n, want, tol, m }' "$own")
	if [ "${msg%% *}" = 0 ]; then ok "$label: ${msg#* }"; else notok "$label: ${msg#* }"; fi
}
