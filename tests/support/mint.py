"""A specialist template and a batch of baseline and specialist runs whose comparison is known,
for the tests of ``mint`` (and the processes those tests start)."""

from __future__ import annotations

from pathlib import Path

from harness.results.records import EvaluationRecord, RunRecord, Telemetry
from harness.specialists import Specialist

TEMPLATE = {
    "$schema": "../harness/schemas/template.schema.json",
    "schema_version": "0.0.1",
    "name": "@acme/py-fixer",
    "version": "1.2.0",
    "persona": {"purpose": "Fix Python bugs."},
}


def specialist() -> Specialist:
    return Specialist(name=TEMPLATE["name"], version=TEMPLATE["version"], template=dict(TEMPLATE),
                      source=Path("templates/py-fixer.json5"))


def run_record(i: int, score: float | None, *, specialist: bool, scenario: str = "s1",
               iteration: int | None = None, model: str = "m1", name: str = "@acme/py-fixer", version: str = "1.2.0",
               status: str = "completed", failure_class: str | None = None) -> RunRecord:
    return RunRecord(
        run_id=f"run_{i:04d}_{'s' if specialist else 'b'}",
        suite="py-bugs", scenario=scenario, tier="L1", agent="anthropic", model=model, batch_id="batch_x",
        status=status, failure_class=failure_class, total_score=score, is_successful=bool(score and score >= 0.7),
        specialist_enabled=specialist, specialist_name=name if specialist else None,
        specialist_version=version if specialist else None,
        started_at=f"2026-01-01T00:00:{i:02d}Z",
        metadata={} if iteration is None else {"iteration": iteration},
        evaluations=[EvaluationRecord("validation", score or 0.0), EvaluationRecord("llm_judge", 0.0, status="skipped")],
        telemetry=Telemetry(tokens_in=100 + i, tokens_out=20, tool_calls=3, turns=2, duration_ms=1500.0, cost_usd=0.01),
    )


BASE = [0.3, 0.4, 0.35, 0.5]
SPEC = [0.8, 0.9, 0.7, 0.95]
SCENARIOS = ["s1", "s2", "s3", "s4"]


def paired_runs() -> list[RunRecord]:
    """One baseline and one specialist run on each of four scenarios (no repeats)."""
    runs = [run_record(i, s, specialist=False, scenario=SCENARIOS[i], iteration=0) for i, s in enumerate(BASE)]
    runs += [run_record(10 + i, s, specialist=True, scenario=SCENARIOS[i], iteration=0) for i, s in enumerate(SPEC)]
    return runs
