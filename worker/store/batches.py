"""Batches in the store: their rows, the merging of the metadata every invocation of a batch
contributes, the aggregates and breakdowns computed from their runs, and the store's totals.

Aggregates (batch totals, breakdowns, stats) are computed by SQL from the stored runs, never
trusted from clients, and leave out attempts a later run redid. A batch row keeps the earliest
creation and the latest completion time; each invocation's metadata is kept as a
contribution row and merged on read (:func:`merge_batch_metadata`), so concurrent writers
sharing a batch id lose nothing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from worker.messages import HttpError
from worker.storage import MAX_BOUND_PARAMS, Statement, Storage
from worker.store.queries import (
    _COUNTED,
    batch_kind_condition,
    decode_cursor,
    encode_cursor,
    kind_condition,
    parse_kind,
    parse_limit,
)
from worker.store.wire import _dumps, _float, _int, run_to_wire

_BATCH_AGGREGATES = """
    COUNT(r.run_id) AS total_runs,
    COALESCE(SUM(CASE WHEN r.tier = 'dataset' THEN 1 ELSE 0 END), 0) AS dataset_runs,
    COALESCE(SUM(r.is_successful), 0) AS successful_runs,
    AVG(r.total_score) AS avg_score,
    AVG(r.weighted_score) AS avg_weighted_score
"""


def _batch_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "batchId": row["batch_id"],
        "createdAt": _int(row["created_at"]),
        "completedAt": None if row["completed_at"] is None else _int(row["completed_at"]),
        "totalRuns": _int(row["total_runs"]),
        "successfulRuns": _int(row["successful_runs"]),
        "avgScore": _float(row["avg_score"]),
        "avgWeightedScore": _float(row["avg_weighted_score"]),
        "kind": _batch_kind(_int(row["total_runs"]), _int(row.get("dataset_runs"))),
        "metadata": json.loads(row["metadata"] or "{}"),
    }


def _batch_kind(total: int, datasets: int) -> str | None:
    """``scenario``, ``dataset``, ``mixed`` (both kinds of run), or None (no runs yet)."""
    if total == 0:
        return None
    if datasets == 0:
        return "scenario"
    return "dataset" if datasets == total else "mixed"


# Metadata keys whose values add up across contributions; the rest are merged as distinct values.
_SUMMED_KEYS = frozenset({"iterations"})
_INVOCATION_KEY = "invocationId"


def merge_batch_metadata(contributions: list[dict[str, Any]]) -> dict[str, Any]:
    """One metadata object from every contribution to a batch, in the order they arrived.

    A key all contributions agree on keeps its value; a key with several values becomes the
    list of distinct values (lists are flattened into it); ``iterations`` are summed.
    ``invocationId`` is replaced by ``invocations``, the number of contributions.
    """
    merged: dict[str, Any] = {}
    seen: dict[str, list[Any]] = {}
    for contribution in contributions:
        for key, value in contribution.items():
            if key == _INVOCATION_KEY:
                continue
            if key in _SUMMED_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[key] = merged.get(key, 0) + value
                continue
            values = seen.setdefault(key, [])
            for item in value if isinstance(value, list) else [value]:
                if item is not None and item not in values:
                    values.append(item)
    for key, values in seen.items():
        merged[key] = values[0] if len(values) == 1 else (values or None)
    if len(contributions) > 1 or any(_INVOCATION_KEY in c for c in contributions):
        merged["invocations"] = len(contributions)
    return merged


async def upsert_batch(db: Storage, batch: dict[str, Any], now_ms: int) -> bool:
    """Create or update a batch atomically; True when it was created. Aggregates are not stored.

    The batch row keeps the earliest creation and the latest completion time; the metadata is
    added as a contribution row (an identical repost adds nothing), so concurrent writers
    sharing a batch id lose nothing.
    """
    existed = await db.first("SELECT 1 AS x FROM batches WHERE batch_id = ?", (batch["batchId"],))
    created_at = batch["createdAt"] if batch["createdAt"] is not None else now_ms
    statements = [Statement(
        "INSERT INTO batches (batch_id, created_at, completed_at, metadata) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (batch_id) DO UPDATE SET "
        "created_at = MIN(batches.created_at, excluded.created_at), "
        "completed_at = CASE WHEN excluded.completed_at IS NULL THEN batches.completed_at "
        "WHEN batches.completed_at IS NULL THEN excluded.completed_at "
        "ELSE MAX(batches.completed_at, excluded.completed_at) END, "
        "metadata = CASE WHEN ? = 1 THEN excluded.metadata ELSE batches.metadata END",
        (batch["batchId"], created_at, batch["completedAt"], _dumps(batch["metadata"] or {}),
         int(batch["metadata"] is not None)),
    )]
    if batch["metadata"] is not None:
        text = _dumps(batch["metadata"])
        statements.append(Statement(
            "INSERT OR IGNORE INTO batch_contributions (batch_id, contribution_hash, created_at, metadata) "
            "VALUES (?, ?, ?, ?)",
            (batch["batchId"], hashlib.sha256(text.encode("utf-8")).hexdigest(), now_ms, text),
        ))
    await db.batch(statements)
    return existed is None


async def _merged_metadata(db: Storage, batch_ids: list[str]) -> dict[str, dict[str, Any]]:
    """``{batch_id: merged metadata}`` for the batches that have contributions."""
    out: dict[str, list[dict[str, Any]]] = {}
    chunk = MAX_BOUND_PARAMS
    for start in range(0, len(batch_ids), chunk):
        ids = batch_ids[start:start + chunk]
        rows = await db.all(
            "SELECT batch_id, metadata FROM batch_contributions WHERE batch_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY batch_id, created_at, contribution_hash", ids)
        for row in rows:
            try:
                value = json.loads(row["metadata"])
            except ValueError:
                continue
            if isinstance(value, dict):
                out.setdefault(row["batch_id"], []).append(value)
    return {batch_id: merge_batch_metadata(items) for batch_id, items in out.items()}


async def with_merged_metadata(db: Storage, batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``batches`` (wire form) with each one's metadata merged from its contributions."""
    merged = await _merged_metadata(db, [b["batchId"] for b in batches])
    for b in batches:
        if b["batchId"] in merged:
            b["metadata"] = merged[b["batchId"]]
    return batches


async def list_batches(db: Storage, query: dict[str, str]) -> tuple[list[dict[str, Any]], str | None]:
    """A page of batches with aggregates, newest first, and the next page's cursor."""
    unknown = sorted(set(query) - {"limit", "cursor", "kind"})
    if unknown:
        raise HttpError(400, f"unknown query parameter: {unknown[0]}", "accepted: limit, cursor, kind")
    limit = parse_limit(query.get("limit"))
    conditions = [batch_kind_condition(parse_kind(query.get("kind")), "batches.")]
    params: list[Any] = []
    if query.get("cursor"):
        created_at, batch_id = decode_cursor(query["cursor"])
        conditions.append("(created_at < ? OR (created_at = ? AND batch_id < ?))")
        params = [created_at, created_at, batch_id]
    where = "WHERE " + " AND ".join(conditions)
    # Page the batches first, then aggregate only their runs (idx_runs_batch).
    rows = await db.all(
        f"WITH page AS (SELECT * FROM batches {where} "
        "ORDER BY created_at DESC, batch_id DESC LIMIT ?) "
        f"SELECT page.batch_id, page.created_at, page.completed_at, page.metadata, {_BATCH_AGGREGATES} "
        f"FROM page LEFT JOIN runs r ON r.batch_id = page.batch_id AND {_COUNTED.format(alias='r')} "
        "GROUP BY page.batch_id ORDER BY page.created_at DESC, page.batch_id DESC",
        (*params, limit + 1),
    )
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = encode_cursor(_int(rows[-1]["created_at"]), rows[-1]["batch_id"])
    batches = [_batch_to_wire(r) for r in rows]
    return await with_merged_metadata(db, batches), next_cursor


async def get_batch(db: Storage, batch_id: str, include_runs: bool = True) -> dict[str, Any] | None:
    """A batch with aggregates, breakdowns by scenario/agent/model/tier and (optionally) its runs."""
    row = await db.first(
        f"SELECT b.batch_id, b.created_at, b.completed_at, b.metadata, {_BATCH_AGGREGATES} "
        f"FROM batches b LEFT JOIN runs r ON r.batch_id = b.batch_id AND {_COUNTED.format(alias='r')} "
        "WHERE b.batch_id = ? GROUP BY b.batch_id",
        (batch_id,),
    )
    if row is None:
        return None
    batch = _batch_to_wire(row)
    merged = await _merged_metadata(db, [batch_id])
    if batch_id in merged:
        batch["metadata"] = merged[batch_id]
    group = (
        "SELECT ? AS dimension, {col} AS key, COUNT(*) AS runs, "
        "COALESCE(SUM(is_successful), 0) AS successful_runs, AVG(total_score) AS avg_score, "
        "AVG(weighted_score) AS avg_weighted_score, MIN(total_score) AS min_score, "
        "MAX(total_score) AS max_score FROM runs WHERE batch_id = ? AND "
        + _COUNTED.format(alias="runs") + " GROUP BY {col}"
    )
    dims = (("scenario", "scenario"), ("agent", "agent"), ("model", "model"), ("tier", "tier"))
    sql = " UNION ALL ".join(group.format(col=col) for _, col in dims)
    params: list[Any] = []
    for name, _ in dims:
        params.extend([name, batch_id])
    breakdowns: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in dims}
    for r in await db.all(sql + " ORDER BY dimension, key", params):
        breakdowns[r["dimension"]].append({
            "key": r["key"],
            "runs": _int(r["runs"]),
            "successfulRuns": _int(r["successful_runs"]),
            "avgScore": _float(r["avg_score"]),
            "avgWeightedScore": _float(r["avg_weighted_score"]),
            "minScore": _float(r["min_score"]),
            "maxScore": _float(r["max_score"]),
        })
    batch["breakdowns"] = breakdowns
    if include_runs:
        runs = await db.all(
            "SELECT * FROM runs WHERE batch_id = ? ORDER BY created_at, run_id", (batch_id,))
        batch["runs"] = [run_to_wire(r) for r in runs]
    return batch


# ------------------------------------------------------------------------------------ stats

async def stats(db: Storage, kind: str | None = None) -> dict[str, Any]:
    """Totals over the runs of ``kind`` (None: every run) and the batches holding them."""
    row = await db.first(
        "SELECT COUNT(*) AS total_runs, COALESCE(SUM(is_successful), 0) AS successful_runs, "
        "AVG(total_score) AS avg_score, AVG(weighted_score) AS avg_weighted_score, "
        f"(SELECT COUNT(*) FROM batches WHERE {batch_kind_condition(kind, 'batches.')}) AS total_batches "
        f"FROM runs WHERE {_COUNTED.format(alias='runs')} AND {kind_condition(kind)}"
    ) or {}
    return {
        "totalRuns": _int(row.get("total_runs")),
        "successfulRuns": _int(row.get("successful_runs")),
        "avgScore": _float(row.get("avg_score")),
        "avgWeightedScore": _float(row.get("avg_weighted_score")),
        "totalBatches": _int(row.get("total_batches")),
    }


async def agent_stats(db: Storage) -> list[dict[str, Any]]:
    rows = await db.all(
        "SELECT agent, COUNT(*) AS runs, COALESCE(SUM(is_successful), 0) AS successful_runs, "
        "AVG(total_score) AS avg_score, MIN(total_score) AS min_score, "
        "MAX(total_score) AS max_score FROM runs WHERE " + _COUNTED.format(alias="runs")
        + " GROUP BY agent ORDER BY agent"
    )
    return [{
        "agent": r["agent"],
        "runs": _int(r["runs"]),
        "successfulRuns": _int(r["successful_runs"]),
        "avgScore": _float(r["avg_score"]),
        "minScore": _float(r["min_score"]),
        "maxScore": _float(r["max_score"]),
    } for r in rows]
