"""Blocked-date ranges of a rental calendar.

A ``DateRange`` covers whole days and includes both ``start`` and ``end``: a block from
March 1 to March 3 blocks three days. Two ranges that overlap or touch (one ends the day
before the other starts) describe one continuous block.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class DateRange:
    start: date
    end: date

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"range ends ({self.end}) before it starts ({self.start})")

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def merge_ranges(ranges: list[DateRange]) -> list[DateRange]:
    """Merge overlapping or touching ranges; the result is sorted by start date.

    The input list and its ranges are left untouched.
    """
    merged: list[DateRange] = []
    for r in sorted(ranges, key=lambda r: (r.start, r.end)):
        # Inclusive ends: a range starting the day after the last one ends continues it.
        if merged and r.start <= merged[-1].end + ONE_DAY:
            last = merged[-1]
            merged[-1] = DateRange(last.start, max(last.end, r.end))
        else:
            merged.append(r)
    return merged


def free_ranges(blocked: list[DateRange], window: DateRange) -> list[DateRange]:
    """The parts of ``window`` not covered by any blocked range, in date order."""
    free: list[DateRange] = []
    cursor = window.start  # first day not yet known to be blocked or free
    for r in merge_ranges(blocked):
        if r.end < cursor:
            continue
        if r.start > window.end:
            break
        if r.start > cursor:
            free.append(DateRange(cursor, r.start - ONE_DAY))
        cursor = r.end + ONE_DAY
    if cursor <= window.end:
        free.append(DateRange(cursor, window.end))
    return free
