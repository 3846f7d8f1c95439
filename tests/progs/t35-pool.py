# A multiprocessing pool for the accuracy suite (t8093): ROUNDS tasks of
# random lengths (0.5-25 ms of CPU: hashing, sorting or arithmetic) over a
# pool of WORKERS forked processes; each task returns its process's own CPU
# time so far (getrusage); at the end every process's CPU time is printed,
# "cpu PID SECONDS", the parent's last.
import hashlib, multiprocessing, os, random, resource, sys, time

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def task(args):
    seed, ms = args
    rnd = random.Random(seed)
    end = time.thread_time() + ms / 1000.0
    kind = seed % 3
    while time.thread_time() < end:
        if kind == 0:
            hashlib.sha256(rnd.randbytes(4096)).hexdigest()
        elif kind == 1:
            sorted(rnd.random() for _ in range(2000))
        else:
            sum(i * i % 7 for i in range(3000))
    return os.getpid(), cpu()

if __name__ == '__main__':
    workers, rounds = int(sys.argv[1]), int(sys.argv[2])
    multiprocessing.set_start_method('fork')
    rnd = random.Random()
    jobs = [(rnd.randrange(1 << 30), rnd.uniform(0.5, 25)) for _ in range(rounds)]
    last = {}
    with multiprocessing.Pool(workers) as pool:
        for pid, t in pool.imap_unordered(task, jobs, chunksize=1):
            last[pid] = max(t, last.get(pid, 0))
        # each worker's CPU time after its last task: one more task per
        # worker would not reach them all; the pool's own bookkeeping after
        # the last task is small (counted in neither)
    for pid in sorted(last):
        print('cpu', pid, '%.4f' % last[pid])
    print('cpu', os.getpid(), '%.4f' % cpu())
