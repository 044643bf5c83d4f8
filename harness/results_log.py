"""The results log: a ``results.jsonl`` of one JSON line per finished cell, appended as it ends.

It is the recorder of the cells (:class:`harness.cells.CellRecord`) of a dataset run and of a fleet's
suite cells (a scenario run is also stored in the run store). :class:`ResultsLog` appends each
cell's line (compact JSON, UTF-8 kept as is) and flushes it at once, or a batch of lines
together; :func:`read_results` reads the lines back, leaving out a last line cut short by a
crash and saying where the whole lines end, so that a resumed run truncates the torn line and
appends after the last whole one. A retried cell has several lines, of which the last counts;
each engine reads its lines as cells (:mod:`harness.datasets.lines`,
:mod:`harness.scenarios.lines`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.cells import CellRecord

RESULTS_FILE = "results.jsonl"


def read_results(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The lines of a results.jsonl, oldest first, and the number of bytes that hold whole lines (a line cut
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


class ResultsLog:
    """Appends the line of each finished cell and flushes it at once (or, with ``flush=False``,
    at the next :meth:`flush`: lines recorded together, flushed once)."""

    def __init__(self, path: Path, keep_bytes: int | None) -> None:
        self.path = path
        if keep_bytes is not None and path.exists() and path.stat().st_size != keep_bytes:
            with open(path, "r+b") as f:  # drop a line cut short by a crash
                f.truncate(keep_bytes)
        self._file = open(path, "a", encoding="utf-8")
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def append(self, cell: CellRecord, flush: bool = True) -> None:
        self._file.write(self._dumps(cell.line) + "\n")
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
