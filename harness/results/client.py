"""The results client contract. Transports: in-process worker core on SQLite, or HTTP.

``open_client()`` picks the transport: ``ZE_BENCHMARKS_WORKER_URL`` set → HTTP (with an
on-disk spool when the worker cannot be reached); unset → the worker core in-process on
``results/bench.db``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal, Sequence

from harness.results.records import BatchRecord, RunRecord, StressRecord

PostOutcome = Literal["stored", "duplicate", "spooled"]


class ResultsError(RuntimeError):
    """The worker refused a request (4xx other than an idempotent duplicate) or failed for good."""


class NotAWorkerError(ResultsError):
    """The URL answered, but not as a zebench results worker (wrong service, API version, or
    an answer that does not confirm what was posted). ``kept_in`` is the spool file that now
    holds the request, when one was being stored."""

    def __init__(self, message: str, kept_in: str | None = None) -> None:
        super().__init__(message)
        self.kept_in = kept_in


class ResultsClient(ABC):
    @abstractmethod
    def post_run(self, run: RunRecord) -> PostOutcome:
        """Store one run with its evaluations, telemetry and transcript."""

    def post_runs(self, runs: Sequence[RunRecord]) -> list[PostOutcome | ResultsError]:
        """Store several runs; one outcome per run, in order, a refused run's being its
        :class:`ResultsError`. This default posts them one by one."""
        outcomes: list[PostOutcome | ResultsError] = []
        for run in runs:
            try:
                outcomes.append(self.post_run(run))
            except NotAWorkerError:
                raise
            except ResultsError as exc:
                outcomes.append(exc)
        return outcomes

    @abstractmethod
    def post_batch(self, batch: BatchRecord) -> PostOutcome | None:
        """Create or update a batch (upsert); "stored" or "spooled" like a run."""

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

    # Stress runs (``bench stress``). Not abstract: a client that stores no stress runs says so.
    def post_stress(self, record: StressRecord) -> PostOutcome:
        """Store one stress run; "stored", "duplicate" or "spooled" like a run."""
        raise ResultsError(f"{type(self).__name__} does not store stress runs")

    def list_stress(self, limit: int = 20, **filters: Any) -> list[StressRecord]:
        """Stress runs without their steps, newest first; filters provider, model, profile, status."""
        raise ResultsError(f"{type(self).__name__} does not store stress runs")

    def get_stress(self, stress_id: str) -> StressRecord | None:
        """One stress run with its steps, or None."""
        raise ResultsError(f"{type(self).__name__} does not store stress runs")

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def __enter__(self) -> "ResultsClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
