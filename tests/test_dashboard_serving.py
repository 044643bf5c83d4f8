"""The worker serves the dashboard's static files at ``/`` beside the API, on every backend.

The files come from the generated ``worker/dashboard_assets.py``; the first test checks that
the committed module is what scripts/build_dashboard.py makes from ``worker/dashboard/``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from worker import dashboard_files
from worker.messages import Request

from support.worker import api, run_body  # noqa: F401 - fixtures and helpers shared with the core's tests

REPO = Path(__file__).resolve().parents[1]


def _get(api, path: str, headers: dict[str, str] | None = None, auth: bool = False):  # noqa: F811
    """(status, headers, text) of a GET through the backend under test, without JSON decoding."""
    h = dict(headers or {})
    if auth:
        h["authorization"] = "Bearer test-key-123"
    if hasattr(api, "app"):
        resp = asyncio.run(api.app.handle(Request.from_url("GET", path, h)))
        return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.body.decode("utf-8")
    resp = api.client.get(path, headers=h)
    return resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, resp.text


def test_generated_assets_module_is_current():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "build_dashboard.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_source_file_is_served_with_its_type():
    from worker.dashboard_assets import ASSETS

    sources = sorted(p.relative_to(REPO / "worker" / "dashboard").as_posix()
                     for p in (REPO / "worker" / "dashboard").rglob("*") if p.is_file())
    assert sorted(ASSETS) == sources
    assert "index.html" in ASSETS
    for name, (kind, etag, text) in ASSETS.items():
        assert kind.split(";")[0] in ("text/html", "text/css", "text/javascript", "image/svg+xml",
                                      "application/json", "text/plain"), name
        assert etag.startswith('"') and text


def test_dashboard_paths_are_everything_outside_the_api():
    for path in ("/", "/batches", "/batches/b1", "/runs/run_1", "/assets/app.css", "/compare"):
        assert dashboard_files.is_dashboard_path(path), path
    for path in ("/api", "/api/", "/api/runs", "/api/nope/deeper", "/health", "/health/", "/openapi.json"):
        assert not dashboard_files.is_dashboard_path(path), path


def test_index_and_assets_are_served_without_a_key_with_security_headers(api):  # noqa: F811
    status, headers, text = _get(api, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "<main" in text and "/assets/" in text
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    # A page's own URL answers the same document: the page's router reads the path.
    status, _, deep = _get(api, "/batches/some-batch?sort=runs")
    assert status == 200 and deep == text
    from worker.dashboard_assets import ASSETS

    name = next(n for n in ASSETS if n.endswith(".css"))
    status, headers, css = _get(api, f"/assets/{name}")
    assert status == 200 and headers["content-type"].startswith("text/css") and css == ASSETS[name][2]


def test_etag_revalidation_answers_304(api):  # noqa: F811
    status, headers, _ = _get(api, "/")
    status, again, body = _get(api, "/", {"if-none-match": headers["etag"]})
    assert status == 304 and body == "" and again["etag"] == headers["etag"]


def test_unknown_asset_is_404_and_the_api_keeps_json_404s(api):  # noqa: F811
    status, headers, text = _get(api, "/assets/nope.js")
    assert status == 404 and "no dashboard file" in text
    # A path that climbs out of the assets reaches no file (HTTP clients may normalise it first,
    # and then it is a page URL answered with index.html).
    status, _, text = _get(api, "/assets/../app.py")
    assert status in (200, 404) and "class WorkerApp" not in text
    status, headers, text = _get(api, "/api/nope", auth=True)
    assert status == 404 and headers["content-type"].startswith("application/json")


def test_posting_to_a_dashboard_path_is_not_served(api):  # noqa: F811
    resp = api.call("POST", "/batches", body={})
    assert resp.status == 404
