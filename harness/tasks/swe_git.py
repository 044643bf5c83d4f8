"""git on the local clone of a SWE-bench instance's repository, and the cache it fills (docs/swe-tasks.md).

The harness runs git itself (:func:`git`), never in a sandbox, only to read a clone or bundle
the user keeps in the repos directory and to apply patches in its own cache; it never fetches.
git reads neither the user's nor the system's configuration, asks for nothing, allows no
transport but local files, and does not look for a repository above the directory it is
pointed at. A failing git command is a :class:`GitError` with git's own last line.

- :func:`find_clone` looks for ``owner__name``, ``name``, ``owner__name.bundle`` and
  ``name.bundle`` in the repos directory, in that order (a clone is a directory holding
  ``.git``, or a bare repository);
- :func:`export_tree` writes the repository's tree at a commit into the cache
  (``swe-cache/trees/OWNER__NAME/COMMIT`` under the workspaces root, :func:`cache_root`), as a
  checkout would but without ``.git``, through a private index (the clone's own index and work
  tree are untouched) and with LFS filters off; once per commit;
- :func:`publish` moves a finished scratch directory into place with one rename, so that a
  reader of the cache never sees half of one (another process may have published it first);
- :func:`patch_paths` tells the paths a unified diff touches, :func:`apply_patch` applies one
  to a directory of the cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness._util.places import default_workspaces_root

CACHE_DIR_NAME = "swe-cache"  # under the workspaces root
GIT_TIMEOUT_S = 600.0

_PATCH_PATH = re.compile(r"^(?:---|\+\+\+) (?:\"?[ab]/)?(.+?)\"?(?:\t.*)?$")


class GitError(RuntimeError):
    """A git command that failed; the message is git's own last line."""


def _git_env() -> dict[str, str]:
    """git reads neither the user's nor the system's configuration, asks for nothing, and never
    finds a repository above the directory it is pointed at."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_ASKPASS="true", LC_ALL="C")
    return env


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input_text: str | None = None) -> str:
    """Run git (the harness's own: reading a local clone, or applying a patch in its cache)."""
    if shutil.which("git") is None:
        raise GitError("git is not installed")
    try:
        done = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "protocol.allow=never",
                               "-c", "protocol.file.allow=always", *args],
                              cwd=cwd, env={**_git_env(), **(env or {})}, input=input_text, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
        raise GitError(lines[-1].strip() if lines else f"git {args[0]} exited {done.returncode}")
    return done.stdout


def clone_candidates(repos_dir: Path, repo: str) -> list[Path]:
    """Where the clone of ``owner/name`` may be, in order."""
    owner, name = repo.split("/", 1)
    return [repos_dir / f"{owner}__{name}", repos_dir / name, repos_dir / f"{owner}__{name}.bundle",
            repos_dir / f"{name}.bundle"]


def find_clone(repos_dir: Path, repo: str) -> Path | None:
    """The first clone (a directory holding ``.git``, or a bare repository) or bundle of ``repo``
    in ``repos_dir``."""
    for candidate in clone_candidates(repos_dir, repo):
        if candidate.suffix == ".bundle":
            if candidate.is_file():
                return candidate
        elif (candidate / ".git").exists() or ((candidate / "HEAD").is_file() and (candidate / "objects").is_dir()):
            return candidate
    return None


def _git_dir(clone: Path) -> Path:
    return clone / ".git" if (clone / ".git").exists() else clone


def cache_root() -> Path:
    """Where exported trees and prepared instances go: ``swe-cache/`` under the workspaces root."""
    return default_workspaces_root() / CACHE_DIR_NAME


def publish(scratch: Path, target: Path) -> None:
    """Move a finished ``scratch`` directory to ``target`` (another process may have won)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(scratch, target)
    except OSError:
        if not target.is_dir():
            raise
        shutil.rmtree(scratch, ignore_errors=True)


def _extract(git_dir: Path, commit: str, into: Path, scratch: Path) -> None:
    """Write the tree of ``commit`` into ``into`` as a checkout would (through a private index:
    the clone's own index and work tree are untouched), without ``.git``. LFS filters are off:
    nothing is fetched."""
    env = {"GIT_INDEX_FILE": str(scratch / "index")}
    quiet_lfs = ("-c", "filter.lfs.process=", "-c", "filter.lfs.smudge=cat", "-c", "filter.lfs.required=false")
    git(f"--git-dir={git_dir}", f"--work-tree={into}", *quiet_lfs, "read-tree", commit, env=env)
    git(f"--git-dir={git_dir}", f"--work-tree={into}", *quiet_lfs, "checkout-index", "--all", "--force", env=env)


def export_tree(clone: Path, repo: str, commit: str) -> tuple[Path, str]:
    """(directory, full commit) of ``repo``'s tree at ``commit``, exported once into the cache.
    :class:`GitError` when the commit is not in the clone."""
    owner_name = repo.replace("/", "__")
    if len(commit) == 40:
        done = cache_root() / "trees" / owner_name / commit
        if done.is_dir():
            return done, commit
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=root))
    try:
        if clone.suffix == ".bundle":
            git_dir = scratch / "bundle.git"
            git("clone", "--bare", "--quiet", str(clone), str(git_dir))
        else:
            git_dir = _git_dir(clone)
        try:
            full = git(f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
        except GitError:
            raise GitError(f"commit {commit} is not in {clone}") from None
        target = cache_root() / "trees" / owner_name / full
        if target.is_dir():
            return target, full
        tree = scratch / "tree"
        tree.mkdir()
        _extract(git_dir, full, tree, scratch)
        publish(tree, target)
        return target, full
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def patch_paths(patch: str) -> list[str]:
    """The paths a unified diff touches (old and new names), as written after ``a/`` and ``b/``."""
    found: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            match = _PATCH_PATH.match(line)
            if match and match.group(1) != "/dev/null":
                found.append(match.group(1))
        elif line.startswith(("rename from ", "rename to ", "copy to ")):
            found.append(line.split(" ", 2)[2].strip())
    return list(dict.fromkeys(p for p in found if p))


def apply_patch(patch: str, tree: Path) -> None:
    """``git apply`` ``patch`` in ``tree`` (a plain directory of the harness's cache)."""
    git("apply", "--whitespace=nowarn", "-", cwd=tree, env={"GIT_CEILING_DIRECTORIES": str(tree.parent)},
        input_text=patch)

