#!/usr/bin/env python3
# t323-cells.py SVG [FUNCTION] — the cells of a psvg --heatmap=hosts SVG,
# read from the data it embeds (var spheat = {...}), one line per non-empty
# cell: "HOST BUCKET_START_SECONDS WEIGHT", sorted; with FUNCTION, a fourth
# column: the weight of the cell's stacks that hold the frame FUNCTION.
# (For tests t3230 and t3231, which compare them with sums computed
# from sp-dump and pfold output.)
import json, re, sys

text = open(sys.argv[1], encoding="utf-8").read()
fn = sys.argv[2] if len(sys.argv) > 2 else None
data = text[text.index("var spheat={"):]
def num(key):
    return float(re.search(r"[{,]" + key + r":(-?[0-9.e+]+)", data).group(1))
def arr(key):
    i = data.index(key + ":[") + len(key) + 1
    depth, j = 0, i
    while True:  # the array's end: strings hold no unescaped brackets that matter here
        c = data[j]
        if c == '"':
            j += 1
            while data[j] != '"':
                j += 2 if data[j] == "\\" else 1
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return json.loads(data[i:j + 1])
        j += 1
rows, t0, bucket = int(num("rows")), num("t0"), num("bucket")
names, nodes, cells, hosts = arr("names"), arr("nodes"), arr("cells"), arr("rowNames")
n = len(nodes) // 2 + 1
parent, name = [0] * n, [0] * n
hasf = [False] * n
for i in range(1, n):
    parent[i], name[i] = nodes[2 * (i - 1)], nodes[2 * (i - 1) + 1]
    hasf[i] = hasf[parent[i]] or names[name[i]] == fn
out = []
i = 0
while i < len(cells):
    c, k = cells[i], cells[i + 1]
    pairs = cells[i + 2:i + 2 + 2 * k]
    w = sum(pairs[1::2])
    f = sum(pairs[q + 1] for q in range(0, len(pairs), 2) if hasf[pairs[q]])
    line = "%s %d %.15g" % (hosts[c % rows], t0 + (c // rows) * bucket, w)
    out.append(line + (" %.15g" % f if fn else ""))
    i += 2 + 2 * k
print("\n".join(sorted(out)))
