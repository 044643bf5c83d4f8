"""A dataset run's ``results.jsonl``: one JSON line per finished cell, appended as it finishes.

:class:`ResultsLog` appends the lines (compact JSON, UTF-8 kept as is) and flushes each one at
once, or a batch of lines together; :func:`read_results` reads them back, leaving out a last
line cut short by a crash and saying where the whole lines end, so that a resumed run truncates
the torn line and appends after the last whole one. A retried cell has several lines: the last
one counts (:func:`latest_by_key`, keyed by :func:`cell_key`: test id, target and repeat).
A resumed run reads each line with :func:`recorded` for the one resume rule of :mod:`harness.cells`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.cells import Recorded

RESULTS_FILE = "results.jsonl"


def read_results(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The cells of a results.jsonl and the number of bytes that hold whole lines (a line cut
    short by a crash is not counted, so appending can start after the last whole one)."""
    cells: list[dict[str, Any]] = []
    if not path.exists():
        return cells, 0
    data = path.read_bytes()
    whole = data.rfind(b"\n") + 1
    try:
        # Every whole line parsed in one call: the parser then shares the key strings of all
        # cells (a 10,000-cell file takes a third less memory) and is quicker.
        lines = [line for line in data[:whole].split(b"\n") if line.strip()]
        parsed = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
        if all(isinstance(cell, dict) for cell in parsed):
            return parsed, whole
    except ValueError:
        pass  # a torn line: found line by line below
    good = 0
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            break
        line = data[start:end]
        if line.strip():
            try:
                cells.append(json.loads(line))
            except ValueError:
                break  # a torn line: everything from here on is rewritten
        start = good = end + 1
    return cells, good


def latest_by_key(cells: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last line of every cell (a retried cell has several)."""
    out: dict[str, dict[str, Any]] = {}
    for cell in cells:
        out[cell_key(cell)] = cell
    return out


def cell_key(cell: dict[str, Any]) -> str:
    return f"{cell['test_id']}\x1f{cell['target']}\x1f{cell['repeat']}"


def recorded(cell: dict[str, Any]) -> Recorded:
    """What a line says of its cell for the resume rule (:mod:`harness.cells`): keyed by
    :func:`cell_key`, retryable when its status is ``error``."""
    status = cell.get("status")
    return Recorded(cell_key(cell), status, status == "error")


class ResultsLog:
    """Appends one JSON line per finished cell and flushes it at once (or, with
    ``flush=False``, at the next :meth:`flush`: lines recorded together, flushed once)."""

    def __init__(self, path: Path, keep_bytes: int | None) -> None:
        self.path = path
        if keep_bytes is not None and path.exists() and path.stat().st_size != keep_bytes:
            with open(path, "r+b") as f:  # drop a line cut short by a crash
                f.truncate(keep_bytes)
        self._file = open(path, "a", encoding="utf-8")
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def append(self, cell: dict[str, Any], flush: bool = True) -> None:
        self._file.write(self._dumps(cell) + "\n")
        if flush:
            self._file.flush()

    def flush(self) -> None:
        self._file.flush()

    def close(self, sync: bool = True) -> None:
        """Close the file; ``sync`` false leaves the fsync to a later :func:`sync_file`."""
        if not self._file.closed:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())
            self._file.close()


def sync_file(path: Path) -> None:
    """fsync ``path`` if it exists."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
