"""Stored results: typed records and the client that reaches the worker (HTTP or in-process)."""

from harness.results.client import NotAWorkerError, PostOutcome, ResultsClient, ResultsError
from harness.results.factory import open_client
from harness.results.records import (
    BatchRecord,
    EvaluationRecord,
    RunRecord,
    StressRecord,
    Telemetry,
    new_batch_id,
    new_run_id,
    new_stress_id,
)
from harness.results.spool import Spool, SyncReport
from harness.results.worker_client import WorkerClient

__all__ = [
    "BatchRecord",
    "EvaluationRecord",
    "NotAWorkerError",
    "PostOutcome",
    "ResultsClient",
    "ResultsError",
    "RunRecord",
    "Spool",
    "StressRecord",
    "SyncReport",
    "Telemetry",
    "WorkerClient",
    "new_batch_id",
    "new_run_id",
    "new_stress_id",
    "open_client",
]
