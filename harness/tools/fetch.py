"""``fetch_url``: HTTP(S) GET with a timeout and a size cap, refusing non-public addresses.

The host is resolved first and every address it resolves to must be globally routable:
loopback, private, link-local (cloud metadata), multicast, reserved and unspecified addresses
are refused. Redirects are followed by hand (at most :data:`MAX_REDIRECTS`) so each hop is
checked the same way. A name that resolves differently between the check and the connection
(DNS rebinding) is not defended against beyond this check.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Callable
from urllib.parse import urljoin, urlsplit

MAX_REDIRECTS = 5
DEFAULT_MAX_BYTES = 512 * 1024
DEFAULT_TIMEOUT_S = 20.0

Resolver = Callable[[str], list[str]]


class FetchRefused(ValueError):
    """The URL may not be fetched (scheme, address, size)."""


def _system_resolver(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise FetchRefused(f"cannot resolve host {host!r}: {exc}") from exc
    return sorted({info[4][0] for info in infos})


def check_url(url: str, resolver: Resolver = _system_resolver) -> None:
    """Raise :class:`FetchRefused` unless ``url`` is http(s) to a host with only public addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchRefused(f"only http and https URLs may be fetched, not {parts.scheme or 'no scheme'!r}")
    host = parts.hostname
    if not host:
        raise FetchRefused("the URL has no host")
    addresses = resolver(host)
    if not addresses:
        raise FetchRefused(f"host {host!r} has no address")
    for addr in addresses:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_loopback or ip.is_link_local or ip.is_private:
            raise FetchRefused(f"{host!r} resolves to a non-public address ({ip}); refused")


def fetch_text(
    url: str,
    *,
    timeout_s: float | None = None,
    max_bytes: int | None = None,
    resolver: Resolver = _system_resolver,
) -> tuple[int, str, bool]:
    """GET ``url``; return (status, text, truncated). Raises :class:`FetchRefused` or ``httpx.HTTPError``."""
    import httpx

    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    current = url
    with httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            check_url(current, resolver)
            with client.stream("GET", current, headers={"User-Agent": "zebench-fetch_url"}) as response:
                if response.is_redirect and response.headers.get("location"):
                    current = urljoin(current, response.headers["location"])
                    continue
                body = bytearray()
                truncated = False
                for chunk in response.iter_bytes():
                    room = max_bytes - len(body)
                    if len(chunk) > room:
                        body += chunk[:room]
                        truncated = True
                        break
                    body += chunk
                text = bytes(body).decode(response.encoding or "utf-8", errors="replace")
                return response.status_code, text, truncated
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")
