"""A model server whose behaviour is known: an OpenAI-compatible chat completions endpoint on a
loopback port with a chosen capacity, service time, rate limit, failure window, load shedding
or error status (see :class:`StubModel`). ``make_stub(**behaviour)`` starts one in a thread.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat completions endpoint.

    - ``capacity`` requests are served at once, each taking ``service_s``; more wait their turn,
      so latency grows with concurrency above ``capacity`` while throughput stays flat;
    - ``rate``/``burst``: a token bucket; a request finding it empty gets 429 with Retry-After;
    - ``fail_from``/``fail_until``: seconds after the first request during which every request
      gets 503;
    - ``shed_above``: a request arriving while that many are being served gets 503 at once;
    - ``status``: every request gets this error status (401: credentials refused).
    Streamed requests get server-sent events: the first token halfway through the service time.
    """

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
    capacity = 1000
    service_s = 0.02
    rate: float | None = None
    burst = 1.0
    fail_from: float | None = None
    fail_until: float | None = None
    shed_above: int | None = None
    status: int | None = None

    # per server (set by make_stub)
    gate: threading.Semaphore
    lock: threading.Lock
    state: dict

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        cls = type(self)
        now = time.monotonic()
        with cls.lock:
            state = cls.state
            state["requests"] += 1
            state.setdefault("first", now)
            since = now - state["first"]
            limited = False
            if cls.rate is not None:
                tokens = min(cls.burst, state.get("tokens", cls.burst) + (now - state.get("refill", now)) * cls.rate)
                state["refill"] = now
                limited = tokens < 1
                state["tokens"] = tokens if limited else tokens - 1
        if cls.status is not None:
            return self._error(cls.status, "refused by the stub")
        if cls.fail_from is not None and cls.fail_from <= since < (cls.fail_until or 1e9):
            return self._error(503, "overloaded, try later")
        if limited:
            return self._error(429, "rate limit exceeded", {"retry-after": "1"})
        with cls.lock:
            shed = cls.shed_above is not None and state.get("active", 0) >= cls.shed_above
            if not shed:
                state["active"] = state.get("active", 0) + 1
        if shed:
            return self._error(503, "too many requests at once")
        prompt = body["messages"][-1]["content"]
        usage = {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": 12, "total_tokens": 0}
        try:
            with cls.gate:
                if body.get("stream"):
                    return self._stream(body["model"], usage, cls)
                time.sleep(cls.service_s)
        finally:
            if not body.get("stream"):
                self._done(cls)
        answer = {"id": "c", "object": "chat.completion", "created": 1, "model": body["model"],
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "1 2 3 4 5 6"}}],
                  "usage": usage}
        self._send(200, json.dumps(answer).encode(), "application/json")

    @staticmethod
    def _done(cls) -> None:
        with cls.lock:
            cls.state["active"] -= 1

    def _stream(self, model: str, usage: dict, cls) -> None:
        def chunk(delta: dict, finish=None, with_usage=False) -> bytes:
            data = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model,
                    "choices": [] if with_usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if with_usage:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n".encode()

        time.sleep(self.service_s / 2)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._chunk(chunk({"role": "assistant", "content": "1 2"}))
        time.sleep(self.service_s / 2)
        self._done(cls)  # before the last bytes leave: the client may send its next request at once
        self._chunk(chunk({"content": " 3"}) + chunk({}, "stop") + chunk({}, with_usage=True) + b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
        self._send(status, body, "application/json", headers)

    def _send(self, status: int, body: bytes, kind: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class StubServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address) -> None:
        pass  # a client hanging up on a kept-alive connection is not news


def make_stub(**behaviour):
    handler = type("Stub", (StubModel,), {
        **behaviour, "lock": threading.Lock(), "state": {"requests": 0},
        "gate": threading.Semaphore(behaviour.get("capacity", StubModel.capacity)),
    })
    server = StubServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1", handler
