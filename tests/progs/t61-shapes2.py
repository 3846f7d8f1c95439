# t61-shapes2.py MODE — more stack shapes for pcollect's Python frames.
#   asyncio  two asyncio tasks taking turns, each burning 0.26 s of CPU in
#            spin(), 20 ms at a time
#   exc      twice: spin() inside an except block, and in a finally
#            block while an exception propagates; functools.reduce
#            calling a lambda (1.6 s of CPU time in all)
#   late FILE  a thread ("late-1") started once FILE exists (the test
#            creates it once pcollect samples), which runs late_worker()
#            for 1 s of CPU time
#   fork     the parent forks a child that runs child_work() for 0.5 s
#   exec     before_exec() for 1 s, then exec of this script in mode
#            "after" (after_exec() for 0.5 s)
# (the durations are CPU time: enough samples on a loaded machine; at
# 199 Hz, 0.5 s is ~100 samples, 10 times t6150's least.  Session 11 halved
# the shapes whose samples were all well-formed in CI (asyncio, late, fork,
# after_exec): 3 s less per interpreter and pass.  before_exec keeps 1 s:
# its first ~15 samples, Python's start-up, are not in spin.)
# Each prints "ready" once running and ends by itself.
import asyncio, functools, os, sys, threading, time

def spin(t=0.02):
    until = time.thread_time() + t
    x = 0
    while time.thread_time() < until:
        for i in range(500):
            x += i
    return x

async def task_a():
    for _ in range(13):
        spin()  # TASK_A
        await asyncio.sleep(0)

async def task_b():
    for _ in range(13):
        spin()  # TASK_B
        await asyncio.sleep(0)

async def main_async():
    print("ready", flush=True)
    await asyncio.gather(task_a(), task_b())

def in_except():
    try:
        raise ValueError("x")
    except ValueError:
        spin(0.2)  # EXCEPT

def in_finally():
    try:
        raise KeyError("x")
    finally:
        spin(0.2)  # FINALLY

def via_reduce():
    return functools.reduce(lambda a, b: a + spin(0.2), range(2), 0)  # REDUCE

def late_worker():
    end = time.thread_time() + 1
    while time.thread_time() < end:
        spin()  # LATE

def child_work():
    end = time.thread_time() + 0.5
    while time.thread_time() < end:
        spin()  # CHILD

def parent_work(t):
    end = time.thread_time() + t
    while time.thread_time() < end:
        spin()  # PARENT

def before_exec():
    end = time.thread_time() + 1
    while time.thread_time() < end:
        spin()  # BEFORE

def after_exec():
    end = time.thread_time() + 0.5
    while time.thread_time() < end:
        spin()  # AFTER

mode = sys.argv[1]
if mode == "asyncio":
    asyncio.run(main_async())
elif mode == "exc":
    print("ready", flush=True)
    for _ in range(2):
        in_except()
        try:
            in_finally()
        except KeyError:
            pass
        via_reduce()
elif mode == "late":
    print("ready", flush=True)
    while not os.path.exists(sys.argv[2]):  # the profiler is attached
        parent_work(0.05)
    t = threading.Thread(target=late_worker, name="late-1")
    t.start()
    t.join()
elif mode == "fork":
    print("ready", flush=True)
    parent_work(0.25)
    pid = os.fork()
    if pid == 0:
        child_work()
        os._exit(0)
    parent_work(0.75)
    os.waitpid(pid, 0)
elif mode == "exec":
    print("ready", flush=True)
    before_exec()
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, sys.argv[0], "after"])
elif mode == "after":
    after_exec()
