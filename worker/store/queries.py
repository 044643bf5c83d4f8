"""The query parameters of the list routes and the SQL conditions they become.

``limit`` (default 100, capped at 500) and ``cursor`` (an opaque keyset position: creation
time and key of the last row of a page) page every list; ``kind`` keeps scenario runs or
dataset requests; the run filters of :data:`RUN_FILTERS` match columns that all have an
index. A bad value is an :class:`~worker.messages.HttpError` 400 naming the parameter.
:data:`_COUNTED` is the condition that leaves retried attempts out of every aggregate.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from worker.messages import HttpError
from worker.store.wire import _dumps

# Query parameter -> column. Every one has an index (migrations/0001_initial.sql).
RUN_FILTERS: dict[str, str] = {
    "suite": "suite",
    "scenario": "scenario",
    "agent": "agent",
    "model": "model",
    "tier": "tier",
    "status": "status",
    "batchId": "batch_id",
    "specialist": "specialist_name",
    "specialistEnabled": "specialist_enabled",
    "configHash": "config_hash",
    "kind": "tier",  # scenario | dataset: see KINDS
}
#: What runs a view holds: scenario runs (agents on fixtures) or dataset requests (a provider
#: answering a dataset's items, stored with tier "dataset"); views never mix them unasked.
KINDS = ("scenario", "dataset")
DATASET_TIER = "dataset"
DEFAULT_LIMIT = 100
MAX_LIMIT = 500


# ---------------------------------------------------------------------------------- cursors

def encode_cursor(created_at: int, key: str) -> str:
    raw = _dumps([created_at, key]).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, key = json.loads(raw)
        if not isinstance(created_at, int) or not isinstance(key, str):
            raise ValueError
        return created_at, key
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise HttpError(400, "invalid cursor", "pass the value of X-Next-Cursor unchanged") from None


def parse_limit(value: str | None) -> int:
    """``limit`` from a query string: default 100, capped at 500."""
    if value is None or value == "":
        return DEFAULT_LIMIT
    try:
        limit = int(value)
    except ValueError:
        raise HttpError(400, "invalid limit", f"an integer from 1 to {MAX_LIMIT}; got {value!r}") from None
    if limit < 1:
        raise HttpError(400, "invalid limit", f"an integer from 1 to {MAX_LIMIT}; got {limit}")
    return min(limit, MAX_LIMIT)


# A run counts in aggregates unless a later run redid it (``bench --retry-errors``).
_COUNTED = "NOT EXISTS (SELECT 1 FROM runs redo WHERE redo.retry_of = {alias}.run_id)"


def _filter_value(name: str, value: str) -> Any:
    if name == "specialistEnabled":
        lowered = value.lower()
        if lowered not in ("true", "false", "1", "0"):
            raise HttpError(400, "invalid value for specialistEnabled", "true or false")
        return 1 if lowered in ("true", "1") else 0
    return value


def parse_kind(value: str | None, default: str | None = None) -> str | None:
    """``scenario``, ``dataset`` or None for ``all``; anything else is a 400."""
    if value is None or value == "":
        return default
    if value == "all":
        return None
    if value not in KINDS:
        raise HttpError(400, "invalid kind", f"scenario, dataset or all, not {value!r}")
    return value


def kind_condition(kind: str | None, alias: str = "") -> str:
    """SQL keeping runs of ``kind`` (no parameters: the tier is a constant)."""
    if kind is None:
        return "1 = 1"
    return f"{alias}tier {'=' if kind == 'dataset' else '!='} '{DATASET_TIER}'"


def batch_kind_condition(kind: str | None, alias: str) -> str:
    """SQL keeping batches holding runs of ``kind`` (a batch of both kinds is kept by either)."""
    if kind is None:
        return "1 = 1"
    return (f"EXISTS (SELECT 1 FROM runs k WHERE k.batch_id = {alias}batch_id AND "
            f"{kind_condition(kind, 'k.')})")


def run_filters_sql(query: dict[str, str], alias: str = "") -> tuple[list[str], list[Any]]:
    """WHERE conditions and their parameters for the run filters of ``query`` (RUN_FILTERS)."""
    where: list[str] = []
    params: list[Any] = []
    for name, column in RUN_FILTERS.items():
        column = f"{alias}{column}"
        if name == "specialist" and name in query and not query[name].startswith("@"):
            # A bare name matches the specialist stored bare or under any scope (@scope/name),
            # as `bench --specialist NAME` finds the template either way.
            where.append(f"({column} = ? OR (substr({column}, 1, 1) = '@' "
                         f"AND substr({column}, instr({column}, '/') + 1) = ?))")
            params.extend([query[name], query[name]])
        elif name == "kind" and name in query:
            kind = parse_kind(query[name])
            if kind is not None:
                where.append(f"{column} {'=' if kind == 'dataset' else '!='} ?")
                params.append(DATASET_TIER)
        elif name in query:
            where.append(f"{column} = ?")
            params.append(_filter_value(name, query[name]))
    return where, params
