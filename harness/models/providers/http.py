"""The HTTP client handed to the model SDKs.

The installed ``anthropic`` and ``openai`` SDKs speak ``httpx2`` and refuse an ``httpx``
client. We still want every model call to travel through a plain ``httpx.Client``: it is the
seam that respx mocks in tests (so the SDKs' own request building and response parsing
run), and the one place where connection limits and timeouts are set. This module gives the
SDKs an ``httpx2.Client`` whose transport forwards each request to an ``httpx.Client``.
Transport failures are translated back into ``httpx2`` exceptions so the SDKs classify them
(timeout, connection error) as they normally would. Response bodies are passed on as they
arrive, so a streamed answer (server-sent events) reaches the SDK chunk by chunk and the time
to its first token can be measured.

The asynchronous SDK clients (``AsyncAnthropic``, ``AsyncOpenAI``) send through the SDKs'
own aiohttp transport (``DefaultAioHttpClient``): with many requests in flight it costs a
fraction of the CPU of the ``httpx`` stack (figures in docs/PERFORMANCE.md). Setting
``ZE_BENCHMARKS_HTTP_TRANSPORT=httpx`` (the test suite does, so respx can answer), or handing
in an ``httpx.AsyncClient``, puts them on the same bridge as the synchronous clients instead.
Either way there is one connection pool per event loop, sized for the concurrency asked for.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

#: The most bytes one model answer may have on the wire (a real one is a few kilobytes; a
#: larger one is refused before it is parsed, so a hostile server cannot fill the memory).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


class ResponseTooLarge(Exception):
    """A model server's answer went past :data:`MAX_RESPONSE_BYTES`."""


#: The environment variable that picks the async clients' transport: ``aiohttp`` (the default
#: when it is installed) or ``httpx`` (the respx-mockable bridge).
TRANSPORT_ENV = "ZE_BENCHMARKS_HTTP_TRANSPORT"

if TYPE_CHECKING:  # imported lazily: this module is loaded only when a model is called
    import ssl

    import httpx
    import httpx2


def _translator():
    """``translate(exc, request)``: the ``httpx2`` exception for an ``httpx`` transport failure."""
    import httpx
    import httpx2

    errors = [
        (httpx.ConnectTimeout, httpx2.ConnectTimeout),
        (httpx.ReadTimeout, httpx2.ReadTimeout),
        (httpx.WriteTimeout, httpx2.WriteTimeout),
        (httpx.PoolTimeout, httpx2.PoolTimeout),
        (httpx.TimeoutException, httpx2.ReadTimeout),
        (httpx.ConnectError, httpx2.ConnectError),
        (httpx.ReadError, httpx2.ReadError),
        (httpx.WriteError, httpx2.WriteError),
        (httpx.RemoteProtocolError, httpx2.RemoteProtocolError),
        (httpx.TransportError, httpx2.ConnectError),
    ]

    def translate(exc: httpx.TransportError, request: httpx2.Request) -> Exception:
        for source, target in errors:
            if isinstance(exc, source):
                return target(str(exc) or type(exc).__name__, request=request)
        return exc

    return translate


def _bridge_transport_class():
    import httpx
    import httpx2

    translate = _translator()

    class BridgedStream(httpx2.SyncByteStream):
        """The body of an ``httpx`` response, read as it arrives, with its errors translated."""

        def __init__(self, response: httpx.Response, request: httpx2.Request) -> None:
            self.response = response
            self.request = request

        def __iter__(self):  # noqa: ANN204 - a generator of bytes
            received = 0
            try:
                # Content-Encoding is undone here by httpx (the header is not passed on).
                for chunk in self.response.iter_bytes():
                    received += len(chunk)
                    if received > MAX_RESPONSE_BYTES:
                        raise ResponseTooLarge(f"the answer is larger than {MAX_RESPONSE_BYTES} bytes")
                    yield chunk
            except httpx.TransportError as exc:
                raise translate(exc, self.request) from exc

        def close(self) -> None:
            self.response.close()

    class HttpxBridgeTransport(httpx2.BaseTransport):
        """An ``httpx2`` transport that sends through an ``httpx.Client``."""

        def __init__(self, client: httpx.Client, owns_client: bool = True) -> None:
            self.client = client
            self.owns_client = owns_client  # a client handed in by the caller stays open

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            body = request.read()
            timeout = request.extensions.get("timeout")
            out = self.client.build_request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                content=body,
            )
            if isinstance(timeout, dict):
                out.extensions["timeout"] = timeout
            try:
                response = self.client.send(out, stream=True)
            except httpx.TransportError as exc:
                raise translate(exc, request) from exc
            # Content-Encoding is undone by httpx; don't let httpx2 decode twice.
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
            return httpx2.Response(
                response.status_code,
                headers=headers,
                stream=BridgedStream(response, request),
                request=request,
            )

        def close(self) -> None:
            if self.owns_client:
                self.client.close()

    return HttpxBridgeTransport


def make_sdk_http_client(timeout_s: float = 120.0, transport_client: "httpx.Client | None" = None) -> "httpx2.Client":
    """An ``httpx2.Client`` for an SDK, sending through ``transport_client`` (default: a new ``httpx.Client``)."""
    import httpx
    import httpx2

    inner = transport_client or httpx.Client(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
        limits=httpx.Limits(max_connections=50, max_keepalive_connections=20),
        follow_redirects=False,
    )
    transport = _bridge_transport_class()(inner, owns_client=transport_client is None)
    return httpx2.Client(transport=transport, timeout=timeout_s)


def _async_bridge_transport_class():
    import httpx
    import httpx2

    translate = _translator()

    class AsyncBridgedStream(httpx2.AsyncByteStream):
        """The body of an ``httpx`` response, read as it arrives, with its errors translated."""

        def __init__(self, response: httpx.Response, request: httpx2.Request) -> None:
            self.response = response
            self.request = request

        async def __aiter__(self):  # noqa: ANN204 - an async generator of bytes
            received = 0
            try:
                async for chunk in self.response.aiter_bytes():
                    received += len(chunk)
                    if received > MAX_RESPONSE_BYTES:
                        raise ResponseTooLarge(f"the answer is larger than {MAX_RESPONSE_BYTES} bytes")
                    yield chunk
            except httpx.TransportError as exc:
                raise translate(exc, self.request) from exc

        async def aclose(self) -> None:
            await self.response.aclose()

    class AsyncHttpxBridgeTransport(httpx2.AsyncBaseTransport):
        """An ``httpx2`` async transport that sends through an ``httpx.AsyncClient``."""

        def __init__(self, client: httpx.AsyncClient, owns_client: bool = True) -> None:
            self.client = client
            self.owns_client = owns_client

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            timeout = request.extensions.get("timeout")
            out = self.client.build_request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                content=body,
            )
            if isinstance(timeout, dict):
                out.extensions["timeout"] = timeout
            try:
                response = await self.client.send(out, stream=True)
            except httpx.TransportError as exc:
                raise translate(exc, request) from exc
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
            return httpx2.Response(
                response.status_code,
                headers=headers,
                stream=AsyncBridgedStream(response, request),
                request=request,
            )

        async def aclose(self) -> None:
            if self.owns_client:
                await self.client.aclose()

    return AsyncHttpxBridgeTransport


def async_transport() -> str:
    """``aiohttp`` or ``httpx``: what :func:`make_sdk_async_http_client` sends through."""
    wanted = (os.environ.get(TRANSPORT_ENV) or "").strip().lower()
    if wanted == "httpx":
        return "httpx"
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        if wanted == "aiohttp":
            raise RuntimeError(f"{TRANSPORT_ENV}=aiohttp but aiohttp is not installed") from None
        return "httpx"
    return "aiohttp"


@functools.lru_cache(maxsize=1)
def no_trust_tls_context() -> "ssl.SSLContext":
    """A TLS context for a client that only speaks plain ``http://``: it verifies certificates
    and host names but trusts no authority, so a TLS connection it were ever asked to make
    would fail rather than go unverified. It costs a millisecond where loading the CA bundle
    costs tens."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname by default


@functools.lru_cache(maxsize=1)
def tls_context() -> "ssl.SSLContext":
    """The process's TLS context for the SDKs' aiohttp clients, verifying certificates against
    the default CA bundle as the SDKs do: created once (loading the CA bundle costs tens of
    milliseconds), shared by every client."""
    import httpx2

    return httpx2.create_ssl_context(verify=True)


def make_sdk_async_http_client(timeout_s: float = 120.0, transport_client: "httpx.AsyncClient | None" = None,
                               max_connections: int = 100, sdk: str = "openai",
                               base_url: str | None = None) -> "httpx2.AsyncClient":
    """An ``httpx2.AsyncClient`` for the async client of ``sdk`` (``openai`` or ``anthropic``)
    allowing ``max_connections`` connections at once, all kept alive, so that as many requests
    as that are in flight without waiting for the pool: the SDK's aiohttp client, or (with
    ``transport_client``, an ``httpx.AsyncClient``, or when :func:`async_transport` says
    ``httpx``) one that forwards to an ``httpx.AsyncClient``. The aiohttp client of an
    ``http://`` ``base_url`` gets :func:`no_trust_tls_context` (a TLS proxy, say, is then
    refused rather than trusted); any other gets the process's :func:`tls_context`."""
    import httpx2

    if transport_client is None and async_transport() == "aiohttp":
        # A client of a plain-http endpoint (a local model, a loopback server) never makes a
        # TLS connection: no redirect is followed and every URL is the base URL's.
        plain = base_url is not None and base_url.lower().startswith("http://")
        module = __import__(sdk)
        limits = httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        return module.DefaultAioHttpClient(timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
                                           limits=limits, follow_redirects=False,
                                           verify=no_trust_tls_context() if plain else tls_context())
    import httpx

    inner = transport_client or httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        follow_redirects=False,
    )
    transport = _async_bridge_transport_class()(inner, owns_client=transport_client is None)
    return httpx2.AsyncClient(transport=transport, timeout=timeout_s)


def body_transport_error(provider: str, exc: BaseException) -> Exception | None:
    """The :class:`~harness.models.providers.retry.RetryableError` for a transport failure raised while
    a streamed body is read (the SDKs turn failures of sending a request into their own errors,
    not those of a stream they iterate), or None when ``exc`` is no such failure."""
    import httpx2

    from harness.models.providers.failures import transport_error

    if isinstance(exc, httpx2.TimeoutException):
        return transport_error(provider, exc, fallback="timeout")
    if isinstance(exc, httpx2.TransportError):
        return transport_error(provider, exc, fallback="connection")
    return None
