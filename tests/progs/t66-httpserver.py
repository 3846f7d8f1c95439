"""t66-httpserver.py — the standard library's ThreadingHTTPServer (a new
thread per connection) with three handlers whose CPU time each measures
with its own time.thread_time(): /json (json.dumps and loads), /hash
(hashlib over a buffer built in Python), /calc (pure Python arithmetic).
Each request's work is drawn at random (1-6 ms) so no sampling rate locks
onto it.  Prints "ready PORT"; a GET /quit makes it print one line per
handler, "handler NAME SECONDS", and "cpu SECONDS" (getrusage, every
thread), then exit.
  usage: t66-httpserver.py
  client: t66-httpserver.py client PORT REQUESTS CONCURRENCY"""
import hashlib, json, random, resource, sys, threading, time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

spent = {"json": 0.0, "hash": 0.0, "calc": 0.0}
lock = threading.Lock()


def handle_json(n):
    doc = {"items": [{"id": i, "name": "item%d" % i, "tags": ["a", "b", "c"]} for i in range(n)]}
    return len(json.loads(json.dumps(doc))["items"])


def handle_hash(n):
    h = hashlib.sha256()
    for i in range(n * 20):
        h.update(("%d-%d" % (i, i * i)).encode())
    return h.hexdigest()[:8]


def handle_calc(n):
    s = 0
    for i in range(n * 150):
        s += (i * i) % 7
    return s


HANDLERS = {"json": (handle_json, 360), "hash": (handle_hash, 120), "calc": (handle_calc, 80)}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *a):
        pass

    def do_GET(self):
        name = self.path.strip("/")
        if name == "quit":
            self.send_response(200)
            self.end_headers()
            threading.Thread(target=self.server.shutdown).start()
            return
        fn, unit = HANDLERS[name]
        t0 = time.thread_time()
        out = fn(unit * random.randint(1, 6))
        dt = time.thread_time() - t0
        with lock:
            spent[name] += dt
        body = str(out).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def client(port, requests, concurrency):
    names = list(HANDLERS)

    def run(k):
        for i in range(k, requests, concurrency):
            urllib.request.urlopen("http://127.0.0.1:%d/%s" % (port, names[i % 3])).read()

    ts = [threading.Thread(target=run, args=(k,)) for k in range(concurrency)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    urllib.request.urlopen("http://127.0.0.1:%d/quit" % port).read()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        return
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("ready", srv.server_address[1], flush=True)
    srv.serve_forever(poll_interval=0.05)
    srv.server_close()
    for name, s in spent.items():
        print("handler", name, "%.4f" % s)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print("cpu %.4f" % (ru.ru_utime + ru.ru_stime), flush=True)


main()
