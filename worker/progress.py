"""Live progress of a batch while it runs: what the dashboard's batch page polls.

A ``bench`` invocation reports to ``POST /api/batches/{batchId}/progress`` when it starts,
every few seconds while it runs (a heartbeat, :data:`HEARTBEAT_MS`) and once when it ends.
Each report replaces that invocation's previous one (one row per invocation, the table
``batch_progress``). A report whose ``sequence`` is not higher than the stored one, or that
arrives after the invocation said it ended, changes nothing: a repeated or late delivery is
harmless. The first report creates the batch, so a batch is listed from its start.

``GET /api/batches/{batchId}/progress`` answers for the batch as a whole: the cells planned,
the cells done (those with a stored run, as ``bench batch`` counts them), the runs stored, the
cells running, an ETA, and each invocation's own figures and state:

- ``running``: its last report says so and arrived less than :data:`STALE_AFTER_MS` ago;
- ``stale``: it says running but nothing arrived for longer: its process was most likely
  killed, and its batch record never came;
- ``finished`` / ``interrupted``: its last report says so, or its batch record (the batch
  metadata posted at the end, which carries the same ``invocationId``) is stored.

The batch's ``state`` is ``running`` while any invocation runs, otherwise the state of the
invocation heard from last; null when no invocation ever reported (a batch stored by an older
harness, or by a client that does not report progress). Ages are measured on the worker's
clock only, so a client's clock never makes a batch look stale.
"""

from __future__ import annotations

from typing import Any, Protocol

from worker.messages import HttpError, Request, Response, json_response
from worker.schema import ID_PATTERN, Field, id_problem, parse_json_body, validate_object
from worker.storage import Row, Statement, Storage

STATES = ("running", "finished", "interrupted")
ENDED = ("finished", "interrupted")
#: How often a running invocation reports, at least (the harness's heartbeat).
HEARTBEAT_MS = 5_000
#: A running invocation not heard from for longer is ``stale``.
STALE_AFTER_MS = 60_000


def _count(name: str, description: str) -> Field:
    return Field(name, "integer", default=0, minimum=0, description=description)


PROGRESS_FIELDS = (
    Field("invocationId", "string", required=True, max_length=128, pattern=ID_PATTERN,
          description="The invocation reporting; its batch record carries the same invocationId."),
    Field("state", "string", required=True, enum=STATES),
    Field("sequence", "integer", required=True, minimum=0,
          description="Orders the reports of one invocation: a report not higher than the stored one is ignored."),
    Field("cells", "integer", required=True, minimum=0, description="Cells this invocation runs."),
    _count("done", "Of them, the cells that ended (stored or not)."),
    _count("running", "Of them, the cells running now."),
    Field("plannedCells", "integer", nullable=True, minimum=0, description="Cells of the batch's whole plan."),
    _count("elapsedMs", "Since this invocation's first cell started."),
    Field("startedAt", "integer", nullable=True, minimum=0, description="unix ms, when the invocation started "
                                                                        "(its own clock; shown, never compared)"),
)

_NINT = {"type": ["integer", "null"]}
_INVOCATION_SCHEMA = {
    "type": "object",
    "required": ["invocationId", "state", "cells", "done", "running", "plannedCells", "elapsedMs", "startedAt",
                 "updatedAt", "ageMs", "etaMs"],
    "properties": {
        "invocationId": {"type": "string"}, "state": {"enum": ["running", "stale", *ENDED]},
        "cells": {"type": "integer"}, "done": {"type": "integer"}, "running": {"type": "integer"},
        "plannedCells": _NINT, "elapsedMs": {"type": "integer"}, "startedAt": _NINT,
        "updatedAt": {"type": "integer"}, "ageMs": {"type": "integer"}, "etaMs": _NINT,
    },
}
#: The answer of GET /api/batches/{batchId}/progress (published in /openapi.json).
PROGRESS_SCHEMA = {
    "type": "object",
    "required": ["batchId", "state", "plannedCells", "done", "runs", "running", "etaMs", "updatedAt", "ageMs",
                 "staleAfterMs", "invocations"],
    "properties": {
        "batchId": {"type": "string"},
        "state": {"enum": ["running", "stale", *ENDED, None],
                  "description": "null when no invocation of the batch ever reported progress"},
        "plannedCells": {**_NINT, "description": "cells of the batch's plan, when known"},
        "done": {"type": "integer", "description": "cells with a stored run"},
        "runs": {"type": "integer", "description": "runs stored"},
        "running": {"type": "integer", "description": "cells running now, in the invocations still running"},
        "etaMs": {**_NINT, "description": "time left until the running invocations end, estimated"},
        "updatedAt": {**_NINT, "description": "unix ms (the worker's clock), the last report"},
        "ageMs": {**_NINT, "description": "how long ago the last report arrived"},
        "staleAfterMs": {"type": "integer"},
        "invocations": {"type": "array", "items": _INVOCATION_SCHEMA},
    },
}


class Host(Protocol):
    """What the handlers here use of the app that routes to them (``worker.app.WorkerApp``):
    its storage and its clock."""

    storage: Storage

    def now_ms(self) -> int: ...


_UPSERT = (
    "INSERT INTO batch_progress (batch_id, invocation_id, sequence, state, planned_cells, cells, done, running, "
    "elapsed_ms, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (batch_id, invocation_id) DO UPDATE SET sequence = excluded.sequence, state = excluded.state, "
    "planned_cells = excluded.planned_cells, cells = excluded.cells, done = excluded.done, "
    "running = excluded.running, elapsed_ms = excluded.elapsed_ms, started_at = excluded.started_at, "
    "updated_at = excluded.updated_at "
    "WHERE excluded.sequence > batch_progress.sequence AND batch_progress.state = 'running'"
)


def _no_query(request: Request) -> None:
    if request.query:
        raise HttpError(400, f"unknown query parameter: {sorted(request.query)[0]}", "this route takes none")


async def post_progress(app: Host, request: Request, params: dict[str, str]) -> Response:
    """Store one invocation's report (see the module docstring)."""
    _no_query(request)
    batch_id = params["batchId"]
    problem = id_problem(batch_id)
    if problem is not None:
        raise HttpError(400, "invalid batch id", problem)
    report = validate_object(PROGRESS_FIELDS, parse_json_body(request.body))
    now = app.now_ms()
    invocation = report["invocationId"]
    await app.storage.batch([
        Statement("INSERT INTO batches (batch_id, created_at, metadata) VALUES (?, ?, '{}') "
                  "ON CONFLICT (batch_id) DO NOTHING", (batch_id, now)),
        Statement(_UPSERT, (batch_id, invocation, report["sequence"], report["state"], report["plannedCells"],
                            report["cells"], report["done"], report["running"], report["elapsedMs"],
                            report["startedAt"], now)),
    ])
    row = await app.storage.first("SELECT sequence, state FROM batch_progress WHERE batch_id = ? AND invocation_id = ?",
                                  (batch_id, invocation))
    current = row is not None and int(row["sequence"]) == report["sequence"] and row["state"] == report["state"]
    return json_response(200, {"success": True, "batchId": batch_id, "invocationId": invocation,
                               "current": current})


async def get_progress(app: Host, request: Request, params: dict[str, str]) -> Response:
    """The batch's progress (see the module docstring); 404 for an unknown batch."""
    _no_query(request)
    batch_id = params["batchId"]
    db = app.storage
    if await db.first("SELECT 1 AS x FROM batches WHERE batch_id = ?", (batch_id,)) is None:
        raise HttpError(404, "batch not found", f"no batch {batch_id}")
    rows = await db.all("SELECT * FROM batch_progress WHERE batch_id = ? ORDER BY updated_at, invocation_id",
                        (batch_id,))
    records = await db.all(
        "SELECT json_extract(metadata, '$.invocationId') AS invocation, "
        "json_extract(metadata, '$.interrupted') AS interrupted, "
        "CASE WHEN json_type(metadata, '$.plannedCells') = 'integer' "
        "THEN json_extract(metadata, '$.plannedCells') END AS planned "
        "FROM batch_contributions WHERE batch_id = ? AND json_valid(metadata)", (batch_id,))
    stored = await db.first(
        "SELECT COUNT(*) AS runs, COUNT(DISTINCT COALESCE(json_extract(metadata, '$.cellKey'), run_id)) AS cells "
        "FROM runs WHERE batch_id = ?", (batch_id,)) or {}
    return json_response(200, summarize(batch_id, rows, records, stored, app.now_ms()))


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _nint(value: Any) -> int | None:
    return None if value is None else int(value)


def invocation_state(row: Row, ended: dict[str, bool], now_ms: int) -> str:
    """running, stale, finished or interrupted (see the module docstring)."""
    if row["state"] in ENDED:
        return str(row["state"])
    if row["invocation_id"] in ended:
        return "interrupted" if ended[row["invocation_id"]] else "finished"
    return "stale" if now_ms - _int(row["updated_at"]) > STALE_AFTER_MS else "running"


def eta_ms(cells: int, done: int, elapsed_ms: int, age_ms: int) -> int | None:
    """Time left for a running invocation: the time per cell so far (cells ran in parallel
    count once) times the cells left, less the time since the report; None before a cell ended."""
    if done >= cells:
        return 0
    if done <= 0 or elapsed_ms <= 0:
        return None
    return max(0, round(elapsed_ms / done * (cells - done) - age_ms))


def summarize(batch_id: str, rows: list[Row], records: list[Row], stored: Row, now_ms: int) -> dict[str, Any]:
    """The answer of GET /api/batches/{batchId}/progress from the batch's progress rows (oldest
    report first), the invocation fields of its batch records and its stored run counts."""
    ended = {str(r["invocation"]): bool(r["interrupted"]) for r in records if r["invocation"] is not None}
    planned = [int(r["planned"]) for r in records if r["planned"] is not None]
    invocations = []
    for row in rows:
        state = invocation_state(row, ended, now_ms)
        updated, age = _int(row["updated_at"]), max(0, now_ms - _int(row["updated_at"]))
        cells, done = _int(row["cells"]), _int(row["done"])
        if row["planned_cells"] is not None:
            planned.append(int(row["planned_cells"]))
        invocations.append({
            "invocationId": row["invocation_id"], "state": state, "cells": cells, "done": done,
            "running": _int(row["running"]) if state == "running" else 0,
            "plannedCells": _nint(row["planned_cells"]), "elapsedMs": _int(row["elapsed_ms"]),
            "startedAt": _nint(row["started_at"]), "updatedAt": updated, "ageMs": age,
            "etaMs": eta_ms(cells, done, _int(row["elapsed_ms"]), age) if state == "running" else None,
        })
    live = [i for i in invocations if i["state"] == "running"]
    etas = [i["etaMs"] for i in live if i["etaMs"] is not None]
    last = max((i["updatedAt"] for i in invocations), default=None)
    return {
        "batchId": batch_id,
        "state": "running" if live else (invocations[-1]["state"] if invocations else None),
        "plannedCells": max(planned) if planned else None,
        "done": _int(stored.get("cells")),
        "runs": _int(stored.get("runs")),
        "running": sum(i["running"] for i in live),
        "etaMs": max(etas) if etas else None,
        "updatedAt": last,
        "ageMs": None if last is None else max(0, now_ms - last),
        "staleAfterMs": STALE_AFTER_MS,
        "invocations": invocations,
    }
