# A pre-forking Python service in miniature: multiprocessing.Pool(2)
# workers doing stdlib work (hashlib, zlib) while the parent spins in a
# function of its own.  Prints "ready" once both workers have started;
# runs argv[1] seconds (tests kill it sooner).
import hashlib
import multiprocessing
import sys
import time
import zlib


def worker_hash(seconds):
    end = time.time() + seconds
    data = bytes(range(256)) * 256
    while time.time() < end:
        hashlib.sha256(data).digest()
        zlib.compress(data, 9)
    return 0


def parent_spin(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1
    return x


if __name__ == "__main__":
    secs = float(sys.argv[1])
    multiprocessing.set_start_method("fork")
    with multiprocessing.Pool(2) as pool:
        res = pool.map_async(worker_hash, [secs, secs], chunksize=1)
        print("ready", " ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        parent_spin(secs)
        res.get()
