# t61-shares.py SECONDS — two threads, each spending 60/30/10 % of its own
# CPU time in a60 / b30 (inside zlib.compress) / c10, in long calls so that
# a profiler's sample lands well inside one.  Runs until each thread used
# SECONDS of CPU time.
import sys, threading, time, zlib

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

def worker(secs):
    end = time.thread_time() + secs
    while time.thread_time() < end:
        a60(0.3)
        b30(0.15)
        c10(0.05)

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
threads = [threading.Thread(target=worker, args=(secs,), name="w%d" % i) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
