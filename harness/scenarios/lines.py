"""A scenario run as a line of a ``results.jsonl``, read as the one :class:`~harness.cells.CellRecord`.

A scenario run is stored in the run store as a :class:`~harness.results.records.RunRecord`; a
fleet's suite cell also appends a line per run to the results log in its directory
(:mod:`harness.results_log`), which is how the fleet resumes the cell and counts its tests.
:func:`scenario_line` writes that line from the stored run: the scenario, its suite and the tier
it ran at (``tier_asked``: the tier the plan asked for, which names the cell), the iteration,
the run id, its status and success, score, failure class, duration, tokens, cost, agent and
model; with ``save_responses``, the agent's last text answer and the evaluations too.
:func:`scenario_cell` reads a line: keyed by (scenario, tier asked, iteration), named
``scenario#tier#iteration`` among the cell's tests, in the category of its suite; its outcome
(:func:`run_outcome`, also that of a run read from the store) is ``passed`` when the run
succeeded, else ``timeout``, ``error`` or ``failed`` by its status; a run stored as ``error``
is retryable.
"""

from __future__ import annotations

from typing import Any

from harness._util.clock import now_iso
from harness.cells import CellRecord
from harness.results.records import RunRecord


def _last_answer(record: RunRecord) -> str | None:
    return next((m.get("content") for m in reversed(record.transcript or [])
                 if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str)), None)


def run_outcome(successful: bool, status: str | None) -> str:
    """A scenario run's outcome among the summary's: ``passed`` when it succeeded, else
    ``timeout`` or ``error`` by its status, else ``failed``."""
    if successful:
        return "passed"
    return status if status in ("timeout", "error") else "failed"


def scenario_line(record: RunRecord, *, iteration: int, tier_asked: str, save_responses: bool) -> dict[str, Any]:
    """The line that records the stored run ``record`` (module docstring)."""
    telemetry = record.telemetry
    line: dict[str, Any] = {
        "scenario": record.scenario, "suite": record.suite, "tier": record.tier, "tier_asked": tier_asked,
        "iteration": iteration, "run_id": record.run_id, "status": record.status,
        "is_successful": bool(record.is_successful), "score": record.total_score,
        "failure_class": record.failure_class,
        "duration_ms": round(telemetry.duration_ms, 2) if telemetry else None,
        "tokens_in": telemetry.tokens_in if telemetry else 0,
        "tokens_out": telemetry.tokens_out if telemetry else 0,
        "cost_usd": telemetry.cost_usd if telemetry else None,
        "agent": record.agent, "model": record.model, "finished_at": now_iso()}
    if save_responses:
        line["response"] = _last_answer(record)
        line["evaluations"] = [{"name": e.evaluator_name, "score": e.score, "status": e.status,
                                "details": e.details} for e in record.evaluations]
    return line


def scenario_cell(line: dict[str, Any]) -> CellRecord:
    """The cell a line records (a ``KeyError`` when it names no scenario, tier asked or iteration)."""
    status = line.get("status")
    outcome = run_outcome(bool(line.get("is_successful")), status)
    get = line.get
    scenario, tier, iteration = line["scenario"], line["tier_asked"], line["iteration"]
    return CellRecord.of((scenario, tier, iteration), f"{scenario}#{tier}#{iteration}", get("suite") or "",
                         outcome, status, status == "error", get("score"), get("duration_ms"), None,
                         get("tokens_in") or 0, get("tokens_out") or 0, get("cost_usd"), None, get("run_id"), line)
