"""The fleet's results and the files it leaves: ``fleet-results.json`` (always: ``status``,
``wait`` and the report read it), ``fleet-results.yaml``, ``csv/fleet-summary.csv``,
``csv/repositories.csv``, ``csv/providers.csv``, ``csv/categories.csv`` and
``executive-report.html``, as the manifest's ``output.formats`` and ``generate_reports`` ask.

``fleet-results.json`` is written with sorted keys, so the same results give the same bytes.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from pathlib import Path
from typing import Any

from harness._util.files import write_text_atomic
from harness.fleet import metrics
from harness.fleet.cells import cell_tests

SUMMARY_CSV = "fleet-summary.csv"
SUMMARY_COLUMNS = ("fleet_id", "run_id", "state", *metrics.SUMMARY_METRICS, "success_rate_low", "success_rate_high",
                   "cost_unknown_tests")
_COUNTS = ("total_tests", "total_succeeded", "total_failed", "total_timeout", "total_skipped", "success_rate",
           "success_rate_low", "success_rate_high")
REPOSITORY_COLUMNS = ("repo_id", "adapter", "source", *_COUNTS, "avg_duration_ms", "p50_duration_ms",
                      "p95_duration_ms", "p99_duration_ms", "min_duration_ms", "max_duration_ms", "total_tokens",
                      "total_cost", "cost_unknown_tests")
PROVIDER_COLUMNS = ("provider", "repository_count", *_COUNTS, "avg_duration_ms", "p50_duration_ms",
                    "p95_duration_ms", "total_tokens", "total_cost", "cost_unknown_tests")
CATEGORY_COLUMNS = ("category", *_COUNTS, "avg_duration_ms")


def _ms_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    parse = lambda text: _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds() * 1000.0


def build_results(plan: Any, run_dir: Path, run_id: str, done_log: dict[str, dict[str, Any]], *, state: str,
                  reason: str | None, started_at: str | None, completed_at: str | None,
                  tests_of: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The fleet results (the dict ``fleet-results.json`` holds) from every cell's own files, or
    from ``tests_of`` (cell key -> its tests) for the cells this process has just finished."""
    manifest = plan.manifest
    tests: list[dict[str, Any]] = []
    cells = []
    for cell in plan.cells:
        mine = (tests_of or {}).get(cell.key)
        if mine is None:
            mine = cell_tests(cell, run_dir)
        tests += mine
        entry = done_log.get(cell.key)
        cell_state = entry["state"] if entry else ("skipped" if state == "failed" else "pending")
        if entry is None and any(t["outcome"] != "skipped" for t in mine):
            cell_state = "interrupted"
        block = metrics.block(mine)
        cells.append({
            "repo_id": cell.repo.repo_id, "provider": cell.target.spec, "profile": cell.profile.name,
            "kind": cell.kind, "source": cell.source, "state": cell_state,
            "error": (entry or {}).get("error") or cell.problem,
            **{k: block[k] for k in ("total_tests", "total_succeeded", "total_failed", "total_timeout",
                                     "total_skipped", "success_rate", "p50_duration_ms", "p95_duration_ms",
                                     "total_tokens", "total_cost")},
            "results_dir": cell.relative_dir,
        })
    repositories = [{"repo_id": r.repo_id, "adapter": r.adapter, "source": r.source} for r in manifest.repositories]
    return {
        "fleet_id": manifest.fleet_id,
        "run_id": run_id,
        "version": "1.0",
        "description": manifest.description,
        "manifest_hash": manifest.hash,
        "state": state,
        "stopped_reason": reason,
        "started_at": started_at,
        "completed_at": completed_at,
        "settings": {"continue_on_failure": manifest.continue_on_failure, "random_seed": manifest.random_seed,
                     "test_timeout_seconds": manifest.test_timeout_s, "max_retries": manifest.max_retries,
                     "custom": manifest.custom},
        "summary": metrics.summary(tests, len(manifest.repositories), _ms_between(started_at, completed_at)),
        "providers": metrics.by_provider(tests, [t.spec for t in manifest.targets]),
        "repositories": metrics.by_repository(tests, repositories),
        "categories": metrics.by_category(tests),
        "cells": cells,
    }


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return out.getvalue()


def write_csvs(run_dir: Path, results: dict[str, Any]) -> None:
    directory = run_dir / "csv"
    summary = {"fleet_id": results["fleet_id"], "run_id": results["run_id"], "state": results["state"],
               **results["summary"]}
    write_text_atomic(directory / SUMMARY_CSV, _csv_text(SUMMARY_COLUMNS, [summary]), newline="")
    write_text_atomic(directory / "repositories.csv", _csv_text(REPOSITORY_COLUMNS, results["repositories"]),
                      newline="")
    write_text_atomic(directory / "providers.csv", _csv_text(PROVIDER_COLUMNS, results["providers"]), newline="")
    write_text_atomic(directory / "categories.csv", _csv_text(CATEGORY_COLUMNS, results["categories"]), newline="")


def write_artifacts(manifest: Any, run_dir: Path, results: dict[str, Any]) -> list[Path]:
    """Write the fleet artifacts the manifest asks for; the paths written."""
    import json

    written = [run_dir / "fleet-results.json"]
    write_text_atomic(written[0], json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                      newline="")
    if not manifest.generate_reports:
        return written
    if "yaml" in manifest.formats:
        import yaml

        path = run_dir / "fleet-results.yaml"
        write_text_atomic(path, yaml.safe_dump(results, sort_keys=True, allow_unicode=True), newline="")
        written.append(path)
    if "csv" in manifest.formats:
        write_csvs(run_dir, results)
        written += [run_dir / "csv" / name for name in (SUMMARY_CSV, "repositories.csv", "providers.csv",
                                                        "categories.csv")]
    if "html" in manifest.formats:
        from harness.reports.fleet import render_executive_report

        path = run_dir / "executive-report.html"
        write_text_atomic(path, render_executive_report(results), newline="")
        written.append(path)
    return written
