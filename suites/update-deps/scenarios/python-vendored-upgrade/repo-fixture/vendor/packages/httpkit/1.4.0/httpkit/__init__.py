"""httpkit 1.4: a small HTTP client with pluggable transports."""

import json as _json
from urllib.parse import urlencode

__version__ = "1.4.0"


class HTTPError(Exception):
    def __init__(self, response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class Response:
    def __init__(self, status_code, body="", headers=None):
        self.status_code = status_code
        self.text = body
        self.headers = dict(headers or {})

    def json(self):
        return _json.loads(self.text)

    def raise_for_status(self):
        if self.status_code >= 400:
            raise HTTPError(self)


class MockTransport:
    """Calls ``handler(method, url)`` instead of the network; the handler returns a Response."""

    def __init__(self, handler):
        self.handler = handler

    def handle(self, method, url, timeout):
        return self.handler(method, url)


class Client:
    def __init__(self, base_url, timeout=5, transport=None):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.transport = transport

    def get(self, path, params=None):
        url = self.base_url + path
        if params:
            url += "?" + urlencode(params)
        if self.transport is None:
            raise RuntimeError("no transport configured")
        return self.transport.handle("GET", url, self.timeout)
