"""A fleet cell (one repository × provider × profile) and the tests its results file records.

Both the executor (:mod:`harness.fleet.execute`), which plans and runs the cells, and the
artifacts (:mod:`harness.fleet.artifacts`), which sum them up, read a cell's tests from the
``results.jsonl`` in its directory (:data:`CELL_RESULTS`): a dataset cell's graded answers or a
suite cell's stored scenario runs, each line read as a :class:`~harness.cells.CellRecord`, one
outcome per planned test (:func:`cell_tests`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cells import CellRecord
from harness.datasets.lines import dataset_cell
from harness.fleet.manifest import DatasetLookup, Profile, Repository
from harness.models.providers.registry import Target
from harness.results_log import read_results
from harness.scenarios.lines import scenario_cell

#: A cell's results, one line per test as it ends, in the cell's directory.
CELL_RESULTS = "results.jsonl"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """``text`` as one path component: runs of other characters become ``-``."""
    return _UNSAFE.sub("-", text).strip("-.") or "-"


@dataclass
class FleetCell:
    """One repository × provider × profile, and the tests it plans."""

    repo: Repository
    target: Target
    profile: Profile
    lookup: DatasetLookup | None = None  # dataset profiles
    planned: list[tuple[str, str]] = field(default_factory=list)  # (test key, category)
    problem: str | None = None  # why it cannot run (found while planning)

    @property
    def key(self) -> str:
        return f"{self.repo.repo_id}|{self.target.spec}|{self.profile.name}"

    @property
    def relative_dir(self) -> str:
        return f"{self.repo.repo_id}/{safe_name(self.target.prefix)}_{safe_name(self.target.model)}/{self.profile.name}"

    @property
    def kind(self) -> str:
        return self.profile.kind

    @property
    def source(self) -> str:
        if self.kind == "suite":
            return f"suite {self.profile.suite}"
        if self.lookup is None or self.lookup.ref is None:
            return f"{self.profile.dataset} (not found)"
        return f"{self.lookup.ref} (built-in)" if self.lookup.builtin else self.lookup.ref


def _test(cell: CellRecord) -> dict[str, Any]:
    """A recorded cell as a fleet test: ``succeeded`` when it passed, ``skipped`` when it could not
    be graded, ``timeout`` when it ran out of time, else ``failed`` (an error included)."""
    if cell.outcome == "passed":
        outcome = "succeeded"
    elif cell.outcome == "ungraded":
        outcome = "skipped"
    elif cell.timed_out:
        outcome = "timeout"
    else:
        outcome = "failed"
    return {"key": cell.test, "category": cell.category, "outcome": outcome, "error": cell.status == "error",
            "duration_ms": cell.duration_ms, "tokens": int(cell.tokens_in) + int(cell.tokens_out),
            "cost_usd": cell.cost_usd}


def cell_tests(cell: FleetCell, run_dir: Path, lines: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The tests a cell has recorded (the last line of each), planned ones only, then a
    ``skipped`` test for every planned one with no line. ``lines``: the cell's results lines
    when they are at hand (else its results file is read)."""
    if lines is None:
        lines, _ = read_results(run_dir / cell.relative_dir / CELL_RESULTS)
    read = scenario_cell if cell.kind == "suite" else dataset_cell
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        try:
            test = _test(read(line))
        except KeyError:
            continue
        found[test["key"]] = test
    out = []
    for key, category in cell.planned:
        test = found.get(key) or {"key": key, "category": category, "outcome": "skipped", "error": False,
                                  "duration_ms": None, "tokens": 0, "cost_usd": None}
        out.append({**test, "repo_id": cell.repo.repo_id, "provider": cell.target.spec, "profile": cell.profile.name})
    return out
