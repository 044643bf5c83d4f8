"""Minting a snapshot: a specialist template plus the benchmark runs that prove (or not) its worth.

``mint_snapshot`` reads a batch through the results contract (embedded worker or remote),
refuses a batch without a run of this specialist, splits its runs into baseline (specialist
disabled) and this specialist's runs, builds ``benchmarks {test_suites, scoring, runs,
comparison}`` (the comparison by :mod:`harness.mint.comparison`, over the project's one
comparison code) and ``snapshot_metadata``, validates the whole document against
``snapshot.schema.json`` and only then writes
``<output>/<name without scope>/<version>/snapshot-<NNN>.json5``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from harness._util.jsonschemas import SchemaIssue, validate
from harness.mint.comparison import comparison_section, iteration_of
from harness.mint.output import write_next_numbered
from harness.results.records import BatchRecord, RunRecord
from harness.specialists import Specialist, unknown_template_keys, without_unknown_keys
from worker.analysis.compare import exclusion_reason

if TYPE_CHECKING:
    from harness.results.client import ResultsClient

class MintError(RuntimeError):
    """Minting could not produce a valid snapshot (missing batch, invalid result, ...)."""

    def __init__(self, message: str, issues: list[SchemaIssue] | None = None) -> None:
        super().__init__(message)
        self.issues = issues or []


@dataclass
class MintResult:
    path: Path
    snapshot_id: str  # "001"
    snapshot: dict[str, Any]
    excluded: list[dict[str, str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # template keys the schema does not name


def harness_version() -> str:
    try:
        return metadata.version("zebench")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def snapshot_run(run: RunRecord) -> dict[str, Any]:
    """One run in the snapshot's snake_case form (``totalScore`` -> ``overall_score``, ...)."""
    evaluations: dict[str, Any] = {}
    for ev in run.evaluations:
        key, n = ev.evaluator_name, 2
        while key in evaluations:
            key, n = f"{ev.evaluator_name}#{n}", n + 1
        evaluations[key] = {"score": ev.score, "max_score": ev.max_score, "status": ev.status}
    telemetry = None
    if run.telemetry is not None:
        t = run.telemetry
        telemetry = {
            "token_usage": {
                "prompt_tokens": int(t.tokens_in or 0),
                "completion_tokens": int(t.tokens_out or 0),
                "total_tokens": int((t.tokens_in or 0) + (t.tokens_out or 0)),
            },
            "cost_usd": t.cost_usd,
            "duration_ms": t.duration_ms,
            "tool_calls": int(t.tool_calls or 0),
            "turns": int(t.turns or 0),
        }
    return {
        "run_id": run.run_id,
        "batch_id": run.batch_id,
        "suite": run.suite,
        "scenario": run.scenario,
        "tier": run.tier,
        "agent": run.agent,
        "model": run.model,
        "status": run.status,
        "failure_class": run.failure_class,
        "iteration": iteration_of(run),
        "overall_score": run.total_score,
        "weighted_score": run.weighted_score,
        "is_successful": bool(run.is_successful),
        "specialist_enabled": bool(run.specialist_enabled),
        "specialist_name": run.specialist_name,
        "specialist_version": run.specialist_version,
        "config_hash": run.config_hash,
        "specialist_source": run.metadata.get("specialistSource"),
        "system_prompt_sha256": run.metadata.get("specialistPromptSha256"),
        "started_at": run.started_at,
        "completed_at": run.completed_at,
        "evaluations": evaluations,
        "telemetry": telemetry,
    }


def is_this_specialist(specialist: Specialist, run: RunRecord) -> bool:
    """A run made with this template: its name (scoped or not) and version."""
    return (bool(run.specialist_enabled) and run.specialist_name in {specialist.name, specialist.unscoped_name}
            and run.specialist_version == specialist.version)


def split_runs(specialist: Specialist, runs: Sequence[RunRecord]
               ) -> tuple[list[RunRecord], list[RunRecord], list[dict[str, str]]]:
    """``(baseline, specialist_runs, excluded)``.

    The two sides hold every run of each; ``excluded`` lists, each with its reason, the runs of
    other specialists or versions and the runs of the sides the comparison does not count
    (the rule of :func:`worker.analysis.compare.exclusion_reason`: an attempt a retry redid, a
    run replayed from the cache, an infra, harness or judge error)."""
    baseline, with_specialist, excluded = [], [], []
    redone_by = {(r.metadata or {}).get("retryOf"): r.run_id for r in runs if (r.metadata or {}).get("retryOf")}
    for run in runs:
        if not run.specialist_enabled:
            baseline.append(run)
        elif is_this_specialist(specialist, run):
            with_specialist.append(run)
        elif run.specialist_name not in {specialist.name, specialist.unscoped_name}:
            excluded.append({"run_id": run.run_id, "reason": f"another specialist ({run.specialist_name})"})
            continue
        else:
            excluded.append({"run_id": run.run_id,
                             "reason": f"specialist version {run.specialist_version}, not {specialist.version}"})
            continue
        reason = exclusion_reason(run.to_wire(), set(redone_by))
        if reason == "redone by a retry":
            reason = f"redone by run {redone_by[run.run_id]} (--retry-errors)"
        if reason is not None:
            excluded.append({"run_id": run.run_id, "reason": reason})
    return baseline, with_specialist, excluded


def _specialists_in(runs: Sequence[RunRecord]) -> str:
    """``"baseline (no specialist): 4 runs; @x/y@1.0.0: 2 runs"``: what a batch holds."""
    held = Counter(f"{r.specialist_name}@{r.specialist_version}" if r.specialist_enabled else "baseline (no specialist)"
                   for r in runs)
    return "; ".join(f"{name}: {n} run{'s' if n != 1 else ''}" for name, n in sorted(held.items()))


def _scoring(baseline: Sequence[RunRecord], with_specialist: Sequence[RunRecord],
             left_out: set[str] | None = None) -> dict[str, Any]:
    per_eval: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for side, runs in ((0, baseline), (1, with_specialist)):
        for run in runs:
            if left_out and run.run_id in left_out:
                continue
            for ev in run.evaluations:
                if ev.status == "ok":
                    per_eval[ev.evaluator_name][side].append(ev.score)
    evaluators = []
    for name in sorted(per_eval):
        b, s = per_eval[name]
        evaluators.append({
            "name": name,
            "baseline_mean": round(sum(b) / len(b), 6) if b else None,
            "specialist_mean": round(sum(s) / len(s), 6) if s else None,
            "baseline_runs": len(b),
            "specialist_runs": len(s),
        })
    return {
        "metric": "overall_score",
        "scale": [0, 1],
        "method": ("A run's overall_score is the weighted mean of the scores of its evaluators with "
                   "status ok (skipped evaluators do not count). The comparison uses the run's weighted "
                   "score, else its overall_score, on the cells (suite, scenario, tier, iteration, agent, "
                   "model) both sides ran; a counted run without a score counts 0."),
        "evaluators": evaluators,
    }


def _test_suites(runs: Sequence[RunRecord]) -> list[dict[str, Any]]:
    tiers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in runs:
        tiers[(run.suite, run.scenario)].add(run.tier)
    return [
        {"name": scenario, "suite": suite, "path": f"{suite}/{scenario}", "type": "functional",
         "tiers": sorted(tiers[(suite, scenario)])}
        for suite, scenario in sorted(tiers)
    ]


def build_snapshot(specialist: Specialist, batch: BatchRecord, runs: Sequence[RunRecord], *,
                   created_at: str | None = None) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The snapshot document (not yet validated) and the runs left out of the comparison."""
    baseline, with_specialist, excluded = split_runs(specialist, runs)
    left_out = {e["run_id"] for e in excluded}
    compared = [r for r in (*baseline, *with_specialist) if r.run_id not in left_out]
    # A snapshot holds only what the schema names (it is checked strictly): keys a template may
    # carry beyond that are left out (mint_snapshot reports them).
    snapshot = {k: v for k, v in without_unknown_keys(specialist.template).items()
                if k not in ("$schema", "benchmarks", "snapshot_metadata")}
    snapshot["benchmarks"] = {
        "test_suites": _test_suites(runs),
        "scoring": _scoring(baseline, with_specialist, left_out),
        "runs": [snapshot_run(r) for r in sorted(runs, key=lambda r: (r.started_at or "", r.run_id))],
        "excluded_runs": excluded,
        "comparison": comparison_section(baseline, with_specialist),
    }
    snapshot["snapshot_metadata"] = {
        "created_at": created_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "minted_by": f"zebench mint {harness_version()}",
        "template_version": specialist.version,
        "template_source": _display_path(specialist.source),
        "batch_id": batch.batch_id,
        "harness_version": harness_version(),
        "batch": {
            "total_runs": len(runs),
            "compared_runs": len(compared),
            "agents": sorted({r.agent for r in runs}),
            "models": sorted({r.model for r in runs if r.model}),
            "created_at": batch.created_at,
            "completed_at": batch.completed_at,
            "metadata": batch.metadata,
        },
    }
    return snapshot, excluded


def _display_path(path: Path) -> str:
    """Relative to the current directory when inside it (snapshots are meant to be committed)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def validate_snapshot(snapshot: Any) -> list[SchemaIssue]:
    """Violations of ``snapshot.schema.json`` (empty when valid)."""
    return validate("snapshot", snapshot)


def snapshot_dir(output: Path, specialist_name: str, version: str) -> Path:
    """``<output>/<name without @scope>/<version>``."""
    unscoped = specialist_name.split("/", 1)[1] if specialist_name.startswith("@") else specialist_name
    return output / unscoped / version


def write_snapshot(snapshot: dict[str, Any], output: Path) -> tuple[str, Path]:
    """Validate, then write the next ``snapshot-NNN.json5``. A failing snapshot is never written."""
    issues = validate_snapshot(snapshot)
    if issues:
        raise MintError("snapshot fails its schema, nothing written: " + "; ".join(map(str, issues)), issues)
    directory = snapshot_dir(output, snapshot["name"], snapshot["version"])
    text = json.dumps(snapshot, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    number, path = write_next_numbered(directory, "snapshot", text)
    return f"{number:03d}", path


def fetch_batch_runs(client: ResultsClient, batch_id: str) -> tuple[BatchRecord, list[RunRecord]]:
    """The batch and every run in it, each with evaluations and telemetry."""
    batch = client.get_batch(batch_id)
    if batch is None:
        raise MintError(f"batch {batch_id!r} not found in the results store")
    listed = batch.runs or client.list_runs(limit=100_000, batchId=batch_id)
    runs = []
    for summary in listed:
        full = client.get_run(summary.run_id)
        runs.append(full if full is not None else summary)
    if not runs:
        raise MintError(f"batch {batch_id!r} has no runs")
    return batch, runs


def mint_snapshot(specialist: Specialist, batch_id: str, output: Path, client: ResultsClient, *,
                  created_at: str | None = None) -> MintResult:
    """Read batch ``batch_id`` through ``client`` and write a validated snapshot under ``output``.
    A batch without a run of this specialist (name and version) is refused: it proves nothing."""
    batch, runs = fetch_batch_runs(client, batch_id)
    if not any(is_this_specialist(specialist, r) for r in runs):
        raise MintError(f"batch {batch_id!r} has no run of specialist {specialist.name}@{specialist.version}, "
                        f"nothing to compare; it holds {_specialists_in(runs)}. Run it with "
                        f"`bench ... --specialist {specialist.unscoped_name} --batch-id {batch_id}`")
    snapshot, excluded = build_snapshot(specialist, batch, runs, created_at=created_at)
    snapshot_id, path = write_snapshot(snapshot, output)
    left_out = [where for where, _ in unknown_template_keys(specialist.template)]
    return MintResult(path=path, snapshot_id=snapshot_id, snapshot=snapshot, excluded=excluded, left_out=left_out)
