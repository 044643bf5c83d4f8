"""What the host runtime reads of a Harbor task's Dockerfile (docs/harbor-tasks.md).

:func:`read_image` reads ``environment/Dockerfile`` (or ``Containerfile``) of a task, as far as
a runtime without the image can use it:

- only the last stage (``FROM``) is the image; its final ``WORKDIR`` is the task's working
  directory (None when a variable is in it: the host runtime expands none);
- the workspace starts as what ``COPY`` or ``ADD`` puts into that ``WORKDIR`` itself from the
  build context: one directory (``COPY app/ /app/``; ``COPY . .`` with the patterns of
  ``.dockerignore``, its exceptions not read), or files at the top of the context; empty
  when nothing is copied there;
- copies from another stage or image (``--from``) are not the build context's and are skipped;
- what the host runtime cannot give (heredocs, URLs, archives, copies below the ``WORKDIR``;
  globs, paths outside the context or a layout it cannot reproduce, after which the workspace
  starts empty) is a note, one line naming the file and the line, which loading turns into a
  warning. Nothing else of the image (its packages, its ``RUN`` steps) exists on the host runtime.

A Dockerfile that cannot be read is a :class:`~harness.scenarios.model.ScenarioError` naming it.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.tasks.common import read_text


@dataclass
class ImageView:
    """What the host runtime reads of a task's Dockerfile: the final ``WORKDIR`` and the files
    the workspace starts with (``fixture`` with ``exclude``; None: an empty workspace)."""

    workdir: str | None  # None when it cannot be told (a variable in it)
    fixture: Path | None = None
    exclude: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what of the Dockerfile the host runtime cannot give


@dataclass
class _Copy:
    line: int
    sources: list[str]
    dest: str  # absolute, normalised


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuations joined."""
    found: list[tuple[int, str, str]] = []
    buffer, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        found.append(_split_instruction(start, buffer))
        buffer = ""
    if buffer:
        found.append(_split_instruction(start, buffer))
    return found


def _split_instruction(line: int, text: str) -> tuple[int, str, str]:
    word, *rest = text.split(None, 1)
    return line, word.upper(), rest[0].strip() if rest else ""


def _copy_args(args: str) -> tuple[dict[str, str], list[str]] | None:
    """(flags, paths) of a COPY or ADD; None for a form this reader does not take (heredocs)."""
    flags: dict[str, str] = {}
    rest = args
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        name, _, value = flag[2:].partition("=")
        flags[name.lower()] = value
        rest = rest.lstrip()
    if rest.startswith("["):
        try:
            parts = json.loads(rest)
        except ValueError:
            return None
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            return None
    elif "<<" in rest:
        return None
    else:
        parts = rest.split()
    return (flags, parts) if len(parts) >= 2 else None


_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz)$", re.IGNORECASE)


def read_image(environment: Path, dockerfile: Path) -> ImageView:
    """The working directory and the starting files of the image ``dockerfile`` builds from the
    context ``environment``, as far as the host runtime can give them (see the module docstring)."""
    text = read_text(dockerfile)
    workdir: str | None = "/"
    copies: list[_Copy] = []
    notes: list[str] = []
    for line, word, args in _instructions(text):
        if word == "FROM":  # a new stage: only the last one is the image
            workdir, copies, notes = "/", [], []
        elif word == "WORKDIR":
            path = args.strip().strip("\"'")
            if "$" in path or workdir is None:
                workdir = None
                notes.append(f"{dockerfile}: line {line}: WORKDIR {path}: a variable, which the host runtime "
                             "does not expand")
            else:
                workdir = posixpath.normpath(posixpath.join(workdir, path))
        elif word in ("COPY", "ADD"):
            parsed = _copy_args(args)
            if parsed is None:
                notes.append(f"{dockerfile}: line {line}: {word} {args}: a form the host runtime does not read")
                continue
            flags, paths = parsed
            if "from" in flags:
                continue  # from another stage or image, not from the build context
            sources, dest = paths[:-1], paths[-1]
            if word == "ADD" and any("://" in s or _ARCHIVE.search(s) for s in sources):
                notes.append(f"{dockerfile}: line {line}: ADD {' '.join(sources)}: a URL or an archive, which "
                             "the host runtime does not fetch or unpack")
                continue
            if "$" in dest or workdir is None:
                notes.append(f"{dockerfile}: line {line}: {word} to {dest}: a destination the host runtime "
                             "cannot tell")
                continue
            copies.append(_Copy(line, sources, posixpath.normpath(posixpath.join(workdir, dest))))
    view = ImageView(workdir=workdir, notes=notes)
    if workdir is None:
        return view
    into = [c for c in copies if c.dest == workdir]
    below = [c for c in copies if workdir != "/" and c.dest.startswith(workdir + "/")]
    for c in below:
        view.notes.append(f"{dockerfile}: line {c.line}: COPY to {c.dest}: only copies into the WORKDIR itself "
                          "start the workspace on the host runtime")
    if not into:
        return view
    sources = [(c, posixpath.normpath(s)) for c in into for s in c.sources]
    for c, source in sources:
        if source.startswith("/") or source == ".." or source.startswith("../") or any(ch in source for ch in "*?["):
            view.notes.append(f"{dockerfile}: line {c.line}: COPY {source}: not a plain path of the build "
                              "context; the workspace starts empty")
            return view
    if len(sources) == 1 and (environment / sources[0][1]).is_dir():
        source = sources[0][1]
        view.fixture = environment if source == "." else environment / source
        if source == ".":
            view.exclude = _dockerignore(environment, view.notes)
        return view
    top_files = [s for _, s in sources]
    if all("/" not in s and s != "." and (environment / s).is_file() for s in top_files):
        view.fixture = environment
        view.exclude = sorted(c.name for c in environment.iterdir() if c.name not in top_files)
        return view
    view.notes.append(f"{dockerfile}: lines {', '.join(str(c.line) for c in into)}: copies into the WORKDIR "
                      "that the host runtime cannot lay out (one directory, or files at the top of the build "
                      "context, are read); the workspace starts empty")
    return view


def _dockerignore(environment: Path, notes: list[str]) -> list[str]:
    """The patterns of the build context's ``.dockerignore`` (negations are not read)."""
    path = environment / ".dockerignore"
    if not path.is_file():
        return []
    patterns = []
    for line in path.read_text("utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            notes.append(f"{path}: {line}: exceptions are not read by the host runtime")
            continue
        patterns.append(line.lstrip("/"))
    return patterns

