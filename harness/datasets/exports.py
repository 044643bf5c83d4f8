"""The exports of a ``bench dataset`` run: ``results.json``, ``results.csv`` and a JUnit report,
written from its cells (one line of ``results.jsonl`` each; the fields are listed in
:mod:`harness.datasets.summary`), and :func:`summary_text`, the text of ``summary.json``.

- :func:`write_json`: ``{"meta", "summary", "results"}``, the summary indented and one line
  per cell; a NaN or infinite number is refused rather than written.
- :func:`write_csv`: one row per cell, the columns of :data:`CSV_COLUMNS` (the original
  tool's first); an absent value (an unknown cost among them) is an empty field.
- :func:`write_junit`: one ``<testsuite>`` per target and one ``<testcase>`` per cell; a failed
  cell lists its failing assertions, an error cell is typed by its ``error_kind``, an ungraded
  cell is skipped. Characters XML 1.0 cannot hold are replaced by U+FFFD.

Each file is written whole or not at all (:func:`harness._util.files.atomic_writer`, flushed
to disk): a temporary file beside the target is renamed over it, so a reader never sees half
a file and an interrupted write leaves the previous one. The file's mode is left to the umask.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

from harness._util.files import atomic_writer
from harness.datasets.lines import category_of
from harness.datasets.summary import status_counts

#: results.csv: the columns of the original tool first, then the rest of the cell.
CSV_COLUMNS = ("test_id", "category", "status", "duration_ms", "tokens", "cost", "model", "error",
               "provider", "target", "repeat", "score", "threshold", "ttft_ms", "tokens_in", "tokens_out",
               "error_kind", "attempts", "run_id", "finished_at")



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
    with atomic_writer(path, durable=True) as fh:
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
    with atomic_writer(path, newline="", durable=True) as fh:
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
        "classname": _xml_text(f"{dataset_name}.{category_of(cell)}"),
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
    c = status_counts(cells)
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
    with atomic_writer(path, binary=True, durable=True) as fh:
        tree.write(fh, encoding="utf-8", xml_declaration=True)
