"""``MemoryResults``: the results contract over dictionaries.

For code that needs a :class:`~harness.results.client.ResultsClient` and no store: runs and
batches are kept as deep copies (a caller changing its record afterwards changes nothing
stored); ``list_runs`` gives the newest first and filters on ``batchId``; ``get_batch`` carries
the batch's runs. ``fail_posts`` makes every post raise, as an unreachable store would. For
the real store on a scratch file, use ``open_client(db_path=...)`` of :mod:`harness.results`
(the worker core in-process).
"""

from __future__ import annotations

import copy
from typing import Any

from harness.results.client import ResultsClient
from harness.results.records import BatchRecord, RunRecord


class MemoryResults(ResultsClient):
    """See the module docstring."""

    def __init__(self, fail_posts: bool = False) -> None:
        self.runs: dict[str, RunRecord] = {}
        self.batches: dict[str, BatchRecord] = {}
        self.fail_posts = fail_posts

    def post_run(self, run: RunRecord):
        if self.fail_posts:
            raise RuntimeError("store unavailable")
        self.runs[run.run_id] = copy.deepcopy(run)
        return "stored"

    def post_batch(self, batch: BatchRecord) -> None:
        if self.fail_posts:
            raise RuntimeError("store unavailable")
        self.batches[batch.batch_id] = copy.deepcopy(batch)

    def get_run(self, run_id: str) -> RunRecord | None:
        return self.runs.get(run_id)

    def get_transcript(self, run_id: str) -> list[dict[str, Any]] | None:
        run = self.runs.get(run_id)
        return run.transcript if run else None

    def list_runs(self, limit: int = 100, **filters: Any) -> list[RunRecord]:
        runs = list(self.runs.values())[::-1]
        if "batchId" in filters:
            runs = [r for r in runs if r.batch_id == filters["batchId"]]
        return runs[:limit]

    def list_batches(self, limit: int = 50) -> list[BatchRecord]:
        return list(self.batches.values())[::-1][:limit]

    def get_batch(self, batch_id: str) -> BatchRecord | None:
        batch = self.batches.get(batch_id)
        if batch is None:
            return None
        batch = copy.deepcopy(batch)
        batch.runs = [r for r in self.runs.values() if r.batch_id == batch_id]
        return batch

    def stats(self) -> dict[str, Any]:
        return {"totalRuns": len(self.runs)}
