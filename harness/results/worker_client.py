"""The results client over a transport, with the spool for requests that cannot go through.

The client knows where it writes. Before its first request it asks ``/health`` and goes on
only when the answer says ``zebench-results`` with an API version it speaks; every stored
run or batch must be confirmed by the worker echoing its id. Anything else (a web server
that answers 200 to everything, a proxy, another service) is a :class:`NotAWorkerError`
naming the URL, and the request is kept in the spool, not dropped. Spooled requests carry
the transport's ``destination`` and are delivered to that destination only.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Sequence

from harness.results.client import NotAWorkerError, PostOutcome, ResultsClient, ResultsError
from harness.results.records import BatchRecord, RunRecord, StressRecord, storable
from harness.results.spool import KEY_FIELDS, DeliveryOutcome, Kind, Spool, SpoolEntry, SyncReport, record_key
from harness.results.transport import Transport, TransportResponse, TransportUnavailable
from harness._util.secrets import Redactor

log = logging.getLogger(__name__)

# Python-style filter names accepted by list_runs, mapped to the API's query parameters.
_FILTER_ALIASES = {
    "batch_id": "batchId",
    "config_hash": "configHash",
    "specialist_enabled": "specialistEnabled",
    "specialist_name": "specialist",
}
_PAGE_MAX = 500

# Statuses after which a request is kept for a later retry rather than rejected for good:
# a wrong key (401/403) or a URL that is not a worker (404/405) is fixed by configuration,
# not by changing the run.
_SPOOL_STATUSES = frozenset({401, 403, 404, 405, 408, 429})
SERVICE_NAME = "zebench-results"
# Where each kind of record is posted (and where its spooled copy is delivered).
POST_PATHS = {"run": "/api/results", "batch": "/api/results/batch", "stress": "/api/stress"}
BULK_PATH = "/api/results/bulk"
BULK_RUNS = 50  # runs per bulk request at most (a worker's /health may say fewer: maxBulkRuns)
API_VERSIONS = frozenset({1})


class WorkerClient(ResultsClient):
    """:class:`ResultsClient` over a :class:`Transport`, spooling what cannot be delivered."""

    def __init__(self, transport: Transport, spool: Spool | None = None) -> None:
        self.transport = transport
        self.spool = spool
        self._delivery_error: str | None = None
        self._verified = False
        self.last_spool_reason: str | None = None  # why the last request went to the spool
        self._bulk_route = True  # False once the worker answered that it has no bulk route
        self._bulk_size = BULK_RUNS  # runs per bulk request; /health may ask for fewer

    @property
    def destination(self) -> str:
        """Where this client stores: the worker URL, or ``sqlite:<path>``."""
        return getattr(self.transport, "destination", self.transport.description)

    def verify(self) -> None:
        """Check, once, that the transport reaches a zebench results worker.

        Raises :class:`TransportUnavailable` when it cannot be reached (the caller spools)
        and :class:`NotAWorkerError` when something else answered.
        """
        if self._verified:
            return
        resp = self.transport.request("GET", "/health")
        body = resp.body if isinstance(resp.body, dict) else {}
        where = self.transport.description
        if not resp.ok or body.get("service") != SERVICE_NAME:
            shown = resp.body if isinstance(resp.body, (dict, list)) else str(resp.body or "")[:120]
            raise NotAWorkerError(f"{where} is not a zebench results worker: GET /health answered "
                                  f"HTTP {resp.status} {shown!r}")
        if body.get("apiVersion") not in API_VERSIONS:
            raise NotAWorkerError(f"{where} speaks results API version {body.get('apiVersion')!r}; "
                                  f"this client speaks {', '.join(map(str, sorted(API_VERSIONS)))}")
        advertised = body.get("maxBulkRuns")  # a worker that keeps its bulk requests smaller says so
        if isinstance(advertised, int) and not isinstance(advertised, bool) and 1 <= advertised <= BULK_RUNS:
            self._bulk_size = advertised
        self._verified = True

    # ----------------------------------------------------------------- writes

    def post_run(self, run: RunRecord) -> PostOutcome:
        """Store ``run``. Returns "stored", "duplicate" (already stored, same content) or
        "spooled" (kept on disk for ``bench sync``). Raises :class:`ResultsError` when the
        worker refuses the run for good (invalid, or a different run with the same id); the
        body is then kept in the spool's ``rejected/`` folder."""
        return self._post("run", "/api/results", run.to_wire())

    def post_batch(self, batch: BatchRecord) -> PostOutcome:
        """Create or update ``batch`` (spooled like a run when the worker is unreachable). The
        worker is asked not to answer with the batch's aggregates (``summary=0``), which are
        not read here (``get_batch`` has them)."""
        return self._post("batch", "/api/results/batch", batch.to_wire(), query={"summary": "0"})

    def post_stress(self, record: StressRecord) -> PostOutcome:
        """Store a stress run (idempotent on its id; spooled like a run when the worker is
        unreachable). Raises :class:`ResultsError` when the worker refuses it for good."""
        return self._post("stress", "/api/stress", record.to_wire())

    def post_runs(self, runs: Sequence[RunRecord]) -> list[PostOutcome | ResultsError]:
        """Store ``runs`` through ``POST /api/results/bulk``, :data:`BULK_RUNS` to a request or
        the fewer the worker's ``/health`` asks for (the worker writes each request's new runs
        at once). One outcome per run, in order:
        "stored", "duplicate", "spooled", or the :class:`ResultsError` of a run the worker
        refused for good (its body kept in the spool's ``rejected/`` folder). A worker without
        the bulk route gets the runs one by one. Raises :class:`NotAWorkerError` as
        :meth:`post_run` does, after spooling the runs not yet confirmed."""
        redactor = Redactor.from_environment()
        bodies = [redactor.data(storable(run.to_wire())) for run in runs]
        outcomes: list[PostOutcome | ResultsError] = []
        try:
            self.verify()  # learns how many runs the worker takes at once
        except (TransportUnavailable, NotAWorkerError):
            pass  # met again, and handled, by the first request
        size = self._bulk_size
        for start in range(0, len(bodies), size):
            try:
                outcomes.extend(self._post_bulk(bodies[start:start + size]))
            except NotAWorkerError:
                self._spool_quietly(bodies[start + size:], "not sent: the destination is not a results worker")
                raise
        return outcomes

    def _post_bulk(self, bodies: list[dict[str, Any]]) -> list[PostOutcome | ResultsError]:
        if not self._bulk_route or len(bodies) == 1:
            return self._one_by_one(bodies)
        try:
            self.verify()
            resp = self.transport.request("POST", BULK_PATH, body={"runs": bodies})
        except TransportUnavailable as exc:
            return [self._spool("run", body, str(exc)) for body in bodies]
        except NotAWorkerError as exc:
            self._spool_quietly(bodies, str(exc))
            raise
        if resp.status in (404, 405):  # a worker from before the bulk route
            self._bulk_route = False
            return self._one_by_one(bodies)
        if not resp.ok:
            if _classify(resp) == "retry" and resp.status < 500:  # a key, a rate limit: the same for each run
                return [self._spool("run", body, f"HTTP {resp.status} {resp.error_text()}") for body in bodies]
            # Refused or failed as a whole (too large for this worker, a limit of its database):
            # each run gets its own answer, until one has to be spooled.
            return self._one_by_one(bodies, spool_after_spooled=True)
        answers = resp.body.get("results") if isinstance(resp.body, dict) else None
        if not isinstance(answers, list) or len(answers) != len(bodies):
            reason = (f"{self.transport.description} answered HTTP {resp.status} to POST {BULK_PATH} "
                      f"without one result per run: not a zebench results worker")
            self._spool_quietly(bodies, reason)
            raise NotAWorkerError(f"{reason}; the runs are kept in the spool for {self.destination}")
        outcomes: list[PostOutcome | ResultsError] = []
        for body, answer in zip(bodies, answers):
            answer = answer if isinstance(answer, dict) else {}
            status = answer.get("status")
            if answer.get("runId") != body.get("runId") and status != "rejected":
                reason = (f"{self.transport.description} answered POST {BULK_PATH} without confirming "
                          f"run {body.get('runId')} (runId {answer.get('runId')!r}): not a zebench results worker")
                self._spool_quietly(bodies[len(outcomes):], reason)
                raise NotAWorkerError(f"{reason}; the unconfirmed runs are kept in the spool for {self.destination}")
            if status in ("stored", "duplicate"):
                outcomes.append(status)
            else:
                text = f"{answer.get('error')}: {answer.get('details')}"
                where = self.spool.reject("run", body, text, self.destination) if self.spool else None
                kept = f" (kept in {where})" if where else ""
                outcomes.append(ResultsError(f"{self.transport.description} refused run {body.get('runId')}: "
                                             f"HTTP {answer.get('httpStatus')} {text}{kept}"))
        return outcomes

    def _one_by_one(self, bodies: list[dict[str, Any]], *,
                    spool_after_spooled: bool = False) -> list[PostOutcome | ResultsError]:
        """Post each run on its own; with ``spool_after_spooled``, once one is spooled the
        rest are spooled without being sent (the worker is failing)."""
        outcomes: list[PostOutcome | ResultsError] = []
        for i, body in enumerate(bodies):
            if spool_after_spooled and "spooled" in outcomes:
                outcomes.append(self._spool("run", body, self.last_spool_reason or "the worker is failing"))
                continue
            try:
                outcomes.append(self._one(body))
            except NotAWorkerError:  # that run is spooled; so are the ones not sent yet
                self._spool_quietly(bodies[i + 1:], "not sent: the destination is not a results worker")
                raise
        return outcomes

    def _one(self, body: dict[str, Any]) -> PostOutcome | ResultsError:
        try:
            return self._send("run", "/api/results", body)
        except NotAWorkerError:
            raise
        except ResultsError as exc:
            return exc

    def _spool_quietly(self, bodies: list[dict[str, Any]], reason: str) -> None:
        if self.spool is not None:
            for body in bodies:
                self._spool("run", body, reason, quiet=True)

    def _post(self, kind: Kind, path: str, body: dict[str, Any], query: dict[str, str] | None = None) -> PostOutcome:
        # No secret of this process's environment is ever stored or spooled, wherever it hid
        # (a transcript, a command's output, an error message).
        return self._send(kind, path, Redactor.from_environment().data(storable(body)), query)

    def _send(self, kind: Kind, path: str, body: dict[str, Any], query: dict[str, str] | None = None) -> PostOutcome:
        try:
            self.verify()
            resp = self.transport.request("POST", path, query=query, body=body)
            outcome = _classify(resp)
            if outcome in ("stored", "duplicate"):
                _check_echo(kind, body, resp, self.transport.description)
                return outcome  # type: ignore[return-value]
        except TransportUnavailable as exc:
            return self._spool(kind, body, str(exc))
        except NotAWorkerError as exc:
            kept = self._spool(kind, body, str(exc), quiet=True) if self.spool else None
            raise NotAWorkerError(f"{exc}; the {kind} {_key(kind, body)} is kept in the spool "
                                  f"for {self.destination}" if kept else str(exc), kept_in=kept) from None
        if outcome == "retry":
            return self._spool(kind, body, f"HTTP {resp.status} {resp.error_text()}")
        where = self.spool.reject(kind, body, resp.error_text(), self.destination) if self.spool else None
        kept = f" (kept in {where})" if where else ""
        raise ResultsError(f"{self.transport.description} refused {kind} "
                           f"{_key(kind, body)}: HTTP {resp.status} {resp.error_text()}{kept}")

    def _spool(self, kind: Kind, body: dict[str, Any], reason: str,
               quiet: bool = False) -> Any:
        if self.spool is None:
            raise ResultsError(f"{self.transport.description}: {reason}")
        path = self.spool.add(kind, body, reason, self.destination)
        self.last_spool_reason = reason
        if not quiet:
            # Info, not a warning: the caller gets "spooled" and says so (bench prints one summary).
            log.info("results not stored (%s); %s %s spooled to %s; `bench sync` sends it",
                     reason, kind, _key(kind, body), path)
            return "spooled"
        return path

    def sync(self, *, wait_for_lock: bool = True, from_destination: str | None = None,
             include_unassigned: bool = False) -> SyncReport:
        """Deliver the requests spooled for this client's destination, in order; stops early
        while the worker is unreachable. ``from_destination`` delivers here what was spooled
        for another destination (after the user moved the store); ``include_unassigned`` also
        what was spooled without a recorded destination."""
        if self.spool is None:
            return SyncReport()
        self._delivery_error = None
        report = self.spool.deliver(self._send_spooled, destination=from_destination or self.destination,
                                    include_unassigned=include_unassigned, wait_for_lock=wait_for_lock)
        if report.error and self._delivery_error:
            report.error = self._delivery_error
        return report

    def _send_spooled(self, entry: SpoolEntry) -> DeliveryOutcome:
        path = POST_PATHS[entry.kind]
        try:
            self.verify()
            resp = self.transport.request("POST", path, body=entry.body)
        except TransportUnavailable as exc:
            self._delivery_error = str(exc)
            # Unreachable: stop. Reachable but failing on this request: keep it pending and
            # try the next, so one request that keeps failing cannot hold up the others.
            return "unavailable" if exc.status is None else "failed"
        except NotAWorkerError as exc:
            self._delivery_error = str(exc)
            return "unavailable"
        outcome = _classify(resp)
        if outcome in ("stored", "duplicate"):
            try:
                _check_echo(entry.kind, entry.body, resp, self.transport.description)
            except NotAWorkerError as exc:
                self._delivery_error = str(exc)
                return "unavailable"
        if outcome == "retry":
            self._delivery_error = f"HTTP {resp.status} {resp.error_text()}"
            return "failed"
        if outcome == "rejected":
            assert self.spool is not None
            self.spool.move_to_rejected(entry, f"HTTP {resp.status} {resp.error_text()}")
            return "rejected"
        return outcome  # type: ignore[return-value]

    # ------------------------------------------------------------------ reads

    def _get(self, path: str, query: dict[str, Any] | None = None) -> TransportResponse:
        try:
            self.verify()
            resp = self.transport.request("GET", path, query=query)
        except TransportUnavailable as exc:
            raise ResultsError(str(exc)) from exc
        if resp.status >= 400 and resp.status != 404:
            raise ResultsError(f"{self.transport.description} GET {path}: HTTP {resp.status} "
                               f"{resp.error_text()}")
        return resp

    def get_run(self, run_id: str) -> RunRecord | None:
        resp = self._get(f"/api/runs/{_quote(run_id)}")
        if resp.status == 404:
            return None
        return RunRecord.from_wire(resp.body["run"], resp.body["evaluations"], resp.body["telemetry"])

    def get_transcript(self, run_id: str) -> list[dict[str, Any]] | None:
        resp = self._get(f"/api/runs/{_quote(run_id)}/transcript")
        if resp.status == 404:
            return None
        return resp.body.get("transcript")

    def list_runs(self, limit: int = 100, **filters: Any) -> list[RunRecord]:
        query: dict[str, Any] = {}
        for name, value in filters.items():
            if value is None:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            query[_FILTER_ALIASES.get(name, name)] = value
        return [RunRecord.from_wire(r) for r in self._pages("/api/runs", query, limit)]

    def list_batches(self, limit: int = 50, kind: str | None = None) -> list[BatchRecord]:
        """The newest batches; ``kind`` (scenario or dataset) keeps those holding such runs."""
        query = {"kind": kind} if kind else {}
        return [BatchRecord.from_wire(b) for b in self._pages("/api/batches", query, limit)]

    def _pages(self, path: str, query: dict[str, Any], limit: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while len(items) < limit:
            page_query = dict(query, limit=min(_PAGE_MAX, limit - len(items)))
            if cursor:
                page_query["cursor"] = cursor
            resp = self._get(path, page_query)
            if resp.status == 404:
                break
            items.extend(resp.body)
            cursor = resp.headers.get("x-next-cursor")
            if not cursor:
                break
        return items[:limit]

    def get_batch(self, batch_id: str) -> BatchRecord | None:
        resp = self._get(f"/api/batches/{_quote(batch_id)}")
        if resp.status == 404:
            return None
        return BatchRecord.from_wire(resp.body)

    def analysis(self, path: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
        """GET an analysis route (``/api/compare``, ``/api/leaderboard``, ``/api/regressions``,
        ``/api/costs``, ``/api/analysis/runs``, ``/api/.../profile``) and return its JSON. A
        refusal (4xx) raises :class:`ResultsError` with the worker's message."""
        clean = {k: v for k, v in (query or {}).items() if v is not None and v != ""}
        try:
            self.verify()
            resp = self.transport.request("GET", path, query=clean)
        except TransportUnavailable as exc:
            raise ResultsError(str(exc)) from exc
        if resp.status >= 400:
            raise ResultsError(resp.error_text() if resp.status < 500 else
                               f"{self.transport.description} GET {path}: HTTP {resp.status} {resp.error_text()}")
        return resp.body

    def list_stress(self, limit: int = 20, **filters: Any) -> list[StressRecord]:
        query = {name: value for name, value in filters.items() if value is not None}
        return [StressRecord.from_wire(d) for d in self._pages("/api/stress", query, limit)]

    def get_stress(self, stress_id: str) -> StressRecord | None:
        resp = self._get(f"/api/stress/{_quote(stress_id)}")
        if resp.status == 404:
            return None
        return StressRecord.from_wire(resp.body)

    def stats(self) -> dict[str, Any]:
        """``/api/stats`` totals, with the per-agent rows of ``/api/stats/agents`` under "agents"."""
        totals = dict(self._get("/api/stats").body)
        totals["agents"] = self._get("/api/stats/agents").body
        return totals

    def close(self) -> None:
        self.transport.close()


def _classify(resp: TransportResponse) -> Literal["stored", "duplicate", "retry", "rejected"]:
    if resp.ok:
        duplicate = isinstance(resp.body, dict) and resp.body.get("duplicate") is True
        return "duplicate" if duplicate else "stored"
    if resp.status in _SPOOL_STATUSES or resp.status >= 500:
        return "retry"
    return "rejected"


def _check_echo(kind: str, body: dict[str, Any], resp: TransportResponse, where: str) -> None:
    """A store is confirmed only by the worker naming what it stored."""
    field = KEY_FIELDS[kind]
    answer = resp.body if isinstance(resp.body, dict) else {}
    if answer.get(field) != body.get(field):
        raise NotAWorkerError(f"{where} answered HTTP {resp.status} to POST of {kind} {body.get(field)} "
                              f"without confirming it ({field} {answer.get(field)!r}): not a zebench results worker")


def _key(kind: str, body: dict[str, Any]) -> str:
    return record_key(kind, body)


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")
