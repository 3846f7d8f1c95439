# t7-asof.py — a list that changes all the time, for pcollect --snapshot
# --locals (t7040): the main thread blocks on a Lock in a frame that is
# not the innermost, with a list that a second thread rewrites without
# pause from its own counter.  Read while the threads are stopped, the
# list's items and the counter agree (within the one step the writer may
# be in); read after, they do not.  Prints "ready"; the writer stops after
# 20 s (it must not keep a CPU busy if the test dies).
import threading
import time


def writer(box):
    end = time.monotonic() + 20
    i = 0
    while i % 65536 or time.monotonic() < end:
        i += 1
        box[0] = i
        box[1] = i


def wait_here(lock):
    lock.acquire()  # blocks: the lock is held


def main():
    box = [0, 0]
    lock = threading.Lock()
    lock.acquire()
    threading.Thread(target=writer, args=(box,), daemon=True).start()
    print('ready', flush=True)
    wait_here(lock)


main()
