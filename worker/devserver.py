"""``worker dev``: the worker core served over HTTP/1.1 by the standard library.

``ThreadingHTTPServer`` with keep-alive and Nagle's algorithm disabled (without that, each
keep-alive response waits ~40 ms for a delayed ACK). It was measured faster than uvicorn for
this workload (docs/PERFORMANCE.md) and needs no dependency.
"""

from __future__ import annotations

import ipaddress
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from worker.config import DEV_API_KEY, WorkerConfig
from worker.local import LocalWorker
from worker.messages import Request, json_response


def is_loopback(host: str) -> bool:
    """True when ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_config(host: str, config: WorkerConfig) -> tuple[WorkerConfig, str | None]:
    """The config to serve with, and a notice for the operator.

    Without API_SECRET_KEY the dev key is allowed on loopback only; any other address
    without a key is refused (ValueError), so the dev key can never guard a reachable port.
    """
    if config.api_key:
        return config, None
    if not is_loopback(host):
        raise ValueError(f"refusing to listen on {host} without API_SECRET_KEY "
                         "(the development key is only allowed on loopback addresses)")
    dev = WorkerConfig(api_key=DEV_API_KEY, allowed_origins=config.allowed_origins,
                       max_body_bytes=config.max_body_bytes)
    return dev, f"API_SECRET_KEY not set: writes accept the development key {DEV_API_KEY!r} (loopback only)"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "zebench-worker"
    worker: LocalWorker
    verbose = False

    def _serve(self) -> None:
        length_header = self.headers.get("Content-Length")
        cap = self.worker.app.config.max_body_bytes
        length = int(length_header) if length_header and length_header.isdigit() else 0
        if length > cap:
            # Answer without reading the body, then drop the connection (its remaining
            # bytes would otherwise be parsed as the next request).
            self.close_connection = True
            self._write(json_response(413, {"error": "body too large",
                                            "details": f"{length} bytes; at most {cap}"}))
            return
        body = self.rfile.read(length) if length else b""
        request = Request.from_url(self.command, self.path, dict(self.headers.items()), body,
                                   client_host=self.client_address[0])
        self._write(self.worker.handle(request))

    def _write(self, response) -> None:  # type: ignore[no-untyped-def]
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        if self.verbose:
            super().log_message(format, *args)


class DevServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once under load; the default backlog of 5 drops connections.
    request_queue_size = 128


def make_server(host: str, port: int, db_path: str, config: WorkerConfig,
                verbose: bool = False) -> tuple[DevServer, LocalWorker]:
    """A bound (not yet serving) server; port 0 picks a free port."""
    worker = LocalWorker(db_path, config)
    handler = type("Handler", (_Handler,), {"worker": worker, "verbose": verbose})
    return DevServer((host, port), handler), worker


def serve(host: str, port: int, db_path: str, config: WorkerConfig, verbose: bool = False) -> None:
    """Serve until interrupted."""
    config, notice = resolve_config(host, config)
    server, worker = make_server(host, port, db_path, config, verbose)
    if notice:
        print(notice, file=sys.stderr)
    bound_host, bound_port = server.server_address[:2]
    print(f"worker dev: serving {db_path} on http://{bound_host}:{bound_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        worker.close()
