# Spin in spin_for for argv[1] seconds, then exit.
import sys
import time


def spin_for(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass


print("ready", flush=True)
spin_for(float(sys.argv[1]))
