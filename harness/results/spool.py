"""The on-disk spool: requests the worker could not take yet, kept until delivered.

Each spooled request is one JSON file in ``<dir>/pending/``, written atomically (temporary
file, fsync, rename), so a crash leaves either the whole file or none. Each records its
*destination* (the worker URL, or ``sqlite:<path>`` of the database) and is only ever
delivered there, so a run meant for one store never lands in another. Delivery goes in file
name order (spool time) and deletes a file only after the worker confirmed it; a file that
was delivered just before a crash is sent again and the worker, idempotent on ``runId``,
answers "duplicate" — every run ends up stored exactly once. Requests the worker rejects
for good (400, 409, 413) move to ``<dir>/rejected/`` with the error, never deleted; so does
a file that is not a spool record at all (it never blocks the others), and the move is
reported once, in :attr:`Spool.notices`.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

Kind = Literal["run", "batch", "stress"]
KINDS = ("run", "batch", "stress")
#: What sending one spooled request did. "failed": the worker answered but could not take it
#: now (kept pending); "unavailable": the worker cannot be reached (delivery stops).
DeliveryOutcome = Literal["stored", "duplicate", "rejected", "failed", "unavailable"]

# Consecutive "failed" answers after which a delivery pass gives up (the worker is unwell).
MAX_CONSECUTIVE_FAILURES = 3

_counter = itertools.count()


@dataclass
class SpoolEntry:
    path: str
    kind: Kind
    body: dict[str, Any]
    reason: str
    destination: str | None = None  # None: spooled before destinations were recorded

    @property
    def key(self) -> str:
        return record_key(self.kind, self.body)


def record_key(kind: str, body: dict[str, Any]) -> str:
    """The id of a spooled request's record: ``runId``, ``batchId`` or a stress run's ``id``."""
    return str(body.get(KEY_FIELDS.get(kind, "id")))


KEY_FIELDS = {"run": "runId", "batch": "batchId", "stress": "id"}


@dataclass
class SyncReport:
    """What one delivery pass did."""

    delivered: int = 0
    duplicates: int = 0
    rejected: int = 0
    failed: int = 0  # answered with an error this time; still pending
    remaining: int = 0
    error: str | None = None  # why delivery stopped early (worker unreachable), if it did
    skipped_locked: bool = False  # another process was delivering


class Spool:
    """A directory of pending requests."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.pending_dir = os.path.join(directory, "pending")
        self.rejected_dir = os.path.join(directory, "rejected")
        self.notices: list[str] = []  # files set aside while reading, said once each

    def add(self, kind: Kind, body: dict[str, Any], reason: str, destination: str | None = None) -> str:
        """Persist one request for ``destination`` durably; return its file path."""
        os.makedirs(self.pending_dir, exist_ok=True)
        key = record_key(kind, body)
        safe_key = "".join(c if c.isalnum() or c in "_.-" else "_" for c in key)[:100]
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}-{kind}-{safe_key}.json"
        record = {"kind": kind, "body": body, "reason": reason, "destination": destination,
                  "spooledAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        return _write_atomic(os.path.join(self.pending_dir, name), record)

    def pending(self, destination: str | None = None, *, include_unassigned: bool = False) -> list[SpoolEntry]:
        """Pending entries, oldest first: all of them, or those for ``destination`` (and, with
        ``include_unassigned``, those spooled without one). Files that are not spool records
        are moved to rejected/ with the reason, and the move is added to :attr:`notices`."""
        if not os.path.isdir(self.pending_dir):
            return []
        entries = []
        for name in sorted(os.listdir(self.pending_dir)):
            if not name.endswith(".json"):
                continue
            path = os.path.join(self.pending_dir, name)
            try:
                entry = _read_entry(path)
            except FileNotFoundError:
                continue  # delivered by another process meanwhile
            except (OSError, ValueError) as exc:
                where = self._move_to_rejected(path, f"not a spool record: {exc}")
                self.notices.append(f"spool file {name} set aside in {where}: {exc}")
                continue
            if destination is None or entry.destination == destination or (
                    include_unassigned and entry.destination is None):
                entries.append(entry)
        return entries

    def count(self, destination: str | None = None) -> int:
        if not os.path.isdir(self.pending_dir):
            return 0
        if destination is None:
            return sum(1 for n in os.listdir(self.pending_dir) if n.endswith(".json"))
        return len(self.pending(destination))

    def destinations(self) -> dict[str | None, int]:
        """How many requests are pending for each destination (None: not recorded)."""
        counts: dict[str | None, int] = {}
        for entry in self.pending():
            counts[entry.destination] = counts.get(entry.destination, 0) + 1
        return counts

    def rejected_count(self) -> int:
        if not os.path.isdir(self.rejected_dir):
            return 0
        return sum(1 for n in os.listdir(self.rejected_dir) if n.endswith(".json"))

    def reject(self, kind: Kind, body: dict[str, Any], error: str, destination: str | None = None) -> str:
        """Keep a request the worker refused for good, with the reason."""
        path = self.add(kind, body, error, destination)
        return self._move_to_rejected(path, error)

    def deliver(self, send: Callable[[SpoolEntry], DeliveryOutcome], *, destination: str | None = None,
                include_unassigned: bool = False, wait_for_lock: bool = True) -> SyncReport:
        """Send the pending entries for ``destination`` (all when None) in order with ``send``;
        stop at the first "unavailable" or after :data:`MAX_CONSECUTIVE_FAILURES` "failed" in a
        row. ``remaining`` counts what is still pending for that destination.

        Only one process delivers at a time (a lock file); with ``wait_for_lock=False`` a
        busy spool is skipped instead of waited for.
        """
        report = SyncReport()
        if not os.path.isdir(self.pending_dir):
            return report
        with self._lock(wait_for_lock) as acquired:
            if not acquired:
                report.skipped_locked = True
                report.remaining = len(self.pending(destination, include_unassigned=include_unassigned))
                return report
            failures_in_a_row = 0
            for entry in self.pending(destination, include_unassigned=include_unassigned):
                outcome = send(entry)
                if outcome == "unavailable":
                    report.error = "worker unavailable"
                    break
                if outcome == "failed":
                    report.failed += 1
                    failures_in_a_row += 1
                    report.error = "worker failed to store"
                    if failures_in_a_row >= MAX_CONSECUTIVE_FAILURES:
                        break
                    continue
                failures_in_a_row = 0
                if outcome == "rejected":
                    report.rejected += 1
                    continue  # send() moved it to rejected/
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                if outcome == "duplicate":
                    report.duplicates += 1
                else:
                    report.delivered += 1
            report.remaining = len(self.pending(destination, include_unassigned=include_unassigned))
        return report

    def move_to_rejected(self, entry: SpoolEntry, error: str) -> str:
        return self._move_to_rejected(entry.path, error)

    def _move_to_rejected(self, path: str, error: str) -> str:
        os.makedirs(self.rejected_dir, exist_ok=True)
        target = os.path.join(self.rejected_dir, os.path.basename(path))
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
            if not isinstance(record, dict):
                raise ValueError("not an object")
            record["error"] = error
            _write_atomic(target, record)
            os.unlink(path)
        except (ValueError, OSError):
            # Keep the bytes as they are, whatever they hold.
            os.replace(path, target)
        return target

    @contextlib.contextmanager
    def _lock(self, wait: bool) -> Iterator[bool]:
        os.makedirs(self.directory, exist_ok=True)
        fd = os.open(os.path.join(self.directory, ".lock"), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _read_entry(path: str) -> SpoolEntry:
    """One spool file; ValueError saying what is wrong when it is not a spool record."""
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, found {type(record).__name__}")
    kind, body = record.get("kind"), record.get("body")
    if kind not in KINDS:
        raise ValueError(f"'kind' is {kind!r}, not one of {', '.join(repr(k) for k in KINDS)}")
    if not isinstance(body, dict):
        raise ValueError("'body' is not a JSON object")
    destination = record.get("destination")
    return SpoolEntry(path, kind, body, str(record.get("reason", "")),
                      destination if isinstance(destination, str) else None)


def _write_atomic(path: str, record: dict[str, Any]) -> str:
    tmp = os.path.join(os.path.dirname(path), f".tmp-{os.getpid()}-{next(_counter)}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path
