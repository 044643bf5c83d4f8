"""What a failed model call was: one classification for every caller (load tests, datasets).

:func:`error_class` names the failure of a call with one of :data:`ERROR_CLASSES`:

- ``connect``: no connection could be opened (refused: nothing listens there; the host or the
  network unreachable; the TLS handshake failed);
- ``dns``: the host name of the URL could not be resolved;
- ``timeout``: no answer in time (the client's timeout, a connect timeout, HTTP 408);
- ``connection``: a connection that broke (reset, closed before the answer was complete);
- ``429``, ``5xx``: the HTTP statuses of an overloaded or failing server;
- ``auth``: credentials refused (401, 403); ``4xx``: another refusal of the request;
- ``other``: anything else (an answer that could not be read, a bug).

A transport failure is classed by the innermost error of its chain (the operating system's,
or the HTTP client's), not by the name the SDK gives it on the way out: the openai SDK's
aiohttp client reports a refused connection as a connect *timeout*, which it is not.
:func:`transport_error` builds the retryable error of such a failure, whose message names the
URL that could not be reached. Nothing here imports an SDK or an HTTP client.
"""

from __future__ import annotations

import errno
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harness.models.providers.retry import RetryableError
from harness.models.providers.types import ProviderError

#: The failure classes of :func:`error_class`, in the order they are reported.
ERROR_CLASSES = ("connect", "dns", "timeout", "connection", "429", "5xx", "auth", "4xx", "other")

#: The classes of a request that never reached a server: nothing measured the model.
UNREACHABLE = frozenset({"connect", "dns"})

#: The classes :func:`transport_error` gives (``ProviderError.network``).
NETWORK_CLASSES = ("connect", "dns", "timeout", "connection")

# errno values of a connection that could not be opened (besides ECONNREFUSED).
_CONNECT_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN",
                                      "EADDRNOTAVAIL") if hasattr(errno, name))

# Modules whose exception types are read by name (never imported here).
_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "aiohttp", "openai", "anthropic", "h11")


def error_class(exc: BaseException) -> str:
    """The class of :data:`ERROR_CLASSES` of the failure ``exc`` of a model call (a
    :class:`ProviderError`, or a ``TimeoutError`` of a caller's own deadline)."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ProviderError):
        network = getattr(exc, "network", None)
        if network in UNREACHABLE:
            return network
        status = exc.status
        if status == 429:
            return "429"
        if status is not None and 500 <= status <= 599:
            return "5xx"
        if status == 408 or exc.reason == "timeout" or network == "timeout":
            return "timeout"
        if exc.reason == "connection" or network == "connection":
            return "connection"
        if exc.kind == "auth" or status in (401, 403):
            return "auth"
        if status is not None and 400 <= status <= 499:
            return "4xx"
    return "other"


def _next(exc: BaseException) -> BaseException | None:
    """What ``exc`` was raised from: its cause, else its context unless suppressed, else an
    error it wraps as its argument (httpcore wraps the operating system's error so)."""
    if exc.__cause__ is not None:
        return exc.__cause__
    if not exc.__suppress_context__ and exc.__context__ is not None:
        return exc.__context__
    return next((arg for arg in exc.args if isinstance(arg, BaseException)), None)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from, outermost first."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 32:
        seen.add(id(current))
        chain.append(current)
        current = _next(current)
    return chain


def _names(exc: BaseException) -> set[str]:
    return {klass.__name__ for klass in type(exc).__mro__}


def _client_type(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.split(".")[0] in _CLIENT_MODULES


def _os_detail(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _one(exc: BaseException) -> tuple[str, str] | None:
    """(class, detail) of one error of a chain, or None when it does not tell."""
    if isinstance(exc, BaseExceptionGroup):  # every address of a host tried: the first that tells
        return next((found for sub in exc.exceptions if (found := classify_transport(sub)) is not None), None)
    if isinstance(exc, socket.gaierror):
        return "dns", _os_detail(exc)
    names = _names(exc)
    if "ClientConnectorDNSError" in names:
        return "dns", str(exc) or "name not resolved"
    if isinstance(exc, TimeoutError) or ("TimeoutException" in names and _client_type(exc)):
        return "timeout", str(exc) or "timed out"
    if isinstance(exc, ssl.SSLError) or "ClientSSLError" in names:
        return "connect", f"TLS handshake failed: {exc}"
    if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == errno.ECONNREFUSED):
        return "connect", "connection refused"
    if isinstance(exc, OSError) and exc.errno in _CONNECT_ERRNOS:
        return "connect", _os_detail(exc)
    if isinstance(exc, ConnectionError):  # reset, aborted, a broken pipe
        return "connection", _os_detail(exc)
    if _client_type(exc):
        if names & {"ClientConnectorError", "ConnectError"}:
            return "connect", str(exc) or "cannot connect"
        if names & {"ClientConnectionError", "ClientPayloadError", "RemoteProtocolError", "ReadError", "WriteError"}:
            return "connection", str(exc) or type(exc).__name__
    return None


def classify_transport(exc: BaseException) -> tuple[str, str] | None:
    """(class, detail) of a transport failure: its innermost error that tells (class one of
    :data:`NETWORK_CLASSES`), or None when no error of the chain does."""
    for cause in reversed(_chain(exc)):
        found = _one(cause)
        if found is not None:
            return found
    return None


def safe_url(url: str) -> str:
    """``url`` without user information, query or fragment (they may hold credentials)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if not host:
        return ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def failed_url(exc: BaseException) -> str | None:
    """The URL the failed request was sent to (redacted), from the first error of the chain
    that carries its request; else ``host:port`` of an aiohttp connection; else None."""
    chain = _chain(exc)
    for cause in chain:
        try:
            request: Any = getattr(cause, "request", None)
        except Exception:  # noqa: BLE001 - httpx raises when an error has no request
            request = None
        url = getattr(request, "url", None)
        if url is not None:
            safe = safe_url(str(url))
            if safe:
                return safe
    for cause in chain:
        key = cause.args[0] if cause.args and "ClientConnectorError" in _names(cause) else None
        host, port = getattr(key, "host", None), getattr(key, "port", None)
        if host:
            return f"{host}:{port}" if port else str(host)
    return None


def transport_error(provider: str, exc: BaseException, *, fallback: str) -> RetryableError:
    """The :class:`RetryableError` of a transport failure ``exc``: ``reason`` ``timeout`` or
    ``connection`` (the retry policy's), ``network`` its class of :data:`NETWORK_CLASSES`, and a
    message naming the URL when nothing could be reached. ``fallback`` (``timeout`` or
    ``connection``) is the class when no error of the chain tells (what the SDK called it)."""
    found = classify_transport(exc)
    network, detail = found if found is not None else (fallback, str(exc) or type(exc).__name__)
    url = failed_url(exc)
    at = f" at {url}" if url else ""
    if network == "timeout":
        return RetryableError(f"{provider}: request timed out", reason="timeout", network="timeout")
    if network == "dns":
        message = f"{provider}: DNS lookup failed{' for ' + url if url else ''} ({detail})"
    elif network == "connect":
        message = (f"{provider}: connection refused{at}" if detail == "connection refused"
                   else f"{provider}: cannot connect{' to ' + url if url else ''}: {detail}")
    else:
        message = f"{provider}: connection error{at}: {detail}"
    return RetryableError(message, reason="connection", network=network)
