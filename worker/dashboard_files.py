"""The web dashboard's static files, served by the worker at ``/``.

The files live in ``worker/dashboard_assets.py`` (generated from ``worker/dashboard/`` by
scripts/build_dashboard.py), so they are served the same way by ``worker dev``, in-process and
under Cloudflare Python Workers. ``/assets/<path>`` is a file; any other path outside the API
answers the single page's ``index.html`` and the page's router reads the URL. The files need
no key: they hold no data, and the page asks the API (with a key when the worker needs one).
"""

from __future__ import annotations

from worker.messages import Request, Response

ASSET_PREFIX = "/assets/"
INDEX = "index.html"
# Paths the API owns; everything else outside /api/ belongs to the dashboard.
_API_PATHS = ("/health", "/openapi.json")

# The page runs only its own scripts: no inline script, no eval, nothing from another origin.
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                "connect-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def is_dashboard_path(path: str) -> bool:
    trimmed = path.rstrip("/") or "/"
    return not (trimmed == "/api" or trimmed.startswith("/api/") or trimmed in _API_PATHS)


def _assets() -> dict[str, tuple[str, str, str]]:
    try:
        from worker.dashboard_assets import ASSETS
    except ImportError:  # a checkout where the module was never generated
        return {}
    return ASSETS


def serve(request: Request) -> Response:
    """The file for ``request.path``: 200, 304 when the client's copy is current, or 404."""
    assets = _assets()
    if request.path.startswith(ASSET_PREFIX):
        name = request.path[len(ASSET_PREFIX):]
    else:
        name = INDEX
    found = assets.get(name)
    if found is None or ".." in name.split("/"):
        what = "the dashboard is not built (run python scripts/build_dashboard.py)" if not assets else \
            f"no dashboard file {request.path}"
        return Response(status=404, body=what.encode("utf-8"),
                        headers={"content-type": "text/plain; charset=utf-8", **SECURITY_HEADERS})
    kind, etag, text = found
    headers = {"content-type": kind, "etag": etag, "cache-control": "no-cache", **SECURITY_HEADERS}
    if request.header("if-none-match") == etag:
        return Response(status=304, headers=headers)
    return Response(status=200, body=text.encode("utf-8"), headers=headers)
