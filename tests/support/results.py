"""Results records as tests post them."""

from __future__ import annotations

from harness.results import EvaluationRecord, RunRecord, Telemetry, new_run_id


def make_run(batch_id: str | None = None, **over) -> RunRecord:
    run = RunRecord(
        run_id=new_run_id(), suite="py-bugs", scenario="slugify", tier="L1", agent="oracle",
        batch_id=batch_id, model="m", status="completed", total_score=0.75, weighted_score=0.75,
        is_successful=True, config_hash="cfg1", started_at="2026-01-01T00:00:00Z",
        metadata={"repeat": 0},
        evaluations=[EvaluationRecord("validation", 1.0, details="ok"),
                     EvaluationRecord("llm_judge", 0.0, status="skipped", details="no key")],
        telemetry=Telemetry(tool_calls=2, tokens_in=10, tokens_out=5, cost_usd=None, turns=3,
                            latencies_ms=[12.5, 30.0], duration_ms=100.0),
        transcript=[{"role": "user", "content": "do it"}, {"role": "assistant", "content": "done"}],
    )
    for k, v in over.items():
        setattr(run, k, v)
    return run
