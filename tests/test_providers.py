"""The provider layer against respx-mocked Anthropic and OpenAI HTTP APIs (the SDKs' own code runs)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
import respx

from harness.models.providers import (
    Message,
    MissingCredentialsError,
    ProviderError,
    ResponseCache,
    RetryPolicy,
    ToolCall,
    get_provider,
    has_credentials,
)
from support.providers import ANTHROPIC_URL, OPENAI_URL, READ_TOOL, anthropic_body, openai_body, request


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make(tmp_path, sleeps):
    def _make(name, **kwargs):
        kwargs.setdefault("retry", RetryPolicy(max_attempts=4, sleep=sleeps))
        kwargs.setdefault("cache", ResponseCache(tmp_path / "cache"))
        kwargs.setdefault("api_key", "test-key")
        return get_provider(name, **kwargs)

    return _make


@respx.mock
def test_anthropic_response_is_normalised_with_tool_calls_cache_tokens_and_cost(make):
    route = respx.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(
            200,
            json=anthropic_body(
                [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "app.py"}},
                ],
                stop="tool_use",
                usage={
                    "input_tokens": 1000,
                    "output_tokens": 200,
                    "cache_read_input_tokens": 4000,
                    "cache_creation_input_tokens": 500,
                },
            ),
        )
    )
    provider = make("anthropic")
    resp = provider.chat(request(system="be careful"))
    assert resp.text == "Let me look."
    assert resp.tool_calls == [
        ToolCall(id="toolu_1", name="read_file", arguments={"path": "app.py"}, raw_arguments='{"path": "app.py"}')
    ]
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (1000, 200)
    assert (resp.usage.cache_read_tokens, resp.usage.cache_write_tokens) == (4000, 500)
    assert resp.stop_reason == "tool_use"
    # Sonnet 4.6: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    assert resp.cost_usd == pytest.approx((1000 * 3 + 200 * 15 + 4000 * 0.3 + 500 * 3.75) / 1e6)
    assert resp.cached is False and resp.latency_ms >= 0
    sent = json.loads(route.calls.last.request.content)
    assert sent["tools"][0]["input_schema"] == READ_TOOL.parameters
    assert sent["system"][0]["text"] == "be careful"
    assert route.calls.last.request.headers["authorization"] == "Bearer test-key"


@respx.mock
def test_anthropic_tool_results_of_one_turn_travel_in_one_user_message(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "done"}])))
    history = [
        Message(role="user", content="go"),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall("t1", "read_file", {"path": "a"}), ToolCall("t2", "read_file", {"path": "b"})],
        ),
        Message(role="tool", content="A", tool_call_id="t1"),
        Message(role="tool", content="no such file", tool_call_id="t2", is_error=True),
    ]
    make("anthropic").chat(request(messages=history))
    sent = json.loads(route.calls.last.request.content)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    results = sent[2]["content"]
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in results] == [("t1", False), ("t2", True)]
    assert [b["id"] for b in sent[1]["content"] if b["type"] == "tool_use"] == ["t1", "t2"]


@respx.mock
def test_openai_tool_calls_malformed_arguments_and_cached_prompt_tokens(make):
    route = respx.post(OPENAI_URL).mock(
        return_value=httpx.Response(
            200,
            json=openai_body(
                {
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "x.py"}'}},
                        {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": '}},
                    ],
                },
                finish="tool_calls",
                usage={
                    "prompt_tokens": 1000,
                    "completion_tokens": 100,
                    "total_tokens": 1100,
                    "prompt_tokens_details": {"cached_tokens": 600},
                },
            ),
        )
    )
    resp = make("openai").chat(request(model="gpt-4o-mini"))
    assert [c.arguments for c in resp.tool_calls] == [{"path": "x.py"}, None]
    assert resp.tool_calls[1].raw_arguments == '{"path": '
    assert (resp.usage.input_tokens, resp.usage.cache_read_tokens, resp.usage.output_tokens) == (400, 600, 100)
    assert resp.stop_reason == "tool_calls"
    assert resp.cost_usd == pytest.approx((400 * 0.15 + 600 * 0.075 + 100 * 0.6) / 1e6)
    sent = json.loads(route.calls.last.request.content)
    assert sent["tools"][0] == {
        "type": "function",
        "function": {"name": "read_file", "description": "Read a file", "parameters": READ_TOOL.parameters},
    }
    assert sent["max_completion_tokens"] == 4096


@respx.mock
def test_openai_history_replays_tool_calls_and_marks_error_results(make):
    route = respx.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=openai_body({"content": "ok"})))
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", None, raw_arguments="{bad")]),
        Message(role="tool", content="arguments were not valid JSON", tool_call_id="c1", is_error=True),
    ]
    make("openai").chat(request(model="gpt-4o-mini", messages=history, system="sys"))
    sent = json.loads(route.calls.last.request.content)["messages"]
    assert sent[0] == {"role": "system", "content": "sys"}
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{bad"
    assert sent[3]["role"] == "tool" and sent[3]["content"].startswith("ERROR:")


@respx.mock
def test_openrouter_uses_its_base_url_and_key(make, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    route = respx.post("https://openrouter.ai/api/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_body({"content": "hi"}, model="anthropic/claude-sonnet-4.5"))
    )
    resp = make("openrouter", api_key=None).chat(request(model="anthropic/claude-sonnet-4.5"))
    assert resp.text == "hi"
    assert route.calls.last.request.headers["authorization"] == "Bearer or-key"
    assert json.loads(route.calls.last.request.content)["tools"][0]["function"]["parameters"] == READ_TOOL.parameters
    assert resp.cost_usd == pytest.approx((50 * 3 + 10 * 15) / 1e6)


@respx.mock
def test_openai_compatible_server_needs_no_key_and_unknown_model_costs_none(make, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    respx.post("http://127.0.0.1:9999/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_body({"content": "local"}, model="smollm2"))
    )
    provider = make("openai-compatible", api_key=None, base_url="http://127.0.0.1:9999/v1")
    resp = provider.chat(request(model="smollm2"))
    assert resp.text == "local"
    assert resp.cost_usd is None


@respx.mock
def test_only_openai_is_sent_the_sdk_s_platform_headers(make, monkeypatch):
    from harness.models.providers.openai_provider import SDK_PLATFORM_HEADERS

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    local = respx.post("http://127.0.0.1:9999/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_body({"content": "local"}, model="smollm2")))
    official = respx.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_body({"content": "hi"}, model="gpt-4o-mini")))
    make("openai-compatible", api_key=None, base_url="http://127.0.0.1:9999/v1").chat(request(model="smollm2"))
    make("openai", api_key=None).chat(request(model="gpt-4o-mini"))
    sent = local.calls.last.request.headers
    assert not [h for h in SDK_PLATFORM_HEADERS if h in sent]
    assert sent["content-type"] == "application/json" and sent["user-agent"].startswith("OpenAI/Python")
    assert all(h in official.calls.last.request.headers for h in SDK_PLATFORM_HEADERS)


@respx.mock
def test_429_waits_as_long_as_retry_after_says_then_succeeds(make, sleeps):
    route = respx.post(ANTHROPIC_URL).mock(
        side_effect=[
            httpx.Response(429, headers={"retry-after": "7"}, json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
            httpx.Response(200, json=anthropic_body([{"type": "text", "text": "ok"}])),
        ]
    )
    resp = make("anthropic").chat(request())
    assert resp.text == "ok"
    assert route.call_count == 2
    assert len(sleeps.calls) == 1 and 7.0 <= sleeps.calls[0] <= 7.0 * 1.1


@respx.mock
def test_retry_after_as_http_date_is_honoured(make, sleeps):
    from email.utils import formatdate
    import time

    when = formatdate(time.time() + 30, usegmt=True)
    respx.post(OPENAI_URL).mock(
        side_effect=[
            httpx.Response(429, headers={"retry-after": when}, json={"error": {"message": "rate"}}),
            httpx.Response(200, json=openai_body({"content": "ok"})),
        ]
    )
    make("openai").chat(request(model="gpt-4o-mini"))
    assert len(sleeps.calls) == 1 and 25 <= sleeps.calls[0] <= 34


@respx.mock
def test_5xx_is_retried_with_growing_backoff_then_succeeds(make, sleeps):
    route = respx.post(OPENAI_URL).mock(
        side_effect=[
            httpx.Response(500, json={"error": {"message": "boom"}}),
            httpx.Response(503, json={"error": {"message": "busy"}}),
            httpx.Response(200, json=openai_body({"content": "ok"})),
        ]
    )
    assert make("openai").chat(request(model="gpt-4o-mini")).text == "ok"
    assert route.call_count == 3
    assert len(sleeps.calls) == 2
    # Full jitter within [ceiling/2, ceiling]: 1st wait <= 1 s, 2nd wait in [1, 2] s.
    assert 0.5 <= sleeps.calls[0] <= 1.0 and 1.0 <= sleeps.calls[1] <= 2.0


@respx.mock
def test_persistent_5xx_gives_up_after_bounded_attempts(make, sleeps):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}))
    with pytest.raises(ProviderError, match="529") as failed:
        make("anthropic").chat(request())
    assert route.call_count == 4
    assert len(sleeps.calls) == 3
    # The provider's failure, not the caller's: a run that ends on it is error/infra.
    assert (failed.value.kind, failed.value.status, failed.value.infrastructure) == ("unavailable", 529, True)


@respx.mock
def test_connection_errors_and_timeouts_are_retried(make, sleeps):
    route = respx.post(OPENAI_URL).mock(
        side_effect=[
            httpx.ConnectError("refused"),
            httpx.ReadTimeout("slow"),
            httpx.Response(200, json=openai_body({"content": "ok"})),
        ]
    )
    assert make("openai").chat(request(model="gpt-4o-mini")).text == "ok"
    assert route.call_count == 3


@respx.mock
def test_client_errors_fail_at_once_with_the_api_message(make, sleeps):
    route = respx.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens too large"}})
    )
    with pytest.raises(ProviderError, match="max_tokens too large") as failed:
        make("anthropic").chat(request())
    assert route.call_count == 1 and sleeps.calls == []
    assert (failed.value.kind, failed.value.infrastructure) == ("refused", False)


@respx.mock
def test_a_replay_keeps_the_original_cost_and_other_repeat_index_calls_the_model(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "A"}])))
    provider = make("anthropic")
    first = provider.chat(request(), repeat_index=0, use_cache=True)
    again = provider.chat(request(), repeat_index=0, use_cache=True)
    assert route.call_count == 1
    assert first.cached is False and first.cost_usd > 0
    assert again.cached is True and again.text == "A"
    assert (again.cost_usd, again.usage, again.latency_ms) == (first.cost_usd, first.usage, first.latency_ms)
    provider.chat(request(), repeat_index=1, use_cache=True)
    assert route.call_count == 2
    provider.chat(request(), repeat_index=0, use_cache=False)
    assert route.call_count == 3
    provider.chat(request(temperature=0.5), repeat_index=0, use_cache=True)
    assert route.call_count == 4


@respx.mock
def test_by_default_every_call_goes_to_the_model_and_record_keeps_it_for_a_replay(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "A"}])))
    provider = make("anthropic")
    assert provider.chat(request()).cached is False and provider.chat(request()).cached is False
    assert route.call_count == 2
    assert provider.chat(request(), use_cache=True).cached is False  # nothing recorded without record=True
    provider.chat(request(system="s"), record=True)
    assert provider.chat(request(system="s"), use_cache=True).cached is True
    assert route.call_count == 4


@respx.mock
def test_cache_is_keyed_by_provider_base_url(make, tmp_path):
    respx.post("http://127.0.0.1:1/v1/chat/completions").mock(return_value=httpx.Response(200, json=openai_body({"content": "one"})))
    route2 = respx.post("http://127.0.0.1:2/v1/chat/completions").mock(return_value=httpx.Response(200, json=openai_body({"content": "two"})))
    make("openai-compatible", base_url="http://127.0.0.1:1/v1").chat(request(model="m"))
    assert make("openai-compatible", base_url="http://127.0.0.1:2/v1").chat(request(model="m")).text == "two"
    assert route2.call_count == 1


def test_missing_credentials_name_the_environment_variable(monkeypatch, tmp_path):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    for name, var in (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"), ("openrouter", "OPENROUTER_API_KEY")):
        assert has_credentials(name) is False
        with pytest.raises(MissingCredentialsError, match=var) as info:
            get_provider(name)
        assert info.value.env_var == var
    assert has_credentials("openai-compatible") is True
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert has_credentials("anthropic") is True


def test_unknown_provider_is_a_clear_error():
    with pytest.raises(ProviderError, match="unknown provider 'gemini'"):
        get_provider("gemini")


def test_importing_the_provider_layer_does_not_import_sdks():
    code = "import sys, harness.models.providers, harness.models.pricing; print(any(m in sys.modules for m in ('anthropic', 'openai', 'httpx2')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@respx.mock
def test_anthropic_temperature_is_sent_only_to_models_that_accept_it(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "x"}])))
    provider = make("anthropic")
    provider.chat(request(model="claude-3-5-haiku-20241022", temperature=0.2))
    assert json.loads(route.calls.last.request.content)["temperature"] == 0.2
    provider.chat(request(model="claude-opus-4-7", temperature=0.2))
    assert "temperature" not in json.loads(route.calls.last.request.content)


@respx.mock
def test_an_injected_http_client_is_used_and_left_open(make):
    route = respx.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=openai_body({"content": "ok"})))
    client = httpx.Client(headers={"x-probe": "1"})
    provider = make("openai", http_client=client)
    assert provider.chat(request(model="gpt-4o-mini")).text == "ok"
    provider.close()
    assert not client.is_closed
    assert route.calls.last.request.headers["x-probe"] == "1"


def test_retry_after_parsing():
    from harness.models.providers.retry import parse_retry_after

    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_a_server_asking_to_wait_too_long_is_not_waited_for():
    from harness.models.providers.retry import RetryableError

    waits: list[float] = []
    policy = RetryPolicy(max_retry_after_s=60, sleep=waits.append)
    attempts = []

    def attempt():
        attempts.append(1)
        raise RetryableError("429", retry_after=3600)

    with pytest.raises(RetryableError):
        policy.call(attempt)
    assert len(attempts) == 1 and waits == []


def test_retries_stop_before_waiting_past_the_deadline():
    import time as _time

    from harness.models.providers.retry import RetryableError

    waits: list[float] = []
    policy = RetryPolicy(sleep=waits.append)

    def attempt():
        raise RetryableError("503", retry_after=30)

    with pytest.raises(RetryableError):
        policy.call(attempt, deadline=_time.monotonic() + 5)
    assert waits == []


@respx.mock
def test_a_corrupt_cache_entry_is_a_miss(make, tmp_path):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "A"}])))
    provider = make("anthropic")
    provider.chat(request(), use_cache=True)
    for entry in (tmp_path / "cache").rglob("*.json"):
        entry.write_text("{not json")
    assert provider.chat(request(), use_cache=True).cached is False
    assert route.call_count == 2


@respx.mock
def test_a_cache_entry_is_readable_by_its_owner_only_and_leaves_no_temporary_file(make, tmp_path):
    respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "A"}])))
    make("anthropic").chat(request(), use_cache=True)
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].suffix == ".json" and not files[0].name.startswith(".")
    assert files[0].stat().st_mode & 0o777 == 0o600


@respx.mock
def test_anthropic_prompt_caching_marks_the_prefix_unless_turned_off(make):
    route = respx.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_body([{"type": "text", "text": "x"}])))
    provider = make("anthropic")
    provider.chat(request(system="sys"))
    sent = json.loads(route.calls.last.request.content)
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert sent["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    provider.chat(request(system="sys", prompt_cache=False))
    assert "cache_control" not in route.calls.last.request.content.decode()
