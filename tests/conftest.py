"""Suite-wide test settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_model_response_cache(tmp_path_factory, monkeypatch):
    # Model responses are cached on disk by default; tests must neither read a cache left by
    # an earlier run (a mocked API would then never be called) nor write the user's cache.
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))


@pytest.fixture(autouse=True)
def _mockable_async_transport(monkeypatch):
    # respx answers requests sent through httpx; the async model clients default to the SDKs'
    # aiohttp transport, which tests against real loopback servers choose explicitly.
    monkeypatch.setenv("ZE_BENCHMARKS_HTTP_TRANSPORT", "httpx")


@pytest.fixture(autouse=True)
def _isolated_user_data(tmp_path_factory, monkeypatch):
    # Outside a zebench project the default results store is the per-user one; tests never
    # read or write the user's.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("user-data")))


@pytest.fixture(autouse=True)
def _isolated_workspaces(tmp_path_factory, monkeypatch):
    # Workspaces default to the user's cache; tests keep theirs in a temporary directory.
    monkeypatch.setenv("ZE_BENCHMARKS_WORKSPACES_DIR", str(tmp_path_factory.mktemp("workspaces")))


def _bwrap_problem() -> str | None:
    from harness.sandbox.bwrap import probe

    return probe()


def sandbox_kinds() -> list:
    """``bwrap`` (skipped where it cannot run, except in CI, where it must) and ``none``."""
    import os

    problem = _bwrap_problem()
    if problem is not None and os.environ.get("CI"):
        raise RuntimeError(f"CI must run the bwrap sandbox: {problem}")
    bwrap = pytest.param("bwrap", marks=pytest.mark.skipif(problem is not None, reason=problem or ""))
    return [bwrap, "none"]


@pytest.fixture(params=sandbox_kinds())
def sandbox_kind(request):
    """Each sandbox backend in turn."""
    return request.param


@pytest.fixture
def make_sandbox(tmp_path):
    """``make_sandbox(workspace, kind="none", **spec)``: an open sandbox, closed after the test."""
    from harness.sandbox import SandboxSpec, open_sandbox

    opened = []

    def make(workspace=None, kind="none", **spec):
        workspace = workspace or tmp_path
        box = open_sandbox(workspace, SandboxSpec(kind=kind, **spec))
        opened.append(box)
        return box

    yield make
    for box in opened:
        box.close()


# The worker under workerd: one `wrangler dev` for the whole session, whichever modules use it.
from support.workerd_fixture import workerd_api  # noqa: E402,F401

# The web dashboard in Chromium: one seeded store, `worker dev` and browser for the session.
from support.dashboard_fixture import chromium, dashboard, page, phone_page  # noqa: E402,F401
