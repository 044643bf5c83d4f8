"""The worker core: routing, authentication, CORS and error handling around the store.

:class:`WorkerApp` turns a :class:`worker.messages.Request` into a
:class:`worker.messages.Response`. It is the same object under ``worker dev``, under
Cloudflare Python Workers and in-process inside the harness; only the storage backend and
the configuration differ.
"""

from __future__ import annotations

import functools
import hmac
import time
import traceback
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable

from worker import analysis_api, dashboard_api, dashboard_files, progress, store
from worker.config import WorkerConfig
from worker.messages import HttpError, Request, Response, json_response
from worker.schema import BATCH_FIELDS, RUN_FIELDS, STRESS_FIELDS, parse_json_body, validate_object
from worker.storage import Storage, StorageError

Handler = Callable[["WorkerApp", Request, dict[str, str]], Awaitable[Response]]

NEXT_CURSOR_HEADER = "x-next-cursor"
TOTAL_COUNT_HEADER = "x-total-count"
# What /health says this is: clients check it before they store anything, so a URL that
# answers 200 to anything (any web server) is never taken for a results store.
SERVICE_NAME = "zebench-results"
API_VERSION = 1


class WorkerApp:
    """The results API over one storage backend."""

    def __init__(self, storage: Storage, config: WorkerConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.storage = storage
        self.config = config
        self._clock = clock

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    async def handle(self, request: Request) -> Response:
        """Answer one request; never raises."""
        try:
            response = await self._dispatch(request)
        except HttpError as exc:
            response = exc.to_response()
        except StorageError as exc:
            response = json_response(500, {"error": "storage error", "details": str(exc)})
        except Exception as exc:  # the API answers JSON even for its own bugs
            traceback.print_exc()
            response = json_response(500, {"error": "internal error", "details": type(exc).__name__})
        self._add_cors(request, response)
        return response

    async def _dispatch(self, request: Request) -> Response:
        if request.method == "GET" and dashboard_files.is_dashboard_path(request.path):
            return dashboard_files.serve(request)
        match = match_route(request.path)
        if match is None:
            raise HttpError(404, "not found", f"no route for {request.path}")
        methods, params = match
        if request.method == "OPTIONS":
            return self._preflight(request, methods)
        handler = methods.get(request.method)
        if handler is None:
            allow = ", ".join(sorted({*methods, "OPTIONS"}))
            raise HttpError(405, "method not allowed", f"{request.path} accepts {allow}",
                            headers={"allow": allow})
        if request.method == "POST":
            self._authorize(request)
            self._check_size(request)
        elif self._reads_need_key(request):
            self._authorize(request)
        return await handler(self, request, params)

    # ------------------------------------------------------------------ security

    def _reads_need_key(self, request: Request) -> bool:
        """Reads need the key when the worker has one, except ``/health``, the API description
        ``/openapi.json`` and when reads are public."""
        return (bool(self.config.api_key) and not self.config.public_reads
                and request.path.rstrip("/") not in ("/health", "/openapi.json"))

    def _authorize(self, request: Request) -> None:
        if not self.config.api_key:
            raise HttpError(403, "writes are disabled",
                            "this worker has no API_SECRET_KEY configured")
        header = request.header("authorization")
        if not header:
            raise HttpError(401, "missing credentials", "send Authorization: Bearer <key>",
                            headers={"www-authenticate": "Bearer"})
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HttpError(401, "malformed Authorization header", "expected: Bearer <key>",
                            headers={"www-authenticate": "Bearer"})
        if not hmac.compare_digest(token.strip().encode("utf-8"), self.config.api_key.encode("utf-8")):
            raise HttpError(403, "invalid API key", "the bearer key does not match API_SECRET_KEY")

    def _check_size(self, request: Request) -> None:
        cap = self.config.max_body_bytes
        declared = request.header("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise HttpError(413, "body too large", f"{declared} bytes; at most {cap}")
        if len(request.body) > cap:
            raise HttpError(413, "body too large", f"{len(request.body)} bytes; at most {cap}")

    def origin_allowed(self, origin: str | None) -> bool:
        if not origin:
            return False
        allowed = self.config.allowed_origins
        return "*" in allowed or origin.rstrip("/") in allowed

    def _add_cors(self, request: Request, response: Response) -> None:
        origin = request.header("origin")
        if self.origin_allowed(origin):
            response.headers["access-control-allow-origin"] = origin  # type: ignore[assignment]
            response.headers["access-control-expose-headers"] = "X-Next-Cursor, X-Total-Count"
            response.headers["vary"] = "Origin"

    def _preflight(self, request: Request, methods: dict[str, Handler]) -> Response:
        if not self.origin_allowed(request.header("origin")):
            raise HttpError(403, "origin not allowed", "set ALLOWED_ORIGINS on the worker")
        return Response(status=204, headers={
            "access-control-allow-methods": ", ".join(sorted({*methods, "OPTIONS"})),
            "access-control-allow-headers": "Authorization, Content-Type",
            "access-control-max-age": "86400",
        })

    # ------------------------------------------------------------------ handlers

    async def health(self, request: Request, params: dict[str, str]) -> Response:
        now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
        return json_response(200, {"status": "ok", "timestamp": now, "service": SERVICE_NAME,
                                    "apiVersion": API_VERSION, "maxBulkRuns": self.config.max_bulk_runs})

    async def openapi(self, request: Request, params: dict[str, str]) -> Response:
        from worker.openapi import openapi_document

        return json_response(200, openapi_document())

    async def list_runs(self, request: Request, params: dict[str, str]) -> Response:
        runs, cursor = await store.list_runs(self.storage, request.query)
        return json_response(200, runs, _cursor_header(cursor))

    async def get_run(self, request: Request, params: dict[str, str]) -> Response:
        run = await self._require_run(params["runId"])
        evaluations = await store.get_evaluations(self.storage, run["runId"])
        telemetry = await store.get_telemetry(self.storage, run["runId"])
        return json_response(200, {"run": run, "evaluations": evaluations, "telemetry": telemetry})

    async def run_evaluations(self, request: Request, params: dict[str, str]) -> Response:
        run = await self._require_run(params["runId"])
        return json_response(200, await store.get_evaluations(self.storage, run["runId"]))

    async def run_telemetry(self, request: Request, params: dict[str, str]) -> Response:
        run = await self._require_run(params["runId"])
        telemetry = await store.get_telemetry(self.storage, run["runId"])
        if telemetry is None:
            raise HttpError(404, "telemetry not found", f"run {run['runId']} has no telemetry")
        return json_response(200, telemetry)

    async def run_transcript(self, request: Request, params: dict[str, str]) -> Response:
        run = await self._require_run(params["runId"])
        if request.query:  # offset/limit: a page of entries; entry: one whole entry
            return json_response(200, await dashboard_api.transcript_page(self.storage, run["runId"], request.query))
        return json_response(200, await store.get_transcript(self.storage, run["runId"]))

    async def run_diff(self, request: Request, params: dict[str, str]) -> Response:
        run = await self._require_run(params["runId"])
        return json_response(200, await dashboard_api.run_diff(self.storage, run))

    async def list_batches(self, request: Request, params: dict[str, str]) -> Response:
        if set(request.query) & {"q", "sort", "order", "offset"}:
            batches, total = await dashboard_api.search_batches(self.storage, request.query)
            return json_response(200, batches, {TOTAL_COUNT_HEADER: str(total)})
        batches, cursor = await store.list_batches(self.storage, request.query)
        return json_response(200, batches, _cursor_header(cursor))

    async def get_batch(self, request: Request, params: dict[str, str]) -> Response:
        unknown = sorted(set(request.query) - {"runs"})
        if unknown:
            raise HttpError(400, f"unknown query parameter: {unknown[0]}", "accepted: runs (0 leaves the runs out)")
        include_runs = request.query.get("runs", "1") not in ("0", "false")
        batch = await store.get_batch(self.storage, params["batchId"], include_runs=include_runs)
        if batch is None:
            raise HttpError(404, "batch not found", f"no batch {params['batchId']}")
        return json_response(200, batch)

    async def stats(self, request: Request, params: dict[str, str]) -> Response:
        unknown = sorted(set(request.query) - {"kind"})
        if unknown:
            raise HttpError(400, f"unknown query parameter: {unknown[0]}", "accepted: kind")
        return json_response(200, await store.stats(self.storage, store.parse_kind(request.query.get("kind"))))

    async def agent_stats(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await store.agent_stats(self.storage))

    async def post_result(self, request: Request, params: dict[str, str]) -> Response:
        run = validate_object(RUN_FIELDS, parse_json_body(request.body))
        stored = await store.store_run(self.storage, run, self.now_ms())
        body = {"success": True, "runId": run["runId"], "batchId": run["batchId"],
                "duplicate": not stored}
        return json_response(201 if stored else 200, body)

    async def post_results_bulk(self, request: Request, params: dict[str, str]) -> Response:
        """Store up to ``config.max_bulk_runs`` runs; the new ones in one atomic write. Each run
        is checked on its own: one invalid or conflicting run is refused, with its error, and
        the others are stored."""
        body = parse_json_body(request.body)
        runs = body.get("runs") if isinstance(body, dict) else None
        if not isinstance(runs, list):
            raise HttpError(400, "missing field: runs", "the body is {\"runs\": [run, ...]}")
        if len(runs) > self.config.max_bulk_runs:
            raise HttpError(413, "too many runs",
                            f"{len(runs)} runs; at most {self.config.max_bulk_runs} per request")
        results: list[dict[str, Any] | None] = [None] * len(runs)
        valid: list[tuple[int, dict[str, Any]]] = []
        for i, item in enumerate(runs):
            try:
                valid.append((i, validate_object(RUN_FIELDS, item, f"runs[{i}]")))
            except HttpError as exc:
                results[i] = _refused(item, exc)
        outcomes = await store.store_runs(self.storage, [run for _, run in valid], self.now_ms())
        for (i, run), outcome in zip(valid, outcomes):
            results[i] = (_refused(run, outcome) if isinstance(outcome, HttpError) else
                          {"runId": run["runId"], "batchId": run["batchId"],
                           "status": "stored" if outcome else "duplicate"})
        counts = {s: sum(1 for r in results if r and r["status"] == s) for s in ("stored", "duplicate", "rejected")}
        return json_response(200, {"success": counts["rejected"] == 0, **counts, "results": results})

    async def post_batch(self, request: Request, params: dict[str, str]) -> Response:
        unknown = sorted(set(request.query) - {"summary"})
        if unknown:
            raise HttpError(400, f"unknown query parameter: {unknown[0]}",
                            "accepted: summary (0 leaves the batch's aggregates out of the answer)")
        summarize = request.query.get("summary", "1")
        if summarize not in ("0", "1"):
            raise HttpError(400, "invalid value for summary", "0 or 1")
        batch = validate_object(BATCH_FIELDS, parse_json_body(request.body))
        created = await store.upsert_batch(self.storage, batch, self.now_ms())
        answer: dict[str, Any] = {"success": True, "batchId": batch["batchId"]}
        if summarize == "1":  # the aggregates of every run stored so far: a few queries over them
            answer["batch"] = await store.get_batch(self.storage, batch["batchId"], include_runs=False)
        return json_response(201 if created else 200, answer)

    async def post_stress(self, request: Request, params: dict[str, str]) -> Response:
        record = validate_object(STRESS_FIELDS, parse_json_body(request.body))
        stored = await store.store_stress(self.storage, record, self.now_ms())
        return json_response(201 if stored else 200,
                             {"success": True, "id": record["id"], "duplicate": not stored})

    async def list_stress(self, request: Request, params: dict[str, str]) -> Response:
        runs, cursor = await store.list_stress(self.storage, request.query)
        return json_response(200, runs, _cursor_header(cursor))

    async def get_stress(self, request: Request, params: dict[str, str]) -> Response:
        found = await store.get_stress(self.storage, params["id"])
        if found is None:
            raise HttpError(404, "stress run not found", f"no stress run {params['id']}")
        return json_response(200, found)

    # ------------------------------------------------------------------ analysis

    async def compare(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.compare_route(self.storage, request.query, self.now_ms()))

    async def leaderboard(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.leaderboard_route(self.storage, request.query, self.now_ms()))

    async def regressions(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.regressions_route(self.storage, request.query, self.now_ms()))

    async def costs(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.costs_route(self.storage, request.query, self.now_ms()))

    async def analysis_runs(self, request: Request, params: dict[str, str]) -> Response:
        try:
            filters = analysis_api.side_filters(dict(request.query), self.now_ms())
        except ValueError as exc:
            raise HttpError(400, "invalid since", str(exc)) from None
        runs, cut = await analysis_api.load_runs(self.storage, filters)
        return json_response(200, {"runs": runs, "truncated": cut})

    async def run_profile(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.run_profile_route(self.storage, params["runId"]))

    async def batch_profile(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await analysis_api.batch_profile_route(self.storage, params["batchId"]))

    # ------------------------------------------------------------------ dashboard views

    async def overview(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.overview(self.storage, request.query, self.now_ms()))

    async def overview_regressions(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.overview_regressions(self.storage, request.query, self.now_ms()))

    async def compare_runs(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.compare_runs(self.storage, request.query))

    async def datasets(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.datasets(self.storage, request.query))

    async def fleets(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.fleets(self.storage, request.query))

    async def fleet(self, request: Request, params: dict[str, str]) -> Response:
        return json_response(200, await dashboard_api.fleet(self.storage, params["batchId"]))

    async def _require_run(self, run_id: str) -> dict[str, Any]:
        run = await store.get_run(self.storage, run_id)
        if run is None:
            raise HttpError(404, "run not found", f"no run {run_id}")
        return run


def _cursor_header(cursor: str | None) -> dict[str, str]:
    return {NEXT_CURSOR_HEADER: cursor} if cursor else {}


# ------------------------------------------------------------------------------- routing

# (path pattern, method, handler). ``{name}`` matches one non-empty path segment.
ROUTES: tuple[tuple[str, str, Handler], ...] = (
    ("/health", "GET", WorkerApp.health),
    ("/openapi.json", "GET", WorkerApp.openapi),
    ("/api/runs", "GET", WorkerApp.list_runs),
    ("/api/runs/{runId}", "GET", WorkerApp.get_run),
    ("/api/runs/{runId}/evaluations", "GET", WorkerApp.run_evaluations),
    ("/api/runs/{runId}/telemetry", "GET", WorkerApp.run_telemetry),
    ("/api/runs/{runId}/transcript", "GET", WorkerApp.run_transcript),
    ("/api/batches", "GET", WorkerApp.list_batches),
    ("/api/batches/{batchId}", "GET", WorkerApp.get_batch),
    ("/api/stats", "GET", WorkerApp.stats),
    ("/api/stats/agents", "GET", WorkerApp.agent_stats),
    ("/api/results", "POST", WorkerApp.post_result),
    ("/api/results/batch", "POST", WorkerApp.post_batch),
    ("/api/results/bulk", "POST", WorkerApp.post_results_bulk),
    ("/api/compare", "GET", WorkerApp.compare),
    ("/api/leaderboard", "GET", WorkerApp.leaderboard),
    ("/api/regressions", "GET", WorkerApp.regressions),
    ("/api/costs", "GET", WorkerApp.costs),
    ("/api/analysis/runs", "GET", WorkerApp.analysis_runs),
    ("/api/runs/{runId}/profile", "GET", WorkerApp.run_profile),
    ("/api/batches/{batchId}/profile", "GET", WorkerApp.batch_profile),
    ("/api/batches/{batchId}/progress", "GET", progress.get_progress),
    ("/api/batches/{batchId}/progress", "POST", progress.post_progress),
    ("/api/stress", "GET", WorkerApp.list_stress),
    ("/api/stress", "POST", WorkerApp.post_stress),
    ("/api/stress/{id}", "GET", WorkerApp.get_stress),
    ("/api/runs/{runId}/diff", "GET", WorkerApp.run_diff),
    ("/api/overview", "GET", WorkerApp.overview),
    ("/api/overview/regressions", "GET", WorkerApp.overview_regressions),
    ("/api/compare/runs", "GET", WorkerApp.compare_runs),
    ("/api/datasets", "GET", WorkerApp.datasets),
    ("/api/fleets", "GET", WorkerApp.fleets),
    ("/api/fleets/{batchId}", "GET", WorkerApp.fleet),
)


def _refused(item: Any, error: HttpError) -> dict[str, Any]:
    """The entry of a run that a bulk request did not store."""
    run_id = item.get("runId") if isinstance(item, dict) else None
    return {"runId": run_id if isinstance(run_id, str) else None, "status": "rejected",
            "httpStatus": error.status, "error": error.error, "details": error.details}


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s] if path.strip("/") else []


@functools.lru_cache(maxsize=1)
def _route_table() -> dict[int, list[tuple[list[str], dict[str, Handler]]]]:
    """:data:`ROUTES` grouped by pattern (handlers by method), by number of segments."""
    by_pattern: dict[str, dict[str, Handler]] = {}
    for pattern, method, handler in ROUTES:
        by_pattern.setdefault(pattern, {})[method] = handler
    table: dict[int, list[tuple[list[str], dict[str, Handler]]]] = {}
    for pattern, methods in by_pattern.items():
        pat = _segments(pattern)
        table.setdefault(len(pat), []).append((pat, methods))
    return table


def match_route(path: str) -> tuple[dict[str, Handler], dict[str, str]] | None:
    """The handlers by method for ``path`` and the path parameters, or None if no route fits.

    Literal segments win over parameters (``/api/results/batch`` is not a run id).
    """
    from urllib.parse import unquote

    parts = [unquote(s) for s in _segments(path)]
    best: tuple[int, dict[str, Handler], dict[str, str]] | None = None
    for pat, methods in _route_table().get(len(parts), ()):
        params: dict[str, str] = {}
        literals = 0
        for p, s in zip(pat, parts):
            if p.startswith("{"):
                params[p[1:-1]] = s
            elif p == s:
                literals += 1
            else:
                break
        else:
            if best is None or literals > best[0]:
                best = (literals, methods, params)
    return None if best is None else (best[1], best[2])
