"""Runs in the store: the statements that write one, the atomic single and bulk writes, and
the reads of a run, its evaluations, telemetry, transcript, diff and a page of runs.

A run is written as one atomic batch of statements (its batch's row, the run, its
evaluations, telemetry, transcript and diff chunks), so a failed write leaves no part of it.
A repost of the same content is recognised by its content hash and stored once; a run id
already stored with other content is an :class:`~worker.messages.HttpError` 409. A run that
names an earlier attempt in ``metadata.retryOf`` records it in ``retry_of``, which takes that
attempt out of the aggregates (:data:`worker.store.queries._COUNTED`).
"""

from __future__ import annotations

import json
from typing import Any

from worker.messages import HttpError
from worker.storage import MAX_BOUND_PARAMS, ConstraintError, Statement, Storage
from worker.store.queries import RUN_FILTERS, decode_cursor, encode_cursor, parse_limit, run_filters_sql
from worker.store.wire import (
    _TELEMETRY,
    _dumps,
    _evaluation_to_wire,
    _int,
    _iso_now,
    _telemetry_to_wire,
    content_hash,
    run_to_wire,
)
from worker.transcripts import cap_transcript, split_chunks

_RUN_COLUMNS = (
    "run_id", "batch_id", "suite", "scenario", "tier", "agent", "model", "status",
    "failure_class", "started_at", "completed_at", "total_score", "weighted_score",
    "is_successful", "success_metric", "specialist_enabled", "specialist_name",
    "specialist_version", "config_hash", "metadata", "content_hash", "created_at", "retry_of",
)
_EVAL_COLUMNS = ("run_id", "position", "evaluator_name", "score", "max_score", "status",
                 "details", "created_at")


def _retry_of(run: dict[str, Any]) -> str | None:
    """The earlier attempt this run redoes (``metadata.retryOf``), if it names one."""
    value = (run["metadata"] or {}).get("retryOf")
    return value if isinstance(value, str) and value and value != run["runId"] else None


def run_statements(run: dict[str, Any], digest: str, now_ms: int, *, batch_row: bool = True) -> list[Statement]:
    """The statements that store one validated run; executed as one atomic batch.
    ``batch_row`` false leaves out the row of its batch (another run's statements create it)."""
    statements: list[Statement] = []
    run_id = run["runId"]
    if run["batchId"] and batch_row:
        statements.append(Statement(
            "INSERT INTO batches (batch_id, created_at, metadata) VALUES (?, ?, '{}') "
            "ON CONFLICT (batch_id) DO NOTHING",
            (run["batchId"], now_ms),
        ))
    values = (
        run_id, run["batchId"], run["suite"], run["scenario"], run["tier"], run["agent"],
        run["model"], run["status"], run["failureClass"], run["startedAt"], run["completedAt"],
        run["totalScore"], run["weightedScore"], int(run["isSuccessful"]), run["successMetric"],
        int(run["specialistEnabled"]), run["specialistName"], run["specialistVersion"],
        run["configHash"], _dumps(run["metadata"] or {}), digest, now_ms, _retry_of(run),
    )
    statements.append(Statement(
        f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) VALUES ({', '.join('?' * len(_RUN_COLUMNS))})",
        values,
    ))
    created = _iso_now(now_ms)
    rows = [
        (run_id, i, e["evaluatorName"], e["score"], e["maxScore"], e["status"],
         None if e["details"] is None else _dumps(e["details"]), created)
        for i, e in enumerate(run["evaluations"])
    ]
    statements.extend(_multi_insert("evaluations", _EVAL_COLUMNS, rows))
    tel = run["telemetry"]
    if tel is not None:
        columns = ("run_id", *(c for c, _ in _TELEMETRY))
        params = [run_id]
        for column, wire in _TELEMETRY:
            params.append(_dumps(tel[wire]) if column == "latencies_ms" else tel[wire])
        statements.append(Statement(
            f"INSERT INTO telemetry ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            tuple(params),
        ))
    if run["transcript"] is not None:
        messages, truncated = cap_transcript(run["transcript"])
        for index, chunk in enumerate(split_chunks(_dumps(messages))):
            statements.append(Statement(
                "INSERT INTO transcripts (run_id, chunk_index, content, truncated) VALUES (?, ?, ?, ?)",
                (run_id, index, chunk, int(truncated)),
            ))
    if run.get("diff"):
        for index, chunk in enumerate(split_chunks(run["diff"])):
            statements.append(Statement(
                "INSERT INTO run_diffs (run_id, chunk_index, content) VALUES (?, ?, ?)", (run_id, index, chunk)))
    return statements


def _multi_insert(table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[Statement]:
    """Multi-row INSERTs, each within D1's bound-parameter limit."""
    per_statement = MAX_BOUND_PARAMS // len(columns)
    placeholder = "(" + ", ".join("?" * len(columns)) + ")"
    out = []
    for start in range(0, len(rows), per_statement):
        chunk = rows[start:start + per_statement]
        out.append(Statement(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([placeholder] * len(chunk))}",
            tuple(v for row in chunk for v in row),
        ))
    return out


async def store_run(db: Storage, run: dict[str, Any], now_ms: int) -> bool:
    """Store a validated run atomically. True when stored now, False for an identical retry.

    Raises HttpError 409 when a run with this id exists with different content.
    """
    digest = content_hash(run)
    existing = await db.first("SELECT content_hash FROM runs WHERE run_id = ?", (run["runId"],))
    if existing is None:
        try:
            await db.batch(run_statements(run, digest, now_ms))
            return True
        except ConstraintError:
            # Another request stored the same id between our check and our write.
            existing = await db.first("SELECT content_hash FROM runs WHERE run_id = ?", (run["runId"],))
            if existing is None:
                raise
    if existing["content_hash"] == digest:
        return False
    raise HttpError(409, "run already stored with different content",
                    f"runId {run['runId']} exists; post a new runId for a new run")


async def _stored_ids(db: Storage, ids: list[str]) -> dict[str, str]:
    """The content hash of each of ``ids`` that is stored."""
    known: dict[str, str] = {}
    for start in range(0, len(ids), MAX_BOUND_PARAMS):
        chunk = ids[start:start + MAX_BOUND_PARAMS]
        rows = await db.all(f"SELECT run_id, content_hash FROM runs WHERE run_id IN ({', '.join('?' * len(chunk))})",
                            tuple(chunk))
        known.update((row["run_id"], row["content_hash"]) for row in rows)
    return known


async def store_runs(db: Storage, runs: list[dict[str, Any]], now_ms: int) -> list[bool | HttpError]:
    """Store validated runs, the new ones in one atomic batch (one transaction, one commit).

    One outcome per run, in order: True stored now, False an identical retry (also a repeat of
    an earlier run of the same request), or the :class:`HttpError` 409 that :func:`store_run`
    raises for a run id already stored with different content. When another writer stores
    some of the same ids between the check and the write, the runs are stored one by one.
    """
    digests = [content_hash(run) for run in runs]
    known = await _stored_ids(db, list(dict.fromkeys(run["runId"] for run in runs)))
    outcomes: list[bool | HttpError] = []
    statements: list[Statement] = []
    batches: set[str] = set()
    for run, digest in zip(runs, digests):
        stored = known.get(run["runId"])
        if stored is None:
            known[run["runId"]] = digest
            statements.extend(run_statements(run, digest, now_ms, batch_row=run["batchId"] not in batches))
            batches.add(run["batchId"])
            outcomes.append(True)
        elif stored == digest:
            outcomes.append(False)
        else:
            outcomes.append(HttpError(409, "run already stored with different content",
                                      f"runId {run['runId']} exists; post a new runId for a new run"))
    if not statements:
        return outcomes
    try:
        await db.batch(statements)
    except ConstraintError:
        # Nothing was written. Only a race on the run ids (another writer stored one of them
        # since the check) is settled run by run; any other refusal is the request's error.
        new = [run["runId"] for run, outcome in zip(runs, outcomes) if outcome is True]
        if not await _stored_ids(db, new):
            raise
        for i, run in enumerate(runs):
            if outcomes[i] is True:
                try:
                    outcomes[i] = await store_run(db, run, now_ms)
                except HttpError as exc:
                    outcomes[i] = exc
    return outcomes


async def get_run(db: Storage, run_id: str) -> dict[str, Any] | None:
    row = await db.first("SELECT * FROM runs WHERE run_id = ?", (run_id,))
    return run_to_wire(row) if row else None


async def get_evaluations(db: Storage, run_id: str) -> list[dict[str, Any]]:
    rows = await db.all("SELECT * FROM evaluations WHERE run_id = ? ORDER BY position", (run_id,))
    return [_evaluation_to_wire(r) for r in rows]


async def get_telemetry(db: Storage, run_id: str) -> dict[str, Any] | None:
    row = await db.first("SELECT * FROM telemetry WHERE run_id = ?", (run_id,))
    return _telemetry_to_wire(row) if row else None


async def get_transcript(db: Storage, run_id: str) -> dict[str, Any] | None:
    """``{runId, transcript, truncated}``; ``transcript`` is None when none was posted."""
    rows = await db.all(
        "SELECT content, truncated FROM transcripts WHERE run_id = ? ORDER BY chunk_index", (run_id,))
    if not rows:
        return {"runId": run_id, "transcript": None, "truncated": False}
    return {
        "runId": run_id,
        "transcript": json.loads("".join(r["content"] for r in rows)),
        "truncated": bool(rows[0]["truncated"]),
    }


async def get_diff(db: Storage, run_id: str) -> str | None:
    """The run's unified diff text, or None when none was posted."""
    rows = await db.all("SELECT content FROM run_diffs WHERE run_id = ? ORDER BY chunk_index", (run_id,))
    return "".join(r["content"] for r in rows) if rows else None


async def list_runs(db: Storage, query: dict[str, str]) -> tuple[list[dict[str, Any]], str | None]:
    """A page of runs, newest first, and the cursor of the next page (None at the end)."""
    unknown = sorted(set(query) - set(RUN_FILTERS) - {"limit", "cursor"})
    if unknown:
        raise HttpError(400, f"unknown query parameter: {unknown[0]}",
                        f"filters: {', '.join(RUN_FILTERS)}; also limit, cursor")
    limit = parse_limit(query.get("limit"))
    where, params = run_filters_sql(query)
    if query.get("cursor"):
        created_at, run_id = decode_cursor(query["cursor"])
        where.append("(created_at < ? OR (created_at = ? AND run_id < ?))")
        params.extend([created_at, created_at, run_id])
    sql = "SELECT * FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, run_id DESC LIMIT ?"
    rows = await db.all(sql, (*params, limit + 1))
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = encode_cursor(_int(rows[-1]["created_at"]), rows[-1]["run_id"])
    return [run_to_wire(r) for r in rows], next_cursor
