"""Live progress of one invocation writing a batch, reported to the results store as it runs.

:class:`ProgressReporter` tells the worker (``POST /api/batches/{batchId}/progress``, see
worker/progress.py) that the invocation started, how many of its cells are done and running
(when that changes, at most once a second, and every few seconds as a heartbeat), and how it
ended. The dashboard's batch page shows it; a batch whose reports stopped without an end is
shown stale there.

Reports are best effort and never slow or fail the run: they are sent from a background
thread, never spooled (a late report says nothing), and a failure only delays the next ones
(the worker is unreachable or failing) or stops them (a worker without the route, or
something that is not a results worker). They share the runner's lock on the client, waiting
for it briefly: when the client is busy storing runs, a heartbeat is skipped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from harness.results.transport import TransportUnavailable
from worker.progress import HEARTBEAT_MS

log = logging.getLogger(__name__)

MIN_GAP_S = 1.0  # reports are at least this far apart
RETRY_AFTER_S = 60.0  # after a failed report, the next one waits this long
FINAL_WAIT_S = 5.0  # how long the final report waits for the client's lock


class ProgressReporter:
    """Reports the progress of ``cells`` cells of batch ``batch_id`` through ``client``.

    ``start()`` sends the first report from a background thread, which then reports each
    change (``cell_started``, ``cell_ended``) and a heartbeat until ``finish(state)`` stops it
    and sends the final report (``finished`` or ``interrupted``). ``lock`` is the lock the
    caller holds around every use of ``client``. Clients without a transport (in-memory test
    clients) report nothing.
    """

    def __init__(self, client: Any, batch_id: str, invocation_id: str, *, cells: int, planned: int | None,
                 lock: threading.Lock | None = None, heartbeat_s: float = HEARTBEAT_MS / 1000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._transport = getattr(client, "transport", None)
        self._verify = getattr(client, "verify", None)
        self.enabled = self._transport is not None
        self.path = f"/api/batches/{quote(batch_id, safe='')}/progress"
        self.invocation_id = invocation_id
        self.cells = cells
        self.planned = planned
        self.lock = lock
        self.heartbeat_s = heartbeat_s
        self._clock = clock
        self._started_at_ms = int(time.time() * 1000)
        self._first_cell: float | None = None
        self._counts = threading.Lock()
        self._sequence = 0
        self.done = 0
        self.running = 0
        self._changed = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_at = 0.0
        self._finished = False
        self.sent = 0  # reports the worker took
        self.problem: str | None = None  # why the last report failed, if it did

    def start(self) -> "ProgressReporter":
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="batch-progress", daemon=True)
            self._thread.start()
        return self

    def cell_started(self) -> None:
        with self._counts:
            self.running += 1
            if self._first_cell is None:
                self._first_cell = self._clock()
        self._changed.set()

    def cell_ended(self) -> None:
        with self._counts:
            self.running = max(0, self.running - 1)
            self.done += 1
        self._changed.set()

    def finish(self, state: str) -> None:
        """Stop the heartbeat and send the final report (once), unless the worker could not
        be reached lately: the batch record, which names this invocation too, tells the end."""
        if self._finished:
            return
        self._finished = True
        self._stop.set()
        self._changed.set()
        if self._thread is not None:
            self._thread.join(timeout=MIN_GAP_S + 1.0)
        if self.enabled and self.sent and self._clock() >= self._retry_at:
            self._send(state, FINAL_WAIT_S)

    # ------------------------------------------------------------------ internals

    def _beat(self) -> None:
        while True:
            self._changed.clear()
            if self._clock() >= self._retry_at:
                self._send("running", 1.0)
            if not self.enabled:
                return
            self._changed.wait(max(0.0, self.heartbeat_s - MIN_GAP_S))
            if self._stop.is_set() or self._stop.wait(MIN_GAP_S):  # changes within a second: one report
                return

    def _body(self, state: str) -> dict[str, Any]:
        with self._counts:
            self._sequence += 1
            elapsed = 0 if self._first_cell is None else int((self._clock() - self._first_cell) * 1000)
            return {"invocationId": self.invocation_id, "state": state, "sequence": self._sequence,
                    "cells": self.cells, "done": self.done, "running": self.running if state == "running" else 0,
                    "plannedCells": self.planned, "elapsedMs": max(0, elapsed), "startedAt": self._started_at_ms}

    def _send(self, state: str, wait_s: float) -> None:
        body = self._body(state)
        if self.lock is not None and not self.lock.acquire(timeout=wait_s):
            return  # the client is busy storing runs: the next report says as much
        try:
            if self._verify is not None:
                self._verify()
            resp = self._transport.request("POST", self.path, body=body)
        except TransportUnavailable as exc:
            self._retry_later(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - not a results worker, a broken client: stop reporting
            self._stop_reporting(f"{type(exc).__name__}: {exc}")
            return
        finally:
            if self.lock is not None:
                self.lock.release()
        if resp.ok:
            self.sent += 1
            self.problem = None
        elif resp.status in (408, 429) or resp.status >= 500:
            self._retry_later(f"HTTP {resp.status} {resp.error_text()}")
        else:  # a worker without the route (404, 405) or refusing the report: for good
            self._stop_reporting(f"HTTP {resp.status} {resp.error_text()}")

    def _retry_later(self, problem: str) -> None:
        self.problem = problem
        self._retry_at = self._clock() + RETRY_AFTER_S
        log.debug("progress of %s not reported (%s); next try in %.0f s", self.path, problem, RETRY_AFTER_S)

    def _stop_reporting(self, problem: str) -> None:
        self.problem = problem
        self.enabled = False
        log.debug("progress of %s not reported (%s); no more reports", self.path, problem)
