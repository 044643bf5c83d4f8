"""The files of a fleet run directory, ``<base_dir>/<run_id>/``:

- ``manifest.json``: the normalised manifest the run was started with (resume reads it:
  :func:`load_run_manifest`);
- ``status.json``: where the run is (state, cells and tests done, pid), rewritten whole and
  atomically (:func:`write_status`);
- ``cells.jsonl``: one line per cell as it ends (completed, failed or interrupted); the last
  line of each cell counts and a torn last line is ignored (:func:`read_cells_log`);
- ``<repo_id>/<provider>_<model>/<profile>/``: a cell's own results. A dataset cell is a
  ``bench dataset`` output directory (``results.jsonl`` appended as each answer is graded,
  ``results.json``, ``results.csv``, ``summary.json``, and ``responses/``, one file per answer
  written here); a suite cell has ``results.jsonl`` (one line per scenario run as it is stored)
  and, written here from it, ``results.json``, ``results.csv`` and ``responses/``;
- the fleet artifacts of :mod:`harness.fleet.artifacts` (``fleet-results.json`` first) at the end.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness._util.clock import now_iso
from harness._util.files import atomic_writer, write_json_atomic
from harness.fleet.cells import safe_name
from harness.fleet.manifest import Manifest, ManifestError, parse_manifest

MANIFEST_FILE = "manifest.json"
STATUS_FILE = "status.json"
CELLS_FILE = "cells.jsonl"
RESULTS_FILE = "fleet-results.json"
TERMINAL_STATES = ("completed", "failed", "interrupted")


# --------------------------------------------------------------------------- the run's own files


def write_status(run_dir: Path, /, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into ``status.json`` (written whole, atomically) and return it."""
    path = run_dir / STATUS_FILE
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        status = {}
    status.update(fields)
    status["updated_at"] = now_iso()
    write_json_atomic(path, status)
    return status


def read_cells_log(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The last line of every cell in ``cells.jsonl`` (a torn last line is ignored)."""
    out: dict[str, dict[str, Any]] = {}
    path = run_dir / CELLS_FILE
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        out[entry["key"]] = entry
    return out


def load_run_manifest(run_dir: Path) -> tuple[Manifest, dict[str, Any]]:
    """The manifest a run was started with, and the rest of its ``manifest.json``."""
    path = run_dir / MANIFEST_FILE
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(str(path), ["no such file (not a fleet run directory)"]) from None
    except ValueError as exc:
        raise ManifestError(str(path), [f"not JSON: {exc}"]) from None
    manifest = parse_manifest(saved["manifest"], source=saved.get("source", str(path)), root=Path(saved["root"]))
    return manifest, saved


# --------------------------------------------------------------------------- a cell's own outputs


_RESPONSE_KEYS = sorted(("test_id", "category", "target", "repeat", "status", "score", "response", "assertions",
                         "error", "duration_ms", "run_id"))


def _response_text(cell: dict[str, Any]) -> str:
    """A response file: one key per line, in key order, each value on its line (the C encoder
    writes each value; an indented dump would go through the pure-Python one)."""
    return "{\n" + ",\n".join(f'  "{k}": ' + json.dumps(cell.get(k), sort_keys=True, ensure_ascii=False)
                               for k in _RESPONSE_KEYS) + "\n}\n"


def write_dataset_responses(directory: Path, cells: list[dict[str, Any]]) -> None:
    """``responses/<test id>.r<repeat>.json`` of each cell. Written in place: the cell is
    recorded done only after this, so a file cut short by a crash is written again on resume."""
    out = directory / "responses"
    out.mkdir(exist_ok=True)
    base = str(out) + os.sep
    for cell in cells:
        with open(f"{base}{safe_name(str(cell['test_id']))}.r{cell['repeat']}.json", "w", encoding="utf-8") as f:
            f.write(_response_text(cell))


_SUITE_COLUMNS = ("scenario", "suite", "tier", "iteration", "status", "is_successful", "score", "duration_ms",
                  "tokens_in", "tokens_out", "cost_usd", "failure_class", "agent", "model", "run_id")


def write_suite_outputs(directory: Path, lines: list[dict[str, Any]], save_responses: bool) -> None:
    """A suite cell's ``results.json``, ``results.csv`` (and ``responses/<scenario>.<tier>.i<n>.json``
    with ``save_responses``) from the lines of its ``results.jsonl``: the last line of each
    scenario, tier and iteration, in that order."""
    import csv

    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in lines:
        latest[(line["scenario"], line["tier_asked"], line["iteration"])] = line
    runs = [latest[k] for k in sorted(latest, key=lambda k: (k[0], k[1], k[2]))]
    write_json_atomic(directory / "results.json", {"runs": [{k: r.get(k) for k in _SUITE_COLUMNS} for r in runs]})
    with atomic_writer(directory / "results.csv", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(_SUITE_COLUMNS)
        for r in runs:
            writer.writerow(["" if r.get(k) is None else r.get(k) for k in _SUITE_COLUMNS])
    if save_responses:
        out = directory / "responses"
        out.mkdir(exist_ok=True)
        for r in runs:
            name = f"{safe_name(r['scenario'])}.{safe_name(r['tier_asked'])}.i{r['iteration']}.json"
            write_json_atomic(out / name, {k: r.get(k) for k in ("scenario", "tier", "iteration", "status", "score",
                                                                  "response", "evaluations", "run_id")})
