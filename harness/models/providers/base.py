"""What every provider shares: the response cache, the retry policy, latency and cost.

A concrete provider only translates a :class:`ChatRequest` into its SDK's call and the SDK's
answer back into a :class:`ChatResponse` (``_send``), and says which of its SDK's errors are
worth retrying (``_classify_error``).

The asynchronous path (:meth:`Provider.achat`, for many calls in flight on one asyncio event
loop) goes through the SDKs' async clients with the same request and response types, the same
error classification, streaming with the time to the first token, and the same retry policy
waiting with ``asyncio.sleep``; a caller that measures each call (a load test) turns retries
off and gets every failure at once, with its status, reason and Retry-After.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.models.providers.cache import ResponseCache, cache_key
from harness.models.providers.retry import RetryableError, RetryPolicy
from harness.models.providers.types import ChatRequest, ChatResponse, ProviderError


class Provider:
    """A model API. Use :func:`harness.models.providers.get_provider` to build one."""

    name: str = ""
    env_var: str | None = None
    #: The SDK package the provider calls (``openai`` or ``anthropic``).
    sdk_module: str = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        http_client: Any = None,
        async_http_client: Any = None,
        max_connections: int = 100,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.retry = retry or RetryPolicy()
        self.cache = cache or ResponseCache()
        self._http_client = http_client  # an httpx.Client to send through (tests, custom limits)
        self._sdk: Any = None
        # The async path: an httpx.AsyncClient to send through (else one per event loop, with
        # ``max_connections`` connections: the most calls in flight without queueing).
        self._async_http_client = async_http_client
        self.max_connections = max_connections
        self._async_sdk: Any = None
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._async_urls: dict[str, str] = {}  # path -> absolute URL for _async_sdk (see _async_url)

    # -- for subclasses -------------------------------------------------------------------
    def _sdk_client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments every SDK client is built with: our key, our transport, no SDK retries."""
        from harness.models.providers.http import make_sdk_http_client

        kwargs: dict[str, Any] = {
            "api_key": self.api_key,
            "max_retries": 0,  # our RetryPolicy is the only retry policy
            "http_client": make_sdk_http_client(transport_client=self._http_client),
        }
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return kwargs

    def _send(self, request: ChatRequest) -> ChatResponse:
        """One attempt. Raise :class:`RetryableError` for transient failures."""
        raise NotImplementedError

    # -- public ---------------------------------------------------------------------------
    def close(self) -> None:
        """Release the SDK client's connections (a later call opens new ones)."""
        if self._sdk is not None:
            try:
                self._sdk.close()
            finally:
                self._sdk = None

    def __enter__(self) -> "Provider":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat(
        self,
        request: ChatRequest,
        *,
        repeat_index: int = 0,
        use_cache: bool = False,
        deadline: float | None = None,
        record: bool | None = None,
    ) -> ChatResponse:
        """Send ``request`` and return the model's answer.

        ``use_cache`` replays: the answer stored for the same request and repeat index is
        returned instead of calling the model, marked ``cached=True`` with the cost, usage and
        latency of the original call (nothing new was spent or waited for). ``record`` writes a
        live answer to the cache so that a later replay finds it (default: when ``use_cache``).
        ``deadline`` (a ``time.monotonic()`` value) stops retries that would wait past it.
        """
        key = cache_key(self.name, self.base_url, request, repeat_index)
        if use_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return dataclasses.replace(hit, cached=True)
        try:
            response = self.retry.call(lambda: self._timed_send(request), deadline=deadline)
        except RetryableError as exc:
            raise ProviderError(f"{self.name}: giving up after retries: {exc}", kind="unavailable",
                                status=exc.status, reason=exc.reason, retry_after=exc.retry_after,
                                network=exc.network) from exc
        if use_cache if record is None else record:
            self.cache.put(key, response)
        return response

    def _timed_send(self, request: ChatRequest) -> ChatResponse:
        start = time.monotonic()
        response = self._send(request)
        response.latency_ms = (time.monotonic() - start) * 1000.0
        from harness.models.pricing import cost_for_usage

        response.cost_usd = cost_for_usage(self.name, response.model or request.model, response.usage, request_model=request.model)
        return response

    #: True when ``achat(..., stream=True)`` can stream this provider's answers (load tests
    #: measure the time to the first token).
    supports_streaming: bool = False

    # -- asynchronous calls (many in flight on one event loop) ----------------------------------
    def _sdk_async_client_kwargs(self) -> dict[str, Any]:
        """:meth:`_sdk_client_kwargs` for an async SDK client: our key, our async transport."""
        from harness.models.providers.http import make_sdk_async_http_client

        kwargs: dict[str, Any] = {
            "api_key": self.api_key,
            "max_retries": 0,
            "http_client": make_sdk_async_http_client(transport_client=self._async_http_client,
                                                      max_connections=self.max_connections, sdk=self.sdk_module,
                                                      base_url=self.base_url),
        }
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return kwargs

    def _new_async_sdk(self) -> Any:
        """A new async SDK client (``AsyncAnthropic``, ``AsyncOpenAI``)."""
        raise NotImplementedError

    def _aclient(self) -> Any:
        """The async SDK client of the running event loop. Connections belong to the loop that
        opened them, so a call on another loop (a later ``asyncio.run``) gets a new client."""
        loop = asyncio.get_running_loop()
        if self._async_sdk is None or self._async_loop is not loop:
            self._async_sdk = self._new_async_sdk()
            self._async_loop = loop
            self._async_urls = {}
        return self._async_sdk

    def _async_url(self, client: Any, path: str) -> str:
        """``path`` joined to the async SDK client's base URL the way the SDK joins them, once
        per client: given the absolute URL, the SDK takes it as is instead of parsing and
        joining the two on every call (about 2% of a call's CPU)."""
        url = self._async_urls.get(path)
        if url is None:
            base = client.base_url
            url = self._async_urls[path] = str(base.copy_with(raw_path=base.raw_path + path.lstrip("/").encode()))
        return url

    async def aprepare(self) -> None:
        """Set up the async SDK client of the running event loop now (the SDK's import, the
        client), so that a caller who times its first call times the call alone."""
        self._aclient()

    async def _asend(self, request: ChatRequest) -> ChatResponse:
        """One asynchronous attempt. Raise :class:`RetryableError` for transient failures."""
        raise NotImplementedError

    async def _asend_stream(self, request: ChatRequest) -> ChatResponse:
        """One asynchronous streamed attempt; sets ``ttft_ms`` from the moment the request is sent."""
        raise NotImplementedError

    async def achat(
        self,
        request: ChatRequest,
        *,
        stream: bool = False,
        retry: bool = True,
        deadline: float | None = None,
        repeat_index: int = 0,
        use_cache: bool = False,
        record: bool | None = None,
    ) -> ChatResponse:
        """:meth:`chat` as a coroutine; with ``stream``, a streamed call whose response also has
        ``ttft_ms``, the time from sending the request to the first token (None when the answer
        had none).

        The request and response types, costs, error classification and caching (``use_cache``,
        ``record``, ``repeat_index``; never for streamed calls) are those of the synchronous
        calls. With ``retry`` the provider's :class:`RetryPolicy` retries transient failures,
        waiting with ``asyncio.sleep`` (Retry-After honoured, ``deadline`` a ``time.monotonic()``
        value as for :meth:`chat`); without it, one attempt is made and a transient failure
        raises at once a :class:`ProviderError` of kind ``unavailable`` carrying its ``status``,
        ``reason`` (``timeout``, ``connection``, ``status``) and ``retry_after``.
        """
        if stream and not self.supports_streaming:
            raise ProviderError(f"{self.name}: streaming is not supported")
        key = None
        if not stream and (use_cache or record):
            key = cache_key(self.name, self.base_url, request, repeat_index)
            if use_cache:
                hit = self.cache.get(key)
                if hit is not None:
                    return dataclasses.replace(hit, cached=True)

        async def attempt() -> ChatResponse:
            return await self._atimed_send(request, stream)

        try:
            if retry:
                response = await self.retry.acall(attempt, deadline=deadline)
            else:
                response = await attempt()
        except RetryableError as exc:
            message = f"{self.name}: giving up after retries: {exc}" if retry else str(exc)
            raise ProviderError(message, kind="unavailable", status=exc.status, reason=exc.reason,
                                retry_after=exc.retry_after, network=exc.network) from exc
        if key is not None and (use_cache if record is None else record):
            self.cache.put(key, response)
        return response

    async def _atimed_send(self, request: ChatRequest, stream: bool) -> ChatResponse:
        self._aclient()  # the SDK's import and client set-up are not part of the call's latency
        start = time.monotonic()
        response = await (self._asend_stream(request) if stream else self._asend(request))
        response.latency_ms = (time.monotonic() - start) * 1000.0
        from harness.models.pricing import cost_for_usage

        response.cost_usd = cost_for_usage(self.name, response.model or request.model, response.usage, request_model=request.model)
        return response

    async def aclose(self) -> None:
        """Release the async SDK client's connections (a later call opens new ones)."""
        client, self._async_sdk, self._async_loop = self._async_sdk, None, None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> "Provider":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def answer_field(obj: Any, key: str) -> Any:
    """``obj.key`` of an SDK object, or ``obj[key]`` of the same answer read as JSON (the async
    calls read answers as dicts, the sync ones get the SDKs' typed objects)."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


@contextmanager
def sdk_errors(provider: str, sdk: Any) -> Iterator[None]:
    """Map what one call through an SDK raises to the provider layer's errors, as httpx maps
    transport errors: an SDK error (``AnthropicError``, ``OpenAIError``) through
    :func:`classify_sdk_error`, and a transport failure raised while a streamed body is read
    (the SDKs wrap failures of sending a request, not those of a stream they iterate) through
    :func:`harness.models.providers.http.body_transport_error`. Anything else passes unchanged. The
    block may ``await``."""
    base = getattr(sdk, "AnthropicError", None) or sdk.OpenAIError
    try:
        yield
    except base as exc:
        raise classify_sdk_error(provider, exc, sdk) from exc
    except Exception as exc:
        from harness.models.providers.http import body_transport_error

        translated = body_transport_error(provider, exc)
        if translated is None:
            raise
        raise translated from exc


def classify_sdk_error(provider: str, exc: Exception, sdk: Any) -> Exception:
    """Map an anthropic/openai SDK exception to :class:`RetryableError` or :class:`ProviderError`.

    Both SDKs share the same exception names (``APIStatusError``, ``APITimeoutError``,
    ``APIConnectionError``), which is what makes one function enough. A transport failure is
    classed by what caused it (:func:`harness.models.providers.failures.transport_error`): a refused
    connection is not a timeout, whatever the SDK's transport called it.
    """
    from harness.models.providers.failures import transport_error
    from harness.models.providers.http import ResponseTooLarge
    from harness.models.providers.retry import is_retryable_status, parse_retry_after

    cause: BaseException | None = exc
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:  # a chain may loop back on itself
        seen.add(id(cause))
        if isinstance(cause, ResponseTooLarge):
            # What the model sent, not an outage: not retried, and the run's, not the provider's.
            return ProviderError(f"{provider}: {cause}", kind="refused")
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, sdk.APITimeoutError):
        return transport_error(provider, exc, fallback="timeout")
    if isinstance(exc, sdk.APIConnectionError):
        return transport_error(provider, exc, fallback="connection")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        headers = dict(exc.response.headers) if exc.response is not None else {}
        message = _error_message(exc)
        if is_retryable_status(status):
            return RetryableError(
                f"{provider}: HTTP {status}: {message}", retry_after=parse_retry_after(headers), status=status,
                reason="status",
            )
        auth = status in (401, 403)
        hint = " (check the API key)" if auth else ""
        return ProviderError(f"{provider}: HTTP {status}{hint}: {message}", kind="auth" if auth else "refused",
                             status=status)
    return ProviderError(f"{provider}: {type(exc).__name__}: {exc}")


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if isinstance(err, str):
            return err[:500]
        if body.get("message"):
            return str(body["message"])[:500]
    return str(getattr(exc, "message", exc))[:500]
