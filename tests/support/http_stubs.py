"""Small HTTP servers that stand in for things tests need: any web server, a busy model.

Used by tests and by benchmarks/results_drills.py; each runs in a thread on a free port.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class AnythingGoes(BaseHTTPRequestHandler):
    """Any web server: 200 and a little JSON to every request (it is not a results worker)."""

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


class BusyModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible model whose every turn asks for a command that would take minutes
    (``sleep`` with the :attr:`marker` time, so tests can find those processes)."""

    marker = "sleep 93.5"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{turn}", "type": "function",
            "function": {"name": "run_command", "arguments": json.dumps({"command": self.marker})}}]}
        answer = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "busy",
                             "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """``handler`` served on a free loopback port in a daemon thread (call ``shutdown()``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
