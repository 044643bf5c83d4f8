"""The results client contract. Transports: in-process worker core on SQLite, or HTTP.

``open_client()`` picks the transport: ``ZE_BENCHMARKS_WORKER_URL`` set → HTTP (with an
on-disk spool when the worker cannot be reached); unset → the worker core in-process on
``results/bench.db``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from harness.results.records import BatchRecord, RunRecord

PostOutcome = Literal["stored", "duplicate", "spooled"]


class ResultsError(RuntimeError):
    """The worker refused a request (4xx other than an idempotent duplicate) or failed for good."""


class ResultsClient(ABC):
    @abstractmethod
    def post_run(self, run: RunRecord) -> PostOutcome:
        """Store one run with its evaluations, telemetry and transcript."""

    @abstractmethod
    def post_batch(self, batch: BatchRecord) -> None:
        """Create or update a batch (upsert)."""

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord | None: ...

    @abstractmethod
    def get_transcript(self, run_id: str) -> list[dict[str, Any]] | None: ...

    @abstractmethod
    def list_runs(self, limit: int = 100, **filters: Any) -> list[RunRecord]:
        """Runs, newest first; filters as the API's (suite, scenario, agent, model, tier, status,
        batchId, specialist). Follows cursor pages until ``limit`` runs are collected."""

    @abstractmethod
    def list_batches(self, limit: int = 50) -> list[BatchRecord]: ...

    @abstractmethod
    def get_batch(self, batch_id: str) -> BatchRecord | None:
        """The batch with server-computed aggregates, breakdowns and its runs."""

    @abstractmethod
    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def __enter__(self) -> "ResultsClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
