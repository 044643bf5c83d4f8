"""httpkit 2.0: a small HTTP client with pluggable transports.

Breaking changes from 1.x (see CHANGELOG.md next to this package):
- ``Client`` takes keyword arguments only and ``timeout`` must be a ``Timeout``.
- ``Client.get(path, params=...)`` is now ``Client.get(path, query=...)``.
- ``HTTPError`` is now ``HTTPStatusError`` (raised by ``Response.raise_for_status``).
"""

import json as _json
from urllib.parse import urlencode

__version__ = "2.0.3"


class HTTPStatusError(Exception):
    def __init__(self, response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class Timeout:
    """Seconds to wait for a connection and for the response; ``connect`` defaults to ``read``."""

    def __init__(self, read, connect=None):
        self.read = float(read)
        self.connect = float(read if connect is None else connect)


class Response:
    def __init__(self, status_code, body="", headers=None):
        self.status_code = status_code
        self.text = body
        self.headers = dict(headers or {})

    def json(self):
        return _json.loads(self.text)

    def raise_for_status(self):
        if self.status_code >= 400:
            raise HTTPStatusError(self)


class MockTransport:
    """Calls ``handler(method, url)`` instead of the network; the handler returns a Response."""

    def __init__(self, handler):
        self.handler = handler

    def handle(self, method, url, timeout):
        return self.handler(method, url)


class Client:
    def __init__(self, *, base_url, timeout, transport=None):
        if not isinstance(timeout, Timeout):
            raise TypeError("httpkit 2: timeout must be an httpkit.Timeout, e.g. Timeout(5)")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.transport = transport

    def get(self, path, *, query=None):
        url = self.base_url + path
        if query:
            url += "?" + urlencode(query)
        if self.transport is None:
            raise RuntimeError("no transport configured")
        return self.transport.handle("GET", url, self.timeout)
