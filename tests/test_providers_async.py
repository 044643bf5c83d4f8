"""The asynchronous provider path (``Provider.achat``) against respx-mocked APIs and loopback
servers: the SDKs' async clients run, and the answers, costs, errors, retries and streaming are
those of the synchronous calls."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler

import httpx
import pytest
import respx

from harness.models.providers import ChatRequest, Message, ProviderError, ResponseCache, RetryPolicy, get_provider
from support.http_stubs import serve
from support.providers import ANTHROPIC_URL, OPENAI_URL, READ_TOOL, anthropic_body, openai_body, request


class AsyncSleeps:
    """An ``async_sleep`` that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def asleeps() -> AsyncSleeps:
    return AsyncSleeps()


@pytest.fixture
def make(tmp_path, asleeps):
    def _make(name, **kwargs):
        kwargs.setdefault("retry", RetryPolicy(max_attempts=4, sleep=_no_sync_sleep, async_sleep=asleeps))
        kwargs.setdefault("cache", ResponseCache(tmp_path / "cache"))
        kwargs.setdefault("api_key", "test-key")
        return get_provider(name, **kwargs)

    return _make


def _no_sync_sleep(seconds: float) -> None:
    raise AssertionError("the async path must not sleep synchronously")


def run(coro):
    return asyncio.run(coro)


async def achat_and_close(provider, req, **kwargs):
    try:
        return await provider.achat(req, **kwargs)
    finally:
        await provider.aclose()


def sse(events: list[tuple[str | None, dict]]) -> str:
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out)


def openai_stream_body(text_parts: list[str], model: str = "gpt-4o-mini-2024-07-18") -> str:
    chunks = [(None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model,
                      "choices": [{"index": 0, "delta": {"role": "assistant", "content": part},
                                   "finish_reason": None}]}) for part in text_parts]
    chunks.append((None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model,
                          "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    chunks.append((None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [],
                          "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}))
    return sse(chunks) + "data: [DONE]\n\n"


def anthropic_stream_body(text_parts: list[str], model: str = "claude-sonnet-4-6") -> str:
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": part}}) for part in text_parts]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)


# -- the same answers as the synchronous calls --------------------------------------------------


@respx.mock
@pytest.mark.parametrize("name, url, body", [
    ("anthropic", ANTHROPIC_URL, anthropic_body(
        [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                                                 "input": {"path": "a.py"}}],
        stop="tool_use", usage={"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 300,
                                "cache_creation_input_tokens": 50})),
    ("openai", OPENAI_URL, openai_body(
        {"content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                          "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}]},
        finish="tool_calls", usage={"prompt_tokens": 500, "completion_tokens": 10, "total_tokens": 510,
                                    "prompt_tokens_details": {"cached_tokens": 200}})),
])
def test_achat_answers_what_chat_answers(make, name, url, body):
    route = respx.post(url).mock(return_value=httpx.Response(200, json=body))
    model = "claude-sonnet-4-6" if name == "anthropic" else "gpt-4o-mini"
    sync = make(name).chat(request(model=model))
    provider = make(name)
    answer = run(achat_and_close(provider, request(model=model)))
    assert route.call_count == 2
    assert json.loads(route.calls[0].request.content) == json.loads(route.calls[1].request.content)
    assert (answer.text, answer.tool_calls, answer.usage, answer.model, answer.stop_reason) == (
        sync.text, sync.tool_calls, sync.usage, sync.model, sync.stop_reason)
    assert answer.cost_usd == sync.cost_usd and answer.cost_usd > 0
    assert answer.latency_ms > 0 and answer.ttft_ms is None and answer.cached is False
    assert answer.tool_calls[0].arguments == {"path": "a.py"}


@respx.mock
def test_openai_streamed_achat_measures_the_first_token_and_asks_for_the_usage(make):
    route = respx.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"}, text=openai_stream_body(["Hel", "lo"])))
    answer = run(achat_and_close(make("openai"), request(model="gpt-4o-mini", tools=[]), stream=True))
    sent = json.loads(route.calls[0].request.content)
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert answer.text == "Hello" and answer.stop_reason == "stop"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (50, 10)
    assert answer.ttft_ms is not None and 0 <= answer.ttft_ms <= answer.latency_ms
    assert answer.cost_usd is not None and answer.cost_usd > 0


@respx.mock
def test_anthropic_streamed_achat_measures_the_first_token(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"}, text=anthropic_stream_body(["Hi ", "there"])))
    answer = run(achat_and_close(make("anthropic"), request(tools=[READ_TOOL]), stream=True))
    assert json.loads(route.calls[0].request.content)["stream"] is True
    assert answer.text == "Hi there" and answer.stop_reason == "end_turn"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (100, 20)
    assert answer.ttft_ms is not None and 0 <= answer.ttft_ms <= answer.latency_ms


@respx.mock
def test_a_streamed_call_is_never_answered_from_the_cache(make):
    route = respx.post(OPENAI_URL).mock(side_effect=lambda req: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, text=openai_stream_body(["x"])))
    provider = make("openai")

    async def twice():
        for _ in range(2):
            await provider.achat(request(model="gpt-4o-mini"), stream=True, use_cache=True, record=True)
        await provider.aclose()

    run(twice())
    assert route.call_count == 2


@respx.mock
def test_achat_replays_what_chat_recorded_and_records_for_chat(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body(
        [{"type": "text", "text": "A"}])))
    provider = make("anthropic")
    first = provider.chat(request(), record=True)
    replay = run(achat_and_close(provider, request(), use_cache=True))
    assert route.call_count == 1 and replay.cached is True and replay.cost_usd == first.cost_usd
    run(achat_and_close(provider, request(system="s"), record=True))
    assert provider.chat(request(system="s"), use_cache=True).cached is True
    assert route.call_count == 2


# -- errors and retries ----------------------------------------------------------------------


@respx.mock
def test_with_retries_a_429_waits_as_long_as_retry_after_says_on_the_event_loop(make, asleeps):
    route = respx.post(ANTHROPIC_URL).mock(side_effect=[
        httpx.Response(429, headers={"retry-after": "7"}, json={"type": "error", "error": {"message": "slow down"}}),
        httpx.Response(200, json=anthropic_body([{"type": "text", "text": "ok"}])),
    ])
    answer = run(achat_and_close(make("anthropic"), request()))
    assert answer.text == "ok" and route.call_count == 2
    assert len(asleeps.calls) == 1 and 7.0 <= asleeps.calls[0] <= 7.7


@respx.mock
def test_without_retries_a_429_fails_at_once_with_its_status_and_retry_after(make, asleeps):
    route = respx.post(OPENAI_URL).mock(return_value=httpx.Response(
        429, headers={"retry-after": "12"}, json={"error": {"message": "rate limited"}}))
    with pytest.raises(ProviderError, match="rate limited") as failed:
        run(achat_and_close(make("openai"), request(model="gpt-4o-mini"), retry=False))
    assert route.call_count == 1 and asleeps.calls == []
    err = failed.value
    assert (err.kind, err.status, err.reason, err.retry_after, err.infrastructure) == (
        "unavailable", 429, "status", 12.0, True)


@respx.mock
def test_persistent_5xx_gives_up_after_the_policy_s_attempts(make, asleeps):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        529, json={"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}))
    with pytest.raises(ProviderError, match="giving up after retries") as failed:
        run(achat_and_close(make("anthropic"), request()))
    assert route.call_count == 4 and len(asleeps.calls) == 3
    assert asleeps.calls == sorted(asleeps.calls)  # exponential backoff: each wait longer than the last
    assert (failed.value.kind, failed.value.status, failed.value.reason) == ("unavailable", 529, "status")


@respx.mock
@pytest.mark.parametrize("exc, reason", [
    (httpx.ReadTimeout("read timed out"), "timeout"),
    (httpx.ConnectTimeout("connect timed out"), "timeout"),
    (httpx.ConnectError("connection refused"), "connection"),
])
def test_transport_failures_are_timeouts_or_connection_errors(make, asleeps, exc, reason):
    route = respx.post(OPENAI_URL).mock(side_effect=exc)
    with pytest.raises(ProviderError) as failed:
        run(achat_and_close(make("openai"), request(model="gpt-4o-mini"), retry=False))
    assert route.call_count == 1
    assert (failed.value.kind, failed.value.status, failed.value.reason) == ("unavailable", None, reason)


@respx.mock
def test_transport_failures_are_retried_when_retries_are_on(make, asleeps):
    route = respx.post(OPENAI_URL).mock(side_effect=[
        httpx.ConnectError("refused"), httpx.ReadTimeout("slow"),
        httpx.Response(200, json=openai_body({"content": "fine"})),
    ])
    assert run(achat_and_close(make("openai"), request(model="gpt-4o-mini"))).text == "fine"
    assert route.call_count == 3 and len(asleeps.calls) == 2


@respx.mock
@pytest.mark.parametrize("status, kind", [(400, "refused"), (404, "refused"), (401, "auth"), (403, "auth")])
def test_client_errors_are_never_retried(make, asleeps, status, kind):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        status, json={"type": "error", "error": {"type": "invalid_request_error", "message": "no such thing"}}))
    with pytest.raises(ProviderError, match="no such thing") as failed:
        run(achat_and_close(make("anthropic"), request()))
    assert route.call_count == 1 and asleeps.calls == []
    assert (failed.value.kind, failed.value.status) == (kind, status)


@respx.mock
def test_retries_stop_before_waiting_past_the_deadline(make, asleeps):
    route = respx.post(OPENAI_URL).mock(return_value=httpx.Response(
        503, headers={"retry-after": "30"}, json={"error": {"message": "busy"}}))
    with pytest.raises(ProviderError, match="busy"):
        run(achat_and_close(make("openai"), request(model="gpt-4o-mini"), deadline=time.monotonic() + 5))
    assert route.call_count == 1 and asleeps.calls == []


def test_the_retry_policy_waits_with_asyncio_sleep_by_default():
    from harness.models.providers.retry import RetryableError

    attempts = []

    async def attempt():
        attempts.append(time.monotonic())
        if len(attempts) < 3:
            raise RetryableError("busy", retry_after=0.01)
        return "done"

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        result = await RetryPolicy(max_attempts=3).acall(attempt)
        task.cancel()
        return result, ticks

    result, ticks = asyncio.run(main())
    assert result == "done" and len(attempts) == 3
    assert ticks > 0  # the loop ran other tasks while the policy waited


# -- many calls on one loop, against a real socket -----------------------------------------------


class _Held(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that holds each request ``hold_s`` and counts how many it
    held at once."""

    protocol_version = "HTTP/1.1"
    hold_s = 0.3
    lock = threading.Lock()
    active = 0
    peak = 0
    #: With ``released`` (an Event), each request is held until ``release_at`` are in at once
    #: (or ``hold_s`` passes): concurrency is then seen however slowly the machine runs.
    release_at: int | None = None
    released: threading.Event | None = None

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["content-length"]))
        cls = type(self)
        with cls.lock:
            cls.active += 1
            cls.peak = max(cls.peak, cls.active)
            if cls.released is not None and cls.release_at is not None and cls.active >= cls.release_at:
                cls.released.set()
        if cls.released is not None:
            cls.released.wait(cls.hold_s)
        else:
            time.sleep(cls.hold_s)
        with cls.lock:
            cls.active -= 1
        body = json.dumps(openai_body({"content": "ok"}, model="stub")).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def _held_server():
    handler = type("Held", (_Held,), {"lock": threading.Lock(), "active": 0, "peak": 0})
    return handler, serve(handler)


@pytest.mark.parametrize("max_connections, calls", [(12, 12), (3, 9)])
def test_calls_in_flight_are_bounded_by_the_pool_size_only(max_connections, calls):
    handler, server = _held_server()
    if max_connections >= calls:
        # Held until more than half are in at once (at most 10 s): sent one after the other,
        # they would never be.
        handler.release_at, handler.released, handler.hold_s = calls // 2 + 1, threading.Event(), 10.0
    try:
        provider = get_provider("openai-compatible", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                                max_connections=max_connections)

        async def main():
            reqs = [ChatRequest(messages=[Message(role="user", content=str(i))], model="stub") for i in range(calls)]
            answers = await asyncio.gather(*(provider.achat(r, retry=False) for r in reqs))
            await provider.aclose()
            return answers

        answers = asyncio.run(main())
    finally:
        server.shutdown()
    assert [a.text for a in answers] == ["ok"] * calls
    if max_connections >= calls:
        assert handler.peak > calls // 2  # all sent together, not one after the other
    else:
        assert handler.peak <= max_connections


def test_a_provider_serves_one_event_loop_after_another():
    handler, server = _held_server()
    handler.hold_s = 0.0
    try:
        provider = get_provider("openai-compatible", base_url=f"http://127.0.0.1:{server.server_port}/v1")
        req = ChatRequest(messages=[Message(role="user", content="x")], model="stub")
        first = asyncio.run(provider.achat(req))  # left open: its loop is gone afterwards
        second = asyncio.run(achat_and_close(provider, req))
    finally:
        server.shutdown()
    assert first.text == second.text == "ok"



@pytest.mark.parametrize("name,base_url,path,expected", [
    ("openai", None, "/chat/completions", "https://api.openai.com/v1/chat/completions"),
    ("openai-compatible", "http://models.test/proxy/v1", "/chat/completions",
     "http://models.test/proxy/v1/chat/completions"),
    ("openai-compatible", "http://models.test/proxy/v1/", "/chat/completions",
     "http://models.test/proxy/v1/chat/completions"),
    ("anthropic", None, "/v1/messages", "https://api.anthropic.com/v1/messages"),
    ("anthropic", "http://models.test/gateway", "/v1/messages", "http://models.test/gateway/v1/messages"),
])
def test_calls_go_to_the_url_the_sdk_joins_from_its_base_url(make, name, base_url, path, expected):
    """The absolute URL joined once per client is the one the SDK would join for each call."""
    body = (anthropic_body([{"type": "text", "text": "ok"}]) if name == "anthropic"
            else openai_body({"content": "ok"}))
    provider = make(name, **({"base_url": base_url} if base_url else {}))
    model = "claude-sonnet-4-6" if name == "anthropic" else "gpt-4o-mini"

    async def call():
        client = provider._aclient()
        assert provider._async_url(client, path) == str(client._prepare_url(path)) == expected
        return await achat_and_close(provider, request(model=model, tools=[]))

    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(expected).mock(return_value=httpx.Response(200, json=body))
        answer = run(call())
    assert route.call_count == 1 and answer.text == "ok"


class _BrokenStream(BaseHTTPRequestHandler):
    """Announces a long streamed body, sends one chunk and hangs up."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["content-length"]))
        chunk = openai_stream_body(["partial"]).split("\n\n")[0] + "\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", "100000")
        self.end_headers()
        self.wfile.write(chunk.encode())
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


def test_a_stream_cut_short_is_a_connection_error():
    server = serve(_BrokenStream)
    try:
        provider = get_provider("openai-compatible", base_url=f"http://127.0.0.1:{server.server_port}/v1")
        req = ChatRequest(messages=[Message(role="user", content="x")], model="stub")
        with pytest.raises(ProviderError) as failed:
            asyncio.run(achat_and_close(provider, req, stream=True, retry=False))
    finally:
        server.shutdown()
    assert (failed.value.kind, failed.value.reason) == ("unavailable", "connection")


def test_importing_the_provider_layer_still_imports_no_sdk():
    import subprocess
    import sys

    code = ("import sys, harness.models.providers, harness.models.providers.base, harness.models.providers.http; "
            "print(any(m in sys.modules for m in ('anthropic', 'openai', 'httpx2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@respx.mock
def test_streamed_tool_calls_are_put_together_from_their_pieces(make):
    def chunk(delta, finish=None):
        return (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    pieces = [
        chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                    "function": {"name": "read_", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "file", "arguments": "{\"pa"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a.py\"}"}}]}),
        chunk({}, "tool_calls"),
        (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini", "choices": [],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}),
    ]
    respx.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"}, text=sse(pieces) + "data: [DONE]\n\n"))
    answer = run(achat_and_close(make("openai"), request(model="gpt-4o-mini"), stream=True))
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("call_1", "read_file", {"path": "a.py"})]
    assert answer.stop_reason == "tool_calls" and answer.text == "" and answer.ttft_ms is not None


def test_the_sdks_aiohttp_clients_share_one_verifying_tls_context_and_skip_httpx(monkeypatch):
    import ssl
    import subprocess
    import sys

    from harness.models.providers.http import make_sdk_async_http_client, no_trust_tls_context, tls_context

    monkeypatch.delenv("ZE_BENCHMARKS_HTTP_TRANSPORT", raising=False)

    async def transports(base_url=None):
        clients = [make_sdk_async_http_client(sdk=sdk, base_url=base_url) for sdk in ("openai", "anthropic", "openai")]
        found = [c._transport.ssl_context for c in clients]
        for c in clients:
            await c.aclose()
        return found

    for base_url in (None, "https://api.example.test/v1"):
        contexts = asyncio.run(transports(base_url))
        assert all(c is tls_context() for c in contexts)
    assert tls_context().verify_mode == ssl.CERT_REQUIRED and tls_context().check_hostname
    assert tls_context().cert_store_stats()["x509_ca"] > 0
    # A plain-http endpoint's client makes no TLS connection; were it asked to, it would trust
    # no one rather than skip verification.
    plain = asyncio.run(transports("http://127.0.0.1:8080/v1"))
    assert all(c is no_trust_tls_context() for c in plain)
    strict = no_trust_tls_context()
    assert strict.verify_mode == ssl.CERT_REQUIRED and strict.check_hostname
    assert strict.cert_store_stats()["x509_ca"] == 0
    # The aiohttp path needs nothing of httpx (the respx-mockable bridge's library).
    code = ("import sys; from harness.models.providers.http import make_sdk_async_http_client; "
            "make_sdk_async_http_client(); print('httpx' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "ZE_BENCHMARKS_HTTP_TRANSPORT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"
