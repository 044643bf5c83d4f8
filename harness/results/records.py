"""Typed records of stored runs and batches, and their camelCase wire form (docs/worker.md, "API")."""

from __future__ import annotations

import json
import os
import random
import string
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from harness._util.trees import valid_utf8

RunStatus = Literal["completed", "failed", "timeout", "budget_exceeded", "error"]
FailureClass = Literal["agent", "validation", "judge", "tampered", "infra", "harness"]

_BASE36 = string.digits + string.ascii_lowercase


# Ids must be unique, not unpredictable: a generator seeded from the system's randomness once
# (and again in a forked child) draws them without a system call each (which would also let
# go of the interpreter lock once per id, on a fleet's event loop once per answer).
_IDS = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_IDS.seed)


def _rand36(n: int) -> str:
    # n base-36 digits of one random integer (uniform: 36**n divides no power of two, so
    # the few top values are rejected and drawn again).
    limit = 36 ** n
    bits = limit.bit_length()
    while True:
        value = _IDS.getrandbits(bits)
        if value < limit:
            break
    digits = []
    for _ in range(n):
        value, digit = divmod(value, 36)
        digits.append(_BASE36[digit])
    return "".join(digits)


def new_run_id() -> str:
    return f"run_{int(time.time() * 1000)}_{_rand36(8)}"


def new_batch_id() -> str:
    return f"batch_{int(time.time() * 1000)}_{_rand36(6)}"


def new_stress_id() -> str:
    return f"stress_{int(time.time() * 1000)}_{_rand36(8)}"


def storable(value: Any) -> Any:
    """``value`` with every string made valid UTF-8 (file names that were not, output with
    lone surrogates): a record is stored or spooled whatever its content."""
    if isinstance(value, str):
        return valid_utf8(value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


@dataclass
class EvaluationRecord:
    evaluator_name: str
    score: float
    max_score: float = 1.0
    status: str = "ok"
    details: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "evaluatorName": self.evaluator_name,
            "score": self.score,
            "maxScore": self.max_score,
            "status": self.status,
            "details": self.details,
        }

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> "EvaluationRecord":
        details = d.get("details")
        return cls(
            evaluator_name=d["evaluatorName"],
            score=float(d.get("score") or 0.0),
            max_score=float(d.get("maxScore") if d.get("maxScore") is not None else 1.0),
            status=d.get("status") or "ok",
            # Other clients may post structured details; keep them as JSON text, not a repr.
            details=details if isinstance(details, str) else ("" if details is None else json.dumps(details)),
        )


@dataclass
class Telemetry:
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    judge_tokens_in: int = 0
    judge_tokens_out: int = 0
    judge_cost_usd: float | None = None
    turns: int = 0
    duration_ms: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    workspace_dir: str | None = None

    _WIRE = {
        "tool_calls": "toolCalls",
        "tokens_in": "tokensIn",
        "tokens_out": "tokensOut",
        "cache_read_tokens": "cacheReadTokens",
        "cache_write_tokens": "cacheWriteTokens",
        "cost_usd": "costUsd",
        "judge_tokens_in": "judgeTokensIn",
        "judge_tokens_out": "judgeTokensOut",
        "judge_cost_usd": "judgeCostUsd",
        "turns": "turns",
        "duration_ms": "durationMs",
        "latencies_ms": "latenciesMs",
        "workspace_dir": "workspaceDir",
    }

    def to_wire(self) -> dict[str, Any]:
        return {wire: getattr(self, attr) for attr, wire in self._WIRE.items()}

    @classmethod
    def from_wire(cls, d: dict[str, Any] | None) -> "Telemetry":
        t = cls()
        for attr, wire in cls._WIRE.items():
            if d and d.get(wire) is not None:
                setattr(t, attr, d[wire])
        return t


@dataclass
class RunRecord:
    """One run, whatever its outcome. ``total_score`` is the run's score in [0, 1]."""

    run_id: str
    suite: str
    scenario: str
    tier: str
    agent: str
    batch_id: str | None = None
    model: str | None = None
    status: RunStatus = "completed"
    failure_class: FailureClass | None = None
    started_at: str | None = None  # ISO 8601 UTC
    completed_at: str | None = None
    total_score: float | None = None
    weighted_score: float | None = None
    is_successful: bool = False
    success_metric: float | None = None
    specialist_enabled: bool = False
    specialist_name: str | None = None
    specialist_version: str | None = None
    config_hash: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    evaluations: list[EvaluationRecord] = field(default_factory=list)
    telemetry: Telemetry | None = None
    transcript: list[dict[str, Any]] | None = None
    diff: str | None = None  # the workspace's unified diff against the fixture (capped)

    def to_wire(self) -> dict[str, Any]:
        """The POST /api/results body."""
        body: dict[str, Any] = {
            "runId": self.run_id,
            "batchId": self.batch_id,
            "suite": self.suite,
            "scenario": self.scenario,
            "tier": self.tier,
            "agent": self.agent,
            "model": self.model,
            "status": self.status,
            "failureClass": self.failure_class,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "totalScore": self.total_score,
            "weightedScore": self.weighted_score,
            "isSuccessful": self.is_successful,
            "successMetric": self.success_metric,
            "specialistEnabled": self.specialist_enabled,
            "specialistName": self.specialist_name,
            "specialistVersion": self.specialist_version,
            "configHash": self.config_hash,
            "metadata": self.metadata,
            "evaluations": [e.to_wire() for e in self.evaluations],
        }
        if self.telemetry is not None:
            body["telemetry"] = self.telemetry.to_wire()
        if self.transcript is not None:
            body["transcript"] = self.transcript
        if self.diff:
            body["diff"] = self.diff
        return body

    @classmethod
    def from_wire(cls, run: dict[str, Any], evaluations: list[dict[str, Any]] | None = None,
                  telemetry: dict[str, Any] | None = None) -> "RunRecord":
        """Build from GET /api/runs/:id parts (``run``, ``evaluations``, ``telemetry``)."""
        evals = evaluations if evaluations is not None else run.get("evaluations") or []
        tel = telemetry if telemetry is not None else run.get("telemetry")
        return cls(
            run_id=run.get("runId") or run["id"],
            batch_id=run.get("batchId"),
            suite=run["suite"],
            scenario=run["scenario"],
            tier=run["tier"],
            agent=run["agent"],
            model=run.get("model"),
            status=run.get("status") or "completed",
            failure_class=run.get("failureClass"),
            started_at=run.get("startedAt"),
            completed_at=run.get("completedAt"),
            total_score=run.get("totalScore"),
            weighted_score=run.get("weightedScore"),
            is_successful=bool(run.get("isSuccessful")),
            success_metric=run.get("successMetric"),
            specialist_enabled=bool(run.get("specialistEnabled")),
            specialist_name=run.get("specialistName"),
            specialist_version=run.get("specialistVersion"),
            config_hash=run.get("configHash"),
            metadata=run.get("metadata") or {},
            evaluations=[EvaluationRecord.from_wire(e) for e in evals],
            telemetry=Telemetry.from_wire(tel) if tel else None,
        )


@dataclass
class BatchRecord:
    """A batch as the worker reports it; aggregates are computed by the server."""

    batch_id: str
    created_at: int | None = None  # unix ms
    completed_at: int | None = None
    total_runs: int = 0
    successful_runs: int = 0
    avg_score: float | None = None
    avg_weighted_score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    breakdowns: dict[str, Any] = field(default_factory=dict)  # by scenario/agent/model/tier
    runs: list[RunRecord] = field(default_factory=list)
    #: What its runs are, as the worker reports it: scenario, dataset, mixed, or None (no runs).
    kind: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The POST /api/results/batch body."""
        return {
            "batchId": self.batch_id,
            "createdAt": self.created_at,
            "completedAt": self.completed_at,
            "totalRuns": self.total_runs,
            "successfulRuns": self.successful_runs,
            "avgScore": self.avg_score,
            "avgWeightedScore": self.avg_weighted_score,
            "metadata": self.metadata,
        }

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> "BatchRecord":
        return cls(
            batch_id=d["batchId"],
            created_at=d.get("createdAt"),
            completed_at=d.get("completedAt"),
            total_runs=int(d.get("totalRuns") or 0),
            successful_runs=int(d.get("successfulRuns") or 0),
            avg_score=d.get("avgScore"),
            avg_weighted_score=d.get("avgWeightedScore"),
            metadata=d.get("metadata") or {},
            breakdowns=d.get("breakdowns") or {},
            runs=[RunRecord.from_wire(r) for r in d.get("runs") or []],
            kind=d.get("kind"),
        )


StressStatus = Literal["completed", "interrupted", "budget_exceeded", "failed"]


@dataclass
class StressRecord:
    """One load test of a model endpoint (``bench stress``): its settings, summary and steps
    (docs/analysis.md, "Stress tests")."""

    stress_id: str
    provider: str
    model: str
    profile: str
    status: StressStatus = "completed"
    started_at: str | None = None  # ISO 8601 UTC
    completed_at: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    created_at: int | None = None  # unix ms, set by the store

    def to_wire(self) -> dict[str, Any]:
        """The POST /api/stress body."""
        return {
            "id": self.stress_id,
            "provider": self.provider,
            "model": self.model,
            "profile": self.profile,
            "status": self.status,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "config": self.config,
            "summary": self.summary,
            "steps": self.steps,
        }

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> "StressRecord":
        """From GET /api/stress/:id (with steps) or an item of GET /api/stress (without)."""
        return cls(
            stress_id=d["id"],
            provider=d["provider"],
            model=d["model"],
            profile=d["profile"],
            status=d.get("status") or "completed",
            started_at=d.get("startedAt"),
            completed_at=d.get("completedAt"),
            config=d.get("config") or {},
            summary=d.get("summary") or {},
            steps=d.get("steps") or [],
            created_at=d.get("createdAt"),
        )


def sandbox_kind(run: RunRecord) -> str | None:
    """The sandbox backend a run's commands ran in (``bwrap``, ``none``), None for older runs."""
    info = (run.metadata or {}).get("sandbox")
    return info.get("kind") if isinstance(info, dict) else None


def mixed_sandbox_note(runs: list[RunRecord]) -> str | None:
    """A warning when ``runs`` ran in different sandbox kinds (they are not comparable), else None."""
    kinds: dict[str, int] = {}
    for run in runs:
        kind = sandbox_kind(run) or "unrecorded"
        kinds[kind] = kinds.get(kind, 0) + 1
    if len(kinds) < 2:
        return None
    parts = ", ".join(f"{n} in {kind}" for kind, n in sorted(kinds.items()))
    return f"the runs used different sandboxes ({parts}): their results are not comparable"


def batch_record(batch_id: str, runs: list[RunRecord], created_ms: int, completed_ms: int,
                 metadata: dict[str, Any]) -> BatchRecord:
    """The batch with aggregates over ``runs`` (scores averaged over runs that have one)."""
    scores = [r.total_score for r in runs if r.total_score is not None]
    weighted = [r.weighted_score for r in runs if r.weighted_score is not None]
    return BatchRecord(
        batch_id=batch_id,
        created_at=created_ms,
        completed_at=completed_ms,
        total_runs=len(runs),
        successful_runs=sum(1 for r in runs if r.is_successful),
        avg_score=sum(scores) / len(scores) if scores else None,
        avg_weighted_score=sum(weighted) / len(weighted) if weighted else None,
        metadata=metadata,
    )
