"""Where the embedded results store lives, found the same way from any directory.

The rule, first match wins:

1. ``$ZE_BENCHMARKS_DB`` (a path, relative to the current directory).
2. The nearest directory at or above the current one that is a zebench project: it holds
   ``results/bench.db``, or both ``results/`` and ``suites/``, or a ``pyproject.toml`` naming the
   ``zebench`` project. Its store is ``results/bench.db``. This is how git finds its repository:
   ``cd suites/demo && bench batches`` reads the same store as the project's root.
3. The per-user data directory: ``$XDG_DATA_HOME/zebench/bench.db`` (by default
   ``~/.local/share/zebench/bench.db``).

The spool of requests a worker could not take lives beside the store (``spool/`` in the same
directory) unless ``$ZE_BENCHMARKS_SPOOL_DIR`` names another.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_PROJECT_NAME = re.compile(r'^\s*name\s*=\s*["\']zebench["\']\s*$', re.MULTILINE)


@dataclass(frozen=True)
class StoreLocation:
    """The default store's file and why it was chosen (for ``bench doctor`` and ``--help``)."""

    path: str
    #: "environment", "project" or "user".
    source: str
    #: The project directory for "project", else None.
    project: str | None = None

    def describe(self) -> str:
        if self.source == "environment":
            return f"{self.path} (from $ZE_BENCHMARKS_DB)"
        if self.source == "project":
            return f"{self.path} (the project at {self.project})"
        return f"{self.path} (the per-user store: no zebench project at or above this directory)"


def _is_project(directory: Path) -> bool:
    results = directory / "results"
    if (results / "bench.db").is_file():
        return True
    if results.is_dir() and (directory / "suites").is_dir():
        return True
    pyproject = directory / "pyproject.toml"
    try:
        if pyproject.is_file() and pyproject.stat().st_size < 1_000_000:
            return bool(_PROJECT_NAME.search(pyproject.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False
    return False


def project_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest zebench project at or above ``start`` (default: the current directory)."""
    try:
        here = Path(start or os.getcwd()).resolve()
    except OSError:
        return None
    for directory in (here, *here.parents):
        if _is_project(directory):
            return directory
    return None


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/zebench`` (default ``~/.local/share/zebench``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "zebench"


def default_store(start: str | os.PathLike[str] | None = None) -> StoreLocation:
    """The embedded store used when no ``--db`` and no worker URL is given."""
    env = os.environ.get("ZE_BENCHMARKS_DB")
    if env:
        return StoreLocation(env, "environment")
    project = project_root(start)
    if project is not None:
        return StoreLocation(str(project / "results" / "bench.db"), "project", str(project))
    return StoreLocation(str(user_data_dir() / "bench.db"), "user")


def default_db_path() -> str:
    """The default store's file (see :func:`default_store`)."""
    return default_store().path


def default_spool_dir() -> str:
    """``$ZE_BENCHMARKS_SPOOL_DIR``, else ``spool/`` beside the default store's file."""
    env = os.environ.get("ZE_BENCHMARKS_SPOOL_DIR")
    if env:
        return env
    return str(Path(default_store().path).parent / "spool")


def store_help() -> str:
    """One line for ``--help``: the store this directory would use."""
    try:
        return default_store().describe()
    except Exception:  # noqa: BLE001 - help text must never fail
        return "results/bench.db of the zebench project at or above this directory, else the per-user store"
