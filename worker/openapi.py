"""The OpenAPI 3.1 description served at ``/openapi.json``.

Request bodies come from :mod:`worker.schema` (the same declarations that validate them);
response shapes are written here and checked against real responses by the test suite.
"""

from __future__ import annotations

from typing import Any

from worker.config import MAX_BULK_RUNS
from worker.progress import PROGRESS_FIELDS, PROGRESS_SCHEMA
from worker.schema import (
    BATCH_FIELDS,
    EVALUATION_STATUSES,
    FAILURE_CLASSES,
    RUN_FIELDS,
    RUN_STATUSES,
    STRESS_FIELDS,
    STRESS_STATUSES,
    json_schema,
)

_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_NUM = {"type": "number"}
_NNUM = {"type": ["number", "null"]}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_OBJ = {"type": "object"}


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(props), "properties": props}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


SCHEMAS: dict[str, Any] = {
    "Error": _obj({"error": _STR, "details": {}}),
    "Health": _obj({"status": {"const": "ok"}, "timestamp": _STR, "service": {"const": "zebench-results"},
                    "apiVersion": {"type": "integer"},
                    "maxBulkRuns": {"type": "integer", "description": "runs per POST /api/results/bulk, at most"}}),
    "Run": _obj({
        "id": _STR, "runId": _STR, "batchId": _NSTR, "suite": _STR, "scenario": _STR,
        "tier": _STR, "agent": _STR, "model": _NSTR, "status": {"enum": list(RUN_STATUSES)},
        "failureClass": {"enum": [*FAILURE_CLASSES, None]}, "startedAt": _NSTR,
        "completedAt": _NSTR, "totalScore": _NNUM, "weightedScore": _NNUM,
        "isSuccessful": _BOOL, "successMetric": _NNUM, "specialistEnabled": _BOOL,
        "specialistName": _NSTR, "specialistVersion": _NSTR, "configHash": _NSTR,
        "metadata": _OBJ, "createdAt": {"type": "integer", "description": "unix ms, when stored"},
    }),
    "Evaluation": _obj({
        "id": _INT, "runId": _STR, "evaluatorName": _STR, "score": _NUM, "maxScore": _NUM,
        "status": {"enum": list(EVALUATION_STATUSES)}, "details": {}, "createdAt": _STR,
    }),
    "Telemetry": _obj({
        "id": _INT, "runId": _STR, "toolCalls": _INT, "tokensIn": _INT, "tokensOut": _INT,
        "cacheReadTokens": _INT, "cacheWriteTokens": _INT, "costUsd": _NNUM,
        "judgeTokensIn": _INT, "judgeTokensOut": _INT, "judgeCostUsd": _NNUM, "turns": _INT,
        "durationMs": _NUM, "latenciesMs": {"type": "array", "items": _NUM},
        "workspaceDir": _NSTR,
    }),
    "RunDetail": _obj({
        "run": _ref("Run"),
        "evaluations": {"type": "array", "items": _ref("Evaluation")},
        "telemetry": {"oneOf": [_ref("Telemetry"), {"type": "null"}]},
    }),
    "Transcript": _obj({
        "runId": _STR,
        "transcript": {"type": ["array", "null"], "items": _OBJ},
        "truncated": _BOOL,
    }),
    "Batch": _obj({
        "batchId": _STR, "createdAt": _INT, "completedAt": {"type": ["integer", "null"]},
        "totalRuns": _INT, "successfulRuns": _INT, "avgScore": _NNUM,
        "avgWeightedScore": _NNUM, "metadata": _OBJ,
        "kind": {"enum": ["scenario", "dataset", "mixed", None],
                 "description": "What the batch's runs are; null while it has none"},
    }),
    "Breakdown": _obj({
        "key": _NSTR, "runs": _INT, "successfulRuns": _INT, "avgScore": _NNUM,
        "avgWeightedScore": _NNUM, "minScore": _NNUM, "maxScore": _NNUM,
    }),
    "Stats": _obj({
        "totalRuns": _INT, "successfulRuns": _INT, "avgScore": _NNUM,
        "avgWeightedScore": _NNUM, "totalBatches": _INT,
    }),
    "AgentStats": _obj({
        "agent": _STR, "runs": _INT, "successfulRuns": _INT, "avgScore": _NNUM,
        "minScore": _NNUM, "maxScore": _NNUM,
    }),
    "PostResultResponse": _obj({
        "success": {"const": True}, "runId": _STR, "batchId": _NSTR, "duplicate": _BOOL,
    }),
    "RunPost": json_schema(RUN_FIELDS),
    "BulkRunsPost": _obj({"runs": {"type": "array", "items": {"$ref": "#/components/schemas/RunPost"},
                                   "maxItems": MAX_BULK_RUNS}}),
    "PostBulkResponse": _obj({
        "success": {"type": "boolean", "description": "true when no run was rejected"},
        "stored": {"type": "integer"}, "duplicate": {"type": "integer"}, "rejected": {"type": "integer"},
        "results": {"type": "array", "items": {"type": "object", "required": ["runId", "status"], "properties": {
            "runId": _NSTR, "batchId": _NSTR, "status": {"enum": ["stored", "duplicate", "rejected"]},
            "httpStatus": {"type": "integer", "description": "a rejected run's status: 400 invalid, 409 conflict"},
            "error": _STR, "details": {},
        }}},
    }),
    "BatchPost": json_schema(BATCH_FIELDS),
    "StressRunSummary": _obj({
        "id": _STR, "createdAt": {"type": "integer", "description": "unix ms, when stored"},
        "startedAt": _NSTR, "completedAt": _NSTR, "provider": _STR, "model": _STR, "profile": _STR,
        "status": {"enum": list(STRESS_STATUSES)}, "config": _OBJ, "summary": _OBJ,
    }),
    "PostStressResponse": _obj({"success": {"const": True}, "id": _STR, "duplicate": _BOOL}),
    "StressPost": json_schema(STRESS_FIELDS),
}
SCHEMAS["StressRun"] = {
    "allOf": [_ref("StressRunSummary"), _obj({"steps": {"type": "array", "items": _OBJ}})],
}
SCHEMAS["BatchDetail"] = {
    "allOf": [_ref("Batch"), {"type": "object", "required": ["breakdowns"], "properties": {
        "breakdowns": _obj({k: {"type": "array", "items": _ref("Breakdown")}
                            for k in ("scenario", "agent", "model", "tier")}),
        "runs": {"type": "array", "items": _ref("Run"), "description": "Left out with runs=0"},
    }}],
}
SCHEMAS["PostBatchResponse"] = {**_obj({  # "batch" is left out when the post asks summary=0
    "success": {"const": True}, "batchId": _STR,
    "batch": {"allOf": [_ref("Batch"), _obj({"breakdowns": _OBJ})]},
}), "required": ["success", "batchId"]}


def _json(schema: dict[str, Any], description: str = "OK", headers: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description,
                           "content": {"application/json": {"schema": schema}}}
    if headers:
        out["headers"] = headers
    return out


_ERR = _json(_ref("Error"), "Error")
_CURSOR = {"X-Next-Cursor": {"description": "Cursor of the next page; absent on the last page.",
                             "schema": _STR}}
_PAGE_PARAMS = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 100},
     "description": "Page size; values above 500 are capped at 500."},
    {"name": "cursor", "in": "query", "schema": _STR,
     "description": "The X-Next-Cursor header of the previous page."},
]
_RUN_FILTER_PARAMS = [
    {"name": name, "in": "query", "schema": _STR} for name in
    ("suite", "scenario", "agent", "model", "tier", "status", "batchId")
] + [
    {"name": "specialist", "in": "query", "schema": _STR,
     "description": "Specialist name: @scope/name matches exactly; a bare name matches it bare or "
                    "under any scope."},
    {"name": "configHash", "in": "query", "schema": _STR},
    {"name": "specialistEnabled", "in": "query", "schema": {"enum": ["true", "false"]}},
    {"name": "kind", "in": "query", "schema": {"enum": ["scenario", "dataset", "all"]},
     "description": "Scenario runs or dataset requests (tier dataset); all by default"},
]
_STRESS_FILTER_PARAMS = [
    {"name": "provider", "in": "query", "schema": _STR},
    {"name": "model", "in": "query", "schema": _STR},
    {"name": "profile", "in": "query", "schema": _STR},
    {"name": "status", "in": "query", "schema": {"enum": list(STRESS_STATUSES)}},
]
_STRESS_ID = [{"name": "id", "in": "path", "required": True, "schema": _STR}]
_TOTAL = {"X-Total-Count": {"description": "How many batches match the search.", "schema": _STR}}
_BATCH_SEARCH_PARAMS = [
    {"name": "q", "in": "query", "schema": _STR, "description": "Text in the batch id or its metadata"},
    {"name": "sort", "in": "query", "schema": {"enum": ["createdAt", "batchId", "runs", "passRate", "avgScore"]}},
    {"name": "order", "in": "query", "schema": {"enum": ["asc", "desc"]}},
    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
]
_TRANSCRIPT_PARAMS = [
    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
    {"name": "entry", "in": "query", "schema": {"type": "integer", "minimum": 0}},
]
# The dashboard's views answer objects whose fields docs/dashboard.md describes.
_DASH = {"type": "object"}
# The analysis routes answer objects whose fields docs/analysis.md describes.
_ANALYSIS = {"type": "object"}


def _FLAG(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"enum": ["true", "false"]}, "description": description}


def _KIND(default: str) -> dict[str, Any]:
    return {"name": "kind", "in": "query", "schema": {"enum": ["scenario", "dataset", "all"], "default": default},
            "description": "Scenario runs (agents on fixtures), dataset requests (tier dataset) or all"}


def _BY(default: str) -> dict[str, Any]:
    return {"name": "by", "in": "query", "schema": {"type": "string", "default": default},
            "description": "agent, model, specialist, or a combination joined by commas"}


_SCOPE_PARAMS = [
    {"name": "suite", "in": "query", "schema": _STR},
    {"name": "since", "in": "query", "schema": _STR, "description": "30d, 12h or an ISO date (runs started since)"},
    {"name": "until", "in": "query", "schema": _STR},
    {"name": "scenario", "in": "query", "schema": _STR},
    {"name": "tier", "in": "query", "schema": _STR},
    {"name": "agent", "in": "query", "schema": _STR},
    {"name": "model", "in": "query", "schema": _STR},
    {"name": "specialist", "in": "query", "schema": _STR},
    {"name": "batchId", "in": "query", "schema": _STR},
]
_RUN_ID = [{"name": "runId", "in": "path", "required": True, "schema": _STR}]
_BATCH_ID = [{"name": "batchId", "in": "path", "required": True, "schema": _STR}]
_AUTH = [{"bearer": []}]
_WRITE_ERRORS = {"400": _ERR, "401": _ERR, "403": _ERR, "413": _ERR, "500": _ERR}
# Reads need the key when the worker has one (unless its reads are public).
_READ_ERRORS = {"401": _ERR, "403": _ERR, "500": _ERR}


def _get(summary: str, response: dict[str, Any], params: list[Any] | None = None,
         not_found: bool = False, public: bool = False, query: bool = False) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {"200": response}}
    if params:
        op["parameters"] = params
    if not_found:
        op["responses"]["404"] = _ERR
    if query:
        op["responses"]["400"] = _json(_ref("Error"), "An unknown query parameter or an invalid cursor")
    if not public:
        op["security"] = _AUTH
        op["responses"].update(_READ_ERRORS)
    return {"get": op}


def openapi_document() -> dict[str, Any]:
    """The API description; every route of :data:`worker.app.ROUTES` appears here."""
    paths: dict[str, Any] = {
        "/health": _get("Liveness and identity", _json(_ref("Health")), public=True),
        "/openapi.json": _get("This document", _json(_OBJ), public=True),
        "/api/runs": _get("Runs, newest first", _json({"type": "array", "items": _ref("Run")},
                                                      headers=_CURSOR),
                          [*_RUN_FILTER_PARAMS, *_PAGE_PARAMS], query=True),
        "/api/runs/{runId}": _get("A run with its evaluations and telemetry",
                                  _json(_ref("RunDetail")), _RUN_ID, True),
        "/api/runs/{runId}/evaluations": _get(
            "A run's evaluations", _json({"type": "array", "items": _ref("Evaluation")}), _RUN_ID, True),
        "/api/runs/{runId}/telemetry": _get("A run's telemetry", _json(_ref("Telemetry")), _RUN_ID, True),
        "/api/runs/{runId}/transcript": _get(
            "A run's transcript (null when none was posted); with offset/limit a page of entry summaries "
            "(contents cut at 2,000 characters), with entry one whole entry",
            _json({"anyOf": [_ref("Transcript"), _DASH]}), [*_RUN_ID, *_TRANSCRIPT_PARAMS], True, query=True),
        "/api/runs/{runId}/diff": _get(
            "A run's workspace diff (unified diff text; patch is null when none was posted)",
            _json(_obj({"runId": _STR, "patch": _NSTR, "truncated": _BOOL, "summary": _NSTR,
                        "changedFiles": {"type": "array", "items": _STR}})), _RUN_ID, True),
        "/api/overview": _get(
            "Totals, runs per UTC day (count, pass rate, mean score) and the ten latest batches",
            _json(_DASH), [{"name": "days", "in": "query", "schema": {"type": "integer", "minimum": 1,
                                                                      "maximum": 366, "default": 30}},
                           _KIND("scenario")], query=True),
        "/api/overview/regressions": _get(
            "The latest batch against the previous batch of its agent: the scenarios that regressed",
            _json(_DASH), query=True),
        "/api/compare/runs": _get(
            "Two runs' tool-call sequences and the index of the first call where they differ",
            _json(_DASH), [{"name": "a", "in": "query", "required": True, "schema": _STR},
                           {"name": "b", "in": "query", "required": True, "schema": _STR}],
            not_found=True, query=True),
        "/api/datasets": _get(
            "Dataset runs per dataset, provider and model: pass rate with a Wilson interval, latency "
            "percentiles, cost", _json(_DASH),
            [{"name": "batchId", "in": "query", "schema": _STR}, {"name": "dataset", "in": "query", "schema": _STR}],
            query=True),
        "/api/fleets": _get("Fleet runs (batches whose metadata has kind fleet), newest first",
                            _json({"type": "array", "items": _OBJ}), query=True),
        "/api/fleets/{batchId}": _get(
            "A fleet run's repository x provider x profile cells", _json(_DASH), _BATCH_ID, True),
        "/api/batches": _get("Batches with aggregates, newest first; with q, sort, order or offset a page "
                             "of a search, with the number of matches in X-Total-Count",
                             _json({"type": "array", "items": _ref("Batch")}, headers={**_CURSOR, **_TOTAL}),
                             [*_PAGE_PARAMS, *_BATCH_SEARCH_PARAMS, _KIND("all")], query=True),
        "/api/batches/{batchId}": _get(
            "A batch with aggregates, breakdowns and runs (runs=0 leaves the runs out)",
            _json(_ref("BatchDetail")), [*_BATCH_ID, {"name": "runs", "in": "query", "schema": {"enum": ["0", "1"]}}],
            True, query=True),
        "/api/compare": _get(
            "A against B on the cells both ran: per metric the means, A - B with an interval, the test, p, "
            "effect size, MDE, pairs needed and a verdict; per scenario with Holm's correction (docs/analysis.md)",
            _json(_ANALYSIS), [
                {"name": "a", "in": "query", "required": True, "schema": _STR,
                 "description": "A batch id, or filters KEY=VALUE joined by commas (agent, model, specialist, suite, "
                                "scenario, tier, batch, configHash, since, until)"},
                {"name": "b", "in": "query", "required": True, "schema": _STR, "description": "As a"},
                _FLAG("allowMixed", "Compare pairs that differ in more than the compared factor, flagged"),
                _FLAG("includeCached", "Count runs that replayed cached model answers"),
                {"name": "alpha", "in": "query", "schema": {"type": "number", "default": 0.05}},
            ], not_found=True, query=True),
        "/api/leaderboard": _get(
            "Entries ranked on comparable runs: mean score with a clustered interval, success rate with a Wilson "
            "interval, cost per success, median duration, rank ranges and the composite",
            _json(_ANALYSIS), [_BY("agent"), *_SCOPE_PARAMS, _FLAG("includeCached", "Count replayed runs"),
                               _KIND("scenario")],
            query=True),
        "/api/costs": _get(
            "Cost per run and per success, score per dollar, agent and judge cost, and the Pareto front",
            _json(_ANALYSIS), [_BY("agent,model"), *_SCOPE_PARAMS], query=True),
        "/api/regressions": _get(
            "A candidate batch against a baseline, scenario by scenario: noise band, Holm-corrected test, "
            "status and severity",
            _json(_ANALYSIS), [
                {"name": "baseline", "in": "query", "schema": _STR, "description": "A batch id (with candidate)"},
                {"name": "candidate", "in": "query", "schema": _STR, "description": "A batch id (with baseline)"},
                {"name": "agent", "in": "query", "schema": _STR,
                 "description": "Instead of batches: this agent's two latest batches"},
                {"name": "model", "in": "query", "schema": _STR},
                {"name": "suite", "in": "query", "schema": _STR},
                {"name": "since", "in": "query", "schema": _STR, "description": "30d, 12h or an ISO date"},
                {"name": "alpha", "in": "query", "schema": {"type": "number", "default": 0.05}},
                _KIND("scenario"),
            ], not_found=True, query=True),
        "/api/analysis/runs": _get(
            "Runs as the analysis reads them (run columns, telemetry, iteration, tier label, config parts, "
            "cached, retryOf), oldest first, at most 20,000",
            _json(_obj({"runs": {"type": "array", "items": _OBJ}, "truncated": _BOOL})),
            [*_RUN_FILTER_PARAMS, *_SCOPE_PARAMS[1:2], {"name": "until", "in": "query", "schema": _STR}],
            query=True),
        "/api/runs/{runId}/profile": _get("Where one run's time went, phase by phase, and its bottleneck",
                                          _json(_ANALYSIS), _RUN_ID, True),
        "/api/batches/{batchId}/progress": {
            **_get("A batch's live progress: cells planned, done (stored), running, an ETA, and each invocation's "
                   "state (running, stale when not heard from for staleAfterMs, finished, interrupted)",
                   _json(PROGRESS_SCHEMA), _BATCH_ID, True, query=True),
            "post": {
                "summary": "Report how one invocation writing the batch is going (its start, heartbeats, its end); "
                           "creates the batch; a report with a sequence not above the stored one changes nothing",
                "security": _AUTH,
                "parameters": _BATCH_ID,
                "requestBody": {"required": True,
                                "content": {"application/json": {"schema": json_schema(PROGRESS_FIELDS)}}},
                "responses": {
                    "200": _json(_obj({"success": {"const": True}, "batchId": _STR, "invocationId": _STR,
                                       "current": {"type": "boolean",
                                                   "description": "false when a newer report was already stored"}}),
                                 "Stored, or ignored as older than the stored report"),
                    **_WRITE_ERRORS,
                },
            },
        },
        "/api/batches/{batchId}/profile": _get(
            "Where a batch's runs spent their time: per phase median, p95 and share; the bottleneck",
            _json(_ANALYSIS), _BATCH_ID, True),
        "/api/stats": _get("Totals over all runs, or over one kind of run", _json(_ref("Stats")),
                           [_KIND("all")], query=True),
        "/api/stats/agents": _get("Per-agent figures",
                                  _json({"type": "array", "items": _ref("AgentStats")})),
        "/api/results": {"post": {
            "summary": "Store one run (idempotent on runId)",
            "security": _AUTH,
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("RunPost")}}},
            "responses": {
                "201": _json(_ref("PostResultResponse"), "Stored"),
                "200": _json(_ref("PostResultResponse"), "Already stored with the same content"),
                "409": _json(_ref("Error"), "Already stored with different content"),
                **_WRITE_ERRORS,
            },
        }},
        "/api/results/bulk": {"post": {
            "summary": "Store up to maxBulkRuns runs (GET /health; 50 unless MAX_BULK_RUNS is set), "
                       "the new ones in one write; each run is checked on its own and answered in order",
            "security": _AUTH,
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("BulkRunsPost")}}},
            "responses": {
                "200": _json(_ref("PostBulkResponse"), "One result per run, in order"),
                **_WRITE_ERRORS,
            },
        }},
        "/api/results/batch": {"post": {
            "summary": "Create or update a batch (aggregates are computed from stored runs; "
                       "summary=0 leaves them out of the answer)",
            "security": _AUTH,
            "parameters": [{"name": "summary", "in": "query", "schema": {"enum": ["0", "1"], "default": "1"}}],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("BatchPost")}}},
            "responses": {
                "201": _json(_ref("PostBatchResponse"), "Created"),
                "200": _json(_ref("PostBatchResponse"), "Updated"),
                **_WRITE_ERRORS,
            },
        }},
        "/api/stress": {
            **_get("Stress runs (load tests of model endpoints) without their steps, newest first",
                   _json({"type": "array", "items": _ref("StressRunSummary")}, headers=_CURSOR),
                   [*_STRESS_FILTER_PARAMS, *_PAGE_PARAMS], query=True),
            "post": {
                "summary": "Store one stress run (idempotent on id)",
                "security": _AUTH,
                "requestBody": {"required": True,
                                "content": {"application/json": {"schema": _ref("StressPost")}}},
                "responses": {
                    "201": _json(_ref("PostStressResponse"), "Stored"),
                    "200": _json(_ref("PostStressResponse"), "Already stored with the same content"),
                    "409": _json(_ref("Error"), "Already stored with different content"),
                    **_WRITE_ERRORS,
                },
            },
        },
        "/api/stress/{id}": _get("A stress run with its steps", _json(_ref("StressRun")), _STRESS_ID, True),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "zebench results worker", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
