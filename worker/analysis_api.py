"""The analysis routes: runs read from the store, analysed by :mod:`worker.analysis` (the same
code ``bench compare``, ``leaderboard``, ``regressions``, ``costs`` and ``profile`` run).

Runs are loaded slim: the columns of the run, its telemetry, and only the metadata keys the
analysis reads (iteration, tier label, config parts, cached, retryOf), selected with
``json_extract`` so that a store of large run records is not read whole. At most
:data:`MAX_ANALYSIS_RUNS` runs are analysed per side; a response says when runs were cut.
"""

from __future__ import annotations

import json
from typing import Any

from worker import store
from worker.analysis import compare, costs, leaderboard, profile, regressions
from worker.messages import HttpError
from worker.storage import Storage
from worker.store.wire import _float

MAX_ANALYSIS_RUNS = 20_000
# metadata key -> JSON path; JSON booleans come back from json_extract as 1/0.
_META = (("iteration", "$.iteration"), ("tierLabel", "$.tierLabel"), ("configParts", "$.configParts"),
         ("cached", "$.cached"), ("retryOf", "$.retryOf"))
_COLUMNS = ("run_id", "batch_id", "suite", "scenario", "tier", "agent", "model", "status", "failure_class",
            "started_at", "total_score", "weighted_score", "is_successful", "success_metric",
            "specialist_enabled", "specialist_name", "specialist_version", "config_hash")
_RANGE = {"since": ">=", "until": "<"}


def _slim(row: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key, _ in _META:
        value = row[f"m_{key}"]
        if value is None:
            continue
        if key == "configParts":
            value = json.loads(value) if isinstance(value, str) else value
        elif key == "cached":
            value = bool(value)
        meta[key] = value
    telemetry = None
    if row["t_run_id"] is not None:
        telemetry = {"costUsd": _float(row["cost_usd"]), "judgeCostUsd": _float(row["judge_cost_usd"]),
                     "durationMs": _float(row["duration_ms"]), "tokensIn": row["tokens_in"],
                     "tokensOut": row["tokens_out"], "cacheReadTokens": row["cache_read_tokens"],
                     "cacheWriteTokens": row["cache_write_tokens"], "judgeTokensIn": row["judge_tokens_in"],
                     "judgeTokensOut": row["judge_tokens_out"], "turns": row["turns"],
                     "toolCalls": row["tool_calls"]}
    return {
        "runId": row["run_id"], "batchId": row["batch_id"], "suite": row["suite"], "scenario": row["scenario"],
        "tier": row["tier"], "agent": row["agent"], "model": row["model"], "status": row["status"],
        "failureClass": row["failure_class"], "startedAt": row["started_at"],
        "totalScore": _float(row["total_score"]), "weightedScore": _float(row["weighted_score"]),
        "isSuccessful": bool(row["is_successful"]), "successMetric": _float(row["success_metric"]),
        "specialistEnabled": bool(row["specialist_enabled"]), "specialistName": row["specialist_name"],
        "specialistVersion": row["specialist_version"], "configHash": row["config_hash"],
        "metadata": meta, "telemetry": telemetry,
    }


def side_filters(side: dict[str, str], now_ms: int) -> dict[str, str]:
    """A side of :func:`worker.analysis.compare.parse_side` as store filters; ``since`` and
    ``until`` become ISO instants."""
    out = dict(side)
    for key in _RANGE:
        if key in out:
            out[key] = compare.since_cutoff(out[key], now_ms)
    return out


async def load_runs(db: Storage, filters: dict[str, str], limit: int = MAX_ANALYSIS_RUNS
                    ) -> tuple[list[dict[str, Any]], bool]:
    """The runs matching ``filters`` (the run filters of ``GET /api/runs``, plus ``since`` and
    ``until`` as ISO instants on ``startedAt``), oldest first, slim; and whether runs were cut
    at ``limit``."""
    unknown = sorted(set(filters) - set(store.RUN_FILTERS) - set(_RANGE))
    if unknown:
        raise HttpError(400, f"unknown filter: {unknown[0]}",
                        f"filters: {', '.join([*store.RUN_FILTERS, *_RANGE])}")
    where, params = store.run_filters_sql({k: v for k, v in filters.items() if k not in _RANGE}, alias="r.")
    for key, op in _RANGE.items():
        if key in filters:
            where.append(f"r.started_at {op} ?")
            params.append(filters[key])
    meta = ", ".join(f"json_extract(r.metadata, '{path}') AS m_{key}" for key, path in _META)
    columns = ", ".join(f"r.{c}" for c in _COLUMNS)
    telemetry = ("t.run_id AS t_run_id, t.cost_usd, t.judge_cost_usd, t.duration_ms, t.tokens_in, t.tokens_out, "
                 "t.cache_read_tokens, t.cache_write_tokens, t.judge_tokens_in, t.judge_tokens_out, t.turns, "
                 "t.tool_calls")
    sql = f"SELECT {columns}, {meta}, {telemetry} FROM runs r LEFT JOIN telemetry t ON t.run_id = r.run_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY r.started_at, r.run_id LIMIT ?"
    rows = await db.all(sql, (*params, limit + 1))
    cut = len(rows) > limit
    return [_slim(r) for r in rows[:limit]], cut


def _flag(query: dict[str, str], name: str) -> bool:
    value = query.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise HttpError(400, f"invalid value for {name}", "true or false")
    return value in ("true", "1")


def _alpha(query: dict[str, str]) -> float:
    try:
        alpha = float(query.get("alpha", compare.ALPHA))
    except ValueError:
        raise HttpError(400, "invalid alpha", "a number between 0 and 0.5, e.g. 0.05") from None
    if not 0 < alpha <= 0.5:
        raise HttpError(400, "invalid alpha", "a number between 0 and 0.5, e.g. 0.05")
    return alpha


def _check(query: dict[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(query) - allowed)
    if unknown:
        raise HttpError(400, f"unknown query parameter: {unknown[0]}", f"parameters: {', '.join(sorted(allowed))}")


def _parse_side(text: str | None, name: str) -> dict[str, str]:
    if not text:
        raise HttpError(400, f"missing {name}", f"{name}=BATCH_ID or {name}=agent=X,model=Y,since=30d")
    try:
        return compare.parse_side(text)
    except compare.CompareError as exc:
        raise HttpError(400, f"invalid {name}", str(exc)) from None


def _filters(query: dict[str, str], now_ms: int, keys: tuple[str, ...]) -> dict[str, str]:
    try:
        return side_filters({k: query[k] for k in keys if query.get(k)}, now_ms)
    except compare.CompareError as exc:
        raise HttpError(400, "invalid since", str(exc)) from None


async def compare_route(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    _check(query, {"a", "b", "allowMixed", "includeCached", "alpha"})
    sides = [_parse_side(query.get("a"), "a"), _parse_side(query.get("b"), "b")]
    try:
        filters = [side_filters(s, now_ms) for s in sides]
    except compare.CompareError as exc:
        raise HttpError(400, "invalid side", str(exc)) from None
    (a_runs, a_cut), (b_runs, b_cut) = [await load_runs(db, f) for f in filters]
    for name, runs in (("a", a_runs), ("b", b_runs)):
        if not runs:
            raise HttpError(404, f"no runs match {name}={query[name]}",
                            "a batch id, or filters such as agent=oracle,since=30d")
    result = compare.compare_runs(a_runs, b_runs, labels=(query["a"], query["b"]), alpha=_alpha(query),
                                  allow_mixed=_flag(query, "allowMixed"),
                                  include_cached=_flag(query, "includeCached"))
    result["filters"] = {"a": filters[0], "b": filters[1]}
    for label, cut in ((query["a"], a_cut), (query["b"], b_cut)):
        if cut:
            result["notes"].append(f"{label}: only the first {MAX_ANALYSIS_RUNS} runs were analysed")
    return result


_SCOPE = ("suite", "scenario", "tier", "agent", "model", "specialist", "batchId", "since", "until")


async def leaderboard_route(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    _check(query, {"by", "includeCached", "kind", *_SCOPE})
    try:
        by = leaderboard.parse_by(query.get("by", "agent"))
    except ValueError as exc:
        raise HttpError(400, "invalid by", str(exc)) from None
    # Scenario runs unless asked: dataset requests are another kind of cell.
    kind = store.parse_kind(query.get("kind"), "scenario") or "all"
    runs, cut = await load_runs(db, {**_filters(query, now_ms, _SCOPE), "kind": kind})
    result = leaderboard.leaderboard(runs, by=by, include_cached=_flag(query, "includeCached"))
    if cut:
        result["notes"].append(f"only the first {MAX_ANALYSIS_RUNS} runs were analysed")
    return result


async def costs_route(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    _check(query, {"by", *_SCOPE})
    try:
        by = leaderboard.parse_by(query.get("by", "agent,model"))
    except ValueError as exc:
        raise HttpError(400, "invalid by", str(exc)) from None
    runs, cut = await load_runs(db, _filters(query, now_ms, _SCOPE))
    result = costs.cost_report(runs, by=by)
    result["notes"] = [f"only the first {MAX_ANALYSIS_RUNS} runs were analysed"] if cut else []
    return result


async def latest_batches(db: Storage, filters: dict[str, str], count: int = 2) -> list[str]:
    """The ids of the ``count`` latest batches holding runs that match ``filters``, newest first."""
    where, params = store.run_filters_sql({k: v for k, v in filters.items() if k not in _RANGE})
    for key, op in _RANGE.items():
        if key in filters:
            where.append(f"started_at {op} ?")
            params.append(filters[key])
    where.append("batch_id IS NOT NULL")
    rows = await db.all(f"SELECT batch_id, MAX(started_at) AS last FROM runs WHERE {' AND '.join(where)} "
                        "GROUP BY batch_id ORDER BY last DESC, batch_id DESC LIMIT ?", (*params, count))
    return [r["batch_id"] for r in rows]


async def regressions_route(db: Storage, query: dict[str, str], now_ms: int) -> dict[str, Any]:
    """``baseline`` and ``candidate`` batches; or ``agent`` (with ``model``, ``suite``,
    ``since``): its two latest batches. The history is every run of the baseline's
    scenarios at the baseline's config hashes (since ``since`` when given)."""
    _check(query, {"baseline", "candidate", "agent", "model", "suite", "since", "alpha", "kind"})
    scope = _filters(query, now_ms, ("agent", "model", "suite", "since"))
    # The latest batches of an agent are its scenario batches unless asked otherwise.
    scope["kind"] = store.parse_kind(query.get("kind"), "scenario") or "all"
    sides: dict[str, dict[str, str]] = {"baseline": {}, "candidate": {}}
    if query.get("baseline") or query.get("candidate"):
        if not (query.get("baseline") and query.get("candidate")):
            raise HttpError(400, "baseline and candidate go together", "baseline=BATCH&candidate=BATCH")
        for name in sides:
            # BATCH, or BATCH narrowed by filters as `bench compare` takes it (BATCH,agent=oracle).
            side = _parse_side(query[name], name)
            if "batchId" not in side:
                raise HttpError(400, f"invalid {name}", f"{query[name]!r}: a batch id first (BATCH or BATCH,agent=NAME)")
            if "since" in side or "until" in side:
                raise HttpError(400, f"invalid {name}", "since and until narrow the history: give them on their own")
            sides[name] = side
        baseline_id, candidate_id = sides["baseline"]["batchId"], sides["candidate"]["batchId"]
    elif query.get("agent"):
        found = await latest_batches(db, scope)
        if len(found) < 2:
            raise HttpError(404, "not enough batches", f"{len(found)} batch(es) match {scope}; two are needed")
        candidate_id, baseline_id = found
        sides = {"baseline": {"batchId": baseline_id}, "candidate": {"batchId": candidate_id}}
    else:
        raise HttpError(400, "missing baseline", "baseline=BATCH&candidate=BATCH, or agent=NAME[&since=30d]")
    narrow = {k: v for k, v in scope.items() if k in ("suite",)}
    baseline, _ = await load_runs(db, {**narrow, **sides["baseline"]})
    candidate, _ = await load_runs(db, {**narrow, **sides["candidate"]})
    if not baseline or not candidate:
        missing = query.get("baseline") if not baseline else query.get("candidate")
        missing = missing or (baseline_id if not baseline else candidate_id)
        raise HttpError(404, "batch not found", f"no runs in batch {missing}")
    history: list[dict[str, Any]] = []
    for config_hash in sorted({str(r.get("configHash")) for r in baseline if r.get("configHash")}):
        runs, _ = await load_runs(db, {**{k: v for k, v in scope.items() if k == "since"}, "configHash": config_hash})
        history += runs
    result = regressions.regressions(baseline, candidate, history, alpha=_alpha(query))
    result["baseline"], result["candidate"] = baseline_id, candidate_id
    return result


async def run_profile_route(db: Storage, run_id: str) -> dict[str, Any]:
    run = await store.get_run(db, run_id)
    if run is None:
        raise HttpError(404, "run not found", f"no run {run_id}")
    batch = await store.get_batch(db, run["batchId"], include_runs=False) if run.get("batchId") else None
    storage = profile.storage_times((batch or {}).get("metadata"))
    result = profile.profile_runs([run], storage)
    return {"runId": run_id, "phases": profile.run_phases(run, storage), **result}


async def batch_profile_route(db: Storage, batch_id: str) -> dict[str, Any]:
    batch = await store.get_batch(db, batch_id)
    if batch is None:
        raise HttpError(404, "batch not found", f"no batch {batch_id}")
    return profile.batch_profile(batch)
