"""Where the runs of a batch spent their time: per phase, the median, the 95th percentile and
the share of the total, and the bottleneck named in words.

A run records its phases in ``metadata.phases`` (milliseconds; see ``harness.scenarios.runner.Phases``).
They are additive and make up the run's duration: ``workspace`` (copying the fixture),
``agent.model`` / ``agent.tools`` / ``agent.other`` (inside model calls, inside tool
executions, the rest of the agent's time), ``diff``, ``grading.copy``, ``validation.<command>``,
``evaluator.<name>``, ``grading.other``, ``cleanup`` and ``other``. Two phases happen outside a
run's duration and are added to it here:

- ``warmup``: a group's warmup runs once before its runs; each run carries its wall time
  (``metadata.warmupMs``) and how many runs share it (``warmupSharedBy``), and is charged its
  share, so that the batch's total counts each warmup once.
- ``storage``: posting a run's record, which that record cannot hold; the batch record keeps
  it (``metadata.storageMs``: run id → ms, or a list of such objects when several invocations
  shared the batch).

Pure functions over run wire dicts (``RunRecord.to_wire()`` shape, or the worker's run rows)
returning plain dicts: standard library only, so ``bench profile`` and the results worker
compute the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from worker.analysis.stats import percentile

# Words for the fixed phases; ``validation.<command>`` and ``evaluator.<name>`` are named below.
PHASE_LABELS = {
    "warmup": "warmup (its share)",
    "workspace": "workspace copy",
    "agent.model": "agent model time",
    "agent.tools": "agent tool time",
    "agent.other": "agent other time",
    "diff": "diff",
    "grading.copy": "grading copy",
    "grading.other": "grading other time",
    "cleanup": "workspace removal",
    "storage": "storage",
    "other": "harness overhead",
}
# The stages phases belong to, for a coarser view (``stages``).
STAGES = ("warmup", "workspace", "agent", "grading", "storage", "other")


def phase_label(name: str) -> str:
    """``agent.model`` → ``agent model time``, ``validation.test`` → ``validation command test``."""
    if name in PHASE_LABELS:
        return PHASE_LABELS[name]
    kind, _, rest = name.partition(".")
    if kind == "validation" and rest:
        return f"validation command {rest}"
    if kind == "evaluator" and rest:
        return f"evaluator {rest}"
    return name


def stage_of(name: str) -> str:
    """The stage of a phase: warmup, workspace, agent, grading, storage or other."""
    head = name.partition(".")[0]
    if head in ("warmup", "workspace", "agent", "storage"):
        return head
    if head in ("diff", "grading", "validation", "evaluator"):
        return "grading"
    return "other"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def _meta(run: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = run.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _run_id(run: Mapping[str, Any]) -> str | None:
    value = run.get("runId") or run.get("id")
    return value if isinstance(value, str) else None


def storage_times(batch_metadata: Mapping[str, Any] | None) -> dict[str, float]:
    """Run id → ms of storing it, from a batch's ``metadata.storageMs`` (an object, or the list
    of objects the store makes when several invocations contributed to the batch)."""
    raw = (batch_metadata or {}).get("storageMs")
    parts = raw if isinstance(raw, list) else [raw]
    out: dict[str, float] = {}
    for part in parts:
        if isinstance(part, Mapping):
            for run_id, ms in part.items():
                value = _number(ms)
                if isinstance(run_id, str) and value is not None:
                    out[run_id] = value
    return out


def run_phases(run: Mapping[str, Any], storage_ms: Mapping[str, float] | None = None) -> dict[str, float]:
    """The phases of one run in ms, with its share of the group's warmup and its storage time
    when known; empty when the run recorded no phases."""
    meta = _meta(run)
    recorded = meta.get("phases")
    if not isinstance(recorded, Mapping):
        return {}
    phases = {str(k): v for k, v in ((k, _number(v)) for k, v in recorded.items()) if v is not None}
    if not phases:
        return {}
    warmup = _number(meta.get("warmupMs"))
    if warmup is not None:
        shared = meta.get("warmupSharedBy")
        shared = shared if isinstance(shared, int) and not isinstance(shared, bool) and shared > 0 else 1
        phases["warmup"] = warmup / shared
    run_id = _run_id(run)
    if storage_ms and run_id in storage_ms:
        phases["storage"] = float(storage_ms[run_id])
    return phases


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def profile_runs(runs: Iterable[Mapping[str, Any]], storage_ms: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Per phase over ``runs``: runs that recorded it, median, 95th percentile, total and share
    of all the runs' time; the same per stage; the bottleneck (the phase with the largest share)
    and a sentence naming it."""
    runs = list(runs)
    per_run = [p for p in (run_phases(r, storage_ms) for r in runs) if p]
    values: dict[str, list[float]] = {}
    for phases in per_run:
        for name, ms in phases.items():
            values.setdefault(name, []).append(ms)
    grand = sum(sum(p.values()) for p in per_run)
    rows = []
    for name, xs in values.items():
        total = sum(xs)
        rows.append({
            "phase": name, "label": phase_label(name), "stage": stage_of(name), "runs": len(xs),
            "medianMs": _round(percentile(xs, 50)), "p95Ms": _round(percentile(xs, 95)),
            "totalMs": _round(total), "share": round(total / grand, 4) if grand > 0 else None,
        })
    rows.sort(key=lambda r: (-(r["totalMs"] or 0.0), r["phase"]))
    stages = []
    for stage in STAGES:
        totals = [sum(ms for name, ms in p.items() if stage_of(name) == stage) for p in per_run
                  if any(stage_of(name) == stage for name in p)]
        if totals:
            stages.append({"stage": stage, "runs": len(totals), "medianMs": _round(percentile(totals, 50)),
                           "p95Ms": _round(percentile(totals, 95)), "totalMs": _round(sum(totals)),
                           "share": round(sum(totals) / grand, 4) if grand > 0 else None})
    run_totals = [sum(p.values()) for p in per_run]
    top = rows[0] if rows and grand > 0 else None
    bottleneck = None if top is None else {"phase": top["phase"], "label": top["label"], "share": top["share"]}
    if bottleneck is not None:
        summary = f"{bottleneck['label']} is {bottleneck['share'] * 100:.0f}% of run time"
    elif runs:
        summary = "no run recorded its phases (runs stored before phases were recorded)"
    else:
        summary = "no runs"
    return {
        "runs": len(runs),
        "profiledRuns": len(per_run),
        "totalMs": _round(grand),
        "runMedianMs": _round(percentile(run_totals, 50)),
        "runP95Ms": _round(percentile(run_totals, 95)),
        "phases": rows,
        "stages": stages,
        "bottleneck": bottleneck,
        "summary": summary,
    }


def batch_profile(batch: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`profile_runs` over a batch's runs (its wire form with ``runs``), with the storage
    times its metadata keeps."""
    runs = batch.get("runs")
    metadata = batch.get("metadata")
    profile = profile_runs(runs if isinstance(runs, list) else [],
                           storage_times(metadata if isinstance(metadata, Mapping) else None))
    return {"batchId": batch.get("batchId"), **profile}
