# t61-locks.py — a hung Python program for pcollect --snapshot's owners:
# a thread holding an RLock and sleeping, one waiting for it in a "with"
# statement, one in an explicit RLock.acquire(), one in queue.get(), one
# joining the holder, the main thread in time.sleep().  Prints
# "ready RLOCK-ADDRESS" once every thread waits; runs until killed.
import queue, threading, time

rl = threading.RLock()
q = queue.Queue()
held = threading.Event()

def holder():
    with rl:
        with rl:  # held twice: the count is 2
            held.set()
            time.sleep(1000)  # HOLDER

def waiter():
    with rl:  # WAITER
        pass

def acquirer():
    rl.acquire()  # ACQUIRER

def getter():
    q.get()  # GETTER

def joiner(t):
    t.join()  # JOINER

h = threading.Thread(target=holder, name="holder-1")
h.start()
held.wait()
threading.Thread(target=waiter, name="waiter-2").start()
threading.Thread(target=acquirer, name="acquirer-3").start()
threading.Thread(target=getter, name="getter-4").start()
threading.Thread(target=joiner, args=(h,), name="joiner-5").start()
print("ready %#x" % id(rl), flush=True)
time.sleep(1000)  # MAIN
