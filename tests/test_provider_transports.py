"""The provider layer's contract on both asynchronous transports, against a real loopback
server (the shipped mock model server of :mod:`harness.testing.mock_model`).

Model calls made many at a time go through the SDKs' aiohttp transport in production and
through the httpx bridge when ``ZE_BENCHMARKS_HTTP_TRANSPORT=httpx`` (what respx can answer).
Each case here runs on both, and on the synchronous client where it applies, and expects the
same answer or the same classified error: what the retry policy, the engine and the reports
see must not depend on the transport.
"""

from __future__ import annotations

import asyncio

import pytest

from harness.models.providers import ChatRequest, Message, ProviderError, RetryPolicy
from harness.models.providers.registry import Target, build_provider
from harness.testing.mock_model import MockConfig, ThreadedMock

TRANSPORTS = ["aiohttp", "httpx"]


@pytest.fixture
def serve():
    """``serve(**config)``: a mock model server on 127.0.0.1, stopped after the test."""
    started: list[ThreadedMock] = []

    def start(**config) -> ThreadedMock:
        mock = ThreadedMock(MockConfig(delay_ms=config.pop("delay_ms", 5.0), **config))
        started.append(mock)
        return mock

    yield start
    for mock in started:
        mock.close()


def provider_for(mock: ThreadedMock, *, max_attempts: int = 3):
    provider = build_provider(Target("openai-compatible", "mock-model", mock.base_url), max_connections=4)
    provider.retry = RetryPolicy(max_attempts=max_attempts, base_delay_s=0.001, max_delay_s=0.005)
    return provider


def ask(prompt: str = "hi", timeout_s: float = 20.0) -> ChatRequest:
    return ChatRequest(model="mock-model", messages=[Message(role="user", content=prompt)], timeout_s=timeout_s)


def acall(provider, request: ChatRequest, **kwargs):
    """``provider.achat`` on a fresh event loop; the error, if any, is returned, not raised."""

    async def go():
        try:
            return await provider.achat(request, **kwargs)
        except ProviderError as exc:
            return exc
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.fixture(params=TRANSPORTS)
def transport(request, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", request.param)
    return request.param


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_reads_the_same_on_either_transport(serve, transport, stream):
    mock = serve(answers={"hi": "hello there"})
    answer = acall(provider_for(mock), ask(), stream=stream)
    assert not isinstance(answer, ProviderError), answer
    assert answer.text == "hello there" and answer.model == "mock-model"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (12, 2)
    assert answer.latency_ms > 0
    if stream:
        assert answer.ttft_ms is not None and 0 <= answer.ttft_ms <= answer.latency_ms
    else:
        assert answer.ttft_ms is None


def test_the_synchronous_client_reads_the_same_answer(serve):
    mock = serve(answers={"hi": "hello there"})
    answer = provider_for(mock).chat(ask())
    assert answer.text == "hello there" and (answer.usage.input_tokens, answer.usage.output_tokens) == (12, 2)


@pytest.mark.parametrize("status, kind", [(401, "auth"), (403, "auth"), (400, "refused"), (404, "refused")])
def test_a_client_error_is_classed_alike_and_not_retried(serve, transport, status, kind):
    mock = serve(statuses=[status, status, status])
    error = acall(provider_for(mock), ask())
    assert isinstance(error, ProviderError) and (error.kind, error.status) == (kind, status)
    assert mock.server.requests == 1


@pytest.mark.parametrize("status", [429, 503])
def test_one_transient_failure_gives_its_status_and_retry_after_on_either_transport(serve, transport, status):
    mock = serve(statuses=[status], retry_after_s=7)
    error = acall(provider_for(mock), ask(), retry=False)
    assert isinstance(error, ProviderError)
    assert (error.kind, error.status, error.reason, error.retry_after) == ("unavailable", status, "status", 7.0)


def test_transient_failures_are_retried_by_the_policy_until_an_answer(serve, transport):
    mock = serve(statuses=[503, 500])
    answer = acall(provider_for(mock, max_attempts=3), ask())
    assert not isinstance(answer, ProviderError), answer
    assert answer.text == "echo: hi" and mock.server.requests == 3


def test_retries_give_up_after_the_policy_s_attempts_with_the_last_status(serve, transport):
    mock = serve(statuses=[500, 502, 503, 200])
    error = acall(provider_for(mock, max_attempts=3), ask())
    assert isinstance(error, ProviderError) and (error.kind, error.status) == ("unavailable", 503)
    assert "giving up after retries" in str(error) and mock.server.requests == 3


def test_a_connection_closed_without_an_answer_is_a_connection_failure(serve, transport):
    mock = serve(statuses=[0])
    error = acall(provider_for(mock), ask(), retry=False)
    assert isinstance(error, ProviderError) and error.kind == "unavailable"
    assert error.reason == "connection" and error.status is None


def test_a_stream_cut_after_its_first_chunk_is_a_connection_failure(serve, transport):
    mock = serve()
    error = acall(provider_for(mock), ask("CUT here"), stream=True, retry=False)
    assert isinstance(error, ProviderError) and error.kind == "unavailable"
    assert error.reason == "connection" and error.status is None


def test_an_answer_slower_than_the_timeout_is_a_timeout(serve, transport):
    mock = serve()
    error = acall(provider_for(mock), ask("HANG", timeout_s=0.5), retry=False)
    assert isinstance(error, ProviderError) and error.kind == "unavailable"
    assert error.reason == "timeout"
