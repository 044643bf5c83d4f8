"""Cloudflare Python Workers entry: hands each request and ``env.DB`` to the worker core.

Both entry styles are provided: ``class Default(WorkerEntrypoint)`` for current Python
Workers, and the module-level ``on_fetch(request, env)`` of older runtimes (such as the one
inside wrangler 3.72.1, used for offline local testing).

Wrangler uploads the ``.py`` files of this folder side by side, without the ``worker``
package around them; :func:`_ensure_package` recreates the package so that the core's
``from worker.x import y`` imports work in both places.
"""

import os
import sys
import types


def _ensure_package() -> None:
    try:
        import worker.app  # noqa: F401 - a normal install: nothing to do
    except ImportError:
        for name in [n for n in sys.modules if n == "worker" or n.startswith("worker.")]:
            del sys.modules[name]
        package = types.ModuleType("worker")
        package.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        sys.modules["worker"] = package


_ensure_package()

from worker.app import WorkerApp  # noqa: E402
from worker.config import WorkerConfig  # noqa: E402
from worker.d1_backend import D1Storage  # noqa: E402
from worker.messages import Request  # noqa: E402

# Headers the core looks at; the JS Headers object is read only for these.
_HEADERS = ("authorization", "content-type", "content-length", "origin", "if-none-match",
            "access-control-request-method", "access-control-request-headers")


async def handle_fetch(request, env):  # type: ignore[no-untyped-def]
    """Answer one Workers request with the core over the D1 binding."""
    config = WorkerConfig.from_env(env)
    headers = {}
    for name in _HEADERS:
        value = request.headers.get(name)
        if value is not None:
            headers[name] = str(value)
    body = b""
    if request.method in ("POST", "PUT", "PATCH"):
        # Read the body even when it is over the cap: answering before consuming it makes the
        # local runtime's proxy fail the request (Cloudflare caps request sizes upstream).
        # Raw bytes (not text()), so invalid UTF-8 is reported instead of replaced.
        body = (await request.arrayBuffer()).to_bytes()
    app = WorkerApp(D1Storage(env.DB), config)
    response = await app.handle(Request.from_url(str(request.method), str(request.url), headers, body))
    return _to_js_response(response)


def _to_js_response(response):  # type: ignore[no-untyped-def]
    from js import Object, Response  # type: ignore[import-not-found]
    from pyodide.ffi import to_js  # type: ignore[import-not-found]

    init = to_js({"status": response.status, "headers": response.headers},
                 dict_converter=Object.fromEntries)
    body = response.body.decode("utf-8") if response.body else None
    return Response.new(body, init)


async def on_fetch(request, env):  # type: ignore[no-untyped-def]
    """Entry for runtimes without ``WorkerEntrypoint``."""
    return await handle_fetch(request, env)


try:
    from workers import WorkerEntrypoint  # type: ignore[import-not-found]
except ImportError:
    WorkerEntrypoint = None

if WorkerEntrypoint is not None:

    class Default(WorkerEntrypoint):  # type: ignore[misc, valid-type]
        """Entry for current Python Workers."""

        async def fetch(self, request):  # type: ignore[no-untyped-def]
            return await handle_fetch(request, self.env)
