# t61-shapes.py — stack shapes for a profiler to keep whole: a 40-deep
# recursion, a C extension calling back into Python (functools.reduce with
# a lambda), a generator; each ends in spin(), a long pure-Python loop.
# Prints "ready" once running; runs until killed.
import functools, sys, time

def spin(t=0.05):
    until = time.thread_time() + t
    x = 0
    while time.thread_time() < until:
        for i in range(2000):
            x += i
    return x

def rec(n):
    if n <= 1:
        return spin(0.2)
    return rec(n - 1) + 0

def via_reduce():
    return functools.reduce(lambda a, b: a + spin(), range(4), 0)

def gen():
    while True:
        yield spin(0.2)  # as long as rec: enough samples on a loaded machine

g = gen()
print("ready", flush=True)
while True:
    rec(40)
    via_reduce()
    next(g)
