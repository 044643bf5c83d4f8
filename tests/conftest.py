"""Suite-wide test settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_model_response_cache(tmp_path_factory, monkeypatch):
    # Model responses are cached on disk by default; tests must neither read a cache left by
    # an earlier run (a mocked API would then never be called) nor write the user's cache.
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))
