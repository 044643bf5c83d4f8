"""Checking many dataset files on two cores.

A fleet of a thousand repositories may name a couple of thousand dataset files. The first
check of each (read, parse, check, kept in the checked-documents cache: see
:class:`harness.datasets.format.CheckedCache`) costs several times what a cached one does, and
one interpreter does them one after the other. :func:`check_elsewhere` forks a child process
that checks part of the files into the cache while this process goes on with the rest; before
this process reads one of the child's files it waits for the child (:meth:`Warming.wait`), and
then finds it cached. The child keeps nothing but cache entries and prints nothing: a file it
cannot check is simply not kept, and this process reads it and reports its problems itself.

Only where it is safe and worth it: a platform with ``fork``, more than one processor, no other
thread in this process (a fork copies only the calling thread), the cache on, and at least
:data:`MIN_FILES` files to check.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable
from pathlib import Path

#: Fewer files than this are not worth a process.
MIN_FILES = 64


def unchecked(paths: Iterable[str]) -> list[str]:
    """The files among ``paths`` that the checked-documents cache has no entry for, in order
    (none when the cache is off)."""
    from harness.datasets.format import CheckedCache

    cache = CheckedCache.default()
    if cache is None:
        return []
    out = []
    for path in paths:
        try:
            key = cache.key_of(Path(path), Path(path).read_bytes())
        except OSError:
            continue  # reported when the file is read
        if key is not None and not cache.has(key):
            out.append(path)
    return out


def can_fork() -> bool:
    return hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


class Warming:
    """A child process checking :attr:`paths` into the cache."""

    def __init__(self, pid: int, paths: list[str]) -> None:
        self.pid = pid
        self.paths = frozenset(paths)
        self._reaped = False

    def covers(self, path: str) -> bool:
        return not self._reaped and path in self.paths

    def wait(self) -> None:
        """Wait for the child to end (at once when it has)."""
        if not self._reaped:
            self._reaped = True
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass

    def stop(self) -> None:
        """End the child now (its entries so far stay kept)."""
        if not self._reaped:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self.wait()


def check_elsewhere(paths: list[str]) -> Warming | None:
    """Fork a child that checks ``paths`` (:func:`~harness.datasets.format.load_file`) into the
    cache; None (nothing started) when that is not safe or not worth it (see the module docstring)."""
    if len(paths) < MIN_FILES or not can_fork():
        return None
    from harness.datasets.format import CheckedCache, load_file

    if CheckedCache.default() is None:
        return None
    pid = os.fork()
    if pid == 0:  # the child: check, keep, and leave without running anything of the parent's
        try:
            for path in paths:
                try:
                    load_file(path)
                except Exception:  # noqa: BLE001 - the parent reads it again and reports it
                    pass
        finally:
            os._exit(0)
    return Warming(pid, paths)
