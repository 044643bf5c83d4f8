"""The network an agent needs, and nothing more: an egress relay between a sandbox and its model.

An installed agent (a CLI with its own tool loop) must reach its model endpoint, and nothing
else: not its vendor's telemetry or update hosts, not the host's other loopback services, not
the web. Under ``bwrap``, and in a container (``podman``, ``docker``: ``--network none``, the
relay's socket mounted in), it runs without the host's network; inside its network namespace a
small forwarder (``harness/data/egress/zebench_egress.py``, run by the sandbox's Python)
listens on ``127.0.0.2`` and passes each connection over a Unix socket to this relay, in the
harness, which decides:

- the **model route** (``http://127.0.0.2:8400``, the agent's base URL) is an HTTP reverse
  proxy to the one upstream the run allows (``https://api.anthropic.com``, or a scripted
  model on the host's loopback): the request goes there with its ``Host`` set, and, when the
  relay holds the real key, with the agent's placeholder key replaced by it, so the key
  never enters the sandbox;
- the **proxy route** (``http://127.0.0.2:8401``, given to the agent as ``HTTP(S)_PROXY``)
  lets through the model route's own address (for clients that send everything to their
  proxy) and refuses every other destination (``CONNECT`` or a proxied request) with 403, and
  records it: what an agent tries to reach besides its model shows in the run's record.

Connections a program makes without the proxy fail in the empty network namespace and are
not seen. ``EgressRelay.report()`` gives the hosts contacted and the refusals for the run's
record (``metadata.egress``).
"""

from __future__ import annotations

import http.client
import os
import socket
import socketserver
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness._util.ownership import owned
from harness._util.trees import remove_tree

FORWARDER = Path(__file__).resolve().parents[1] / "data" / "egress"  # zebench_egress.py
FORWARDER_INNER = "/zebench/egress-forwarder"
SOCKET_INNER = "/zebench/egress"  # the directory holding relay.sock, inside the sandbox
MODEL_ADDRESS = ("127.0.0.2", 8400)
PROXY_ADDRESS = ("127.0.0.2", 8401)
MAX_HEADER = 64 * 1024
MAX_RECORDS = 200
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer",
               "transfer-encoding", "upgrade", "host", "content-length"}
_KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key")


@dataclass(frozen=True)
class Upstream:
    """Where the model route goes: a base URL (``https://api.openai.com/v1``), and the
    headers the relay sets on every request (the real key), replacing the agent's."""

    base_url: str
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    @property
    def inner_base_url(self) -> str:
        """The base URL the agent is given: the forwarder's address with the upstream's path."""
        path = urlsplit(self.base_url).path.rstrip("/")
        return f"http://{MODEL_ADDRESS[0]}:{MODEL_ADDRESS[1]}{path}"


@dataclass
class EgressLog:
    contacted: dict[str, int] = field(default_factory=dict)  # host -> requests relayed
    refused: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class _Reader:
    """Reads an HTTP/1.1 message head and body from a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def head(self) -> bytes | None:
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > MAX_HEADER:
                raise ValueError("request head too large")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        return head

    def exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ValueError("the request body ended early")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ValueError("the request body ended early")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def chunked(self) -> bytes:
        body = b""
        while True:
            size = int(self.line().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.line():  # trailers, then the empty line
                    pass
                return body
            body += self.exactly(size)
            self.exactly(2)


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.append((name.strip(), value.strip()))
    return method, target, headers


class EgressRelay:
    """The relay of one sandbox: a Unix socket in a private directory, served from a thread.

    Use it as a context manager around the agent's run; :meth:`mounts` and :meth:`env` say what
    the sandbox gets, :meth:`wrap` the agent's command, :meth:`report` what happened.
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.log = EgressLog()
        self._lock = threading.Lock()
        self.directory = Path(tempfile.mkdtemp(prefix=owned("zebench-egress-")))
        self.socket_path = self.directory / "relay.sock"
        relay = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                relay._handle(self.request)

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self._server = Server(str(self.socket_path), Handler)
        os.chmod(self.socket_path, 0o666)
        os.chmod(self.directory, 0o755)
        # A short poll: closing the relay waits for it (the default half second was most of the
        # seam's cost per run).
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="egress-relay", daemon=True)
        self._thread.start()

    # -- what the sandbox gets ------------------------------------------------------------------
    def mounts(self) -> tuple[Any, ...]:
        from harness.sandbox import Mount

        return (Mount(self.directory, SOCKET_INNER, writable=True), Mount(FORWARDER, FORWARDER_INNER))

    def env(self) -> dict[str, str]:
        """Proxy settings that send whatever honours them to the refusing proxy route; the
        model route itself is reached directly."""
        proxy = f"http://{PROXY_ADDRESS[0]}:{PROXY_ADDRESS[1]}"
        return {name: proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                         "all_proxy")} | {"NO_PROXY": MODEL_ADDRESS[0], "no_proxy": MODEL_ADDRESS[0]}

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run behind the forwarder (inside the sandbox, by its Python)."""
        return ["python3", f"{FORWARDER_INNER}/zebench_egress.py", "--socket", f"{SOCKET_INNER}/relay.sock",
                "--listen", f"{MODEL_ADDRESS[0]}:{MODEL_ADDRESS[1]}=model",
                "--listen", f"{PROXY_ADDRESS[0]}:{PROXY_ADDRESS[1]}=proxy", "--", *argv]

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {"allowed": self.upstream.host, "contacted": dict(self.log.contacted),
                    "refused": list(self.log.refused), "errors": list(self.log.errors[:20])}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        remove_tree(self.directory)

    def __enter__(self) -> "EgressRelay":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- relaying -------------------------------------------------------------------------------
    def _handle(self, sock: socket.socket) -> None:
        reader = _Reader(sock)
        try:
            route = reader.line().decode("ascii", "replace").strip()  # the forwarder's first line
        except (OSError, ValueError):
            return
        try:
            if route == "model":
                self._model(sock, reader)
            else:
                self._refuse(sock, reader)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            with self._lock:
                if len(self.log.errors) < MAX_RECORDS:
                    self.log.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _refuse(self, sock: socket.socket, reader: _Reader) -> None:
        """The proxy route: the model's own address is let through (some clients send every
        request to the proxy they are given); everything else is refused and recorded."""
        head = reader.head()
        if head is None:
            return
        method, target, headers = _parse_head(head)
        where = target if method == "CONNECT" else (urlsplit(target).netloc or target)
        if where == f"{MODEL_ADDRESS[0]}:{MODEL_ADDRESS[1]}":
            if method == "CONNECT":
                sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                self._model(sock, reader)
            else:
                parts = urlsplit(target)
                self._model(sock, reader, (method, parts.path + (f"?{parts.query}" if parts.query else ""), headers))
            return
        with self._lock:
            if len(self.log.refused) < MAX_RECORDS:
                self.log.refused.append({"host": where, "method": method, "at": time.time()})
        body = f"zebench: {where} is not reachable from this sandbox (only {self.upstream.host} is)\n".encode()
        sock.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def _model(self, sock: socket.socket, reader: _Reader,
               parsed: tuple[str, str, list[tuple[str, str]]] | None = None) -> None:
        if parsed is None:
            head = reader.head()
            if head is None:
                return
            parsed = _parse_head(head)
        method, target, headers = parsed
        lowered = {name.lower(): value for name, value in headers}
        if "chunked" in lowered.get("transfer-encoding", "").lower():
            body = reader.chunked()
        else:
            body = reader.exactly(int(lowered.get("content-length") or 0))
        upstream = urlsplit(self.upstream.base_url)
        replaced = {name.lower() for name, _ in self.upstream.headers}
        if replaced & set(_KEY_HEADERS):
            replaced |= set(_KEY_HEADERS)  # the agent's placeholder key, whatever header it used
        out_headers = [(n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP and n.lower() not in replaced]
        out_headers += list(self.upstream.headers)
        port = upstream.port or (443 if upstream.scheme == "https" else 80)
        if upstream.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                upstream.hostname, port, timeout=600, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(upstream.hostname, port, timeout=600)
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", upstream.netloc)
            for name, value in out_headers:
                conn.putheader(name, value)
            conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Connection", "close")
            conn.endheaders(body)
            response = conn.getresponse()
            with self._lock:
                self.log.contacted[upstream.netloc] = self.log.contacted.get(upstream.netloc, 0) + 1
            status = f"HTTP/1.1 {response.status} {response.reason}\r\n"
            kept = [(n, v) for n, v in response.getheaders() if n.lower() not in _HOP_BY_HOP]
            # The body ends when the connection does: no length to trust, and streams stay streams.
            sock.sendall((status + "".join(f"{n}: {v}\r\n" for n, v in kept) + "Connection: close\r\n\r\n").encode(
                "latin-1"))
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                sock.sendall(chunk)
        finally:
            conn.close()
