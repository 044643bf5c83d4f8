"""The figures and exports of a ``bench dataset`` run: ``summary.json``, ``results.json``,
``results.csv``, a JUnit report and the terminal table.

Everything here reads **cells**: one model answer to one test case, graded, as a plain dict
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

The statistics come from :mod:`worker.analysis.stats`, the project's one statistics module.
Keys are in a fixed order and every value is JSON-able, so ``summary.json`` is the same bytes
for the same cells.

Exports
-------

:func:`write_json`, :func:`write_csv` and :func:`write_junit` each write a temporary file
beside the target and rename it over the target (``os.replace``), so a reader never sees half
a file and an interrupted write leaves the previous one.

The terminal
------------

:func:`render_summary` prints the targets as columns and the figures as rows on the console
it is given. It only calls the console's ``print`` and reads its ``width``: by the rules of
docs/architecture.md only ``harness/cli/`` imports ``rich``, so the table is laid out here as
text (:func:`summary_rows` gives the same rows to whoever wants to draw them otherwise).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from worker.analysis.stats import percentiles, wilson_interval

STATUSES = ("passed", "failed", "error", "ungraded")

#: The level of the pass-rate intervals.
CONFIDENCE = 0.95

#: results.csv: the columns of the original tool first, then the rest of the cell.
CSV_COLUMNS = ("test_id", "category", "status", "duration_ms", "tokens", "cost", "model", "error",
               "provider", "target", "repeat", "score", "threshold", "ttft_ms", "tokens_in", "tokens_out",
               "error_kind", "attempts", "run_id", "finished_at")


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


def _category(cell: dict[str, Any]) -> str:
    return cell.get("category") or "uncategorized"


# ---------------------------------------------------------------------------------------------
# Figures


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None


def _interval(k: int, n: int) -> list[float] | None:
    if not n:
        return None
    low, high = wilson_interval(k, n, CONFIDENCE)
    return [low, high]


def _counts(cells: list[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for cell in cells:
        counts[cell["status"]] += 1
    return counts


def _category_block(cells: list[dict[str, Any]]) -> dict[str, Any]:
    c = _counts(cells)
    graded = c["passed"] + c["failed"]
    return {"cells": len(cells), "passed": c["passed"], "failed": c["failed"], "errors": c["error"],
            "ungraded": c["ungraded"], "pass_rate": _rate(c["passed"], graded),
            "pass_rate_ci": _interval(c["passed"], graded)}


def _block(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one target (or of every cell), as described in the module docstring."""
    c = _counts(cells)
    passed, failed, errors = c["passed"], c["failed"], c["error"]
    answered = [cell for cell in cells if cell["status"] != "error"]

    error_kinds: dict[str, int] = {}
    for cell in cells:
        if cell["status"] == "error":
            kind = cell.get("error_kind") or "error"
            error_kinds[kind] = error_kinds.get(kind, 0) + 1

    scores = [cell["score"] for cell in cells if cell["status"] in ("passed", "failed") and cell.get("score") is not None]
    durations = [cell["duration_ms"] for cell in answered if cell.get("duration_ms") is not None]
    ttfts = [cell["ttft_ms"] for cell in answered if cell.get("ttft_ms") is not None]

    tokens_in = sum(cell.get("tokens_in") or 0 for cell in cells)
    tokens_out = sum(cell.get("tokens_out") or 0 for cell in cells)
    producing = [cell for cell in cells if (cell.get("tokens_out") or 0) > 0 and (cell.get("duration_ms") or 0) > 0]
    seconds = math.fsum(cell["duration_ms"] for cell in producing) / 1000.0
    tokens_per_s = sum(cell["tokens_out"] for cell in producing) / seconds if producing else None

    unknown = sum(1 for cell in answered if cell.get("cost_usd") is None)
    if unknown:
        cost_total = cost_per_case = cost_per_pass = None
    else:
        cost_total = math.fsum(cell.get("cost_usd") or 0.0 for cell in cells)
        cost_per_case = cost_total / len(cells) if cells else None
        cost_per_pass = cost_total / passed if passed else None

    by_category: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        by_category.setdefault(_category(cell), []).append(cell)

    return {
        "cells": len(cells),
        "cases": len({cell["test_id"] for cell in cells}),
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "ungraded": c["ungraded"],
        "error_kinds": error_kinds,
        "pass_rate": _rate(passed, passed + failed),
        "pass_rate_ci": _interval(passed, passed + failed),
        "pass_rate_all": _rate(passed, passed + failed + errors),
        "mean_score": math.fsum(scores) / len(scores) if scores else None,
        "latency_ms": {**dict(zip(("p50", "p95", "p99"), percentiles(durations, (50, 95, 99)))),
                       "min": min(durations, default=None), "max": max(durations, default=None)},
        "ttft_ms": dict(zip(("p50", "p95"), percentiles(ttfts, (50, 95)))),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "tokens_per_s": tokens_per_s,
        "cost_total": cost_total,
        "cost_per_case": cost_per_case,
        "cost_per_pass": cost_per_pass,
        "cost_unknown_cells": unknown,
        "categories": {name: _category_block(group) for name, group in by_category.items()},
    }


def _split_target(target: str, cells: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    if cells:
        first = cells[0]
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
    checked = _checked(cells)
    by_target: dict[str, list[dict[str, Any]]] = {name: [] for name in (targets or [])}
    categories: dict[str, None] = {}
    for cell in checked:
        by_target.setdefault(cell["target"], []).append(cell)
        categories.setdefault(_category(cell), None)
    blocks = {}
    for name, group in by_target.items():
        provider, model = _split_target(name, group)
        blocks[name] = {"target": name, "provider": provider, "model": model, **_block(group)}
    return {"confidence": CONFIDENCE, "targets": blocks, "categories": list(categories),
            "overall": _block(checked)}


# ---------------------------------------------------------------------------------------------
# Files


@contextmanager
def _atomic(path: str | os.PathLike[str], newline: str | None = None, binary: bool = False) -> Iterator[IO[Any]]:
    """A file opened for writing beside ``path`` that replaces ``path`` when the block ends
    without an exception, and is removed otherwise."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    # os.open with 0o666 lets the umask decide the mode, as for any file the user writes
    # (tempfile.mkstemp would make it private).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if binary:
            fh = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding="utf-8", newline=newline)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def summary_text(summary: dict[str, Any]) -> str:
    """``summary`` as indented JSON (what ``summary.json`` holds, and ``results.json`` within)."""
    return json.dumps(summary, ensure_ascii=False, allow_nan=False, indent=2)


def write_json(path: str | os.PathLike[str], cells: Iterable[dict[str, Any]], summary: dict[str, Any] | str,
               meta: dict[str, Any]) -> None:
    """``results.json``: ``{"meta": meta, "summary": summary, "results": cells}``, UTF-8.
    ``meta`` and ``summary`` are indented (``summary`` may be given as :func:`summary_text`
    already); each cell is one line, as in ``results.jsonl`` (which keeps a 10,000-cell file
    quick to write and to diff). A NaN or infinite number is refused (``ValueError``) rather
    than written as something JSON readers reject."""

    def dumps(value: Any, indent: int | None = None) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)

    summary = summary if isinstance(summary, str) else summary_text(summary)
    # JSON strings hold no raw newline, so re-indenting the lines of a dump is safe. Written
    # piece by piece: the whole text of a large run is never held at once.
    with _atomic(path) as fh:
        fh.write('{\n  "meta": ' + dumps(meta, 2).replace("\n", "\n  "))
        fh.write(',\n  "summary": ' + summary.replace("\n", "\n  "))
        fh.write(',\n  "results": [')
        separator = "\n    "
        for cell in cells:
            fh.write(separator + dumps(cell))
            separator = ",\n    "
        fh.write("\n  ]\n}\n")


def _csv_value(value: Any) -> Any:
    return "" if value is None else value


def _csv_row(cell: dict[str, Any]) -> list[Any]:
    get = cell.get
    tokens_in, tokens_out = get("tokens_in"), get("tokens_out")
    tokens = "" if tokens_in is None and tokens_out is None else (tokens_in or 0) + (tokens_out or 0)
    row = [get("test_id"), get("category"), get("status"), get("duration_ms"), tokens, get("cost_usd"),
           get("model"), get("error"), get("provider"), get("target"), get("repeat"), get("score"),
           get("threshold"), get("ttft_ms"), tokens_in, tokens_out, get("error_kind"), get("attempts"),
           get("run_id"), get("finished_at")]
    return [_csv_value(v) for v in row]


def write_csv(path: str | os.PathLike[str], cells: Iterable[dict[str, Any]]) -> None:
    """``results.csv``: one row per cell, the columns of :data:`CSV_COLUMNS`. ``tokens`` is
    ``tokens_in + tokens_out``; ``cost`` is ``cost_usd``, empty when the price is unknown (as
    is every other absent value)."""
    with _atomic(path, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(_csv_row(cell) for cell in cells)


# Characters XML 1.0 cannot hold (control characters, lone surrogates, U+FFFE/U+FFFF): a model
# answer may contain them, and a report with one would not parse.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: Any) -> str:
    return _XML_INVALID.sub("\ufffd", "" if value is None else str(value))


def _seconds(cell: dict[str, Any]) -> float:
    return (cell.get("duration_ms") or 0) / 1000.0


def _assertion_line(result: dict[str, Any]) -> str:
    if result.get("skipped"):
        state = "skip"
    else:
        state = "pass" if result.get("passed") else "FAIL"
    score = result.get("score")
    head = f"{state} {result.get('type', '?')}"
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        head += f" score {score:.2f}"
        if isinstance(result.get("threshold"), (int, float)):
            head += f" (threshold {result['threshold']:g})"
    detail = result.get("detail")
    return f"{head}: {detail}" if detail else head


def _failure_message(cell: dict[str, Any]) -> str:
    """What failed: each failing assertion's type and detail; the case's score against its
    threshold when the case has one."""
    results = [r for r in cell.get("assertions") or [] if isinstance(r, dict)]
    failing = [r for r in results if not r.get("skipped") and r.get("passed") is False]
    parts = []
    score, threshold = cell.get("score"), cell.get("threshold")
    if isinstance(score, (int, float)) and isinstance(threshold, (int, float)) and score < threshold:
        parts.append(f"score {score:.2f} below threshold {threshold:g}")
    parts.extend(f"{r.get('type', '?')}: {r.get('detail') or 'failed'}" for r in failing)
    return "; ".join(parts) or "failed"


def _testcase(parent: ET.Element, cell: dict[str, Any], dataset_name: str) -> None:
    case = ET.SubElement(parent, "testcase", {
        "name": _xml_text(f"{cell.get('test_id')}#{cell.get('repeat', 0)}"),
        "classname": _xml_text(f"{dataset_name}.{_category(cell)}"),
        "time": f"{_seconds(cell):.3f}",
    })
    status = cell.get("status")
    if status == "failed":
        failure = ET.SubElement(case, "failure", {"message": _xml_text(_failure_message(cell)), "type": "assertion"})
        failure.text = _xml_text("\n".join(_assertion_line(r) for r in cell.get("assertions") or []
                                           if isinstance(r, dict)))
        if cell.get("response") is not None:
            ET.SubElement(case, "system-out").text = _xml_text(cell["response"])
    elif status == "error":
        message = cell.get("error") or "error"
        error = ET.SubElement(case, "error", {"message": _xml_text(message),
                                              "type": _xml_text(cell.get("error_kind") or "error")})
        error.text = _xml_text(f"{message}\nattempts: {cell.get('attempts')}")
    elif status == "ungraded":
        ET.SubElement(case, "skipped", {"message": "ungraded: no assertion applied"})


def _suite_counts(element: ET.Element, cells: list[dict[str, Any]]) -> None:
    c = _counts(cells)
    element.set("tests", str(len(cells)))
    element.set("failures", str(c["failed"]))
    element.set("errors", str(c["error"]))
    element.set("skipped", str(c["ungraded"]))
    element.set("time", f"{math.fsum(_seconds(cell) for cell in cells):.3f}")


def write_junit(path: str | os.PathLike[str], cells: Iterable[dict[str, Any]], dataset_name: str) -> None:
    """A JUnit XML report: ``<testsuites name=DATASET>`` holding one ``<testsuite>`` per target
    (first-seen order) and one ``<testcase name="TEST_ID#REPEAT" classname="DATASET.CATEGORY">``
    per cell. A failed cell has a ``<failure>`` whose message lists the failing assertions
    (and the score against the case's threshold) and whose text gives every assertion, with
    the answer in ``<system-out>``; an error cell has an ``<error>`` typed by its
    ``error_kind``; an ungraded cell is ``<skipped>``. ``tests``, ``failures``, ``errors``,
    ``skipped`` and ``time`` (seconds) are set on every suite and on the root."""
    cells = list(cells)
    by_target: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        by_target.setdefault(str(cell.get("target")), []).append(cell)
    root = ET.Element("testsuites", {"name": _xml_text(dataset_name)})
    _suite_counts(root, cells)
    for target, group in by_target.items():
        suite = ET.SubElement(root, "testsuite", {"name": _xml_text(target)})
        _suite_counts(suite, group)
        properties = ET.SubElement(suite, "properties")
        for name, value in (("dataset", dataset_name), ("provider", group[0].get("provider")),
                            ("model", group[0].get("model"))):
            if value is not None:
                ET.SubElement(properties, "property", {"name": name, "value": _xml_text(value)})
        for cell in group:
            _testcase(suite, cell, dataset_name)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    with _atomic(path, binary=True) as fh:
        tree.write(fh, encoding="utf-8", xml_declaration=True)


# ---------------------------------------------------------------------------------------------
# The terminal table


class _Console(Protocol):
    """What :func:`render_summary` uses of a ``rich.console.Console``."""

    width: int

    def print(self, *objects: Any, **options: Any) -> None: ...


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


def summary_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str] | None]]:
    """The table of :func:`render_summary` as text: the column headers (the first empty, for
    the labels; a target is ``provider:model``) and one row per figure, ``None`` between
    groups of rows."""
    columns = _columns(summary)
    headers = [""] + ["".join(lines) for lines, _ in columns]
    rows: list[list[str] | None] = []
    for row in _rows(summary):
        rows.append(None if row is None else [row[0]] + [row[1](block) for _, block in columns])
    return headers, rows


_GAP = 2
_MAX_HEADER = 28   # a longer model name is wrapped over several header lines


def _wrap(text: str, width: int) -> list[str]:
    return [text[i:i + width] for i in range(0, len(text), width)] or [""]


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


def _error_hint(summary: dict[str, Any]) -> str | None:
    overall = summary.get("overall") or {}
    errors = overall.get("errors") or 0
    if not errors:
        return None
    kinds = ", ".join(f"{kind} {count}" for kind, count in (overall.get("error_kinds") or {}).items())
    cells = "cell" if errors == 1 else "cells"
    return f"{errors} {cells} ended in an error ({kinds}), left out of the pass rate: see results.jsonl."


def render_summary(summary: dict[str, Any], console: _Console) -> None:
    """Print ``summary`` (from :func:`summarize`) as a table: the targets as columns
    (``provider:`` over the model name, and ``overall`` when there are several), the figures
    as rows; pass rates with their interval (``83.3% [72.1-90.6]``), latencies in ms, costs
    in dollars or ``unknown``. Columns that do not fit the console's width go to a further
    table that repeats the labels. When some cells ended in errors, one more line says how
    many and where to look."""
    columns = _columns(summary)
    rows = _rows(summary)
    if not columns:
        console.print("No results.", markup=False, highlight=False)
        return
    labels = [row[0] if row else "" for row in rows]
    label_width = max(len(label) for label in labels)
    values = [[row[1](block) if row else "" for row in rows] for _, block in columns]
    headers = []
    for (lines, _), texts in zip(columns, values):
        width = max(max(len(t) for t in texts), min(_MAX_HEADER, max(len(line) for line in lines)))
        wrapped = [part for line in lines for part in _wrap(line, width)]
        headers.append((wrapped, width))

    available = max(getattr(console, "width", 100) or 100, 40)
    chunks: list[list[int]] = [[]]
    used = label_width
    for index, (_, width) in enumerate(headers):
        if chunks[-1] and used + _GAP + width > available:
            chunks.append([])
            used = label_width
        chunks[-1].append(index)
        used += _GAP + width

    gap = " " * _GAP
    for number, chunk in enumerate(chunks):
        if number:
            console.print("", markup=False, highlight=False)
        height = max(len(headers[i][0]) for i in chunk)
        for line in range(height):
            cells = []
            for i in chunk:
                header, width = headers[i]
                # headers sit on the last lines, just above the figures
                offset = line - (height - len(header))
                cells.append((header[offset] if offset >= 0 else "").rjust(width))
            console.print(" " * label_width + gap + gap.join(cells), markup=False, highlight=False,
                          soft_wrap=True, style="bold")
        rule = "─" * label_width + gap + gap.join("─" * headers[i][1] for i in chunk)
        console.print(rule, markup=False, highlight=False, soft_wrap=True)
        for r, row in enumerate(rows):
            if row is None:
                if 0 < r < len(rows) - 1:
                    console.print("", markup=False, highlight=False)
                continue
            line_text = labels[r].ljust(label_width) + gap + gap.join(
                values[i][r].rjust(headers[i][1]) for i in chunk)
            console.print(line_text, markup=False, highlight=False, soft_wrap=True)
    hint = _error_hint(summary)
    if hint:
        console.print(hint, markup=False, highlight=False, style="yellow")
