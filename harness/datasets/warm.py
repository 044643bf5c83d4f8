"""Checking many dataset files on two cores.

A fleet of a thousand repositories may name a couple of thousand dataset files. The first
check of each (read, parse, check, kept in the checked-documents cache: see
:class:`harness.datasets.format.CheckedCache`) costs several times what a cached one does, and
one interpreter does them one after the other. :func:`check_elsewhere` forks a child process
that checks the files from the last one backwards, keeping each in the cache, while this
process goes through them from the first one; a file the child has kept is read from the cache
here, a file this process has kept is skipped there, and the two meet wherever their speeds
make them meet. Once this process is through, :meth:`Warming.stop` ends the child (at most the
file in hand is finished). The child keeps nothing but cache entries and prints nothing: a
file it cannot check is simply not kept, and this process reads it and reports its problems
itself.

Only where it is safe and worth it: a platform with ``fork``, more than one processor, no other
thread in this process (a fork copies only the calling thread), the cache on, and at least
:data:`MIN_FILES` files to check.
"""

from __future__ import annotations

import os
import select
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
    """A child process checking files into the cache until :meth:`stop`."""

    def __init__(self, pid: int, stop_writer: int) -> None:
        self.pid = pid
        self._stop_writer = stop_writer  # closing it tells the child to stop
        self._reaped = False

    def stop(self) -> None:
        """Tell the child to stop after the file in hand, and wait for it."""
        if self._reaped:
            return
        self._reaped = True
        os.close(self._stop_writer)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def check_elsewhere(paths: list[str]) -> Warming | None:
    """Fork a child that checks ``paths`` into the cache
    (:func:`~harness.datasets.format.keep_checked`), from the last one backwards, skipping those
    kept meanwhile; None (nothing started)
    when that is not safe or not worth it (see the module docstring)."""
    if len(paths) < MIN_FILES or not can_fork():
        return None
    from harness.datasets.format import CheckedCache, keep_checked

    if CheckedCache.default() is None:
        return None
    stop_reader, stop_writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, keep, and leave without running anything of the parent's
        try:
            os.close(stop_writer)
            for path in reversed(paths):
                if select.select([stop_reader], [], [], 0)[0]:
                    break  # the parent is through (its end of the pipe closed)
                try:
                    keep_checked(path)  # unless this process kept it meanwhile
                except Exception:  # noqa: BLE001 - the parent reads it again and reports it
                    pass
        finally:
            os._exit(0)
    os.close(stop_reader)
    return Warming(pid, stop_writer)
