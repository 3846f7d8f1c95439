# t7-httpd.py — the standard library's ThreadingHTTPServer with a handler
# that waits for a module-level lock the main thread holds, for pcollect
# --snapshot --locals (t7040): the request's thread is in socketserver's
# and http.server's frames (code nobody here wrote) with the client's
# address among their locals.  Prints "ready PORT" once listening, then
# "request" when a request is being handled.
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK_DB = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        print('request', flush=True)
        with LOCK_DB:  # blocks: the main thread holds it
            self.send_response(204)
            self.end_headers()

    def log_message(self, *args):
        pass


def main():
    srv = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with LOCK_DB:
        print('ready', srv.server_address[1], flush=True)
        threading.Event().wait(30)
    srv.shutdown()


main()
