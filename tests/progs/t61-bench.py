# t61-bench.py N — fixed CPU-bound Python work (nested calls, a dict, a
# string join), then one line: "elapsed E cpu C" in seconds.
import sys, time

def leaf(i):
    return (i * 31) ^ (i >> 3)

def mid(n):
    d = {}
    for i in range(n):
        d[i & 255] = leaf(i)
    return len(d)

def top(n):
    s = 0
    for k in range(n):
        s += mid(2000)
        s += len("-".join(str(x) for x in range(50)))
    return s

n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
t0, c0 = time.perf_counter(), time.process_time()
top(n)
print("elapsed %.4f cpu %.4f" % (time.perf_counter() - t0, time.process_time() - c0))
