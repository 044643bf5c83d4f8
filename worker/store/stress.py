"""Stress runs in the store: a load test's record and its steps, written once, read whole or
listed a page at a time without their steps.

A stress run is written as one atomic batch; its steps' JSON is split into chunks (the first
in the row, the rest in ``stress_run_steps``) so that no statement nears D1's size limit. A
repost of the same content is stored once; an id already stored with other content is an
:class:`~worker.messages.HttpError` 409.
"""

from __future__ import annotations

import json
from typing import Any

from worker.messages import HttpError
from worker.storage import ConstraintError, Statement, Storage
from worker.store.queries import decode_cursor, encode_cursor, parse_limit
from worker.store.wire import _dumps, _int, content_hash
from worker.transcripts import split_chunks

# Query parameter -> column of GET /api/stress; each has an index (migrations/0004_stress.sql).
STRESS_FILTERS: dict[str, str] = {
    "provider": "provider",
    "model": "model",
    "profile": "profile",
    "status": "status",
}
# The steps' JSON is stored in chunks of at most this many bytes, so that the row's INSERT
# (with config and summary, capped at 16 and 32 KB) stays far below D1's 100 KB per statement.
STRESS_STEP_CHUNK_BYTES = 45_000
_STRESS_LIST_COLUMNS = ("id, created_at, started_at, completed_at, provider, model, profile, status, "
                        "config, summary")


def _stress_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "createdAt": _int(row["created_at"]),
        "startedAt": row["started_at"],
        "completedAt": row["completed_at"],
        "provider": row["provider"],
        "model": row["model"],
        "profile": row["profile"],
        "status": row["status"],
        "config": json.loads(row["config"] or "{}"),
        "summary": json.loads(row["summary"] or "{}"),
    }


async def store_stress(db: Storage, record: dict[str, Any], now_ms: int) -> bool:
    """Store a validated stress run atomically. True when stored now, False for an identical
    repost; HttpError 409 when a stress run with this id exists with different content."""
    digest = content_hash(record)
    existing = await db.first("SELECT content_hash FROM stress_runs WHERE id = ?", (record["id"],))
    if existing is None:
        chunks = split_chunks(_dumps(record["steps"]), STRESS_STEP_CHUNK_BYTES)
        statements = [Statement(
            "INSERT INTO stress_runs (id, created_at, started_at, completed_at, provider, model, profile, "
            "status, config, summary, steps, steps_chunks, content_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], now_ms, record["startedAt"], record["completedAt"], record["provider"],
             record["model"], record["profile"], record["status"], _dumps(record["config"] or {}),
             _dumps(record["summary"] or {}), chunks[0], len(chunks), digest),
        )]
        statements.extend(
            Statement("INSERT INTO stress_run_steps (stress_id, chunk_index, content) VALUES (?, ?, ?)",
                      (record["id"], index, chunk))
            for index, chunk in enumerate(chunks) if index > 0
        )
        try:
            await db.batch(statements)
            return True
        except ConstraintError:
            existing = await db.first("SELECT content_hash FROM stress_runs WHERE id = ?", (record["id"],))
            if existing is None:
                raise
    if existing["content_hash"] == digest:
        return False
    raise HttpError(409, "stress run already stored with different content",
                    f"id {record['id']} exists; post a new id for a new stress run")


async def get_stress(db: Storage, stress_id: str) -> dict[str, Any] | None:
    """A stress run with its steps, or None."""
    row = await db.first(f"SELECT {_STRESS_LIST_COLUMNS}, steps, steps_chunks FROM stress_runs WHERE id = ?",
                         (stress_id,))
    if row is None:
        return None
    text = row["steps"] or "[]"
    if _int(row["steps_chunks"]) > 1:
        rest = await db.all("SELECT content FROM stress_run_steps WHERE stress_id = ? ORDER BY chunk_index",
                            (stress_id,))
        text += "".join(r["content"] for r in rest)
    out = _stress_to_wire(row)
    out["steps"] = json.loads(text)
    return out


async def list_stress(db: Storage, query: dict[str, str]) -> tuple[list[dict[str, Any]], str | None]:
    """A page of stress runs (without their steps), newest first, and the next page's cursor."""
    unknown = sorted(set(query) - set(STRESS_FILTERS) - {"limit", "cursor"})
    if unknown:
        raise HttpError(400, f"unknown query parameter: {unknown[0]}",
                        f"filters: {', '.join(STRESS_FILTERS)}; also limit, cursor")
    limit = parse_limit(query.get("limit"))
    where: list[str] = []
    params: list[Any] = []
    for name, column in STRESS_FILTERS.items():
        if name in query:
            where.append(f"{column} = ?")
            params.append(query[name])
    if query.get("cursor"):
        created_at, stress_id = decode_cursor(query["cursor"])
        where.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params.extend([created_at, created_at, stress_id])
    sql = f"SELECT {_STRESS_LIST_COLUMNS} FROM stress_runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
    rows = await db.all(sql, (*params, limit + 1))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = encode_cursor(_int(rows[-1]["created_at"]), rows[-1]["id"])
    return [_stress_to_wire(r) for r in rows], next_cursor
