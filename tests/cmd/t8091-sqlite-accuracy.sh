#!/bin/bash
# Accuracy (issue 35, item 5): Debian's sqlite3 (stripped: names from
# .dynsym only) running SQL of varied phases (inserts from a recursive
# CTE, index builds, LIKE scans, GROUP BY and sorts, each round's sizes
# drawn at random so no phase locks onto the rate), profiled over the same
# seconds by pcollect -p and by perf record --call-graph dwarf -p, both at
# 499 Hz.  Printed: the TVD of the two leaf distributions and the noise
# floor (two draws of the same sizes from perf's, and pooled); fails beyond the pooled draws'
# 95th percentile + 0.04 (broken stacks or names give 0.2 and more).  And where libc has
# several names at one address, ours is the one perf script printed
# (DWARF's, as addr2line names it: __memcpy_avx_unaligned_erms, not
# __memmove_avx_unaligned_erms; __libc_start_main_impl).  Quick: 2 s;
# SP_ACCURACY=long (make accuracy): 8 s.
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"
. "$SP_TOP/tests/cmd/acc-lib.sh"
acc_plain_only "sqlite3 against perf"
if ! command -v sqlite3 > /dev/null; then skip "sqlite3 against perf" "sqlite3 is not installed (make deps installs it)"; exit 0; fi
acc_perf_ok "sqlite3 against perf" || exit 0
t6_probe || exit 0
d=2; [ -n "$ACC_LONG" ] && d=8

# rounds of SQL, sizes drawn at random (a new seed each run); many more
# rounds than the seconds need: the program is stopped after
awk -v seed="$RANDOM" 'BEGIN { srand(seed)
	for (r = 0; r < 400; r++) {
		printf "DROP TABLE IF EXISTS t; CREATE TABLE t(a INTEGER, b TEXT, c REAL);\n"
		printf "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) ", 5000 + int(rand() * 60000)
		printf "INSERT INTO t SELECT i, hex(randomblob(%d)), abs(random()) %% 1000 FROM n;\n", 4 + int(rand() * 12)
		if (rand() < 0.6) printf "CREATE INDEX tb ON t(b);\n"
		printf "SELECT count(*), sum(c) FROM t WHERE b LIKE %s;\n", "\"%" sprintf("%X", int(rand() * 256)) "%\""
		printf "SELECT a %% %d, count(*), avg(c) FROM t GROUP BY 1 ORDER BY 3 DESC LIMIT 1;\n", 2 + int(rand() * 60)
		if (rand() < 0.5) printf "SELECT count(*) FROM (SELECT * FROM t ORDER BY c, b);\n"
	} }' > "$T/w.sql"
P=
trap '{ kill -9 $P; wait; } 2> /dev/null; sp_cleanup' EXIT
sqlite3 :memory: < "$T/w.sql" > /dev/null 2>&1 & P=$!
t6_ticks $P 20 # it runs (0.2 s of CPU)
if acc_both $P $d 499; then
	kill -9 $P; wait $P 2> /dev/null; P=
	pfold --kernel --no-comm --weight=samples "$T/ours.sp" > "$T/ours.folded" 2> "$T/pf.err"
	pfold --kernel --no-comm --weight=samples "$T/perf.txt" > "$T/perf.folded" 2>> "$T/pf.err"
	acc_leaves "$T/perf.folded" > "$T/perf.leaves"; acc_leaves "$T/ours.folded" > "$T/ours.leaves"
	acc_tvd "sqlite3 (stripped) against perf record --call-graph dwarf, ${d} s at 499 Hz" "$T/perf.leaves" "$T/ours.leaves" 0.04
	acc_aliases "sqlite3: libc's aliases as perf script names DWARF-unwound frames" "$(command -v sqlite3)" "$T/perf.folded" "$T/ours.folded"
fi
