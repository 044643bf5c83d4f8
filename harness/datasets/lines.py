"""A dataset answer's line of ``results.jsonl``, read as the one :class:`~harness.cells.CellRecord`.

A line (written by :class:`harness.datasets.recording.CellRecorder`) names its cell by test id,
target and repeat (:func:`cell_key`; a fleet names it ``test_id#repeat`` among a cell's tests),
its status (``passed``, ``failed``, ``ungraded``, or ``error`` with an ``error_kind``) and what
it measured. :func:`dataset_cell` reads it: the outcome is the status, a line with no category
is ``uncategorized`` (:func:`category_of`), an ``error`` is retryable, and a retried cell has
several lines of which the last one counts (:func:`latest_by_key`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.cells import CellRecord


def cell_key(line: dict[str, Any]) -> str:
    """The key of a line's cell: its test id, target and repeat."""
    return f"{line['test_id']}\x1f{line['target']}\x1f{line['repeat']}"


def category_of(line: dict[str, Any]) -> str:
    return line.get("category") or "uncategorized"


def latest_by_key(lines: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last line of every cell (a retried cell has several)."""
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        out[cell_key(line)] = line
    return out


def dataset_cell(line: dict[str, Any]) -> CellRecord:
    """The cell a line records (a ``KeyError`` when it names no test id, target or repeat)."""
    status = line.get("status")
    get = line.get
    return CellRecord.of(cell_key(line), f"{line['test_id']}#{line['repeat']}", category_of(line),
                         status if status in ("passed", "failed", "ungraded") else "error", status, status == "error",
                         get("score"), get("duration_ms"), get("ttft_ms"), get("tokens_in") or 0,
                         get("tokens_out") or 0, get("cost_usd"), get("error_kind"), get("run_id"), line)
