"""A small OpenAI-compatible model server on raw asyncio, cheap enough to measure clients with.

It answers ``POST .../chat/completions`` after ``delay_ms`` (plain JSON, or server-sent events
when the request asks to stream), so a client's throughput limit is ``concurrency / delay``.
What it answers:

- the text of ``answers[prompt]`` when the last user message is a key of ``answers``, else
  ``"echo: "`` and the last user message (so tests can script correct and wrong answers);
- HTTP 429 with ``Retry-After`` when more than ``capacity`` requests are in flight (a
  provider's rate limit, for AIMD), or for the first ``fail_first`` requests;
- the statuses of ``statuses`` in turn, one per request, before anything else (``0``: the
  connection is closed without an answer; any other: that status with an OpenAI-style error
  body and, for 429 and 503, ``retry_after_s`` as ``Retry-After`` when set);
- a stream cut after its first chunk (the connection closed) for a prompt containing ``CUT``;
- nothing at all (the connection is held) for a prompt containing ``HANG``.

Run it in a thread (:class:`ThreadedMock`, ``close()`` stops it and releases what it holds),
or in its own process for benchmarks (``python benchmarks/mock_llm.py --delay-ms 50`` prints
``PORT <n>`` and serves until killed). A request costs it about a tenth of a millisecond of CPU.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field


@dataclass
class MockConfig:
    delay_ms: float = 50.0
    capacity: int | None = None  # more in flight than this: 429
    retry_after_s: float | None = None  # the Retry-After of a 429 (absent when None)
    fail_first: int = 0  # the first N requests get a 429
    statuses: list[int] = field(default_factory=list)  # answers of the first requests, in turn (0: dropped)
    answers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 12
    model: str = "mock-model"


class MockServer:
    """The server's state: its config and what it has seen (for tests to assert on)."""

    def __init__(self, config: MockConfig | None = None) -> None:
        self.config = config or MockConfig()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0
        self.rejected = 0
        self.bodies: list[dict] = []
        self.keep_bodies = False
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._connection, host, port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length) if length else b""
                if not await self._answer(body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _answer(self, raw: bytes, writer: asyncio.StreamWriter) -> bool:
        cfg = self.config
        self.requests += 1
        request = json.loads(raw) if raw else {}
        if self.keep_bodies:
            self.bodies.append(request)
        messages = request.get("messages") or []
        prompt = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        if isinstance(prompt, list):
            prompt = "".join(part.get("text", "") for part in prompt if isinstance(part, dict))
        if self.requests <= len(cfg.statuses):
            return await self._scripted_status(cfg.statuses[self.requests - 1], writer)
        over = cfg.capacity is not None and self.in_flight >= cfg.capacity
        if over or self.requests <= cfg.fail_first:
            self.rejected += 1
            body = b'{"error": {"message": "rate limited", "type": "rate_limit"}}'
            extra = f"retry-after: {cfg.retry_after_s:g}\r\n" if cfg.retry_after_s is not None else ""
            writer.write(f"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n{extra}"
                         f"content-length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            return True
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if "HANG" in prompt:
                await asyncio.sleep(3600)
            text = cfg.answers.get(prompt, "echo: " + prompt)
            words = max(1, len(text.split()))
            if request.get("stream"):
                await self._stream(writer, text, words, request.get("model") or cfg.model, cut="CUT" in prompt)
                if "CUT" in prompt:
                    return False
            else:
                await asyncio.sleep(cfg.delay_ms / 1000.0)
                body = json.dumps({
                    "id": f"cmpl-{self.requests}", "object": "chat.completion", "created": 1,
                    "model": request.get("model") or cfg.model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": cfg.prompt_tokens, "completion_tokens": words,
                              "total_tokens": cfg.prompt_tokens + words},
                }).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                await writer.drain()
        finally:
            self.in_flight -= 1
        return True

    async def _scripted_status(self, status: int, writer: asyncio.StreamWriter) -> bool:
        self.rejected += 1
        if status == 0:
            return False  # the connection is closed with no answer
        body = json.dumps({"error": {"message": f"scripted status {status}", "type": "mock_error"}}).encode()
        extra = ""
        if status in (429, 503) and self.config.retry_after_s is not None:
            extra = f"retry-after: {self.config.retry_after_s:g}\r\n"
        writer.write(f"HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n{extra}"
                     f"content-length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        return True

    async def _stream(self, writer: asyncio.StreamWriter, text: str, words: int, model: str,
                      cut: bool = False) -> None:
        cfg = self.config
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")

        def event(payload: dict) -> None:
            data = b"data: " + json.dumps(payload).encode() + b"\n\n"
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        half = cfg.delay_ms / 2000.0
        await asyncio.sleep(half)  # the time to the first token: half the delay
        parts = text.split(" ")
        for i, part in enumerate(parts):
            piece = part if i == 0 else " " + part
            event({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": model,
                   "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            await writer.drain()
            if cut:
                return
        await asyncio.sleep(half)
        event({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": model,
               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        event({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [],
               "usage": {"prompt_tokens": cfg.prompt_tokens, "completion_tokens": words,
                         "total_tokens": cfg.prompt_tokens + words}})
        data = b"data: [DONE]\n\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        await writer.drain()

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()


class ThreadedMock:
    """A :class:`MockServer` on its own event loop in a daemon thread. ``close()`` stops the
    loop, cancels what it still holds (a hanging request) and closes it, so nothing is left to
    fail when it is garbage-collected; it is also a context manager."""

    def __init__(self, config: MockConfig | None = None) -> None:
        self.server = MockServer(config)
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self.server.start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if self._loop.is_running():
            return

        async def drain() -> None:
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await self.server.aclose()

        self._loop.run_until_complete(drain())
        self._loop.close()

    def __enter__(self) -> "ThreadedMock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_in_thread(config: MockConfig | None = None) -> ThreadedMock:
    return ThreadedMock(config)
