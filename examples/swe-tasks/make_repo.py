#!/usr/bin/env python3
"""Rebuild repos/zebench-examples__textkit.bundle from source/ with real git.

The repository has one commit of the files under source/, made with a fixed author, committer,
date and message, so the commit hash is the same on every machine and git version:
instances.jsonl names it as every instance's base_commit. Run from anywhere:

    python examples/swe-tasks/make_repo.py            # writes the bundle, prints the commit
    python examples/swe-tasks/make_repo.py --check    # builds in a scratch directory, compares
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
BUNDLE = HERE / "repos" / "zebench-examples__textkit.bundle"
BRANCH = "main"
IDENTITY = {
    "GIT_AUTHOR_NAME": "zebench examples", "GIT_AUTHOR_EMAIL": "examples@zebench.invalid",
    "GIT_COMMITTER_NAME": "zebench examples", "GIT_COMMITTER_EMAIL": "examples@zebench.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
}
MESSAGE = "textkit: slugs, truncation and durations"


def _git(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    done = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "core.fileMode=true", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def build(into: Path) -> str:
    """A repository in ``into`` holding source/ as one commit on ``main``; returns the commit."""
    shutil.copytree(SOURCE, into, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    for path in into.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    _git("init", "--quiet", f"--initial-branch={BRANCH}", ".", cwd=into)
    _git("add", "--all", cwd=into)
    _git("commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", MESSAGE, cwd=into)
    return _git("rev-parse", "HEAD", cwd=into).strip()


def bundle_commit(bundle: Path) -> str:
    """The commit ``main`` names in ``bundle``."""
    heads = _git("bundle", "list-heads", str(bundle), cwd=bundle.parent)
    for line in heads.splitlines():
        commit, _, ref = line.partition(" ")
        if ref == f"refs/heads/{BRANCH}":
            return commit
    raise SystemExit(f"{bundle}: no refs/heads/{BRANCH}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the shipped bundle with a fresh build")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="textkit-") as scratch:
        repo = Path(scratch) / "textkit"
        commit = build(repo)
        if args.check:
            shipped = bundle_commit(BUNDLE)
            print(f"built {commit}, shipped {shipped}")
            return 0 if shipped == commit else 1
        BUNDLE.parent.mkdir(parents=True, exist_ok=True)
        _git("bundle", "create", "--quiet", str(BUNDLE), "HEAD", BRANCH, cwd=repo)
    print(commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
