"""A dataset run's cells stored in the results store, as the runs of one batch.

Each cell (the last line of it in ``results.jsonl``) is one run (:func:`run_record`): suite =
the dataset's name, scenario = the case id, tier ``dataset``, agent = the provider prefix,
model = the target's model; status ``error`` (``infra`` for an unavailable, timed-out or
unreachable endpoint, else ``harness``) or ``completed``; one evaluation per assertion; the
``config_hash`` of :func:`harness.datasets.planning.config_parts`. :func:`store` posts them
:data:`STORE_CHUNK` at a time (in one request each when the client has ``post_runs``, else
one by one), then the batch. A run already stored is a duplicate, so storing after a resume is
safe; what the store refuses is noted in the result's ``store_errors``, not raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from harness.datasets.model import TestCase
from harness.datasets.planning import TIER, DatasetResult, DatasetRun, config_parts
from harness.scenarios.plan import hash_parts
from harness.results.records import EvaluationRecord, RunRecord, Telemetry


def run_record(run: DatasetRun, cell: dict[str, Any], cases: dict[str, TestCase], judge_identity: str) -> RunRecord:
    """The results-store run of one cell (suite = dataset, scenario = case id, tier dataset)."""
    target = next(t for t in run.targets if t.spec == cell["target"])
    case = cases.get(cell["test_id"])
    parts = config_parts(run.dataset, case, target, run.options, judge_identity) if case else {}
    status = cell["status"]
    error = status == "error"
    kind = cell.get("error_kind")
    evaluations = [EvaluationRecord(evaluator_name=f"assert.{a.get('type')}", score=float(a.get("score") or 0.0),
                                    status=("skipped" if a.get("skipped") else "ok"),
                                    details=str(a.get("detail") or "")[:500])
                   for a in cell.get("assertions") or []]
    metadata: dict[str, Any] = {
        **run.options.metadata,
        "dataset": {"name": run.dataset.name, "version": run.dataset.version, "digest": run.dataset.digest},
        "case": {"category": cell.get("category"), "repeat": cell.get("repeat")},
        "target": cell["target"],
        "attempts": cell.get("attempts"),
        "configParts": parts,
        "iteration": cell.get("repeat"),
    }
    for key, wire in (("ttft_ms", "ttftMs"), ("error", "error"), ("error_kind", "errorKind"),
                      ("retry_of", "retryOf"), ("response", "response"), ("threshold", "threshold")):
        if cell.get(key) is not None:
            metadata[wire] = cell[key]
    if status == "ungraded":
        metadata["ungraded"] = True
    score = cell.get("score")
    return RunRecord(
        run_id=cell["run_id"], batch_id=run.batch_id, suite=run.dataset.name, scenario=cell["test_id"], tier=TIER,
        agent=target.prefix, model=target.model,
        status="error" if error else "completed",
        failure_class=("infra" if kind in ("unavailable", "timeout", "connect", "dns") else "harness") if error else None,
        completed_at=cell.get("finished_at"),
        total_score=score, weighted_score=score,
        is_successful=status == "passed",
        success_metric=None if status in ("error", "ungraded") else (1.0 if status == "passed" else 0.0),
        config_hash=hash_parts(parts) if parts else None,
        metadata=metadata, evaluations=evaluations,
        telemetry=Telemetry(tokens_in=cell.get("tokens_in") or 0, tokens_out=cell.get("tokens_out") or 0,
                            cost_usd=cell.get("cost_usd"), turns=0 if error else 1,
                            duration_ms=cell.get("duration_ms") or 0.0,
                            latencies_ms=[] if error else [cell.get("duration_ms") or 0.0]),
    )


STORE_CHUNK = 50  # runs per request to the results store (one write each)


def _post_runs(client: Any, records: list[RunRecord]) -> list[Any]:
    """One outcome (or exception) per record: in one request when the client can, else one by one."""
    if hasattr(client, "post_runs"):
        return list(client.post_runs(records))
    outcomes: list[Any] = []
    for record in records:
        try:
            outcomes.append(client.post_run(record))
        except Exception as exc:  # noqa: BLE001 - the caller reports it
            outcomes.append(exc)
    return outcomes


def store(result: DatasetResult, client: Any, judge_identity: str = "none",
          progress: Callable[[int, int], None] | None = None, *, post_batch: bool = True) -> list[RunRecord]:
    """Post every cell of the run, then the batch (unless ``post_batch`` is false: a fleet posts
    one batch for all its runs), to the results store (a re-post of a run already stored is a
    duplicate, so storing after a resume is safe). Returns the records posted."""
    from harness.results.records import batch_record

    run = result.run
    cases = {c.id: c for c in run.dataset.cases}
    records = [run_record(run, cell, cases, judge_identity) for cell in result.cells]
    for start in range(0, len(records), STORE_CHUNK):
        chunk = records[start:start + STORE_CHUNK]
        try:
            outcomes = _post_runs(client, chunk)
        except Exception as exc:  # noqa: BLE001 - reported; results.jsonl keeps the cells
            outcomes = [exc] * len(chunk)
        for record, outcome in zip(chunk, outcomes):
            if isinstance(outcome, Exception):
                result.store_errors.append(f"{record.run_id}: {type(outcome).__name__}: {outcome}")
            else:
                result.stored += 1
        if progress is not None:
            progress(start + len(chunk), len(records))
    if not post_batch:
        return records
    meta = {"kind": "dataset", "dataset": run.meta.get("dataset"), "targets": [t.spec for t in run.targets],
            "outputDir": str(run.output_dir), "interrupted": result.interrupted, "planned": run.planned}
    created = int(time.time() * 1000)
    try:
        client.post_batch(batch_record(run.batch_id, records, created, created, meta))
    except Exception as exc:  # noqa: BLE001
        result.store_errors.append(f"batch {run.batch_id}: {type(exc).__name__}: {exc}")
    return records