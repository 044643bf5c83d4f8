"""The results client over a transport, with the spool for requests that cannot go through."""

from __future__ import annotations

import logging
from typing import Any, Literal

from harness.results.client import PostOutcome, ResultsClient, ResultsError
from harness.results.records import BatchRecord, RunRecord
from harness.results.spool import DeliveryOutcome, Spool, SpoolEntry, SyncReport
from harness.results.transport import Transport, TransportResponse, TransportUnavailable
from harness.secrets import Redactor

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


class WorkerClient(ResultsClient):
    """:class:`ResultsClient` over a :class:`Transport`, spooling what cannot be delivered."""

    def __init__(self, transport: Transport, spool: Spool | None = None) -> None:
        self.transport = transport
        self.spool = spool
        self._delivery_error: str | None = None

    # ----------------------------------------------------------------- writes

    def post_run(self, run: RunRecord) -> PostOutcome:
        """Store ``run``. Returns "stored", "duplicate" (already stored, same content) or
        "spooled" (kept on disk for ``bench sync``). Raises :class:`ResultsError` when the
        worker refuses the run for good (invalid, or a different run with the same id); the
        body is then kept in the spool's ``rejected/`` folder."""
        return self._post("run", "/api/results", run.to_wire())

    def post_batch(self, batch: BatchRecord) -> None:
        """Create or update ``batch`` (spooled like a run when the worker is unreachable)."""
        self._post("batch", "/api/results/batch", batch.to_wire())

    def _post(self, kind: Literal["run", "batch"], path: str, body: dict[str, Any]) -> PostOutcome:
        # No secret of this process's environment is ever stored or spooled, wherever it hid
        # (a transcript, a command's output, an error message).
        body = Redactor.from_environment().data(body)
        try:
            resp = self.transport.request("POST", path, body=body)
        except TransportUnavailable as exc:
            return self._spool(kind, body, str(exc))
        outcome = _classify(resp)
        if outcome in ("stored", "duplicate"):
            return outcome  # type: ignore[return-value]
        if outcome == "retry":
            return self._spool(kind, body, resp.error_text())
        where = self.spool.reject(kind, body, resp.error_text()) if self.spool else None
        kept = f" (kept in {where})" if where else ""
        raise ResultsError(f"{self.transport.description} refused {kind} "
                           f"{_key(kind, body)}: HTTP {resp.status} {resp.error_text()}{kept}")

    def _spool(self, kind: Literal["run", "batch"], body: dict[str, Any], reason: str) -> PostOutcome:
        if self.spool is None:
            raise ResultsError(f"{self.transport.description}: {reason}")
        path = self.spool.add(kind, body, reason)
        log.warning("results worker unavailable (%s); %s %s spooled to %s; `bench sync` sends it",
                    reason, kind, _key(kind, body), path)
        return "spooled"

    def sync(self, *, wait_for_lock: bool = True) -> SyncReport:
        """Deliver spooled requests in order; stops early while the worker is unreachable."""
        if self.spool is None:
            return SyncReport()
        self._delivery_error = None
        report = self.spool.deliver(self._send_spooled, wait_for_lock=wait_for_lock)
        if report.error and self._delivery_error:
            report.error = self._delivery_error
        return report

    def _send_spooled(self, entry: SpoolEntry) -> DeliveryOutcome:
        path = "/api/results" if entry.kind == "run" else "/api/results/batch"
        try:
            resp = self.transport.request("POST", path, body=entry.body)
        except TransportUnavailable as exc:
            self._delivery_error = str(exc)
            # Unreachable: stop. Reachable but failing on this request: keep it pending and
            # try the next, so one request that keeps failing cannot hold up the others.
            return "unavailable" if exc.status is None else "failed"
        outcome = _classify(resp)
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

    def list_batches(self, limit: int = 50) -> list[BatchRecord]:
        return [BatchRecord.from_wire(b) for b in self._pages("/api/batches", {}, limit)]

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


def _key(kind: str, body: dict[str, Any]) -> str:
    return str(body.get("runId") if kind == "run" else body.get("batchId"))


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")
