# t61-gil.py — two threads burning CPU in Python (one holds the GIL, the
# other waits for it), the main thread asleep in time.sleep.
# Prints "ready"; runs until killed.
import threading, time

def burn():
    x = 0
    while True:
        x += 1

for i in range(2):
    threading.Thread(target=burn, name="burner%d" % i).start()
print("ready", flush=True)
time.sleep(1000)
