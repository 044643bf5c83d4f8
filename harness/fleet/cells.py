"""A fleet cell (one repository × provider × profile) and the tests its results file records.

Both the executor (:mod:`harness.fleet.execute`), which plans and runs the cells, and the
artifacts (:mod:`harness.fleet.artifacts`), which sum them up, read a cell's tests from the
``results.jsonl`` in its directory (:data:`CELL_RESULTS`): a dataset cell's graded answers or a
suite cell's stored scenario runs, one outcome per planned test (:func:`cell_tests`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fleet.manifest import DatasetLookup, Profile, Repository
from harness.models.providers.registry import Target

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


def _dataset_test(line: dict[str, Any]) -> dict[str, Any]:
    status = line.get("status")
    if status == "passed":
        outcome = "succeeded"
    elif status == "ungraded":
        outcome = "skipped"
    elif status == "error" and line.get("error_kind") == "timeout":
        outcome = "timeout"
    else:
        outcome = "failed"
    return {"key": f"{line['test_id']}#{line['repeat']}", "category": line.get("category") or "uncategorized",
            "outcome": outcome, "error": status == "error", "duration_ms": line.get("duration_ms"),
            "tokens": int(line.get("tokens_in") or 0) + int(line.get("tokens_out") or 0),
            "cost_usd": line.get("cost_usd")}


def _suite_test(line: dict[str, Any]) -> dict[str, Any]:
    if line.get("is_successful"):
        outcome = "succeeded"
    elif line.get("status") == "timeout":
        outcome = "timeout"
    else:
        outcome = "failed"
    return {"key": f"{line['scenario']}#{line['tier_asked']}#{line['iteration']}", "category": line.get("suite") or "",
            "outcome": outcome, "error": line.get("status") == "error", "duration_ms": line.get("duration_ms"),
            "tokens": int(line.get("tokens_in") or 0) + int(line.get("tokens_out") or 0),
            "cost_usd": line.get("cost_usd")}


def cell_tests(cell: FleetCell, run_dir: Path, lines: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The tests a cell has recorded (the last line of each), planned ones only, then a
    ``skipped`` test for every planned one with no line. ``lines``: the cell's results lines
    when they are at hand (else its results file is read)."""
    from harness.datasets.results_log import read_results

    if lines is None:
        lines, _ = read_results(run_dir / cell.relative_dir / CELL_RESULTS)
    convert = _suite_test if cell.kind == "suite" else _dataset_test
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        try:
            test = convert(line)
        except KeyError:
            continue
        found[test["key"]] = test
    out = []
    for key, category in cell.planned:
        test = found.get(key) or {"key": key, "category": category, "outcome": "skipped", "error": False,
                                  "duration_ms": None, "tokens": 0, "cost_usd": None}
        out.append({**test, "repo_id": cell.repo.repo_id, "provider": cell.target.spec, "profile": cell.profile.name})
    return out
