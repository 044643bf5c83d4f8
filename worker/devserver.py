"""``worker dev``: the worker core served over HTTP/1.1 with the standard library's asyncio.

One event loop serves every connection (keep-alive, ``TCP_NODELAY``), and each request's
SQLite work runs inline on it: SQLite calls are short, and a single thread avoids the lock
convoys a thread-per-connection server shows under load. Measured against the stdlib
``ThreadingHTTPServer`` and uvicorn in docs/PERFORMANCE.md.

The HTTP subset is what API clients send: ``Content-Length`` bodies (``Transfer-Encoding:
chunked`` is answered with 411), keep-alive by default on HTTP/1.1.

No client can hold the server: a request's headers must arrive within
:data:`HEADER_TIMEOUT_S` and its body within :data:`BODY_TIMEOUT_S` (else 408 and the
connection is closed), a keep-alive connection idle for :data:`IDLE_TIMEOUT_S` is closed, and
at most :data:`MAX_CONNECTIONS` connections are open at once (more are answered 503 and
closed). Each connection is its own task, so a slow one never delays the others.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys
import threading
from http import HTTPStatus
from typing import Any

from worker.config import DEV_API_KEY, WorkerConfig
from worker.local import LocalWorker
from worker.messages import Request, Response, json_response

MAX_HEADER_BYTES = 64 * 1024
HEADER_TIMEOUT_S = 10.0  # from the first byte of a request to the end of its headers
BODY_TIMEOUT_S = 30.0  # for the whole body
IDLE_TIMEOUT_S = 60.0  # between requests on a keep-alive connection
MAX_CONNECTIONS = 256


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
    # The development key is public knowledge, so requiring it for reads would protect nothing.
    dev = WorkerConfig(api_key=DEV_API_KEY, allowed_origins=config.allowed_origins,
                       max_body_bytes=config.max_body_bytes, public_reads=True,
                       max_bulk_runs=config.max_bulk_runs)
    return dev, (f"API_SECRET_KEY not set: writes accept the development key {DEV_API_KEY!r}, "
                 "reads need no key (loopback only)")


class _BadRequest(Exception):
    def __init__(self, status: int, error: str, details: str) -> None:
        super().__init__(error)
        self.response = json_response(status, {"error": error, "details": details})


class DevServer:
    """A bound listening socket and the loop that serves it.

    ``serve_forever()`` blocks (run it in a thread in tests); ``shutdown()`` may be called
    from any thread; ``server_close()`` releases the socket.
    """

    def __init__(self, host: str, port: int, worker: LocalWorker, verbose: bool = False, *,
                 header_timeout_s: float = HEADER_TIMEOUT_S, body_timeout_s: float = BODY_TIMEOUT_S,
                 idle_timeout_s: float = IDLE_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS) -> None:
        self.worker = worker
        self.verbose = verbose
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.max_connections = max_connections
        self._open = 0
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((host, port))
        self.socket.listen(512)
        self.server_address = self.socket.getsockname()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._stopped = threading.Event()

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._stopped.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self.socket,
                                            limit=MAX_HEADER_BYTES)
        self._started.set()
        async with server:
            await self._stop.wait()

    def shutdown(self) -> None:
        """Stop serving (thread-safe); returns once the loop has stopped."""
        if not self._started.wait(timeout=10):
            return
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._stopped.wait(timeout=10)

    def server_close(self) -> None:
        try:
            self.socket.close()
        except OSError:
            pass

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        client_host = peer[0] if peer else None
        self._open += 1
        try:
            if self._open > self.max_connections:
                await self._write(writer, json_response(503, {
                    "error": "too many connections", "details": f"at most {self.max_connections} at once"},
                    headers={"retry-after": "1"}), keep_alive=False)
                return
            first = True
            while True:
                try:
                    # The first request gets the header timeout; later ones may idle longer first.
                    wait = self.header_timeout_s if first else self.idle_timeout_s
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), wait)
                except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    await self._write(writer, json_response(431, {
                        "error": "request headers too large",
                        "details": f"at most {MAX_HEADER_BYTES} bytes"}), keep_alive=False)
                    return
                first = False
                try:
                    method, target, version, headers = _parse_head(head)
                    keep_alive = _keep_alive(version, headers)
                    body = await self._read_body(reader, writer, headers)
                except _BadRequest as bad:
                    await self._write(writer, bad.response, keep_alive=False)
                    return
                except asyncio.TimeoutError:
                    await self._write(writer, json_response(408, {
                        "error": "request timeout",
                        "details": f"the body did not arrive within {self.body_timeout_s:g} s"}), keep_alive=False)
                    return
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request = Request.from_url(method, target, headers, body, client_host=client_host)
                response = self.worker.handle(request)
                if self.verbose:
                    print(f"{client_host} {method} {target} {response.status}", file=sys.stderr)
                await self._write(writer, response, keep_alive, head_only=method == "HEAD")
                if not keep_alive:
                    return
        finally:
            self._open -= 1
            writer.close()

    async def _read_body(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            raise _BadRequest(411, "length required", "send Content-Length; chunked bodies are not accepted")
        length_text = headers.get("content-length", "0").strip() or "0"
        if not length_text.isdigit():
            raise _BadRequest(400, "invalid Content-Length", length_text[:40])
        length = int(length_text)
        cap = self.worker.app.config.max_body_bytes
        if length > cap:
            # Answer without reading the body and close: its bytes would otherwise be read
            # as the next request.
            raise _BadRequest(413, "body too large", f"{length} bytes; at most {cap}")
        if not length:
            return b""
        if headers.get("expect", "").lower() == "100-continue":
            # curl sends this for bodies over 1 KB and would otherwise wait a second.
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        return await asyncio.wait_for(reader.readexactly(length), self.body_timeout_s)

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, response: Response, keep_alive: bool,
                     head_only: bool = False) -> None:
        try:
            reason = HTTPStatus(response.status).phrase
        except ValueError:
            reason = ""
        lines = [f"HTTP/1.1 {response.status} {reason}"]
        lines += [f"{name}: {value}" for name, value in response.headers.items()]
        lines.append(f"content-length: {len(response.body)}")
        lines.append("server: zebench-worker")
        if not keep_alive:
            lines.append("connection: close")
        payload = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if not head_only:
            payload += response.body
        writer.write(payload)
        try:
            await writer.drain()
        except ConnectionError:
            pass


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    try:
        text = head.decode("latin-1")
        request_line, *header_lines = text.split("\r\n")
        method, target, version = request_line.split(" ")
    except ValueError:
        raise _BadRequest(400, "malformed request line", "expected: METHOD /path HTTP/1.1") from None
    if not version.startswith("HTTP/1.") or not target.startswith("/"):
        raise _BadRequest(400, "malformed request line", "expected: METHOD /path HTTP/1.1")
    headers: dict[str, str] = {}
    for line in header_lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise _BadRequest(400, "malformed header", line[:60])
        headers[name.strip().lower()] = value.strip()
    return method.upper(), target, version, headers


def _keep_alive(version: str, headers: dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


def make_server(host: str, port: int, db_path: str, config: WorkerConfig,
                verbose: bool = False, **limits: Any) -> tuple[DevServer, LocalWorker]:
    """A bound (not yet serving) server; port 0 picks a free port. ``limits`` override the
    timeouts and the connection limit (``header_timeout_s``, ``body_timeout_s``,
    ``idle_timeout_s``, ``max_connections``)."""
    worker = LocalWorker(db_path, config)
    try:
        return DevServer(host, port, worker, verbose, **limits), worker
    except OSError:
        worker.close()
        raise


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
