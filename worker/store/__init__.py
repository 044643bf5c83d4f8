"""The results store: every SQL statement the routes need, over :class:`worker.storage.Storage`.

Rows go in and out in the camelCase wire form of the API (docs/worker.md, "API"). Aggregates
(batch totals, breakdowns, stats) are computed by SQL, never trusted from clients.

The package's public API is read through this module (``from worker import store``;
``store.store_run``, ``store.get_batch``, ...); the private helpers ``worker/analysis_api.py``
and ``worker/dashboard_api.py`` build on are imported from the module that defines them
(``wire._float``, ``queries._COUNTED``, ``batches._batch_to_wire``). Its modules:

- ``wire``: JSON text, numbers, content hashes, rows of runs, evaluations and telemetry in
  wire form;
- ``queries``: ``limit``, ``cursor``, ``kind`` and the run filters as SQL conditions, and the
  condition that leaves retried attempts out of aggregates;
- ``runs``: writing runs (one or many, atomically) and reading them;
- ``batches``: batch rows, merged metadata, aggregates and breakdowns, the store's totals;
- ``stress``: stress runs and their steps.

They import only each other, ``worker.messages``, ``worker.storage`` and
``worker.transcripts``, never this module.
"""

from __future__ import annotations

from worker.store.batches import (
    agent_stats,
    get_batch,
    list_batches,
    merge_batch_metadata,
    stats,
    upsert_batch,
    with_merged_metadata,
)
from worker.store.queries import (
    DATASET_TIER,
    DEFAULT_LIMIT,
    KINDS,
    MAX_LIMIT,
    RUN_FILTERS,
    batch_kind_condition,
    decode_cursor,
    encode_cursor,
    kind_condition,
    parse_kind,
    parse_limit,
    run_filters_sql,
)
from worker.store.runs import (
    get_diff,
    get_evaluations,
    get_run,
    get_telemetry,
    get_transcript,
    list_runs,
    run_statements,
    store_run,
    store_runs,
)
from worker.store.stress import (
    STRESS_FILTERS,
    STRESS_STEP_CHUNK_BYTES,
    get_stress,
    list_stress,
    store_stress,
)
from worker.store.wire import content_hash, run_to_wire

__all__ = [
    "DATASET_TIER", "DEFAULT_LIMIT", "KINDS", "MAX_LIMIT", "RUN_FILTERS", "STRESS_FILTERS",
    "STRESS_STEP_CHUNK_BYTES",
    "agent_stats", "batch_kind_condition", "content_hash", "decode_cursor", "encode_cursor",
    "get_batch", "get_diff", "get_evaluations", "get_run", "get_stress", "get_telemetry",
    "get_transcript", "kind_condition", "list_batches", "list_runs", "list_stress",
    "merge_batch_metadata", "parse_kind", "parse_limit", "run_filters_sql", "run_statements",
    "run_to_wire", "stats", "store_run", "store_runs", "store_stress", "upsert_batch",
    "with_merged_metadata",
]
