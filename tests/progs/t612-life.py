# t612-life.py — a target for exact (ptrace-stop) sampling's safety: the
# main thread burns CPU in Python while, again and again, a short-lived
# thread burns ~30 ms and ends; every SIGRTMIN it receives is counted (at
# the C level, one byte each through signal.set_wakeup_fd, so none is
# merged with another).  Prints "ready" once running; on SIGTERM prints
# "signals N threads M" and exits with status 7.
import os, signal, sys, threading, time

r, w = os.pipe()
os.set_blocking(r, False)
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
signal.signal(signal.SIGRTMIN, lambda s, f: None)
stop = False

def on_term(s, f):
    global stop
    stop = True

signal.signal(signal.SIGTERM, on_term)
got = 0

def drain():
    global got
    try:
        got += os.read(r, 65536).count(bytes([int(signal.SIGRTMIN)]))
    except BlockingIOError:
        pass

def burn(t):
    until = time.thread_time() + t
    x = 0
    while time.thread_time() < until:
        for i in range(1000):
            x += i
    return x

def short():
    burn(0.03)

print("ready", flush=True)
n = 0
while not stop:
    th = threading.Thread(target=short)
    th.start()
    burn(0.03)
    th.join()
    n += 1
    drain()
time.sleep(0.2)  # signals still on their way
drain()
print("signals %d threads %d" % (got, n), flush=True)
sys.exit(7)
