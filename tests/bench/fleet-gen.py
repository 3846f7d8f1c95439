#!/usr/bin/env python3
"""fleet-gen.py POOL.folded OUTDIR HOSTS MINUTES STACKS START_EPOCH

A fleet made from a real recording: POOL.folded holds the distinct stacks
of a system-wide `perf record -a -g` (folded by pfold).  For each host and
minute it writes OUTDIR/hNNN/mMM.folded with STACKS distinct stacks drawn
from the pool and mtime START + 60*minute + 30 (pfleet put places samples
without timestamps at their file's mtime).

Per-host variation: each host draws from its own window of the pool (80%
of it, at a host-specific offset), weights its stacks by a host factor
(lognormal), and every tenth host is "slow": it spends 5x in the stacks
of one pool function.  Deterministic (seeded by host and minute)."""
import math, os, random, sys

pool_path, out, hosts, minutes, stacks, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
pool = []
for line in open(pool_path, encoding="utf-8", errors="surrogateescape"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if stack:
        pool.append((stack, max(1, int(float(n)))))
if len(pool) < stacks:
    sys.exit("fleet-gen: the pool has %d stacks, fewer than %d" % (len(pool), stacks))
# the function that slow hosts spend more in: a leaf frame in many stacks
leaves = {}
for s, _ in pool:
    leaves[s.rsplit(";", 1)[-1]] = leaves.get(s.rsplit(";", 1)[-1], 0) + 1
hot = sorted(leaves.items(), key=lambda kv: -kv[1])[min(5, len(leaves) - 1)][0]
N = len(pool)
win = max(stacks, int(N * 0.8))
for h in range(hosts):
    hr = random.Random(h * 7919)
    off = hr.randrange(N)
    factor = [math.exp(hr.gauss(0, 0.5)) for _ in range(16)]
    slow = h % 10 == 9
    d = os.path.join(out, "h%03d" % h)
    os.makedirs(d, exist_ok=True)
    for m in range(minutes):
        r = random.Random(h * 100003 + m)
        idx = r.sample(range(win), stacks)
        lines = []
        for i in idx:
            s, n = pool[(off + i) % N]
            w = n * factor[i % 16] * (0.5 + r.random())
            if slow and s.endswith(";" + hot):
                w *= 5
            lines.append("%s %d\n" % (s, max(1, int(w))))
        p = os.path.join(d, "m%02d.folded" % m)
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.writelines(lines)
        t = start + 60 * m + 30
        os.utime(p, (t, t))
print(hot)
