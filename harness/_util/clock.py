"""The time as records carry it: UTC, ISO 8601, ``Z`` for the zone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal


def now_iso(timespec: Literal["seconds", "milliseconds"] = "milliseconds") -> str:
    """``2026-11-27T06:05:03.123Z`` (or without the fraction with ``timespec="seconds"``)."""
    return datetime.now(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")
