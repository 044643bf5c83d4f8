"""Where the harness keeps what it makes on this machine, outside any checkout.

Everything goes under the user's cache directory, ``$XDG_CACHE_HOME/zebench`` (by default
``~/.cache/zebench``), unless a variable names another place for one kind of thing.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/zebench``, else ``~/.cache/zebench``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "zebench"


def default_workspaces_root() -> Path:
    """Where run workspaces go: ``$ZE_BENCHMARKS_WORKSPACES_DIR``, else ``workspaces`` of the
    user's cache. Never inside the checkout: there a workspace would sit beside ``suites/``
    and ``results/``."""
    env = os.environ.get("ZE_BENCHMARKS_WORKSPACES_DIR")
    return Path(env).expanduser() if env else user_cache_dir() / "workspaces"


def default_cache_dir() -> Path:
    """The caches of model answers and checked datasets: ``$ZE_BENCHMARKS_CACHE_DIR``, else the
    user's cache directory."""
    env = os.environ.get("ZE_BENCHMARKS_CACHE_DIR")
    return Path(env).expanduser() if env else user_cache_dir()


def log_dir() -> Path:
    """Crash logs: ``$ZE_BENCHMARKS_LOG_DIR``, else ``logs`` of the user's cache."""
    env = os.environ.get("ZE_BENCHMARKS_LOG_DIR")
    return Path(env).expanduser() if env else user_cache_dir() / "logs"
