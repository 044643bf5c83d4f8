"""The two processes a fleet starts: a shallow ``git clone`` of a repository given by URL, and
the detached process that runs a fleet started with ``--no-wait`` (or :func:`harness.fleet.start`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

CLONE_TIMEOUT_S = 600.0


class CloneError(RuntimeError):
    pass


def repos_cache_dir() -> Path:
    """Where repositories given by ``git_url`` are cloned: ``<cache>/fleet-repos``."""
    from harness._util.places import default_cache_dir

    return default_cache_dir() / "fleet-repos"


def clone(url: str, cache_dir: Path | None = None) -> Path:
    """A shallow clone of ``url`` in the cache (reused when already there), its path returned.
    The clone is made beside its final place and renamed, so a clone cut short is never used."""
    cache_dir = cache_dir or repos_cache_dir()
    name = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    target = cache_dir / name
    if (target / ".git").exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = cache_dir / f".{name}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    git = shutil.which("git")
    if git is None:
        raise CloneError(f"cannot clone {url}: git is not installed")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run([git, "clone", "--depth", "1", "--quiet", url, str(partial)], capture_output=True,
                              text=True, timeout=CLONE_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        shutil.rmtree(partial, ignore_errors=True)
        raise CloneError(f"cannot clone {url}: no answer in {CLONE_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        reason = (done.stderr.strip().splitlines() or [f"git exited {done.returncode}"])[-1]
        raise CloneError(f"cannot clone {url}: {reason}")
    try:
        os.replace(partial, target)
    except OSError:  # another process cloned it first
        shutil.rmtree(partial, ignore_errors=True)
    return target


def spawn_detached(run_dir: Path, extra_env: dict[str, str] | None = None) -> int:
    """Start ``python -m harness.cli.fleet_detached RUN_DIR`` in its own session (it outlives the
    caller and ignores the caller's terminal), its output in ``RUN_DIR/fleet.log``; its pid."""
    log = open(run_dir / "fleet.log", "ab")
    try:
        process = subprocess.Popen([sys.executable, "-m", "harness.cli.fleet_detached", str(run_dir)],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True, env={**os.environ, **(extra_env or {})},
                                   cwd=os.getcwd())
    finally:
        log.close()
    return process.pid
