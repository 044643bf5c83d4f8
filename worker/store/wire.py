"""The wire form of the store: JSON text, numbers as the API gives them, content hashes, and
rows of runs, evaluations and telemetry turned into the camelCase objects of the API.

Rows go out in the camelCase wire form of the API (docs/worker.md, "API"). JSON is written
compact with sorted keys, so the same value always gives the same text and the same
:func:`content_hash`. REAL columns are read back as floats (D1 returns REAL 2.0 as the
integer 2), counts as integers with NULL as 0.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

_TELEMETRY = (  # (column, wire name)
    ("tool_calls", "toolCalls"), ("tokens_in", "tokensIn"), ("tokens_out", "tokensOut"),
    ("cache_read_tokens", "cacheReadTokens"), ("cache_write_tokens", "cacheWriteTokens"),
    ("cost_usd", "costUsd"), ("judge_tokens_in", "judgeTokensIn"),
    ("judge_tokens_out", "judgeTokensOut"), ("judge_cost_usd", "judgeCostUsd"),
    ("turns", "turns"), ("duration_ms", "durationMs"), ("latencies_ms", "latenciesMs"),
    ("workspace_dir", "workspaceDir"),
)
_TELEMETRY_REAL = {"cost_usd", "judge_cost_usd", "duration_ms"}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _float(value: Any) -> float | None:
    # D1 returns REAL 2.0 as the integer 2; the wire form keeps numbers as floats.
    return None if value is None else float(value)


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def content_hash(run: dict[str, Any]) -> str:
    """The identity of a run's content, used to tell a retry (same) from a conflict (different).

    A run without a diff hashes as it did before runs could carry one, so a run spooled by an
    older harness and posted again is still recognised as the same run."""
    if run.get("diff") is None:
        run = {k: v for k, v in run.items() if k != "diff"}
    return hashlib.sha256(_dumps(run).encode("utf-8")).hexdigest()


def _iso_now(now_ms: int) -> str:
    return datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def run_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["run_id"],
        "runId": row["run_id"],
        "batchId": row["batch_id"],
        "suite": row["suite"],
        "scenario": row["scenario"],
        "tier": row["tier"],
        "agent": row["agent"],
        "model": row["model"],
        "status": row["status"],
        "failureClass": row["failure_class"],
        "startedAt": row["started_at"],
        "completedAt": row["completed_at"],
        "totalScore": _float(row["total_score"]),
        "weightedScore": _float(row["weighted_score"]),
        "isSuccessful": bool(row["is_successful"]),
        "successMetric": _float(row["success_metric"]),
        "specialistEnabled": bool(row["specialist_enabled"]),
        "specialistName": row["specialist_name"],
        "specialistVersion": row["specialist_version"],
        "configHash": row["config_hash"],
        "metadata": json.loads(row["metadata"] or "{}"),
        "createdAt": _int(row["created_at"]),
    }


def _evaluation_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    details = row["details"]
    return {
        "id": _int(row["id"]),
        "runId": row["run_id"],
        "evaluatorName": row["evaluator_name"],
        "score": _float(row["score"]),
        "maxScore": _float(row["max_score"]),
        "status": row["status"],
        "details": None if details is None else json.loads(details),
        "createdAt": row["created_at"],
    }


def _telemetry_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": _int(row["id"]), "runId": row["run_id"]}
    for column, wire in _TELEMETRY:
        value = row[column]
        if column == "latencies_ms":
            value = [float(x) for x in json.loads(value or "[]")]
        elif column in _TELEMETRY_REAL:
            value = _float(value)
        elif column != "workspace_dir":
            value = _int(value)
        out[wire] = value
    return out
