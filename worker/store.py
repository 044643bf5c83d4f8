"""The results store: every SQL statement the routes need, over :class:`worker.storage.Storage`.

Rows go in and out in the camelCase wire form of the API (docs/worker.md, "API"). Aggregates
(batch totals, breakdowns, stats) are computed by SQL, never trusted from clients.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from datetime import datetime, timezone
from typing import Any

from worker.messages import HttpError
from worker.storage import MAX_BOUND_PARAMS, ConstraintError, Statement, Storage
from worker.transcripts import cap_transcript, split_chunks

# Query parameter -> column. Every one has an index (migrations/0001_initial.sql).
RUN_FILTERS: dict[str, str] = {
    "suite": "suite",
    "scenario": "scenario",
    "agent": "agent",
    "model": "model",
    "tier": "tier",
    "status": "status",
    "batchId": "batch_id",
    "specialist": "specialist_name",
    "specialistEnabled": "specialist_enabled",
    "configHash": "config_hash",
    "kind": "tier",  # scenario | dataset: see KINDS
}
#: What runs a view holds: scenario runs (agents on fixtures) or dataset requests (a provider
#: answering a dataset's items, stored with tier "dataset"); views never mix them unasked.
KINDS = ("scenario", "dataset")
DATASET_TIER = "dataset"
DEFAULT_LIMIT = 100
MAX_LIMIT = 500

_RUN_COLUMNS = (
    "run_id", "batch_id", "suite", "scenario", "tier", "agent", "model", "status",
    "failure_class", "started_at", "completed_at", "total_score", "weighted_score",
    "is_successful", "success_metric", "specialist_enabled", "specialist_name",
    "specialist_version", "config_hash", "metadata", "content_hash", "created_at", "retry_of",
)
_EVAL_COLUMNS = ("run_id", "position", "evaluator_name", "score", "max_score", "status",
                 "details", "created_at")
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


# ---------------------------------------------------------------------------------- cursors

def encode_cursor(created_at: int, key: str) -> str:
    raw = _dumps([created_at, key]).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, key = json.loads(raw)
        if not isinstance(created_at, int) or not isinstance(key, str):
            raise ValueError
        return created_at, key
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise HttpError(400, "invalid cursor", "pass the value of X-Next-Cursor unchanged") from None


def parse_limit(value: str | None) -> int:
    """``limit`` from a query string: default 100, capped at 500."""
    if value is None or value == "":
        return DEFAULT_LIMIT
    try:
        limit = int(value)
    except ValueError:
        raise HttpError(400, "invalid limit", f"an integer from 1 to {MAX_LIMIT}; got {value!r}") from None
    if limit < 1:
        raise HttpError(400, "invalid limit", f"an integer from 1 to {MAX_LIMIT}; got {limit}")
    return min(limit, MAX_LIMIT)


# ------------------------------------------------------------------------------------- runs

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


def _retry_of(run: dict[str, Any]) -> str | None:
    """The earlier attempt this run redoes (``metadata.retryOf``), if it names one."""
    value = (run["metadata"] or {}).get("retryOf")
    return value if isinstance(value, str) and value and value != run["runId"] else None


# A run counts in aggregates unless a later run redid it (``bench --retry-errors``).
_COUNTED = "NOT EXISTS (SELECT 1 FROM runs redo WHERE redo.retry_of = {alias}.run_id)"


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


def _filter_value(name: str, value: str) -> Any:
    if name == "specialistEnabled":
        lowered = value.lower()
        if lowered not in ("true", "false", "1", "0"):
            raise HttpError(400, "invalid value for specialistEnabled", "true or false")
        return 1 if lowered in ("true", "1") else 0
    return value


def parse_kind(value: str | None, default: str | None = None) -> str | None:
    """``scenario``, ``dataset`` or None for ``all``; anything else is a 400."""
    if value is None or value == "":
        return default
    if value == "all":
        return None
    if value not in KINDS:
        raise HttpError(400, "invalid kind", f"scenario, dataset or all, not {value!r}")
    return value


def kind_condition(kind: str | None, alias: str = "") -> str:
    """SQL keeping runs of ``kind`` (no parameters: the tier is a constant)."""
    if kind is None:
        return "1 = 1"
    return f"{alias}tier {'=' if kind == 'dataset' else '!='} '{DATASET_TIER}'"


def batch_kind_condition(kind: str | None, alias: str) -> str:
    """SQL keeping batches holding runs of ``kind`` (a batch of both kinds is kept by either)."""
    if kind is None:
        return "1 = 1"
    return (f"EXISTS (SELECT 1 FROM runs k WHERE k.batch_id = {alias}batch_id AND "
            f"{kind_condition(kind, 'k.')})")


def run_filters_sql(query: dict[str, str], alias: str = "") -> tuple[list[str], list[Any]]:
    """WHERE conditions and their parameters for the run filters of ``query`` (RUN_FILTERS)."""
    where: list[str] = []
    params: list[Any] = []
    for name, column in RUN_FILTERS.items():
        column = f"{alias}{column}"
        if name == "specialist" and name in query and not query[name].startswith("@"):
            # A bare name matches the specialist stored bare or under any scope (@scope/name),
            # as `bench --specialist NAME` finds the template either way.
            where.append(f"({column} = ? OR (substr({column}, 1, 1) = '@' "
                         f"AND substr({column}, instr({column}, '/') + 1) = ?))")
            params.extend([query[name], query[name]])
        elif name == "kind" and name in query:
            kind = parse_kind(query[name])
            if kind is not None:
                where.append(f"{column} {'=' if kind == 'dataset' else '!='} ?")
                params.append(DATASET_TIER)
        elif name in query:
            where.append(f"{column} = ?")
            params.append(_filter_value(name, query[name]))
    return where, params


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


# ---------------------------------------------------------------------------------- batches

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


# ------------------------------------------------------------------------------- stress runs

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
