# t015-stdlib.py SECONDS — stdlib work for t0153 and t0154: json, zlib and
# re over a list of dicts, for SECONDS (default 1) of wall-clock time.
import json, re, sys, time, zlib
d = [{"a": i, "b": str(i) * 3} for i in range(2000)]
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 1
t = time.time()
while time.time() - t < secs:
    s = json.dumps(d); json.loads(s); zlib.compress(s.encode()); re.findall(r"\d+", s)
