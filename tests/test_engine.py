"""The provider registry (``PREFIX:MODEL``, base URLs, where keys go) and the async request
engine (global and per-provider limits, AIMD on 429 with Retry-After, retries, timeouts),
against respx routes, a scripted in-process provider and the raw-asyncio mock model server of
harness/testing/mock_model.py. No assertion is about how fast anything ran: timeouts only bound hangs.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
import respx

from harness.models.engine import AIMDLimit, Engine, EngineOptions, Job, Outcome
from harness.models.providers import ChatRequest, ChatResponse, Message, ProviderError, RetryPolicy, Usage
from harness.models.providers.registry import (
    Target,
    build_provider,
    key_for,
    missing_credentials,
    parse_target,
    parse_targets,
)

from harness.testing.mock_model import MockConfig, ThreadedMock
from support.providers import KEY_VARS


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    """Every test starts with no provider key or base URL from the environment."""
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def mock_server():
    """``mock_server(**config)``: a ThreadedMock, closed after the test."""
    started: list[ThreadedMock] = []

    def start(**config) -> ThreadedMock:
        mock = ThreadedMock(MockConfig(**config))
        started.append(mock)
        return mock

    yield start
    for mock in started:
        stop_mock(mock)


def stop_mock(mock: ThreadedMock) -> None:
    """Stop the mock (its ``close`` also cancels what its loop still holds and closes it)."""
    mock.close()


def fast_retry() -> RetryPolicy:
    """Retries that wait a few milliseconds (a Retry-After still wins)."""
    return RetryPolicy(max_attempts=50, base_delay_s=0.005, max_delay_s=0.02)


def job(target: Target, prompt: str, timeout_s: float = 20.0, index: int = 0) -> Job:
    request = ChatRequest(messages=[Message(role="user", content=prompt)], model=target.model, max_tokens=32,
                          timeout_s=timeout_s, prompt_cache=False)
    return Job(target, request, 0, index)


def run_jobs(engine: Engine, jobs: list[Job], bound_s: float = 60.0) -> list[Outcome]:
    """Run ``jobs`` through ``engine`` and return the outcomes in job order (payload = index)."""
    outcomes: list[Outcome] = []

    async def go() -> None:
        async with engine:
            await asyncio.wait_for(engine.run(jobs, outcomes.append), bound_s)

    asyncio.run(go())
    return sorted(outcomes, key=lambda o: o.job.payload)


def openai_ok(text: str = "fine") -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


# -- the registry -------------------------------------------------------------------------------------


def test_parse_target_keeps_colons_of_the_model_and_resolves_the_default_base_url():
    target = parse_target("ollama:llama3:8b")
    assert (target.prefix, target.model, target.spec) == ("ollama", "llama3:8b", "ollama:llama3:8b")
    assert target.base_url == "http://127.0.0.1:11434/v1"
    groq = parse_target(" groq:llama-3.1-8b-instant ")
    assert groq.model == "llama-3.1-8b-instant" and groq.base_url == "https://api.groq.com/openai/v1"


def test_parse_target_aliases_and_case():
    assert parse_target("gemini:gemini-2.0-flash").prefix == "google"
    assert parse_target("compatible:qwen", base_url="http://127.0.0.1:9/v1").prefix == "openai-compatible"
    assert parse_target("GROQ:m").prefix == "groq"


@pytest.mark.parametrize("text, fragment", [
    ("nonesuch:model", "unknown provider 'nonesuch'"),
    ("gpt-4o-mini", "expected PROVIDER:MODEL"),
    ("openai:", "expected PROVIDER:MODEL"),
    ("openai-compatible:qwen", "needs --base-url"),
])
def test_parse_target_rejects_what_it_cannot_call(text, fragment):
    with pytest.raises(ValueError) as info:
        parse_target(text)
    assert fragment in str(info.value)


def test_parse_targets_keeps_the_order_and_drops_duplicates():
    targets = parse_targets("groq:a, openai:gpt-4o-mini,groq:a,,ollama:b:c")
    assert [t.spec for t in targets] == ["groq:a", "openai:gpt-4o-mini", "ollama:b:c"]
    with pytest.raises(ValueError, match="no provider"):
        parse_targets(" , ")
    with pytest.raises(ValueError, match="unknown provider 'bogus'"):
        parse_targets("groq:a,bogus:b")


def test_an_explicit_base_url_wins_and_the_sdk_variables_are_followed(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7001/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:7002")
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://10.0.0.5:11434/v1")
    assert parse_target("openai:gpt-4o-mini").base_url == "http://127.0.0.1:7001/v1"
    assert parse_target("anthropic:claude-haiku-4-5").base_url == "http://127.0.0.1:7002"
    assert parse_target("ollama:m").base_url == "http://10.0.0.5:11434/v1"
    assert parse_target("openai:gpt-4o-mini", base_url="http://127.0.0.1:7003/v1").base_url == \
        "http://127.0.0.1:7003/v1"


def test_missing_credentials_names_the_variable_of_each_target():
    targets = parse_targets("groq:a,openai:gpt-4o-mini,ollama:b,anthropic:claude-haiku-4-5")
    missing = missing_credentials(targets)
    assert [(t.spec, var) for t, var in missing] == [
        ("groq:a", "GROQ_API_KEY"), ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY")]


def test_missing_credentials_is_empty_once_the_keys_are_set(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "gk")
    monkeypatch.setenv("OPENAI_API_KEY", "ok")
    assert missing_credentials(parse_targets("groq:a,openai:gpt-4o-mini,vllm:m")) == []


def test_a_target_pointed_elsewhere_needs_no_key_and_gets_none(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "groq-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-secret")
    elsewhere = parse_target("groq:a", base_url="http://127.0.0.1:9/v1")
    assert key_for(elsewhere) is None
    assert key_for(parse_target("groq:a")) == "groq-secret"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7001/v1")
    openai_local = parse_target("openai:gpt-4o-mini")
    assert key_for(openai_local) is None
    monkeypatch.delenv("GROQ_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert missing_credentials([elsewhere, openai_local]) == []


def test_build_provider_refuses_a_missing_key_by_its_variable():
    with pytest.raises(ProviderError) as info:
        build_provider(parse_target("groq:a"))
    assert "GROQ_API_KEY" in str(info.value) and info.value.kind == "auth"


@respx.mock
def test_the_key_goes_to_the_entry_s_own_host_only(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "groq-secret")
    own = respx.post("https://api.groq.com/openai/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_ok()))
    other = respx.post("http://proxy.example/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_ok()))
    targets = [parse_target("groq:a"), Target("groq", "b", "http://proxy.example/v1")]
    outcomes = run_jobs(Engine(EngineOptions(concurrency=2)), [job(t, "hi", index=i) for i, t in enumerate(targets)])
    assert all(o.ok for o in outcomes), [o.error for o in outcomes]
    assert own.call_count == 1 and other.call_count == 1
    assert own.calls.last.request.headers["authorization"] == "Bearer groq-secret"
    assert "groq-secret" not in str(other.calls.last.request.headers)


@respx.mock
def test_openai_base_url_from_the_environment_is_followed_without_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "openai-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.example/v1")
    route = respx.post("http://gateway.example/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_ok("via gateway")))
    (outcome,) = run_jobs(Engine(EngineOptions(concurrency=1)), [job(parse_target("openai:gpt-4o-mini"), "hi")])
    assert outcome.ok and outcome.response.text == "via gateway"
    assert route.call_count == 1
    assert "openai-secret" not in str(route.calls.last.request.headers)


@respx.mock
def test_anthropic_base_url_from_the_environment_is_followed(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude-proxy.example")
    route = respx.post("http://claude-proxy.example/v1/messages").mock(return_value=httpx.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "from the proxy"}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 2}}))
    target = parse_target("anthropic:claude-haiku-4-5")
    assert missing_credentials([target]) == []
    (outcome,) = run_jobs(Engine(EngineOptions(concurrency=1)), [job(target, "hi")])
    assert outcome.ok and outcome.response.text == "from the proxy" and route.call_count == 1


# -- AIMD ---------------------------------------------------------------------------------------------


def test_aimd_halves_on_each_429_and_never_goes_below_one():
    limit = AIMDLimit(8)
    seen = []
    for _ in range(5):
        limit.rate_limited(None)
        seen.append(limit.current)
    assert seen == [4, 2, 1, 1, 1]
    assert limit.halvings == 5 and limit.paused_until == 0.0


def test_aimd_grows_by_one_after_limit_successes_up_to_the_ceiling():
    limit = AIMDLimit(8)
    limit.rate_limited(None)
    assert limit.current == 4
    for _ in range(3):
        limit.succeeded()
    assert limit.current == 4  # three successes are not yet `limit` of them
    limit.succeeded()
    assert limit.current == 5
    for _ in range(4):
        limit.succeeded()
    assert limit.current == 5
    limit.succeeded()
    assert limit.current == 6
    for _ in range(100):
        limit.succeeded()
    assert limit.current == 8  # the ceiling


def test_a_429_starts_the_count_of_successes_again():
    limit = AIMDLimit(4)
    limit.rate_limited(None)  # 2
    limit.succeeded()
    limit.rate_limited(None)  # 1; the earlier success no longer counts
    assert limit.current == 1
    limit.succeeded()
    assert limit.current == 2
    limit.succeeded()
    assert limit.current == 2


def test_retry_after_pauses_new_requests_until_it_has_passed():
    async def scenario() -> tuple[float, float, bool]:
        limit = AIMDLimit(4)
        await limit.acquire()
        limit.release()
        limit.rate_limited(0.4)
        paused_until = limit.paused_until
        waiter = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0.05)
        early = waiter.done()  # the pause is 0.4 s: not granted yet
        await asyncio.wait_for(waiter, 10)
        granted_at = time.monotonic()
        limit.release()
        return paused_until, granted_at, early

    paused_until, granted_at, early = asyncio.run(scenario())
    assert not early
    assert granted_at >= paused_until


class ScriptedProvider:
    """A provider whose attempts follow a script: each entry an exception to raise or a text
    to answer after ``delay_s``. Records when every attempt started and the most in flight."""

    supports_streaming = True

    def __init__(self, script: list, delay_s: float = 0.02) -> None:
        self.script = list(script)
        self.delay_s = delay_s
        self.starts: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.closed = False

    async def aprepare(self) -> None:
        pass

    async def achat(self, request, *, stream=False, retry=True, repeat_index=0, use_cache=False, record=None):
        assert retry is False  # the engine makes one attempt at a time
        self.starts.append(time.monotonic())
        step = self.script.pop(0) if self.script else "ok"
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if isinstance(step, BaseException):
                raise step
            await asyncio.sleep(self.delay_s)
            return ChatResponse(text=step, tool_calls=[], usage=Usage(1, 1), model=request.model, stop_reason="stop",
                                latency_ms=self.delay_s * 1000, cost_usd=0.0)
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        self.closed = True


def test_a_retry_after_holds_back_every_request_of_that_provider():
    rate_limited = ProviderError("429", kind="unavailable", status=429, reason="status", retry_after=0.3)
    provider = ScriptedProvider([rate_limited], delay_s=0.01)
    target = Target("groq", "m", "http://127.0.0.1:9/v1")
    engine = Engine(EngineOptions(concurrency=1, max_attempts=3), retry=fast_retry(),
                    provider_factory=lambda t, size: provider)
    outcomes = run_jobs(engine, [job(target, f"p{i}", index=i) for i in range(4)])
    assert all(o.ok for o in outcomes)
    assert outcomes[0].attempts == 2 and outcomes[0].rate_limited == 1
    assert [o.attempts for o in outcomes[1:]] == [1, 1, 1]
    first = provider.starts[0]
    assert len(provider.starts) == 5
    assert all(start >= first + 0.3 for start in provider.starts[1:])  # nothing sent during the pause
    assert engine.limits["groq"].halvings == 1
    assert provider.closed


def test_a_retry_after_longer_than_the_policy_allows_is_not_waited_for():
    too_long = ProviderError("429", kind="unavailable", status=429, reason="status", retry_after=3600)
    provider = ScriptedProvider([too_long])
    target = Target("groq", "m", "http://127.0.0.1:9/v1")
    engine = Engine(EngineOptions(concurrency=1, max_attempts=5),
                    retry=RetryPolicy(max_attempts=5, max_retry_after_s=60),
                    provider_factory=lambda t, size: provider)
    (outcome,) = run_jobs(engine, [job(target, "p")], bound_s=20)
    assert not outcome.ok and outcome.error.status == 429 and outcome.attempts == 1


def test_the_engine_refuses_a_concurrency_below_one():
    with pytest.raises(ValueError):
        Engine(EngineOptions(concurrency=0))


# -- against the mock model server ------------------------------------------------------------------


def test_over_a_server_s_capacity_every_job_succeeds_and_the_limit_comes_down(mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    capacity = 3
    mock = mock_server(delay_ms=30, capacity=capacity, retry_after_s=0.02)
    target = Target("openai-compatible", "m", mock.base_url)
    engine = Engine(EngineOptions(concurrency=12, max_attempts=50), retry=fast_retry())
    outcomes = run_jobs(engine, [job(target, f"q{i}", index=i) for i in range(40)])
    assert all(o.ok for o in outcomes), [str(o.error) for o in outcomes if not o.ok][:3]
    assert [o.response.text for o in outcomes] == [f"echo: q{i}" for i in range(40)]
    assert mock.server.max_in_flight <= capacity
    limited = sum(o.rate_limited for o in outcomes)
    assert limited > 0 and limited == mock.server.rejected
    assert all(o.attempts == 1 + o.rate_limited for o in outcomes)
    aimd = engine.limits["openai-compatible"]
    assert aimd.halvings > 0 and aimd.limit < 12
    assert mock.server.requests == 40 + limited


def test_global_concurrency_holds_across_several_targets(mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(delay_ms=40)
    targets = [Target("openai-compatible", "a", mock.base_url), Target("openai-compatible", "b", mock.base_url),
               Target("ollama", "c", mock.base_url), Target("vllm", "d", mock.base_url)]
    jobs = [job(t, f"{t.model}{i}", index=n) for n, (i, t) in enumerate((i, t) for i in range(8) for t in targets)]
    engine = Engine(EngineOptions(concurrency=3), retry=fast_retry())
    outcomes = run_jobs(engine, jobs)
    assert all(o.ok for o in outcomes) and len(outcomes) == 32
    assert 2 <= mock.server.max_in_flight <= 3
    assert mock.server.requests == 32


def test_a_provider_limit_holds_that_provider_back_only(mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    limited_mock = mock_server(delay_ms=40)
    free_mock = mock_server(delay_ms=40)
    held = Target("openai-compatible", "a", limited_mock.base_url)
    free = Target("ollama", "b", free_mock.base_url)
    jobs = [job(held, f"a{i}", index=i) for i in range(16)] + [job(free, f"b{i}", index=16 + i) for i in range(16)]
    engine = Engine(EngineOptions(concurrency=8, provider_limits={"openai-compatible": 2}), retry=fast_retry())
    assert engine.limit_for("openai-compatible") == 2 and engine.limit_for("ollama") == 8
    outcomes = run_jobs(engine, jobs)
    assert all(o.ok for o in outcomes)
    assert limited_mock.server.max_in_flight <= 2
    assert free_mock.server.max_in_flight > 2  # the other provider was not held to 2
    assert limited_mock.server.requests == 16 and free_mock.server.requests == 16


def test_a_hanging_request_times_out_after_max_attempts(mock_server, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "aiohttp")
    mock = mock_server(delay_ms=10)
    target = Target("openai-compatible", "m", mock.base_url)
    engine = Engine(EngineOptions(concurrency=2, max_attempts=2), retry=fast_retry())
    outcomes = run_jobs(engine, [job(target, "please HANG here", timeout_s=0.3, index=0),
                                 job(target, "fine", timeout_s=5, index=1)])
    hung, fine = outcomes
    assert fine.ok and fine.attempts == 1
    assert not hung.ok and hung.attempts == 2
    assert hung.error.kind == "unavailable" and hung.error.reason == "timeout"
    assert engine.limits["openai-compatible"].in_flight == 0


@respx.mock
@pytest.mark.parametrize("status, kind", [(400, "refused"), (401, "auth"), (404, "refused")])
def test_client_errors_fail_at_once(monkeypatch, status, kind):
    monkeypatch.setenv("GROQ_API_KEY", "gk")
    route = respx.post("https://api.groq.com/openai/v1/chat/completions").mock(
        return_value=httpx.Response(status, json={"error": {"message": "no", "type": "invalid_request_error"}}))
    engine = Engine(EngineOptions(concurrency=2, max_attempts=4), retry=fast_retry())
    (outcome,) = run_jobs(engine, [job(parse_target("groq:a"), "hi")])
    assert not outcome.ok and outcome.attempts == 1 and outcome.rate_limited == 0
    assert outcome.error.kind == kind and outcome.error.status == status
    assert route.call_count == 1


@respx.mock
def test_server_errors_are_retried_and_then_given_up(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "gk")
    route = respx.post("https://api.groq.com/openai/v1/chat/completions").mock(
        return_value=httpx.Response(503, json={"error": {"message": "busy"}}))
    engine = Engine(EngineOptions(concurrency=1, max_attempts=3), retry=fast_retry())
    (outcome,) = run_jobs(engine, [job(parse_target("groq:a"), "hi")])
    assert not outcome.ok and outcome.attempts == 3 and outcome.error.status == 503
    assert route.call_count == 3


def test_stop_lets_the_requests_in_flight_finish_and_starts_nothing_new():
    provider = ScriptedProvider([], delay_s=0.05)
    target = Target("groq", "m", "http://127.0.0.1:9/v1")
    engine = Engine(EngineOptions(concurrency=2), provider_factory=lambda t, size: provider)
    seen: list[Outcome] = []

    def on_outcome(outcome: Outcome) -> None:
        seen.append(outcome)
        engine.stop()

    async def go() -> None:
        async with engine:
            await asyncio.wait_for(engine.run([job(target, f"p{i}", index=i) for i in range(20)], on_outcome), 30)

    asyncio.run(go())
    assert engine.stopping
    assert 1 <= len(seen) <= 2 and all(o.ok for o in seen)  # the two in flight at most, nothing after
    assert len(provider.starts) == len(seen)


def test_after_stop_a_job_waiting_for_a_slot_is_not_sent_nor_reported():
    provider = ScriptedProvider([], delay_s=0.05)
    targets = [Target("groq", "a", "http://127.0.0.1:9/v1"), Target("mistral", "b", "http://127.0.0.1:9/v1")]
    engine = Engine(EngineOptions(concurrency=1), provider_factory=lambda t, size: provider)
    seen: list[Outcome] = []

    def on_outcome(outcome: Outcome) -> None:
        seen.append(outcome)
        engine.stop()

    jobs = [job(t, f"p{i}", index=n) for n, (i, t) in enumerate((i, t) for i in range(5) for t in targets)]

    async def go() -> None:
        async with engine:
            await asyncio.wait_for(engine.run(jobs, on_outcome), 30)

    asyncio.run(go())
    # One request was in flight when stop() came; the other target's worker was waiting for the
    # global slot with a job in hand: that job must be neither sent nor reported.
    assert len(seen) == 1 and len(provider.starts) == 1


def test_after_stop_a_retry_is_not_waited_for_nor_sent():
    rate_limited = ProviderError("429", kind="unavailable", status=429, reason="status", retry_after=30)
    provider = ScriptedProvider([rate_limited], delay_s=0.01)
    target = Target("groq", "m", "http://127.0.0.1:9/v1")
    engine = Engine(EngineOptions(concurrency=1, max_attempts=3), retry=fast_retry(),
                    provider_factory=lambda t, size: provider)
    seen: list[Outcome] = []

    async def go() -> None:
        async with engine:
            task = asyncio.ensure_future(engine.run([job(target, "p0", index=0), job(target, "p1", index=1)],
                                                    seen.append))
            while not provider.starts:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the 429 is in; its Retry-After wait has begun
            engine.stop()
            await asyncio.wait_for(task, 10)  # well before the 30 s Retry-After

    asyncio.run(go())
    assert len(provider.starts) == 1  # no retry was sent after the stop
    (outcome,) = seen
    assert not outcome.ok and outcome.error.status == 429 and outcome.attempts == 1


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_a_server_that_is_not_there_is_retried_then_an_unavailable_error(monkeypatch, transport):
    import socket

    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", transport)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request: nobody listens there
    target = Target("openai-compatible", "m", f"http://127.0.0.1:{port}/v1")
    engine = Engine(EngineOptions(concurrency=1, max_attempts=3), retry=fast_retry())
    (outcome,) = run_jobs(engine, [job(target, "hi", timeout_s=5)])
    assert not outcome.ok and outcome.attempts == 3 and outcome.rate_limited == 0
    assert outcome.error.kind == "unavailable"
    if transport == "httpx":  # the SDK's aiohttp client reports a refused connection as a timeout
        assert outcome.error.reason == "connection"
