# t62-zlib.py — for t6294-trace-python.sh: zlib.compress in a loop.
#   python t62-zlib.py N: compresses 180 KB of text N times; each call
#   compresses to about 1 KB, which fits zlib's first output block, so
#   CPython's zlib.compress calls libz's deflate() once per call (with
#   Z_FINISH).  Prints "ready", then "compress calls N".
import sys
import zlib

n = int(sys.argv[1])
data = b"the quick brown fox jumps over the lazy dog %d\n" * 4000


def work():
    for i in range(n):
        zlib.compress(data + str(i).encode(), 6)


print("ready", flush=True)
work()
print("compress calls", n)
