# t61-gil.py — one thread burning CPU in Python (it holds the GIL nearly
# all the time), the main thread asleep in time.sleep (it does not).
# Prints "ready"; runs until killed.
import threading, time

def burn():
    x = 0
    while True:
        x += 1

threading.Thread(target=burn, name="burner").start()
print("ready", flush=True)
time.sleep(1000)
