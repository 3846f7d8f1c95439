# t61-hang.py — a hung Python program for pcollect --snapshot: a thread
# holding an RLock and sleeping, one waiting for that RLock, one in
# queue.get(), the main thread in time.sleep().  Prints "ready" once the
# holder has the lock; runs until killed.
import queue, threading, time

rl = threading.RLock()
q = queue.Queue()
held = threading.Event()

def holder():
    with rl:
        held.set()
        time.sleep(1000)  # HOLDER

def waiter():
    with rl:  # WAITER
        pass

def getter():
    q.get()  # GETTER

threading.Thread(target=holder, name="holder").start()
held.wait()
threading.Thread(target=waiter, name="waiter").start()
threading.Thread(target=getter, name="getter").start()
print("ready", flush=True)
time.sleep(1000)  # MAIN
