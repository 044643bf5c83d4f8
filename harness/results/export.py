"""Stored runs as one file for notebooks and BI tools: CSV, JSONL or Parquet (docs/export.md).

One run per row (per line in JSONL), in the order the store lists them: newest first.

- **JSONL** writes each run's stored record as ``bench show --json`` prints it (the wire form:
  run fields, ``metadata``, ``evaluations``, ``telemetry``), one JSON object per line, and
  nothing else.
- **CSV and Parquet** write one column per field, in this order: the run's scalar fields
  (:data:`RUN_COLUMNS`), its telemetry (``telemetry.<field>``, :data:`TELEMETRY_FIELDS`), its
  evaluations (``eval.<evaluator>.<field>`` for the fields of :data:`EVALUATION_FIELDS`,
  evaluators sorted by name), then its metadata flattened (``metadata.<key>.<key>...``,
  sorted). The run and telemetry columns are always there; the others are those some exported
  run has. A list becomes JSON text; so does a dict whose keys, joined with ``.``, would name
  one column twice, and an empty dict (``{}``). An evaluator that appears twice in one run
  gets ``#2``, ``#3``... after its name for the later ones.

CSV and Parquet need every column before the first row is written, so the rows are written
in two passes: the runs are read from the store one by one and their rows kept in a
temporary file while the columns are collected, then the file is written from it. A file
is written whole or not at all (:func:`export_file`: a temporary file beside it, renamed at
the end). Parquet needs ``pyarrow`` (optional: ``pip install pyarrow``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness.results.records import RunRecord, Telemetry

FORMATS = ("csv", "jsonl", "parquet")
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
STREAM_FORMATS = ("csv", "jsonl")  # the formats that can go to stdout
ALL_RUNS = 10**9  # the client follows the store's pages until it has them all
PYARROW_MISSING = "Parquet needs pyarrow, which is not installed: pip install pyarrow"

# The kind of a column's values: "bool", "int", "float", "str", or "text" when runs disagree
# (text then holds strings as they are and other values as JSON).
RUN_COLUMNS: dict[str, str] = {
    "runId": "str", "batchId": "str", "suite": "str", "scenario": "str", "tier": "str", "agent": "str",
    "model": "str", "status": "str", "failureClass": "str", "startedAt": "str", "completedAt": "str",
    "totalScore": "float", "weightedScore": "float", "isSuccessful": "bool", "successMetric": "float",
    "specialistEnabled": "bool", "specialistName": "str", "specialistVersion": "str", "configHash": "str",
}
TELEMETRY_FIELDS: tuple[str, ...] = tuple(Telemetry().to_wire())
_TELEMETRY_KINDS = {"costUsd": "float", "judgeCostUsd": "float", "durationMs": "float",
                    "latenciesMs": "str", "workspaceDir": "str"}  # the rest count: "int"
EVALUATION_FIELDS: dict[str, str] = {"score": "float", "maxScore": "float", "status": "str", "details": "str"}
_INT64 = (-(2**63), 2**63 - 1)
_ROWS_PER_BATCH = 1000  # Parquet rows converted at once


class ExportError(Exception):
    """An export that cannot be done (one line: the problem and what to do)."""


@dataclass
class ExportSummary:
    runs: int
    columns: int | None  # None for JSONL, which writes records rather than columns


def format_for(path: str | os.PathLike[str]) -> str | None:
    """The format a file name asks for by its extension, None when it says none."""
    return EXTENSIONS.get(Path(path).suffix.lower())


def require_pyarrow() -> None:
    """Raise :class:`ExportError` when Parquet cannot be written here."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ExportError(PYARROW_MISSING) from None


# ------------------------------------------------------------------------------------- reading


def stored_runs(client: Any, filters: dict[str, Any], limit: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> Iterator[RunRecord]:
    """The runs ``client.list_runs`` selects with ``filters`` (its filter names, as ``bench
    history`` passes them), newest first, at most ``limit``, each read whole (evaluations and
    telemetry: ``get_run``) when it is reached. Nothing is read before the first run is asked
    for. ``progress(done, total)`` is called after each run. A run gone since it was listed is
    left out."""
    listed = client.list_runs(limit=limit or ALL_RUNS, **filters)
    total = len(listed)
    listed.reverse()  # popped from the end: each listed row is let go once read whole
    done = 0
    while listed:
        run = client.get_run(listed.pop().run_id)
        done += 1
        if run is not None:
            yield run
        if progress is not None:
            progress(done, total)


# ----------------------------------------------------------------------------------- flattening


def stored_record(run: RunRecord) -> dict[str, Any]:
    """The run's stored record in wire form, without the transcript (``bench show --json``)."""
    data = run.to_wire()
    data.pop("transcript", None)
    return data


def evaluation_names(run: RunRecord) -> list[tuple[str, Any]]:
    """(column name, evaluation) per evaluation: its evaluator's name, with ``#2``, ``#3``...
    for the later ones of an evaluator that appears more than once."""
    used: set[str] = set()
    named = []
    for evaluation in run.evaluations:
        name, n = evaluation.evaluator_name, 1
        while name in used:
            n += 1
            name = f"{evaluation.evaluator_name}#{n}"
        used.add(name)
        named.append((name, evaluation))
    return named


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _flat(value: Any, name: str) -> dict[str, Any]:
    """``value`` under ``name`` as columns: a dict flattened with ``.``, unless that would name
    a column twice or it is empty (then JSON text, as a list)."""
    if isinstance(value, (list, tuple)):
        return {name: _json_text(value)}
    if not isinstance(value, dict):
        return {name: value}
    if not value:
        return {name: "{}"}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        for column, cell in _flat(item, f"{name}.{key}").items():
            if column in flat:
                return {name: _json_text(value)}
            flat[column] = cell
    return flat


def flatten(run: RunRecord) -> dict[str, Any]:
    """The run as one row: column name -> a scalar (None, bool, int, float or str)."""
    wire = run.to_wire()
    row: dict[str, Any] = {name: wire.get(name) for name in RUN_COLUMNS}
    telemetry = wire.get("telemetry") or {}
    for name in TELEMETRY_FIELDS:
        value = telemetry.get(name)
        row[f"telemetry.{name}"] = _json_text(value) if isinstance(value, (list, tuple, dict)) else value
    for name, evaluation in evaluation_names(run):
        data = evaluation.to_wire()
        for field in EVALUATION_FIELDS:
            row[f"eval.{name}.{field}"] = data[field]
    if run.metadata:
        row.update(_flat(run.metadata, "metadata"))
    return row


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT64[0] <= value <= _INT64[1] else "text"
    if isinstance(value, float):
        return "float"
    return "str" if isinstance(value, str) else "text"


def declared_kind(name: str) -> str | None:
    """The kind of a column every run has by its name (None for metadata columns)."""
    if name in RUN_COLUMNS:
        return RUN_COLUMNS[name]
    if name.startswith("telemetry.") and name[len("telemetry."):] in TELEMETRY_FIELDS:
        return _TELEMETRY_KINDS.get(name[len("telemetry."):], "int")
    if name.startswith("eval."):
        return EVALUATION_FIELDS.get(name.rsplit(".", 1)[-1])
    return None


class Columns:
    """The columns of the rows seen so far, with the kind of their values."""

    def __init__(self) -> None:
        self.kinds: dict[str, str | None] = {}  # None: only empty cells so far

    def add(self, row: dict[str, Any]) -> None:
        for name, value in row.items():
            kind = _kind(value)
            if name not in self.kinds:
                self.kinds[name] = kind
                continue
            known = self.kinds[name]
            if kind is None or known == kind:
                continue
            if known is None:
                self.kinds[name] = kind
            elif {known, kind} == {"int", "float"}:
                self.kinds[name] = "float"
            else:
                self.kinds[name] = "text"

    def kind(self, name: str) -> str:
        return self.kinds.get(name) or declared_kind(name) or "str"

    def names(self) -> list[str]:
        """Every column in the documented order."""
        fixed = [*RUN_COLUMNS, *(f"telemetry.{f}" for f in TELEMETRY_FIELDS)]
        fields = list(EVALUATION_FIELDS)

        def evaluation_key(name: str) -> tuple[str, int]:
            field = name.rsplit(".", 1)[-1]
            return name[len("eval."):-(len(field) + 1)], fields.index(field)

        seen = set(fixed)
        evaluations = sorted((n for n in self.kinds if n.startswith("eval.") and n not in seen), key=evaluation_key)
        metadata = sorted(n for n in self.kinds if n.startswith("metadata") and n not in seen)
        return [*fixed, *evaluations, *metadata]


# -------------------------------------------------------------------------------------- writing


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _typed(value: Any, kind: str) -> Any:
    """``value`` as a Parquet column of ``kind`` holds it (integers in a ``double`` column are
    converted by pyarrow)."""
    if kind == "text" and value is not None and not isinstance(value, str):
        return _json_text(value)
    return value


def write_jsonl(runs: Iterable[RunRecord], out: IO[bytes]) -> ExportSummary:
    count = 0
    for run in runs:
        out.write(json.dumps(stored_record(run), ensure_ascii=False).encode("utf-8") + b"\n")
        count += 1
    return ExportSummary(runs=count, columns=None)


def _spill(runs: Iterable[RunRecord], spill: IO[str]) -> tuple[Columns, int]:
    """First pass: every run's row into ``spill`` (a JSON line each); the columns and the count."""
    columns = Columns()
    count = 0
    for run in runs:
        row = flatten(run)
        columns.add(row)
        spill.write(json.dumps(row) + "\n")
        count += 1
    spill.seek(0)
    return columns, count


def _rows(spill: IO[str]) -> Iterator[dict[str, Any]]:
    for line in spill:
        yield json.loads(line)


def write_csv(runs: Iterable[RunRecord], out: IO[bytes]) -> ExportSummary:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spill:
        columns, count = _spill(runs, spill)
        names = columns.names()
        text = io.TextIOWrapper(out, encoding="utf-8", newline="")
        try:
            writer = csv.writer(text)
            writer.writerow(names)
            for row in _rows(spill):
                writer.writerow([_csv_cell(row.get(name)) for name in names])
            text.flush()
        finally:
            text.detach()  # the caller closes ``out``
    return ExportSummary(runs=count, columns=len(names))


def write_parquet(runs: Iterable[RunRecord], out: IO[bytes]) -> ExportSummary:
    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string(), "text": pa.string()}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spill:
        columns, count = _spill(runs, spill)
        names = columns.names()
        kinds = [columns.kind(name) for name in names]
        schema = pa.schema([pa.field(name, types[kind]) for name, kind in zip(names, kinds)])
        with pq.ParquetWriter(out, schema) as writer:
            chunk: list[dict[str, Any]] = []
            for row in _rows(spill):
                chunk.append(row)
                if len(chunk) == _ROWS_PER_BATCH:
                    writer.write_batch(_batch(pa, schema, names, kinds, chunk))
                    chunk = []
            if chunk or not count:
                writer.write_batch(_batch(pa, schema, names, kinds, chunk))
    return ExportSummary(runs=count, columns=len(names))


def _batch(pa: Any, schema: Any, names: list[str], kinds: list[str], rows: list[dict[str, Any]]) -> Any:
    arrays = [pa.array([_typed(row.get(name), kind) for row in rows], type=field.type)
              for name, kind, field in zip(names, kinds, schema)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


WRITERS: dict[str, Callable[[Iterable[RunRecord], IO[bytes]], ExportSummary]] = {
    "csv": write_csv, "jsonl": write_jsonl, "parquet": write_parquet}


def write_runs(runs: Iterable[RunRecord], fmt: str, out: IO[bytes]) -> ExportSummary:
    """Write ``runs`` to the binary stream ``out`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in WRITERS:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    return WRITERS[fmt](runs, out)


def export_file(runs: Iterable[RunRecord], fmt: str, path: Path) -> ExportSummary:
    """Write ``runs`` to ``path`` whole or not at all: into a temporary file beside it, which
    is created before the first run is read (an unwritable place fails with ``OSError`` first)
    and renamed over ``path`` at the end, or removed when anything failed."""
    if fmt == "parquet":
        require_pyarrow()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            summary = write_runs(runs, fmt, out)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    return summary
