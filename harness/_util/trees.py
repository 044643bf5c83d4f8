"""Directory trees an agent controls: walked, read, copied and removed without trusting them.

An agent (or the code under test, during grading) can leave anything in its workspace: a
directory nested thousands deep, a FIFO named like a source file, a link to a host file, a
sparse file of a terabyte, a file name that is not UTF-8. Everything the harness does to such
a tree goes through here:

- :func:`walk`, :func:`make_dirs` and :func:`remove_tree` are iterative (Python 3.11's
  ``os.walk``, ``os.makedirs`` and ``shutil.rmtree`` recurse once per level and fail past
  about a thousand) and never follow a link;
- :func:`read_regular` opens with ``O_NOFOLLOW | O_NONBLOCK`` and reads only a regular file,
  up to a cap, so a FIFO, a device or a link is never waited on or read through;
- :func:`same_content` compares two files in chunks, never holding either whole;
- :func:`copy_sparse` copies only the data of a file with holes, keeping its holes;
- :func:`tree_usage` counts files and bytes, stopping at a quota;
- :func:`valid_utf8` turns a file name into valid UTF-8 for records.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

CHUNK = 1 << 20


def walk(top: str | os.PathLike[str], topdown: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top, topdown)`` without recursion and without following links.

    As with ``os.walk``, a link to a directory is listed in ``dirnames`` but not entered, and
    when ``topdown`` is true the caller may prune ``dirnames`` in place. Unreadable
    directories are skipped.
    """
    top = os.fspath(top)
    stack: list[tuple[str, bool]] = [(top, False)]
    pending: list[tuple[str, list[str], list[str]]] = []
    while stack:
        path, expanded = stack.pop()
        if expanded:
            yield pending.pop()
            continue
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else files).append(entry.name)
        except OSError:
            continue
        if topdown:
            yield path, dirs, files
            for name in reversed(dirs):
                child = os.path.join(path, name)
                if not os.path.islink(child):
                    stack.append((child, False))
        else:
            pending.append((path, dirs, files))
            stack.append((path, True))
            for name in reversed(dirs):
                child = os.path.join(path, name)
                if not os.path.islink(child):
                    stack.append((child, False))


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``os.makedirs(path, exist_ok=True)`` without recursion (it recurses once per missing level)."""
    path = os.path.abspath(os.fspath(path))
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Delete ``path`` and everything below it (a file or link: just it), iteratively, never
    following a link. Entries that cannot be removed are left; no error is raised."""
    path = os.fspath(path)
    try:
        st = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        _unlink(path)
        return
    for dirpath, _dirs, files in walk(path, topdown=False):
        try:
            with os.scandir(dirpath) as entries:
                names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError:
            names = [(f, False) for f in files]
        for name, is_dir in names:
            child = os.path.join(dirpath, name)
            if is_dir:
                try:
                    os.rmdir(child)
                except OSError:
                    pass
            else:
                _unlink(child)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link, FIFO, socket or device),
    at most ``limit`` of them; None otherwise or when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        remaining = limit
        while remaining is None or remaining > 0:
            chunk = os.read(fd, CHUNK if remaining is None else min(CHUNK, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            if remaining is not None:
                remaining -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def same_content(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two regular files hold the same bytes, compared a chunk at a time. A path that
    is not a regular file is never the same as anything."""
    fds = []
    try:
        for path in (a, b):
            fds.append(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
        stats = [os.fstat(fd) for fd in fds]
        if not all(stat.S_ISREG(s.st_mode) for s in stats) or stats[0].st_size != stats[1].st_size:
            return False
        while True:
            left, right = os.read(fds[0], CHUNK), os.read(fds[1], CHUNK)
            if left != right:
                return False
            if not left:
                return True
    except OSError:
        return False
    finally:
        for fd in fds:
            os.close(fd)


def is_sparse(st: os.stat_result) -> bool:
    """Whether a file has holes: fewer blocks allocated than its size needs."""
    return st.st_blocks * 512 < st.st_size


def copy_sparse(src: str, dst: str, size: int) -> None:
    """Copy the data regions of ``src`` into a new ``dst`` of the same ``size``, leaving the
    holes as holes (a plain copy would write them out as zeros)."""
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            offset = 0
            while offset < size:
                try:
                    start = os.lseek(fin, offset, os.SEEK_DATA)
                except OSError as exc:
                    if exc.errno == errno.ENXIO:  # only a hole is left
                        break
                    raise
                end = os.lseek(fin, start, os.SEEK_HOLE)
                position = start
                while position < end:
                    chunk = os.pread(fin, min(CHUNK, end - position), position)
                    if not chunk:
                        break
                    os.pwrite(fout, chunk, position)
                    position += len(chunk)
                offset = end
            os.ftruncate(fout, size)
        finally:
            os.close(fout)
    finally:
        os.close(fin)


@dataclass
class Usage:
    """Files and bytes (apparent size) of a tree; ``over`` names the quota it exceeded."""

    files: int = 0
    bytes: int = 0
    over: str | None = None


def tree_usage(root: str | os.PathLike[str], prune_dirs: frozenset[str] = frozenset(),
               max_files: int | None = None, max_bytes: int | None = None) -> Usage:
    """Count the entries and the apparent bytes under ``root``, skipping ``prune_dirs``;
    stops as soon as a quota is exceeded (``over`` says which)."""
    usage = Usage()
    for dirpath, dirs, files in walk(root):
        dirs[:] = [d for d in dirs if d not in prune_dirs]
        for name in files:
            usage.files += 1
            try:
                usage.bytes += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
            if max_files is not None and usage.files > max_files:
                usage.over = "files"
                return usage
            if max_bytes is not None and usage.bytes > max_bytes:
                usage.over = "bytes"
                return usage
    return usage


def valid_utf8(text: str) -> str:
    """``text`` as valid UTF-8: a file name's bytes that were not UTF-8 (kept by Python as
    surrogate escapes) and any other lone surrogate become ``\\udcNN`` escapes, so that
    records can be encoded and stored."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
