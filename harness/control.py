"""Stopping a batch on request: the first Ctrl-C winds it down, a second kills at once.

A :class:`BatchControl` is shared by the runs of a batch. :meth:`BatchControl.interrupt`
(the first Ctrl-C) stops new runs from starting and asks running agents to stop at their next
turn; after a short grace it closes their sandboxes, so an agent waiting on a long command
returns too. :meth:`BatchControl.abort` (a second Ctrl-C) closes every sandbox at once. Runs
that finished are stored either way; runs cut short are stored as ``error``/``harness``
"interrupted", so a later run of the batch can redo them; runs that never started are not
stored at all.

:func:`handle_sigint` installs the two-step Ctrl-C handler for the duration of a batch (in
the main thread only; a library caller who does not use it keeps Python's own behaviour).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

DEFAULT_GRACE_S = 5.0


class BatchControl:
    """Whether a batch should stop, and the sandboxes to close when it must."""

    def __init__(self, grace_s: float = DEFAULT_GRACE_S) -> None:
        self.grace_s = grace_s
        self.stop_requested = threading.Event()
        self.aborted = False
        self._lock = threading.Lock()
        self._sandboxes: set[Any] = set()
        self._timer: threading.Timer | None = None
        self._interrupted_at: float | None = None

    @property
    def stopping(self) -> bool:
        return self.stop_requested.is_set()

    @property
    def expired(self) -> bool:
        """Aborted, or interrupted longer ago than the grace period: stop waiting for agents."""
        if self.aborted:
            return True
        return self._interrupted_at is not None and time.monotonic() - self._interrupted_at > self.grace_s

    def register(self, sandbox: Any) -> None:
        with self._lock:
            self._sandboxes.add(sandbox)
            late = self.aborted
        if late:
            sandbox.close(grace_s=0)

    def unregister(self, sandbox: Any) -> None:
        with self._lock:
            self._sandboxes.discard(sandbox)

    def interrupt(self) -> None:
        """Stop launching runs, ask agents to stop; close sandboxes after the grace period."""
        if self.stopping:
            return
        self._interrupted_at = time.monotonic()
        self.stop_requested.set()
        self._timer = threading.Timer(self.grace_s, self._close_all)
        self._timer.daemon = True
        self._timer.start()

    def abort(self) -> None:
        """Kill every running command now."""
        self.aborted = True
        self.stop_requested.set()
        if self._timer is not None:
            self._timer.cancel()
        self._close_all()

    def _close_all(self) -> None:
        with self._lock:
            sandboxes = list(self._sandboxes)
        for sandbox in sandboxes:
            sandbox.close(grace_s=0)


@contextmanager
def handle_sigint(control: BatchControl, on_first: Callable[[], None] | None = None,
                  on_second: Callable[[], None] | None = None) -> Iterator[BatchControl]:
    """First SIGINT: ``control.interrupt()``; second: ``control.abort()``. Restores the previous
    handler afterwards. Outside the main thread it does nothing (signals go to the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield control
        return
    count = 0

    def handler(signum: int, frame: Any) -> None:
        nonlocal count
        count += 1
        if count == 1:
            control.interrupt()
            if on_first:
                on_first()
        else:
            control.abort()
            if on_second:
                on_second()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield control
    finally:
        signal.signal(signal.SIGINT, previous)
