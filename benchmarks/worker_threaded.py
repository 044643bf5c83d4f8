"""The worker core behind the standard library's ThreadingHTTPServer, for comparison only.

``worker dev`` serves with asyncio (worker/devserver.py); this is the thread-per-connection
alternative that benchmarks/worker_load.py measures against it (``--server threaded``).
Usage: python benchmarks/worker_threaded.py PORT DB  (key from API_SECRET_KEY)
"""

from __future__ import annotations

import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from worker.config import WorkerConfig
from worker.local import LocalWorker
from worker.messages import Request


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Without this, keep-alive responses wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True
    worker: LocalWorker

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request.from_url(self.command, self.path, dict(self.headers.items()), body)
        response = self.worker.handle(request)
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    do_GET = do_POST = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main() -> None:
    port, db = int(sys.argv[1]), sys.argv[2]
    Handler.worker = LocalWorker(db, WorkerConfig(api_key=os.environ["API_SECRET_KEY"]))
    Server(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
