# fleet-work.py RELEASE INTERVAL — a small "service" made of Python's
# standard library, run as the hosts of the README's fleet screenshots
# (tests/browser/fleet-screenshots.sh).  Every INTERVAL seconds it handles a
# request: it indexes some of the stdlib's own sources as JSON records,
# compresses them (zlib) and checksums the result (sha256); it runs until
# killed.  Release 2 changes the work as a real release would: it also
# validates every batch: decodes its JSON again and recounts the words.
import hashlib, json, os, sys, sysconfig, time, zlib

def load_sources(limit):
    root = sysconfig.get_paths()["stdlib"]
    texts = []
    for name in sorted(os.listdir(root)):
        if name.endswith(".py"):
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                texts.append((name, f.read()))
            if len(texts) == limit:
                break
    return texts

def index(texts):
    return [{"name": n, "lines": t.count("\n"), "words": len(t.split()), "text": t} for n, t in texts]

def encode(records):
    return json.dumps(records, sort_keys=True).encode()

def validate(blob):
    records = json.loads(blob)
    return all(r["words"] == len(r["text"].split()) for r in records)

def pack(blob):
    return zlib.compress(blob, 1)

def checksum(data):
    return hashlib.sha256(data).hexdigest()

def handle(texts, release):
    blob = encode(index(texts))
    if release >= 2:
        validate(blob)
    return checksum(pack(blob))

def serve(release, interval):
    texts = load_sources(20)
    while True:
        t = time.monotonic()
        handle(texts, release)
        time.sleep(max(0.0, interval - (time.monotonic() - t)))

if __name__ == "__main__":
    serve(int(sys.argv[1]), float(sys.argv[2]))
