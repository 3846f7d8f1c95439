# t616-abg.py SECONDS [THREADS] — alpha / beta / gamma take 60 / 30 / 10 %
# of each thread's CPU time.  alpha and beta do integer arithmetic (the
# interpreter's long objects: _PyLong_*, x_add, long_mul), gamma only calls
# zlib.compress (deflate), so a native frame under the wrong Python
# function shows.  Round lengths vary at random (5-45 ms of alpha, in
# proportion for the others) so that no sampling rate aliases with them.
# Prints its own CPU split at the end: "own alpha beta gamma" in seconds.
import random, sys, threading, time, zlib

DATA = bytes(range(256)) * 400
BIG = 3 ** 4000

def arith(until):
    x = 0
    while time.thread_time() < until:
        for i in range(300):
            x = (x + BIG * i) % (BIG - 7)
    return x

def alpha(t):
    return arith(time.thread_time() + t)

def beta(t):
    return arith(time.thread_time() + t)

def gamma(t):
    until = time.thread_time() + t
    n = 0
    while time.thread_time() < until:
        n += len(zlib.compress(DATA, 6))
    return n

own = {"alpha": 0.0, "beta": 0.0, "gamma": 0.0}
lock = threading.Lock()

def timed(name, f, t):
    t0 = time.thread_time()
    f(t)
    d = time.thread_time() - t0
    with lock:
        own[name] += d

def worker(secs, seed):
    rnd = random.Random(seed)
    end = time.thread_time() + secs
    while time.thread_time() < end:
        r = rnd.uniform(0.005, 0.045)
        timed("alpha", alpha, r)
        timed("beta", beta, r / 2)
        timed("gamma", gamma, r / 6)

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
nth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
if nth == 1:
    worker(secs, 1)
else:
    ts = [threading.Thread(target=worker, args=(secs, i), name="w%d" % i) for i in range(nth)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
tot = sum(own.values())
print("own %.4f %.4f %.4f" % (own["alpha"] / tot, own["beta"] / tot, own["gamma"] / tot))
