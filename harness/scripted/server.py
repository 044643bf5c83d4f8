"""The scripted model on a loopback HTTP server (standard library only).

:class:`ScriptedServer` answers the four wire formats of :mod:`harness.scripted.wire` on
``127.0.0.1`` with the answers of a :class:`~harness.scripted.script.Script`, and keeps every
request it received (``requests``: path, headers and parsed body), so a test can check what an agent
sent, such as the instructions a specialist put in its prompt. ``GET .../models`` lists the
model, for clients that ask first.

    with ScriptedServer(load_script("fix.yaml")) as server:
        ... point an agent at server.base_url("openai") ...
    server.requests[0]["body"]
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.scripted.script import Script, ScriptError
from harness.scripted.wire import RENDERERS, WireError, read_request

MAX_BODY = 64 * 1024 * 1024
SCRIPTED_MODEL = "scripted-model"


class ScriptedServer:
    """A scripted model served on ``host:port`` (0: a free port) from a thread."""

    def __init__(self, script: Script, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._answers = 0
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, api: str) -> str:
        """The base URL a client of ``api`` is given: OpenAI's convention includes ``/v1``,
        Anthropic's and Gemini's do not."""
        return f"{self.url}/v1" if api == "openai" else self.url

    def start(self) -> "ScriptedServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def bodies_text(self) -> str:
        """Every request body received, as one text (to look for a marker in what was sent)."""
        with self._lock:
            return "\n".join(json.dumps(r["body"]) for r in self.requests)

    # -- answering ------------------------------------------------------------------------------
    def _next_id(self) -> int:
        with self._lock:
            self._answers += 1
            return self._answers

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _json(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [
                        {"id": SCRIPTED_MODEL, "object": "model", "owned_by": "zebench"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self._json(413, {"error": {"message": "request too large"}})
                    return
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                    request = read_request(self.path, body, len(raw))
                except (ValueError, WireError) as exc:
                    self._json(400, {"error": {"message": str(exc)}})
                    return
                with server._lock:
                    server.requests.append({"path": self.path, "body": body, "api": request.api,
                                            "headers": {k.lower(): v for k, v in self.headers.items()}})
                try:
                    script = server.script.for_request(raw.decode("utf-8", "replace"))
                    answer = script.answer(request.turn, request.tools, request.json_schema, request.system,
                                                  request.submit)
                except ScriptError as exc:
                    self._json(400, {"error": {"message": f"the script cannot answer: {exc}"}})
                    return
                document, events = RENDERERS[request.api](request, answer, server._next_id())
                if document is not None:
                    self._json(200, document)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in events:
                    self.wfile.write(event)
                self.wfile.flush()
                self.close_connection = True

        return Handler
