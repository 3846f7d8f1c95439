# t7-pylocals.py — a Python program that hangs with known values in a
# frame that is not the innermost, for pcollect --snapshot --locals
# (t7030): an int, a float, a str, a list, a dict, a user-class object,
# bytes, a tuple, a bool and None.  Prints "ready" and blocks for ever in
# a Lock that nobody releases.
import threading


class Request:
    def __init__(self, rid):
        self.rid = rid


def wait_here(lock, tries):
    lock.acquire()  # blocks: the lock is held


def handle(req):
    count = 42
    ratio = 2.5
    name = 'alice'
    items = [1, 2, 3, 4, 5, 6]
    table = {'a': 1, 'b': [7, 8]}
    blob = b'\x00ab'
    pair = (count, None)
    done = False
    nothing = None
    lock = threading.Lock()
    lock.acquire()
    print('ready', flush=True)
    wait_here(lock, 3)


handle(Request(7))
