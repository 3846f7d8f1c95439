#!/bin/bash
# Go as Go names it, against Go's own profile of the same seconds: an HTTP
# server with three handlers of different costs (tests/progs/t35-gohttp.go,
# built with Debian's go), loaded by a small client (two connections, a few
# seconds), profiled by pcollect -p and by net/http/pprof's CPU profile
# over the same seconds.  Printed: the leaf distributions' total variation
# distance (TVD) and its noise floors, the mean of 40 pairs of random
# draws of the two profiles' sizes (both at 100 Hz): from Go's own leaf
# distribution (issue 35's floor), and from the two profiles pooled (the
# null "one distribution": draws from Go's few hundred samples alone never
# hold the rare leaves those samples missed, which the other profile does
# hit, so that floor is low); the [unknown] share, each handler's
# inclusive share in both.  Issue 35 aims at the floor + 0.03 and each
# handler within 3 points (or, when wider, the 95th percentile of the
# draws' difference for that share: 300 samples of Go's 100 Hz hold that
# much noise): '# gap' lines say where that is not met.  Measured here:
# TVD 0.05-0.08 above the pooled floor, the hash handler 1-8 points lower
# than Go's; perf record of the same seconds sides with us (the leaf
# crypto/sha256.block: perf 24 %, ours 26 %, Go's 31 %), so Go's profile
# is not the whole truth.  The test fails beyond the pooled floor + 0.10
# or a handler off by 3 points more than that, and above 1 % [unknown]:
# what broken stacks or names (+0.6 before Go's names) would give.  And a
# binary built with -ldflags=-s -w (no symbols, no DWARF) is named from
# Go's function table: the handlers' functions, no [unknown].
. "$(dirname "$0")/../lib.sh"
. "$SP_TOP/tests/cmd/t6-lib.sh"

if ! command -v go > /dev/null; then skip "go accuracy" "golang-go is not installed (make deps installs it)"; exit 0; fi
t6_probe || exit 0
export GOCACHE=${GOCACHE:-$SP_TOP/build/gocache} GOPATH=$T/gopath GO111MODULE=off GOFLAGS=
cd "$T" || exit 1
cp "$SP_TOP/tests/progs/t35-gohttp.go" main.go
if ! go build -o srv main.go > gerr 2>&1 || ! go build -ldflags='-s -w' -o srv-s main.go >> gerr 2>&1; then
	notok "go build of tests/progs/t35-gohttp.go"; head -5 gerr | sed 's/^/  /'; exit 0
fi
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; sp_cleanup' EXIT

# run BIN SECONDS PCOLLECT-ARGS...: server, client, pcollect and Go's
# profile of the same seconds; ours.sp and go.pb.gz
run() {
	local bin=$1 d=$2; shift 2
	"./$bin" serve > port 2> srv.err & SRV=$!
	for _ in $(seq 100); do grep -q '^port' port && break; sleep 0.05; done
	local port; port=$(awk '{print $2}' port)
	[ -n "$port" ] || { notok "$bin: the server did not start"; cat srv.err; return 1; }
	"./$bin" load "$port" "$((d + 2))" > load.out 2> load.err & local lp=$!
	sleep 0.7
	pcollect -p "$SRV" -d "$d" "$@" -o ours.sp 2> pc.err & local pc=$!
	"./$bin" pprof "$port" "$d" go.pb.gz 2> pp.err; local prc=$?
	wait $pc; local rc=$?
	wait $lp
	kill $SRV; wait $SRV 2> /dev/null; SRV=
	[ $rc = 0 ] || { notok "$bin: pcollect -p (exit $rc)"; head -3 pc.err | sed 's/^/  /'; return 1; }
	[ $prc = 0 ] || { notok "$bin: net/http/pprof's profile"; head -3 pp.err | sed 's/^/  /'; return 1; }
}

# compare.awk GO.folded OURS.folded: the figures, then "fail: why" lines.
# Go's profiler's own signal handler (runtime.sigtramp) runs in the server
# while both profile it; Go's profile cannot see it: out of ours.  A Go
# sample whose leaf is runtime.asyncPreempt's entry is the preempted
# function's time (the preemption signal and the profiling one delivered
# together, golang/go#59045): the frame is left out of Go's.
cat > compare.awk << 'EOF'
function leaf(s,   a, n) { n = split(s, a, ";"); while (n > 1 && a[n] ~ /_\[k\]$/) n--; return a[n] }
FNR == 1 { f++ }
{ v = $NF; s = $0; sub(/ [^ ]+$/, "", s)
  if (f == 2 && s ~ /(^|;)runtime\.sigtramp(;|$)/) { sig += v; next }
  if (f == 1 && s ~ /;runtime\.asyncPreempt$/) { pre += v; sub(/;runtime\.asyncPreempt$/, "", s) }
  l = leaf(s); L[f, l] += v; T[f] += v; N[f] += 1; K[l] = 1
  if (f == 2 && s ~ /\[unknown\]/) U += v
  for (h in H) if (s ~ H[h]) I[f, h] += v }
BEGIN { H["hash"] = "(^|;)main\\.hashWork(;|$)"; H["json"] = "(^|;)main\\.jsonWork(;|$)"; H["sort"] = "(^|;)main\\.sortWork(;|$)" }
function pick(   x, j, c) { x = rand(); c = 0; for (j = 1; j <= m; j++) { c += P[j]; if (x < c) return j } return m }
END {
  if (!T[1] || !T[2]) { print "fail: no samples (Go " T[1] ", ours " T[2] ")"; exit }
  tvd = 0; for (k in K) { d = L[1, k] / T[1] - L[2, k] / T[2]; tvd += d < 0 ? -d : d }; tvd /= 2
  n1 = int(T[1] / p1 + 0.5); n2 = int(T[2] / p2 + 0.5)
  srand(7); m = 0
  for (k in K) if (L[1, k] > 0) { m++; P[m] = L[1, k] / T[1] }
  reps = 40; fl = 0
  for (r = 0; r < reps; r++) {
    split("", A); split("", B)
    for (i = 0; i < n1; i++) A[pick()]++
    for (i = 0; i < n2; i++) B[pick()]++
    t = 0; for (j = 1; j <= m; j++) { d = A[j] / n1 - B[j] / n2; t += d < 0 ? -d : d }
    fl += t / 2
    # a handler's share in two draws of these sizes (binomial)
    for (h in H) { p = I[1, h] / T[1]; a = 0; b = 0
      for (i = 0; i < n1; i++) a += rand() < p; for (i = 0; i < n2; i++) b += rand() < p
      D[h, r] = 100 * (a / n1 - b / n2); if (D[h, r] < 0) D[h, r] = -D[h, r] }
  }
  fl /= reps
  # the pooled floor: both draws from the mixture of the two profiles
  m = 0; for (k in K) { m++; P[m] = (L[1, k] / T[1] + L[2, k] / T[2]) / 2 }
  fp = 0
  for (r = 0; r < reps; r++) {
    split("", A); split("", B)
    for (i = 0; i < n1; i++) A[pick()]++
    for (i = 0; i < n2; i++) B[pick()]++
    t = 0; for (j = 1; j <= m; j++) { d = A[j] / n1 - B[j] / n2; t += d < 0 ? -d : d }
    fp += t / 2
  }
  fp /= reps
  printf "samples: Go %d, ours %d (Go's own signal handler: %d of ours, left out; asyncPreempt leaves in Go's: %d)\n", n1, n2, sig / p2, pre / p1
  printf "leaf TVD %.3f, noise floor %.3f from Go's profile, %.3f pooled (aims %.3f, %.3f; limit %.3f)\n", tvd, fl, fp, fl + 0.03, fp + 0.03, fp + 0.10
  printf "[unknown] %.2f %% of ours\n", 100 * U / T[2]
  for (h in H) {
    # the 95th percentile of the draws' differences
    for (r = 0; r < reps; r++) S[r] = D[h, r]
    for (i = 1; i < reps; i++) for (j = i; j > 0 && S[j] < S[j - 1]; j--) { x = S[j]; S[j] = S[j - 1]; S[j - 1] = x }
    lim = S[int(reps * 0.95)]; if (lim < 3) lim = 3
    g = 100 * I[1, h] / T[1]; o = 100 * I[2, h] / T[2]
    printf "handler %s: Go %.1f %%, ours %.1f %% (aim %.1f points, limit %.1f)\n", h, g, o, lim, lim + 3
    dd = g > o ? g - o : o - g
    if (dd > lim + 3) printf "fail: handler %s off by %.1f points\n", h, dd
    if (dd > lim && dd <= lim + 3) printf "gap: handler %s off by %.1f points (issue 35's aim: %.1f)\n", h, dd, lim
  }
  if (tvd > fp + 0.10) printf "fail: leaf TVD %.3f beyond the pooled floor %.3f + 0.10\n", tvd, fp
  if (tvd > fp + 0.03) printf "gap: leaf TVD %.3f beyond the pooled floor %.3f + 0.03 (issue 35's aim)\n", tvd, fp
  if (tvd > fl + 0.03) printf "gap: leaf TVD %.3f beyond Go's floor %.3f + 0.03 (issue 35's aim)\n", tvd, fl
  if (U > 0.01 * T[2]) printf "fail: [unknown] in %.2f %% of our samples\n", 100 * U / T[2]
}
EOF

# ---- the server with symbols and DWARF ----
# (SP_ACCURACY=long, make accuracy: 15 s)
d=5; [ "${SP_ACCURACY:-}" = long ] && d=15
if run srv $d; then
	# Go's values: CPU ns, 10 ms a sample; ours: samples
	pfold --no-comm go.pb.gz > go.folded; pfold --kernel --no-comm --weight=samples ours.sp > ours.folded
	awk -v p1=10000000 -v p2=1 -f compare.awk go.folded ours.folded > cmp.out
	sed 's/^/# /' cmp.out
	if ! grep -q '^leaf TVD' cmp.out; then notok "Go server against net/http/pprof: no figures"; sed 's/^/  /' cmp.out | head -5
	elif grep -q '^fail' cmp.out; then notok "Go server against net/http/pprof: $(grep '^fail' cmp.out | sed 's/^fail: //' | paste -sd';')"; else
		ok "Go server against net/http/pprof: within the limits (TVD, [unknown], handlers)$(grep -q '^gap' cmp.out && echo "; issue 35's aims not all met: the gap lines")"; fi
	if grep -qE '\.abi0(;| )|-fm(;| )' ours.folded; then notok "Go names: .abi0 or -fm wrappers left"; grep -oE '[^;]*(\.abi0|-fm)' ours.folded | sort -u | head -3; else
		ok "Go names: no .abi0, no -fm wrappers (as Go's profile)"; fi
	inl=$(grep -cE ';runtime\.(nextFreeFast|heapBitsSetType|spanOf|add)(;| )|;sort\.IntSlice\.(Less|Swap)' ours.folded)
	if [ "$inl" -gt 0 ]; then ok "Go's inlined functions are frames ($inl stacks)"; else notok "Go's inlined functions are frames (none seen)"; fi
fi

# ---- -ldflags=-s -w: no symbols, no DWARF ----
if run srv-s 2 -F 499; then
	pfold --no-comm ours.sp > s.folded
	miss=""
	for f in main.hashWork main.jsonWork main.sortWork net/http.\(\*conn\).serve; do
		grep -qF ";$f;" s.folded || grep -qF "$f;" s.folded || miss="$miss $f"
	done
	unk=$(awk '/\[unknown\]/ { u += $NF } { t += $NF } END { printf "%.1f", t ? 100 * u / t : 100 }' s.folded)
	if [ -z "$miss" ] && awk -v u="$unk" 'BEGIN { exit !(u <= 1) }'; then ok "-ldflags=-s -w: named from Go's function table ([unknown] $unk %)"; else
		notok "-ldflags=-s -w: named from Go's function table (missing:${miss:- none}; [unknown] $unk %)"; fi
fi
