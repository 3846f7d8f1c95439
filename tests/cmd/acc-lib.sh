# acc-lib.sh — the standing accuracy suite's helpers (issue 35, item 5),
# sourced after lib.sh by the tests `make accuracy` runs (the Makefile's
# ACCURACY_TESTS).
# Not a test itself (its name is not t*.sh).
#
# Every check compares a profile of ours with a reference of the same
# seconds (a peer's profile, or the program's own count of its CPU time),
# prints the distance AND the noise floor: the mean distance between two
# random draws of the two profiles' sizes from the reference itself (what
# chance alone gives at these sample counts), and fails beyond the floor
# plus a margin.
#
# SP_ACCURACY=long (make accuracy) asks for the longer variants: each test
# reads ACC_LONG (1 or empty) and picks its lengths from it.

ACC_LONG=
[ "${SP_ACCURACY:-}" = long ] && ACC_LONG=1

# acc_plain_only NAME: the accuracy checks measure what a plain build
# gives; under ASan (the second pass of make check) they are left out,
# saying so on a '# ' line (its slower commands would only widen the
# distances).
acc_plain_only() {
	if [[ $SP_BIN == *asan* ]]; then
		echo "# $1: accuracy, run in the plain pass only"
		exit 0
	fi
}

# acc_leaves FOLDED: "leaf samples" lines of a folded file (values in
# samples), the leaf being the innermost frame that is not the kernel's
# (marked _[k] by pfold --kernel).
acc_leaves() {
	awk '{ v = $NF; s = $0; sub(/ [^ ]+$/, "", s); n = split(s, a, ";")
	       while (n > 1 && a[n] ~ /_\[k\]$/) n--
	       L[a[n]] += v }
	     END { for (k in L) print k "\t" L[k] }' "$1"
}

# acc_tvd NAME REF.leaves OURS.leaves MARGIN: the total variation distance
# of the two leaf distributions and the floors: the mean TVD of 40 pairs of
# draws of the two sizes from REF's distribution, and from the two mixed
# (pooled); ok within the pooled draws' 95th percentile + MARGIN (the mean
# alone is passed by chance half the time; REF's own floor is low: its
# draws never hold the rare leaves its samples missed).
# Prints a '# ' line with the figures and the 5 leaves that differ most.
acc_tvd() {
	local name=$1 ref=$2 ours=$3 margin=$4 out
	out=$(awk -F '\t' -v margin="$margin" '
	FNR == 1 { f++ }
	{ L[f, $1] += $2; T[f] += $2; K[$1] = 1 }
	function draw(n, A,   i, x, j, c) {
		for (i = 0; i < n; i++) { x = rand(); c = 0
			for (j = 1; j < m; j++) { c += P[j]; if (x < c) break }
			A[j]++ } }
	# 40 pairs of draws of the two sizes from P[1..m]: their TVDs mean
	# and 95th percentile (chance alone reaches it 1 time in 20)
	function floor(   r, t, j, d, i, x, A, B, F) {
		mean = 0
		for (r = 0; r < 40; r++) {
			split("", A); split("", B); draw(T[1], A); draw(T[2], B)
			t = 0; for (j = 1; j <= m; j++) { d = A[j] / T[1] - B[j] / T[2]; t += d < 0 ? -d : d }
			F[r] = t / 2; mean += t / 2 }
		mean /= 40
		for (i = 1; i < 40; i++) for (j = i; j > 0 && F[j] < F[j - 1]; j--) { x = F[j]; F[j] = F[j - 1]; F[j - 1] = x }
		p95 = F[37] }
	END {
		if (!T[1] || !T[2]) { printf "bad no samples (reference %d, ours %d)\n", T[1], T[2]; exit }
		tvd = 0
		for (k in K) { d = L[1, k] / T[1] - L[2, k] / T[2]; D[k] = d; tvd += d < 0 ? -d : d }
		tvd /= 2
		srand(35)
		m = 0; for (k in K) if (L[1, k] > 0) P[++m] = L[1, k] / T[1]
		floor(); fl = mean
		# pooled: both draws from the two profiles mixed (the null "one
		# distribution"; draws from the reference alone never hold the
		# rare leaves its samples missed, so that floor is low)
		m = 0; for (k in K) P[++m] = (L[1, k] / T[1] + L[2, k] / T[2]) / 2
		floor(); lim = p95 + margin
		printf "%s leaf TVD %.3f, noise floor %.3f (two draws of %d and %d samples from the reference), pooled %.3f (95th percentile %.3f), limit %.3f\n",
			tvd <= lim ? "ok" : "bad", tvd, fl, T[1], T[2], mean, p95, lim
		# the leaves that differ most, for the reader
		for (i = 0; i < 5; i++) { best = ""; bd = -1
			for (k in D) { a = D[k] < 0 ? -D[k] : D[k]; if (a > bd) { bd = a; best = k } }
			if (best == "") break
			printf "  %s: reference %.1f %%, ours %.1f %%\n", best, 100 * L[1, best] / T[1], 100 * L[2, best] / T[2]
			delete D[best] }
	}' "$ref" "$ours")
	printf '%s\n' "$out" | sed '1!d; s/^[a-z]* /# '"$name"': /'
	printf '%s\n' "$out" | sed '1d; s/^/# /'
	case "$out" in
	ok*) ok "$name: $(printf '%s\n' "$out" | sed '1!d; s/^ok //; s/ (two draws[^)]*),/,/; s/ (95th[^)]*),/,/')" ;;
	*) notok "$name: $(printf '%s\n' "$out" | sed '1!d; s/^bad //; s/ (two draws[^)]*),/,/; s/ (95th[^)]*),/,/') exceeded"
	   printf '%s\n' "$out" | sed '1d; s/^/  /' ;;
	esac
}

# acc_perf_ok NAME: perf is installed and can record here; else a skip.
acc_perf_ok() {
	if ! command -v perf > /dev/null; then skip "$1" "perf is not installed (Debian: linux-perf)"; return 1; fi
	if ! perf record -q -o "$T/perf.probe" -- true > /dev/null 2> "$T/perf.probe.err"; then
		skip "$1" "perf record does not run here: $(head -1 "$T/perf.probe.err")"; return 1; fi
	return 0
}

# acc_both PID SECONDS HZ [--no-inline]: perf record --call-graph dwarf
# and pcollect -p of the same process at the same rate, over the same
# seconds: perf starts first and runs longer (its start takes up to a
# second on a loaded machine), then perf script keeps the seconds
# pcollect sampled (both stamp CLOCK_MONOTONIC: perf record -k mono).
# $T/perf.txt (perf script) and $T/ours.sp.  --no-inline: both without
# inlined frames (perf script then runs no addr2line: on node's 100 MB
# binary it takes minutes).  Returns non-zero (a not ok printed) when
# either fails.
acc_both() {
	local pid=$1 d=$2 hz=$3; shift 3
	perf record -q -k mono -F "$hz" --call-graph dwarf -p "$pid" -o "$T/perf.data" -- sleep "$((d + 3))" > /dev/null 2> "$T/perf.err" &
	local pp=$!
	sleep 1
	pcollect -F "$hz" -d "$d" -p "$pid" "$@" -o "$T/ours.sp" 2> "$T/pc.err"; local rc=$?
	wait $pp; local prc=$?
	[ $rc = 0 ] || { notok "pcollect -p (exit $rc)"; head -3 "$T/pc.err" | sed 's/^/  /'; return 1; }
	[ $prc = 0 ] || { notok "perf record -p (exit $prc)"; head -3 "$T/perf.err" | sed 's/^/  /'; return 1; }
	local w
	w=$(sp-dump "$T/ours.sp" | awk '/^sample t=/ { t = substr($2, 3) / 1e9; if (!n++ || t < lo) lo = t; if (t > hi) hi = t }
		END { if (n) printf "%.6f,%.6f", lo, hi }')
	[ -n "$w" ] || { notok "pcollect -p: no sample"; return 1; }
	perf script "$@" --time "$w" -i "$T/perf.data" > "$T/perf.txt" 2> "$T/perf.err" || { notok "perf script"; head -3 "$T/perf.err" | sed 's/^/  /'; return 1; }
}

# acc_aliases NAME PROGRAM PERF.folded OURS.folded: where libc has several
# function names at one address (__memcpy_avx_unaligned_erms and
# __memmove_avx_unaligned_erms; __libc_start_main, __libc_start_main_impl
# and two more), ours must print the one perf script printed for that
# address in the same recording.  libc's names from its debug file
# (libc6-dbg, found by build id, as perf finds it); PROGRAM's libc.
acc_aliases() {
	local name=$1 prog=$2 perf=$3 ours=$4 libc id dbg
	libc=$(ldd "$prog" 2> /dev/null | awk '$1 ~ /^libc\.so/ { print $3 }')
	id=$(readelf -n "$libc" 2> /dev/null | awk '/Build ID/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -z "$id" ] || [ ! -r "$dbg" ]; then skip "$name" "libc's debug file is not installed (libc6-dbg; make deps installs it)"; return 0; fi
	# "address name" of every sized function symbol, names without version
	readelf -sW "$dbg" 2> /dev/null | awk '$4 == "FUNC" && $3 > 0 { n = $8; sub(/@.*/, "", n); print $2, n }' | sort -u > "$T/libc.syms"
	awk 'FILENAME ~ /libc.syms$/ { A[$2] = A[$2] ? A[$2] : $1; G[$1] = G[$1] " " $2; next }
	     { s = $0; sub(/ [^ ]+$/, "", s); n = split(s, f, ";")
	       for (i = 1; i <= n; i++) { x = f[i]; sub(/_\[[kij]\]$/, "", x); if (x in A) U[FILENAME == perf ? 1 : 2, A[x], x] = 1 } }
	     END { for (k in U) { split(k, p, SUBSEP); if (split(G[p[2]], g, " ") > 1) { S[p[1], p[2]] = S[p[1], p[2]] " " p[3]; seen[p[2]] = 1 } }
	           for (a in seen) if (S[1, a] != "" && S[2, a] != "") { both++; if (S[1, a] != S[2, a]) {
	               m = split(S[1, a], pn, " "); has = 1
	               for (j = 1; j <= m; j++) if (index(S[2, a] " ", " " pn[j] " ") == 0) has = 0
	               if (has) { part++; printf "partly %s: perf%s, ours%s\n", a, S[1, a], S[2, a] }
	               else { bad++; printf "differ %s: perf%s, ours%s\n", a, S[1, a], S[2, a] } } }
	           printf "count %d %d %d\n", both, bad, part }' perf="$perf" "$T/libc.syms" "$perf" "$ours" > "$T/aliases"
	local both bad part
	read -r _ both bad part < <(grep '^count' "$T/aliases")
	# ours naming one address two ways, perf's among them (seen once in six
	# t0130 runs: _dl_catch_exception beside __GI__dl_catch_exception):
	# said as a gap, not yet explained
	if [ "${part:-0}" != 0 ]; then echo "#   gap: $part address(es) named by ours both as perf does and otherwise"; grep '^partly' "$T/aliases" | head -3 | sed 's/^/#     /'; fi
	if [ "${both:-0}" = 0 ]; then notok "$name: no libc address with several names in both profiles"
	elif [ "${bad:-0}" = 0 ]; then ok "$name: the $both libc addresses with several names sampled are named as perf script names them"
	else notok "$name: $bad of $both libc addresses with several names named otherwise than perf script"; grep '^differ' "$T/aliases" | head -5 | sed 's/^/  /'; fi
}
