"""Fewer garbage collections while a long piece of work keeps many objects alive.

CPython collects its youngest generation every 700 net allocations, and now and then walks
every object the process holds. A fleet or a large manifest keeps tens of thousands of
objects (datasets, cases, results) alive for the whole run, and those walks then cost more
than the work they interrupt: a cold ``bench fleet validate`` of 1,000 repositories and the
event loop of a running fleet both spend a measurable share of their time in them
(docs/PERFORMANCE.md). Within :func:`fewer_collections` the objects alive on entry are left
out of collections (:func:`gc.freeze`) and the youngest generation is collected every
``threshold`` allocations; garbage is still freed by reference counting as always, and
cycles are still collected, less often. Everything is restored on exit.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

THRESHOLD = 20_000  # allocations between collections of the youngest generation (CPython: 700)

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextlib.contextmanager
def fewer_collections(threshold: int = THRESHOLD) -> Iterator[None]:
    """Collect less often within the block (see the module docstring). Nested or concurrent
    uses share the outermost one's setting; the last to leave restores the thresholds and
    unfreezes what was frozen."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(threshold, _saved[0]), *_saved[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None
