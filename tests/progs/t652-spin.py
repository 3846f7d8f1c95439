# Spin in spin_for for argv[1] seconds, or until the file argv[2] exists
# (checked every 10 ms), then exit.
import os
import sys
import time


def spin_for(seconds, stop):
    end = time.time() + seconds
    check = 0
    while time.time() < end:
        check += 1
        if stop and check % 1000 == 0 and os.path.exists(stop):
            break


print("ready", flush=True)
spin_for(float(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
