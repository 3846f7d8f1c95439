# t618-deadlock.py MODE — a Python program that deadlocks, for pcollect
# --snapshot: MODE is
#   lock2  two threads take two threading.Lock in opposite orders
#   lock3  three threads, three Locks, a cycle of three
#   queue  a thread holding a Lock waits in queue.get() for an item the
#          other thread would put once it had that Lock
#   many   a thread holds a Lock and sleeps; 20 threads run lock.acquire
#          itself as their target (no frame of their own)
#   cond   two threads in Condition.wait() that nobody notifies, a thread
#          in Semaphore.acquire(), one in Event.wait(); the main thread joins
#   globals  two threads take two module-level Locks (LOCK_IN, LOCK_OUT) in
#          opposite orders; a third waits for a module-level Event (DONE)
# Prints "ready ADDR..." (the id() of each lock, in order) once every
# thread is about to block; never ends by itself.
import queue, sys, threading, time

mode = sys.argv[1]
barrier = threading.Barrier(2 if mode in ('lock2', 'queue', 'globals') else 3 if mode == 'lock3' else 1)


def run(ts):
    for t in ts:
        t.start()
    for t in ts:
        t.join()  # JOIN


class Account:
    def __init__(self, name):
        self.name = name
        self._lock = threading.Lock()

    def transfer(self, other):
        with self._lock:  # HOLD
            barrier.wait()
            with other._lock:  # WAIT
                pass


def locks(n):
    accts = [Account('a%d' % i) for i in range(n)]
    print('ready ' + ' '.join('%#x' % id(a._lock) for a in accts), flush=True)
    ts = [threading.Thread(target=accts[i].transfer, args=(accts[(i + 1) % n],), name='transfer-%d' % i)
          for i in range(n)]
    run(ts)


def with_queue():
    lock = threading.Lock()
    q = queue.Queue()

    def consumer():
        lock.acquire()  # CONSUMER HOLDS
        barrier.wait()
        q.get()  # GET

    def producer():
        barrier.wait()
        with lock:  # PRODUCER WAITS
            q.put(1)

    print('ready %#x' % id(lock), flush=True)
    ts = [threading.Thread(target=consumer, name='consumer'), threading.Thread(target=producer, name='producer')]
    run(ts)


def cond():
    c = threading.Condition()
    sem = threading.Semaphore(0)
    ev = threading.Event()

    def waiter():
        with c:
            c.wait()  # COND

    def sem_taker():
        sem.acquire()  # SEM

    def ev_waiter():
        ev.wait()  # EVENT

    print('ready %#x %#x %#x' % (id(c), id(sem), id(ev)), flush=True)
    ts = [threading.Thread(target=waiter, name='cond-waiter'), threading.Thread(target=waiter, name='cond-waiter-2'),
          threading.Thread(target=sem_taker, name='sem-taker'),
          threading.Thread(target=ev_waiter, name='event-waiter')]
    run(ts)


def many():
    lock = threading.Lock()
    held = threading.Event()

    def holder():
        with lock:  # HOLDER
            held.set()
            time.sleep(1000)

    threading.Thread(target=holder, name='holder').start()
    held.wait()
    print('ready %#x' % id(lock), flush=True)
    run([threading.Thread(target=lock.acquire, name='w%d' % i) for i in range(20)])


LOCK_IN = threading.Lock()
LOCK_OUT = threading.Lock()
DONE = threading.Event()


def in_then_out():
    with LOCK_IN:
        barrier.wait()
        with LOCK_OUT:  # GLOBAL WAIT
            pass


def out_then_in():
    with LOCK_OUT:
        barrier.wait()
        with LOCK_IN:
            pass


def wait_done():
    DONE.wait()


def globals_():
    print('ready %#x %#x %#x' % (id(LOCK_IN), id(LOCK_OUT), id(DONE)), flush=True)
    run([threading.Thread(target=in_then_out, name='in-out'), threading.Thread(target=out_then_in, name='out-in'),
         threading.Thread(target=wait_done, name='done-waiter')])


{'globals': globals_, 'many': many, 'lock2': lambda: locks(2), 'lock3': lambda: locks(3), 'queue': with_queue, 'cond': cond}[mode]()
