# A program with a known call graph for cProfile (tests/cmd/t5300):
# main -> a -> leaf, main -> b -> {a, leaf}, main -> rec -> rec... -> leaf,
# main -> time.sleep.  Deterministic work, no randomness.
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s


def a():
    return leaf(120000)


def b():
    leaf(60000)
    return a()


def rec(n):
    if n == 0:
        return leaf(30000)
    return rec(n - 1)


def main():
    for _ in range(3):
        a()
        b()
        rec(4)
    time.sleep(0.02)


main()
