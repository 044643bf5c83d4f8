"""An ASGI adapter of the worker core, only to compare servers in benchmarks/worker_load.py.

``worker dev`` uses the standard library's threaded server; this lets the benchmark run the
same core under uvicorn (``pip install -e .[bench]``) and measure which serves it faster.
Reads the database path from ZE_BENCH_WORKER_DB and the key from API_SECRET_KEY.
"""

from __future__ import annotations

import os

from worker.config import WorkerConfig
from worker.local import LocalWorker
from worker.messages import Request

_worker = LocalWorker(os.environ["ZE_BENCH_WORKER_DB"],
                      WorkerConfig(api_key=os.environ["API_SECRET_KEY"]))


async def app(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    query = scope.get("query_string", b"").decode("latin-1")
    url = scope["path"] + (f"?{query}" if query else "")
    # SQLite calls are short and never wait on the network, so they run inline on the loop.
    response = _worker.handle(Request.from_url(scope["method"], url, headers, body))
    out_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()]
    out_headers.append((b"content-length", str(len(response.body)).encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": out_headers})
    await send({"type": "http.response.body", "body": response.body})
