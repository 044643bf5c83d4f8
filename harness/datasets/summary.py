"""The figures of a ``bench dataset`` run: ``summary.json``, the same figures as text for a
table, and the line that says when nothing answered.

Everything here (and in :mod:`harness.datasets.exports`) reads **cells**: one model answer to one test case, graded, as a plain dict
(one line of ``results.jsonl``, written by :mod:`harness.datasets.run`)::

    {"test_id": "fizzbuzz-python", "category": "coding", "target": "openai:gpt-4o-mini",
     "provider": "openai", "model": "gpt-4o-mini", "repeat": 0,
     "status": "passed" | "failed" | "error" | "ungraded",
     "score": 0.75 | None, "threshold": 1.0 | None, "duration_ms": 812.5, "ttft_ms": 120.0 | None,
     "tokens_in": 12, "tokens_out": 40, "cost_usd": 0.00012 | None,
     "error": None | "message",
     "error_kind": None | "connect" | "dns" | "timeout" | "unavailable" | "auth" | "refused" | "error",
     "attempts": 1, "assertions": [AssertionResult.to_dict(), ...], "response": "text" | None,
     "run_id": "...", "finished_at": "2026-11-23T10:00:00Z"}

The summary
-----------

:func:`summarize` gives one block of figures per **target** (``provider:model``), side by
side, and the same block over every cell (``overall``)::

    {"confidence": 0.95,
     "targets": {"openai:gpt-4o-mini": {"target": ..., "provider": ..., "model": ..., FIGURES}, ...},
     "categories": ["coding", ...],
     "overall": {FIGURES}}

The figures of a block, in this order:

- ``cells``, ``cases`` (distinct test ids), ``passed``, ``failed``, ``errors``, ``ungraded``;
  ``error_kinds`` counts the error cells by ``error_kind``.
- ``pass_rate`` = passed / (passed + failed): the quality of the answers the model gave.
  Errors (no answer: a timeout, a refused key) are reported apart, and counted in
  ``pass_rate_all`` = passed / (passed + failed + errors). Ungraded cells (no assertion, or
  all skipped) count in neither. ``pass_rate_ci`` is the Wilson score interval of
  ``pass_rate`` at ``confidence`` (``[low, high]``). A rate with nothing to count is ``None``.
- ``mean_score``: the mean score of the graded cells (passed and failed).
- ``latency_ms`` (``p50``, ``p95``, ``p99``, ``min``, ``max``) of ``duration_ms`` and
  ``ttft_ms`` (``p50``, ``p95``), over the cells that are not errors: a timeout's duration
  is the deadline, not a latency. Percentiles interpolate linearly between ranks
  (``numpy.percentile``'s default). ``None`` values when there is no sample.
- ``tokens_in``, ``tokens_out``: totals over every cell (an error may have spent tokens);
  ``tokens_per_s``: the output tokens per second of the cells that produced some
  (sum of ``tokens_out`` / sum of their durations), ``None`` when none did.
- ``cost_total``, ``cost_per_case`` (per cell), ``cost_per_pass`` and
  ``cost_unknown_cells``. A cell whose model has no known price has ``cost_usd: None``; when
  any answered (non-error) cell of the block has one, the three cost figures are ``None``
  and ``cost_unknown_cells`` says how many: an unknown cost is never reported as 0 nor
  summed as part of a total. Error cells without a cost count as free.
- ``categories``: per category (first-seen order), ``cells``, ``passed``, ``failed``,
  ``errors``, ``ungraded``, ``pass_rate``, ``pass_rate_ci``.

The figures are those of :mod:`worker.analysis.summary`, the one summary of cells of every
engine (its statistics from :mod:`worker.analysis.stats`); a cell's status is its outcome.
Keys are in a fixed order and every value is JSON-able, so ``summary.json`` is the same bytes
for the same cells.

The table
---------

:func:`summary_table` gives the figures as text, to be laid out by the caller: one column per target
(``provider:`` over the model name, then ``overall`` when there are several), one row per
figure with ``None`` between groups of rows, pass rates with their interval
(``83.3% [72.1-90.6]``), latencies in ms, costs in dollars or ``unknown``, and the line to
show under the table when some cells ended in errors. ``harness.cli.dataset_view`` draws it
on the terminal; :func:`summary_rows` gives the same rows as plain lists for other tables.
:func:`no_answer_reason` is the one line ``bench dataset`` prints when every cell is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from harness.cells import CellRecord
from harness.datasets.lines import dataset_cell
from worker.analysis.summary import Summary
from worker.analysis.summary import summarize as summarize_cells

STATUSES = ("passed", "failed", "error", "ungraded")

#: The level of the pass-rate intervals.
CONFIDENCE = 0.95


# ---------------------------------------------------------------------------------------------
# Reading cells


def _where(cell: dict[str, Any], index: int) -> str:
    test_id, target = cell.get("test_id"), cell.get("target")
    return f"cell {index} ({test_id!r} on {target!r})"


def _checked(cells: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells as a list, each checked for the fields the figures read; a ``ValueError``
    names the cell (its position, test id and target) and the field."""
    out = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise ValueError(f"cell {index}: is a {type(cell).__name__}, not an object")
        if cell.get("status") not in STATUSES:
            raise ValueError(f"{_where(cell, index)}: status {cell.get('status')!r} is not one of "
                             f"{', '.join(STATUSES)}")
        for field in ("target", "test_id"):
            if not isinstance(cell.get(field), str) or not cell[field]:
                raise ValueError(f"{_where(cell, index)}: {field} must be a non-empty string")
        for field in ("score", "duration_ms", "ttft_ms", "tokens_in", "tokens_out", "cost_usd"):
            value = cell.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value)):
                raise ValueError(f"{_where(cell, index)}: {field} must be a finite number or null, "
                                 f"not {value!r}")
        out.append(cell)
    return out


# ---------------------------------------------------------------------------------------------
# Figures


def status_counts(cells: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for cell in cells:
        counts[cell["status"]] += 1
    return counts


def _figures(cells: list[CellRecord]) -> Summary:
    return summarize_cells(cells, level=CONFIDENCE)


def _pass_rate(figures: Summary) -> tuple[float | None, list[float] | None]:
    rate = figures.rate(("passed",), ("passed", "failed"))
    return rate.value, (None if rate.value is None else [rate.low, rate.high])


def _category_block(cells: list[CellRecord]) -> dict[str, Any]:
    figures = _figures(cells)
    pass_rate, interval = _pass_rate(figures)
    return {"cells": len(cells), "passed": figures.count("passed"), "failed": figures.count("failed"),
            "errors": figures.count("error"), "ungraded": figures.count("ungraded"), "pass_rate": pass_rate,
            "pass_rate_ci": interval}


def _block(cells: list[CellRecord]) -> dict[str, Any]:
    """The figures of one target (or of every cell), as described in the module docstring."""
    figures = _figures(cells)
    passed, failed, errors = figures.count("passed"), figures.count("failed"), figures.count("error")
    pass_rate, interval = _pass_rate(figures)

    error_kinds: dict[str, int] = {}
    for cell in cells:
        if cell.outcome == "error":
            kind = cell.error_kind or "error"
            error_kinds[kind] = error_kinds.get(kind, 0) + 1

    cost_total = figures.cost_usd
    by_category: dict[str, list[CellRecord]] = {}
    for cell in cells:
        by_category.setdefault(cell.category, []).append(cell)

    duration, ttft = figures.duration, figures.ttft
    return {
        "cells": len(cells),
        "cases": len({cell.line["test_id"] for cell in cells}),
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "ungraded": figures.count("ungraded"),
        "error_kinds": error_kinds,
        "pass_rate": pass_rate,
        "pass_rate_ci": interval,
        "pass_rate_all": figures.rate(("passed",), ("passed", "failed", "error")).value,
        "mean_score": figures.mean_score,
        "latency_ms": {"p50": duration.p50, "p95": duration.p95, "p99": duration.p99,
                       "min": duration.min, "max": duration.max},
        "ttft_ms": {"p50": ttft.p50, "p95": ttft.p95},
        "tokens_in": figures.tokens_in,
        "tokens_out": figures.tokens_out,
        "tokens_per_s": figures.tokens_per_s,
        "cost_total": cost_total,
        "cost_per_case": None if cost_total is None or not cells else cost_total / len(cells),
        "cost_per_pass": None if cost_total is None or not passed else cost_total / passed,
        "cost_unknown_cells": figures.cost_unknown,
        "categories": {name: _category_block(group) for name, group in by_category.items()},
    }


def _split_target(target: str, cells: list[CellRecord]) -> tuple[str | None, str | None]:
    if cells:
        first = cells[0].line
        if first.get("provider") is not None or first.get("model") is not None:
            return first.get("provider"), first.get("model")
    provider, sep, model = target.partition(":")
    return (provider, model) if sep else (None, target)


def summarize(cells: Iterable[dict[str, Any]], targets: list[str] | None = None) -> dict[str, Any]:
    """The content of ``summary.json``: a block of figures per target, the category names and
    an overall block (see the module docstring for every figure).

    ``targets`` fixes the order of the columns (the order of ``--model`` options); a target
    without cells still gets its block (all counts 0), and a target that has cells but is not
    listed comes after the listed ones, in the order of its first cell. Without ``targets``
    the order is that of the first cell of each. Cells are counted as given: one per line of
    ``results.jsonl``.
    """
    checked = [dataset_cell(line) for line in _checked(cells)]
    by_target: dict[str, list[CellRecord]] = {name: [] for name in (targets or [])}
    categories: dict[str, None] = {}
    for cell in checked:
        by_target.setdefault(cell.line["target"], []).append(cell)
        categories.setdefault(cell.category, None)
    blocks = {}
    for name, group in by_target.items():
        provider, model = _split_target(name, group)
        blocks[name] = {"target": name, "provider": provider, "model": model, **_block(group)}
    return {"confidence": CONFIDENCE, "targets": blocks, "categories": list(categories),
            "overall": _block(checked)}


# ---------------------------------------------------------------------------------------------
# The table as text


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.1f}%"


def _pass_rate_text(block: dict[str, Any]) -> str:
    """``83.3% [72.1-90.6]``: the pass rate and its Wilson interval."""
    rate, ci = block.get("pass_rate"), block.get("pass_rate_ci")
    if rate is None:
        return "-"
    if not ci:
        return _pct(rate)
    return f"{_pct(rate)} [{ci[0] * 100:.1f}-{ci[1] * 100:.1f}]"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if abs(value) >= 100 else f"{value:.1f} ms"


def _usd(value: float | None) -> str:
    """``$0.0123``; amounts under a tenth of a cent keep two significant digits (``$0.00012``)."""
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 0.001:
        return f"${value:.4f}"
    decimals = min(10, 1 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"


def _cost(block: dict[str, Any], figure: str) -> str:
    if block.get("cost_unknown_cells"):
        return "unknown"
    return _usd(block.get(figure))


def _category_text(block: dict[str, Any], category: str) -> str:
    figures = (block.get("categories") or {}).get(category)
    if not figures:
        return "-"
    graded = figures["passed"] + figures["failed"]
    if not graded:
        return f"- ({figures['errors']} err)" if figures["errors"] else "-"
    text = f"{_pct(figures['pass_rate'])} ({figures['passed']}/{graded})"
    return text + (f" +{figures['errors']} err" if figures["errors"] else "")


def _number(value: float | None, spec: str = ",") -> str:
    return "-" if value is None else format(value, spec)


_Row = tuple[str, Callable[[dict[str, Any]], str]]


def _rows(summary: dict[str, Any]) -> list[_Row | None]:
    """The rows of the table: a label and how to show the figure from a block; ``None`` is a
    separator."""
    blocks = [*summary.get("targets", {}).values(), summary.get("overall") or {}]
    has_ttft = any((b.get("ttft_ms") or {}).get("p50") is not None for b in blocks)
    has_unknown = any(b.get("cost_unknown_cells") for b in blocks)
    rows: list[_Row | None] = [
        ("cells", lambda b: _number(b.get("cells"))),
        ("test cases", lambda b: _number(b.get("cases"))),
        ("passed", lambda b: _number(b.get("passed"))),
        ("failed", lambda b: _number(b.get("failed"))),
        ("errors", lambda b: _number(b.get("errors"))),
        ("ungraded", lambda b: _number(b.get("ungraded"))),
        None,
        (f"pass rate [{summary.get('confidence', CONFIDENCE) * 100:g}% CI]", _pass_rate_text),
        ("pass rate incl. errors", lambda b: _pct(b.get("pass_rate_all"))),
        ("mean score", lambda b: _number(b.get("mean_score"), ".3f")),
        None,
        ("latency p50", lambda b: _ms((b.get("latency_ms") or {}).get("p50"))),
        ("latency p95", lambda b: _ms((b.get("latency_ms") or {}).get("p95"))),
        ("latency p99", lambda b: _ms((b.get("latency_ms") or {}).get("p99"))),
        ("latency min / max", lambda b: f"{_ms((b.get('latency_ms') or {}).get('min'))} / "
                                        f"{_ms((b.get('latency_ms') or {}).get('max'))}"),
    ]
    if has_ttft:
        rows += [("ttft p50", lambda b: _ms((b.get("ttft_ms") or {}).get("p50"))),
                 ("ttft p95", lambda b: _ms((b.get("ttft_ms") or {}).get("p95")))]
    rows += [
        None,
        ("tokens in / out", lambda b: f"{_number(b.get('tokens_in'))} / {_number(b.get('tokens_out'))}"),
        ("output tokens/s", lambda b: _number(b.get("tokens_per_s"), ",.1f")),
        ("cost total", lambda b: _cost(b, "cost_total")),
        ("cost per case", lambda b: _cost(b, "cost_per_case")),
        ("cost per pass", lambda b: _cost(b, "cost_per_pass")),
    ]
    if has_unknown:
        rows.append(("cells without a price", lambda b: _number(b.get("cost_unknown_cells"))))
    categories = summary.get("categories") or []
    if categories:
        rows.append(None)
        rows += [(f"pass rate: {name}", lambda b, name=name: _category_text(b, name)) for name in categories]
    return rows


def _columns(summary: dict[str, Any]) -> list[tuple[list[str], dict[str, Any]]]:
    """(header lines, block) per column: each target as ``provider:`` over ``model``, then
    ``overall`` when there is more than one target."""
    columns = []
    for name, block in (summary.get("targets") or {}).items():
        provider, sep, model = name.partition(":")
        columns.append(([provider + sep, model] if sep else [name], block))
    if len(columns) > 1 and summary.get("overall"):
        columns.append((["overall"], summary["overall"]))
    return columns


@dataclass
class SummaryTable:
    """A summary as text, one column per target: ``columns`` holds each column's header lines
    (``["openai:", "gpt-4o-mini"]``, ``["overall"]``), ``rows`` a label and one text per
    column for each figure (``None`` between groups of rows), ``error_line`` what to say under
    the table when some cells ended in errors (``None`` when none did)."""

    columns: list[list[str]]
    rows: list[tuple[str, list[str]] | None]
    error_line: str | None


def summary_table(summary: dict[str, Any]) -> SummaryTable:
    """``summary`` (from :func:`summarize`) as text: the targets as columns (``provider:`` over
    the model name, and ``overall`` when there are several), the figures as rows; pass rates
    with their interval (``83.3% [72.1-90.6]``), latencies in ms, costs in dollars or
    ``unknown``. No column when the summary has no target."""
    columns = _columns(summary)
    rows: list[tuple[str, list[str]] | None] = []
    for row in _rows(summary):
        rows.append(None if row is None else (row[0], [row[1](block) for _, block in columns]))
    return SummaryTable([lines for lines, _ in columns], rows, _error_line(summary))


def summary_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str] | None]]:
    """The table of :func:`summary_table` as plain lists: the column headers (the first empty,
    for the labels; a target is ``provider:model``) and one row per figure, ``None`` between
    groups of rows."""
    table = summary_table(summary)
    headers = [""] + ["".join(lines) for lines in table.columns]
    return headers, [None if row is None else [row[0], *row[1]] for row in table.rows]


def _error_line(summary: dict[str, Any]) -> str | None:
    overall = summary.get("overall") or {}
    errors = overall.get("errors") or 0
    if not errors:
        return None
    kinds = ", ".join(f"{kind} {count}" for kind, count in (overall.get("error_kinds") or {}).items())
    cells = "cell" if errors == 1 else "cells"
    return f"{errors} {cells} ended in an error ({kinds}), left out of the pass rate: see results.jsonl."


# ---------------------------------------------------------------------------------------------
# When nothing answered


def no_answer_reason(cells: Iterable[dict[str, Any]], urls: dict[str, str | None] | None = None) -> str | None:
    """One line saying that nothing answered, when every cell is an error (None when a cell
    was answered, or there is none): the error kinds counted, and the message of the first
    cell of the most frequent kind, followed by its target's URL (``urls``: target -> base
    URL) when the message does not name one."""
    cells = list(cells)
    if not cells or any(cell.get("status") != "error" for cell in cells):
        return None
    kinds: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    for cell in cells:
        kind = cell.get("error_kind") or "error"
        kinds[kind] = kinds.get(kind, 0) + 1
        first.setdefault(kind, cell)
    counted = sorted(kinds.items(), key=lambda kv: -kv[1])
    example = first[counted[0][0]]
    message = " ".join(str(example.get("error") or "no message").split())[:300]
    url = (urls or {}).get(example.get("target"))
    where = f" ({url})" if url and "://" not in message else ""
    return (f"nothing answered: every request failed ({', '.join(f'{k} {n}' for k, n in counted)}): "
            f"{message}{where}")

