"""Routes the dashboard reads beyond the core API: aggregates computed by the server, pages of
long things (a transcript, a diff), and views of dataset, fleet and tool-call data.

Everything here is a read over the same tables as worker/store/, bounded in what it returns:
the overview is a handful of aggregate queries, a transcript is sent in pages of entries with
long contents cut (the whole entry on request), and lists are paged, so a page stays fast
whatever the store holds (docs/PERFORMANCE.md, "Dashboard").
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from worker import analysis_api, store
from worker.analysis import stats, summary
from worker.messages import HttpError
from worker.storage import Storage
from worker.store.batches import _batch_to_wire
from worker.store.queries import _COUNTED  # attempts that count: not redone by a later run of the store

DAY_MS = 86_400_000
PREVIEW_CHARS = 2_000
MAX_TRANSCRIPT_PAGE = 200
DEFAULT_TRANSCRIPT_PAGE = 50
ARGUMENT_PREVIEW_CHARS = 300


def _int_param(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HttpError(400, f"invalid {name}", f"an integer from {low} to {high}, not {raw!r}") from None
    if not low <= value <= high:
        raise HttpError(400, f"invalid {name}", f"an integer from {low} to {high}, not {value}")
    return value


def _check(query: dict[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(query) - allowed)
    if unknown:
        raise HttpError(400, f"unknown query parameter: {unknown[0]}", f"accepted: {', '.join(sorted(allowed))}")


def _rate(successes: int, runs: int) -> float | None:
    return None if not runs else successes / runs


# ------------------------------------------------------------------------------------ overview

async def overview(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    """Totals, runs per UTC day over the last ``days`` days, and the latest batches, of one kind
    of run (``kind``: scenario by default, dataset, or all), with how many runs each kind has."""
    _check(query, {"days", "kind"})
    days = _int_param(query, "days", 30, 1, 366)
    kind = store.parse_kind(query.get("kind"), "scenario")
    since = (now_ms // DAY_MS - days + 1) * DAY_MS
    rows = await db.all(
        "SELECT created_at / ? AS day, COUNT(*) AS runs, COALESCE(SUM(is_successful), 0) AS successes, "
        f"AVG(total_score) AS avg_score FROM runs WHERE created_at >= ? AND {_COUNTED.format(alias='runs')} "
        f"AND {store.kind_condition(kind)} GROUP BY created_at / ? ORDER BY day", (DAY_MS, since, DAY_MS))
    timeline = []
    for r in rows:
        day = int(r["day"])
        runs, successes = int(r["runs"]), int(r["successes"])
        timeline.append({"day": _iso_day(day * DAY_MS), "runs": runs, "successfulRuns": successes,
                         "passRate": _rate(successes, runs),
                         "avgScore": None if r["avg_score"] is None else float(r["avg_score"])})
    recent, _ = await store.list_batches(db, {"limit": "10", "kind": kind or "all"})
    counts = await db.first(
        "SELECT COALESCE(SUM(CASE WHEN tier = 'dataset' THEN 0 ELSE 1 END), 0) AS scenario, "
        "COALESCE(SUM(CASE WHEN tier = 'dataset' THEN 1 ELSE 0 END), 0) AS dataset FROM runs WHERE "
        + _COUNTED.format(alias="runs")) or {}
    return {"totals": await store.stats(db, kind), "kind": kind or "all", "days": days, "timeline": timeline,
            "recentBatches": recent,
            "runsByKind": {"scenario": int(counts.get("scenario") or 0), "dataset": int(counts.get("dataset") or 0)}}


def _iso_day(ms: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")


async def overview_regressions(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    """The latest batch against the batch before it of the same agent (its most frequent one):
    the scenarios that regressed, with the counts of every status. ``baseline`` is None when
    there is nothing to compare yet. Scenario runs only: dataset requests have no scenarios."""
    _check(query, set())
    latest = await db.first(
        "SELECT batch_id FROM runs WHERE batch_id IS NOT NULL AND " + store.kind_condition("scenario")
        + " ORDER BY created_at DESC, run_id DESC LIMIT 1")
    if latest is None:
        return {"baseline": None, "candidate": None, "agent": None, "scenarios": [], "counts": {}}
    top = await db.first("SELECT agent, COUNT(*) AS n FROM runs WHERE batch_id = ? GROUP BY agent "
                         "ORDER BY n DESC, agent LIMIT 1", (latest["batch_id"],))
    agent = top["agent"] if top else None
    try:
        result = await analysis_api.regressions_route(db, {"agent": agent, "kind": "scenario"}, now_ms)
    except HttpError as exc:
        if exc.status == 404:
            return {"baseline": None, "candidate": latest["batch_id"], "agent": agent, "scenarios": [],
                    "counts": {}, "note": str(exc.details)}
        raise
    return {"baseline": result["baseline"], "candidate": result["candidate"], "agent": agent,
            "scenarios": [r for r in result["scenarios"] if r["status"] == "regressed"],
            "counts": result["counts"], "worst": result.get("worst")}


# ---------------------------------------------------------------------------------- batches

BATCH_SORTS = {
    "createdAt": "created_at",
    "batchId": "batch_id",
    "runs": "total_runs",
    "passRate": "pass_rate",
    "avgScore": "avg_score",
}


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def search_batches(db: Storage, query: dict[str, str]) -> tuple[list[dict[str, Any]], int]:
    """One page of batches (``offset``, ``limit``) matching ``q`` (in the id or the metadata),
    sorted by ``sort`` and ``order``, and how many match in all."""
    _check(query, {"q", "sort", "order", "offset", "limit", "kind"})
    sort = query.get("sort") or "createdAt"
    if sort not in BATCH_SORTS:
        raise HttpError(400, "invalid sort", f"one of {', '.join(BATCH_SORTS)}, not {sort!r}")
    order = (query.get("order") or "desc").lower()
    if order not in ("asc", "desc"):
        raise HttpError(400, "invalid order", f"asc or desc, not {order!r}")
    offset = _int_param(query, "offset", 0, 0, 10_000_000)
    limit = store.parse_limit(query.get("limit"))
    where, params = "WHERE " + store.batch_kind_condition(store.parse_kind(query.get("kind")), "b."), []
    if query.get("q"):
        pattern = _like(query["q"].strip())
        where += (" AND (b.batch_id LIKE ? ESCAPE '\\' OR b.metadata LIKE ? ESCAPE '\\' OR EXISTS "
                  "(SELECT 1 FROM batch_contributions c WHERE c.batch_id = b.batch_id "
                  "AND c.metadata LIKE ? ESCAPE '\\'))")
        params = [pattern, pattern, pattern]
    total_row = await db.first(f"SELECT COUNT(*) AS n FROM batches b {where}", params)
    total = int(total_row["n"]) if total_row else 0
    column = BATCH_SORTS[sort]
    direction = order.upper()
    aggregates = ("COUNT(r.run_id) AS total_runs, COALESCE(SUM(r.is_successful), 0) AS successful_runs, "
                  "AVG(r.total_score) AS avg_score, AVG(r.weighted_score) AS avg_weighted_score")
    join = f"LEFT JOIN runs r ON r.batch_id = b.batch_id AND {_COUNTED.format(alias='r')}"
    if column in ("created_at", "batch_id"):
        # Page the batches first, then aggregate only that page's runs.
        sql = (f"WITH page AS (SELECT * FROM batches b {where} ORDER BY b.{column} {direction}, "
               f"b.batch_id {direction} LIMIT ? OFFSET ?) "
               f"SELECT b.batch_id, b.created_at, b.completed_at, b.metadata, {aggregates} FROM page b {join} "
               f"GROUP BY b.batch_id ORDER BY b.{column} {direction}, b.batch_id {direction}")
    else:
        # An aggregate order needs every matching batch's aggregate; unknown values sort last.
        sql = (f"WITH agg AS (SELECT b.batch_id, b.created_at, b.completed_at, b.metadata, {aggregates} "
               f"FROM batches b {join} {where} GROUP BY b.batch_id) "
               "SELECT *, CASE WHEN total_runs > 0 THEN CAST(successful_runs AS REAL) / total_runs END AS pass_rate "
               f"FROM agg ORDER BY ({column} IS NULL), {column} {direction}, batch_id {direction} LIMIT ? OFFSET ?")
    rows = await db.all(sql, (*params, limit, offset))
    return await store.with_merged_metadata(db, [_batch_to_wire(r) for r in rows]), total


# ------------------------------------------------------------------------------- transcripts

def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _call_preview(call: Any) -> dict[str, Any]:
    if not isinstance(call, dict):
        return {"name": _text(call)[:ARGUMENT_PREVIEW_CHARS], "arguments": None, "cut": False}
    arguments = call.get("arguments")
    text = _text(arguments)
    cut = len(text) > PREVIEW_CHARS
    return {"id": call.get("id"), "name": call.get("name"),
            "arguments": text[:PREVIEW_CHARS] if cut else arguments, "cut": cut}


def entry_summary(index: int, entry: Any) -> dict[str, Any]:
    """One transcript entry for a page: its role, the start of its content and its tool calls."""
    if not isinstance(entry, dict):
        entry = {"role": "note", "content": entry}
    content = _text(entry.get("content"))
    out: dict[str, Any] = {"index": index, "role": entry.get("role") or "unknown",
                           "content": content[:PREVIEW_CHARS], "contentChars": len(content),
                           "cut": len(content) > PREVIEW_CHARS}
    if entry.get("name"):
        out["name"] = entry["name"]
    if entry.get("tool_call_id"):
        out["toolCallId"] = entry["tool_call_id"]
    if entry.get("is_error"):
        out["isError"] = True
    calls = entry.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["toolCalls"] = [_call_preview(c) for c in calls]
        out["cut"] = out["cut"] or any(c["cut"] for c in out["toolCalls"])
    return out


async def transcript_page(db: Storage, run_id: str, query: dict[str, str]) -> dict[str, Any]:
    """``offset``/``limit``: a page of entry summaries; ``entry``: one whole entry."""
    _check(query, {"offset", "limit", "entry"})
    found = await store.get_transcript(db, run_id)
    entries = (found or {}).get("transcript") or []
    truncated = bool((found or {}).get("truncated"))
    if query.get("entry") not in (None, ""):
        index = _int_param(query, "entry", 0, 0, max(len(entries) - 1, 0))
        if not entries:
            raise HttpError(404, "no transcript", f"run {run_id} has no transcript")
        return {"runId": run_id, "index": index, "entry": entries[index]}
    offset = _int_param(query, "offset", 0, 0, 10_000_000)
    limit = _int_param(query, "limit", DEFAULT_TRANSCRIPT_PAGE, 1, MAX_TRANSCRIPT_PAGE)
    page = [entry_summary(i, e) for i, e in enumerate(entries[offset:offset + limit], start=offset)]
    return {"runId": run_id, "truncated": truncated, "total": len(entries), "offset": offset, "entries": page}


async def run_diff(db: Storage, run: dict[str, Any]) -> dict[str, Any]:
    meta = (run.get("metadata") or {}).get("diff") or {}
    return {"runId": run["runId"], "patch": await store.get_diff(db, run["runId"]),
            "truncated": bool(meta.get("truncated")), "summary": meta.get("summary"),
            "changedFiles": meta.get("changedFiles") or []}


# --------------------------------------------------------------------------- two runs' calls

def tool_calls(entries: list[Any]) -> list[dict[str, Any]]:
    """The tool calls of a transcript in order: ``{name, arguments}``."""
    calls = []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("tool_calls"), list):
            for call in entry["tool_calls"]:
                if isinstance(call, dict):
                    calls.append({"name": call.get("name"), "arguments": call.get("arguments")})
    return calls


def divergence(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int | None:
    """The index of the first call where two sequences differ (name or arguments), or None
    when they are the same; a sequence that is a prefix of the other diverges at its end."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x["name"] != y["name"] or _canonical(x["arguments"]) != _canonical(y["arguments"]):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _canonical(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _preview_call(call: dict[str, Any]) -> dict[str, Any]:
    text = _text(call["arguments"])
    return {"name": call["name"], "arguments": text[:ARGUMENT_PREVIEW_CHARS],
            "cut": len(text) > ARGUMENT_PREVIEW_CHARS}


async def compare_runs(db: Storage, query: dict[str, str]) -> dict[str, Any]:
    _check(query, {"a", "b"})
    if not query.get("a") or not query.get("b"):
        raise HttpError(400, "two runs are needed", "a=RUN_ID&b=RUN_ID")
    sides = {}
    for side in ("a", "b"):
        run = await store.get_run(db, query[side])
        if run is None:
            raise HttpError(404, "run not found", f"no run {query[side]}")
        found = await store.get_transcript(db, run["runId"])
        sides[side] = (run, tool_calls((found or {}).get("transcript") or []))
    (run_a, calls_a), (run_b, calls_b) = sides["a"], sides["b"]
    return {
        "a": {"runId": run_a["runId"], "scenario": f"{run_a['suite']}/{run_a['scenario']}",
              "calls": [_preview_call(c) for c in calls_a]},
        "b": {"runId": run_b["runId"], "scenario": f"{run_b['suite']}/{run_b['scenario']}",
              "calls": [_preview_call(c) for c in calls_b]},
        "divergesAt": divergence(calls_a, calls_b),
        "sameScenario": (run_a["suite"], run_a["scenario"]) == (run_b["suite"], run_b["scenario"]),
    }


# ---------------------------------------------------------------------------- dataset runs

def _latency(spread: summary.Spread) -> dict[str, float | None]:
    return {"p50": spread.p50, "p95": spread.p95, "p99": spread.p99, "min": spread.min, "max": spread.max}


async def datasets(db: Storage, query: dict[str, str]) -> dict[str, Any]:
    """Per dataset, provider and model: pass rate with a Wilson interval, latency percentiles
    over every request's duration, and cost (unknown when any run's cost is unknown)."""
    _check(query, {"batchId", "dataset"})
    where = ["r.tier = 'dataset'", _COUNTED.format(alias="r")]
    params: list[Any] = []
    if query.get("batchId"):
        where.append("r.batch_id = ?")
        params.append(query["batchId"])
    if query.get("dataset"):
        where.append("r.suite = ?")
        params.append(query["dataset"])
    rows = await db.all(
        "SELECT r.suite, r.agent, r.model, r.status, r.is_successful, r.total_score, t.duration_ms, t.cost_usd "
        f"FROM runs r LEFT JOIN telemetry t ON t.run_id = r.run_id WHERE {' AND '.join(where)}", params)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["suite"], r["agent"], r["model"] or "")].append(r)
    out = []
    for (dataset, provider, model), items in sorted(groups.items()):
        # Every request is timed and priced here (an error's duration and cost included).
        figures = summary.summarize(
            (summary.Figures("error" if r["status"] == "error" else "passed" if r["is_successful"] else "failed",
                             r["duration_ms"], None, 0, 0, r["cost_usd"],
                             None if r["total_score"] is None else float(r["total_score"])) for r in items),
            timed=summary.OUTCOMES, scored=summary.OUTCOMES)
        rate = figures.rate(("passed",), summary.OUTCOMES)
        out.append({
            "dataset": dataset, "provider": provider, "model": model or None, "runs": figures.cells,
            "passed": figures.count("passed"), "failed": figures.count("failed"), "errors": figures.count("error"),
            "passRate": rate.value, "passRateLow": rate.low, "passRateHigh": rate.high,
            "avgScore": figures.mean_score,
            "latencyMs": _latency(figures.duration),
            "costUsd": figures.cost_usd,
        })
    names = await db.all("SELECT DISTINCT suite FROM runs WHERE tier = 'dataset' ORDER BY suite")
    return {"groups": out, "datasets": [r["suite"] for r in names]}


# ------------------------------------------------------------------------------------ fleets

async def fleets(db: Storage, query: dict[str, str]) -> list[dict[str, Any]]:
    """Every fleet run (a batch whose metadata says ``kind: fleet``), newest first."""
    _check(query, set())
    rows = await db.all(
        "SELECT DISTINCT b.batch_id, b.created_at FROM batches b JOIN batch_contributions c "
        "ON c.batch_id = b.batch_id WHERE json_valid(c.metadata) AND json_extract(c.metadata, '$.kind') = 'fleet' "
        "ORDER BY b.created_at DESC, b.batch_id DESC LIMIT 500")
    out = []
    for row in rows:
        batch = await store.get_batch(db, row["batch_id"], include_runs=False)
        if batch is None:
            continue
        meta = batch.get("metadata") or {}
        out.append({"batchId": batch["batchId"], "fleetId": meta.get("fleetId"),
                    "description": meta.get("description"), "state": meta.get("state"),
                    "createdAt": batch["createdAt"], "totalRuns": batch["totalRuns"],
                    "successfulRuns": batch["successfulRuns"], "avgScore": batch["avgScore"]})
    return out


async def fleet(db: Storage, batch_id: str) -> dict[str, Any]:
    """A fleet run's repository × provider × profile cells: runs, pass rate, score, cost, p50."""
    batch = await store.get_batch(db, batch_id, include_runs=False)
    if batch is None:
        raise HttpError(404, "fleet not found", f"no batch {batch_id}")
    meta = batch.get("metadata") or {}
    rows = await db.all(
        "SELECT r.agent, r.model, r.status, r.is_successful, r.total_score, "
        "json_extract(r.metadata, '$.fleet.repoId') AS repo, json_extract(r.metadata, '$.fleet.profile') AS profile, "
        f"t.duration_ms, t.cost_usd FROM runs r LEFT JOIN telemetry t ON t.run_id = r.run_id "
        f"WHERE r.batch_id = ? AND {_COUNTED.format(alias='r')}", (batch_id,))
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        provider = f"{r['agent']}:{r['model']}" if r["model"] else r["agent"]
        cells[(r["repo"] or "?", provider, r["profile"] or "?")].append(r)
    out = []
    for (repo, provider, profile), items in sorted(cells.items()):
        n = len(items)
        passed = sum(1 for r in items if r["is_successful"])
        scores = [float(r["total_score"]) for r in items if r["total_score"] is not None]
        costs = [r["cost_usd"] for r in items]
        durations = [float(r["duration_ms"]) for r in items if r["duration_ms"] is not None]
        out.append({"repoId": repo, "provider": provider, "profile": profile, "runs": n, "passed": passed,
                    "errors": sum(1 for r in items if r["status"] == "error"), "passRate": passed / n,
                    "avgScore": sum(scores) / len(scores) if scores else None,
                    "costUsd": None if any(c is None for c in costs) else float(sum(costs)),
                    "p50Ms": stats.percentile(durations, 50) if durations else None})
    repositories = meta.get("repositories") or sorted({c["repoId"] for c in out})
    providers = meta.get("providers") or sorted({c["provider"] for c in out})
    profiles = meta.get("profiles") or sorted({c["profile"] for c in out})
    return {"batchId": batch_id, "fleetId": meta.get("fleetId"), "description": meta.get("description"),
            "state": meta.get("state"), "createdAt": batch["createdAt"], "totalRuns": batch["totalRuns"],
            "successfulRuns": batch["successfulRuns"],
            "repositories": _as_list(repositories), "providers": _as_list(providers),
            "profiles": _as_list(profiles), "cells": out}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
