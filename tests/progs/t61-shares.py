# t61-shares.py SECONDS — two threads, each spending 60/30/10 % of its own
# CPU time in a60 / b30 (inside zlib.compress) / c10, in long calls so that
# a profiler's sample lands well inside one.  Runs until each thread used
# SECONDS of CPU time.  With T61_OWN=FILE in its environment it writes its
# own split there at the end, "own a60 b30 c10" in seconds of CPU time (a
# b30 call ends after its last zlib.compress, so b30 runs a little over 30 %).
import os, sys, threading, time, zlib

DATA = bytes(range(256)) * 2000

def spin_py(until):
    x = 0
    while time.thread_time() < until:
        for i in range(2000):
            x += i
    return x

def a60(t):
    return spin_py(time.thread_time() + t)

def b30(t):
    until = time.thread_time() + t
    n = 0
    while time.thread_time() < until:
        n += len(zlib.compress(DATA, 9))
    return n

def c10(t):
    return spin_py(time.thread_time() + t)

own = {"a60": 0.0, "b30": 0.0, "c10": 0.0}
lock = threading.Lock()

def timed(f, t):
    t0 = time.thread_time()
    f(t)
    d = time.thread_time() - t0
    with lock:
        own[f.__name__] += d

def worker(secs):
    end = time.thread_time() + secs
    while time.thread_time() < end:
        timed(a60, 0.3)
        timed(b30, 0.15)
        timed(c10, 0.05)

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
threads = [threading.Thread(target=worker, args=(secs,), name="w%d" % i) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if os.environ.get("T61_OWN"):
    with open(os.environ["T61_OWN"], "w") as f:
        f.write("own %.4f %.4f %.4f\n" % (own["a60"], own["b30"], own["c10"]))
