"""Glob patterns over workspace-relative POSIX paths (``**`` spans directories).

Two matching modes: *anchored* (the pattern is matched against the whole relative path, as
globby does for heuristic checks) and *anywhere* (a pattern without ``/`` also matches a file
or directory name at any depth, as ``.gitignore`` does for ``workspace.exclude``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

from harness._util.trees import walk


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate ``pattern`` to a regex: ``**/`` any directories (or none), ``*`` within a name."""
    pattern = pattern.strip().removeprefix("./")
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif ch == "{":
            end = pattern.find("}", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                out.append("(?:" + "|".join(re.escape(p) for p in pattern[i + 1:end].split(",")) + ")")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    body = "".join(out).rstrip("/")
    return re.compile(f"^{body}(?:/.*)?$" if pattern.endswith("/") else f"^{body}$")


def matches(rel_path: str, pattern: str, anywhere: bool = False) -> bool:
    """Does ``rel_path`` (POSIX, relative) match ``pattern``?"""
    if glob_regex(pattern).match(rel_path):
        return True
    if anywhere and "/" not in pattern.strip("/"):
        return bool(glob_regex(pattern).match(rel_path.rsplit("/", 1)[-1]))
    return False


def matches_any(rel_path: str, patterns: Iterable[str], anywhere: bool = False) -> bool:
    return any(matches(rel_path, p, anywhere) for p in patterns)


def walk_files(root: Path, prune_dirs: frozenset[str] | set[str] = frozenset(),
               exclude: Iterable[str] = (), anywhere: bool = True) -> Iterator[str]:
    """Relative POSIX paths of files (and symlinks) under ``root``, sorted per directory.

    Directories named in ``prune_dirs`` and paths matching ``exclude`` are skipped, without
    descending into them.
    """
    exclude = list(exclude)
    for dirpath, dirnames, filenames in walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        kept = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in prune_dirs or (exclude and matches_any(rel, exclude, anywhere)):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                # Symlinked directories are reported as entries, never followed.
                yield rel
                continue
            kept.append(d)
        dirnames[:] = kept
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if exclude and matches_any(rel, exclude, anywhere):
                continue
            yield rel


def glob_files(root: Path, pattern: str, exclude: Iterable[str] = (),
               prune_dirs: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Files under ``root`` matching ``pattern`` (anchored) and no ``exclude`` pattern (anywhere)."""
    exclude = list(exclude)
    return [rel for rel in walk_files(root, prune_dirs) if matches(rel, pattern)
            and not matches_any(rel, exclude, anywhere=True)]
