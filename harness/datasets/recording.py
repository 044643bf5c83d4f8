"""Answers turned into graded cells, each appended to ``results.jsonl`` as it comes.

:class:`CellRecorder` is the callback a dataset run hands the engine. An answer is graded by
its case's assertions (:mod:`harness.datasets.assertions`) and written as one line: test id,
target, repeat, status (``passed``, ``failed``, ``ungraded``, or ``error`` with an
``error_kind``), score, latency and time to first token, tokens, cost, the assertions' results
and the answer (at most :data:`RESPONSE_CAP` characters), a fresh run id and the time it
finished; a retried cell's line names the run it retries. An answer that needs the
``llm-rubric`` judge is graded in a worker thread and written at once; the others are queued
and written together just after the engine has sent its next request, flushed once, and only
then reported to ``on_event`` as a ``done`` :class:`~harness.events.Event` whose ``result`` is
the line's :class:`~harness.cells.CellRecord` (a cell reported is on disk). A line that cannot be written stops
the run: the error is raised by the next callback and by :meth:`CellRecorder.drain`.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from harness._util.clock import now_iso
from harness.datasets.assertion_types import Answer
from harness.datasets.assertions import grade, needs_judge
from harness.datasets.planning import DatasetRun, PlannedCell
from harness.cells import CellRecord
from harness.datasets.lines import dataset_cell
from harness.results_log import ResultsLog
from harness.models.engine import Outcome
from harness.events import Event, OnEvent
from harness.results.records import new_run_id

RESPONSE_CAP = 20_000  # characters of an answer kept in results.jsonl and the store


#: The classes of :func:`harness.models.providers.failures.error_class` a cell's ``error_kind`` keeps.
_KINDS_OF_CLASS = {"connect": "connect", "dns": "dns", "timeout": "timeout"}


def _error_kind(exc: Any) -> str:
    """The ``error_kind`` of a cell that ended on ``exc``: ``connect``, ``dns`` or ``timeout``
    as :func:`harness.models.providers.failures.error_class` classes it, else the ProviderError's
    kind (``unavailable``: 429, 5xx or a lost connection; ``auth``; ``refused``), else ``error``."""
    from harness.models.providers.failures import error_class

    kind = _KINDS_OF_CLASS.get(error_class(exc))
    if kind is not None:
        return kind
    kind = getattr(exc, "kind", "error")
    return kind if kind in ("unavailable", "auth", "refused") else "error"


class CellRecorder:
    """Turns outcomes into graded cells and appends them to results.jsonl.

    An answer graded without a judge is recorded just after the engine's worker has sent its
    next request (a callback queued on the event loop), not before: the grading and the line
    are then off the path from one request to the next. :meth:`drain` records what is still
    queued, and raises what recording failed with."""

    def __init__(self, run: DatasetRun, log: ResultsLog, judge: Any, judge_skip: str,
                 on_event: OnEvent | None) -> None:
        self.run = run
        self.log = log
        self.judge = judge
        self.judge_skip = judge_skip
        self.on_event = on_event
        self.save = run.options.save_responses
        self.errors = 0
        self.first_error: str | None = None
        self._queued: collections.deque[Outcome] = collections.deque()
        self._failure: BaseException | None = None

    def line_of(self, planned: PlannedCell, outcome: Outcome, graded: Any) -> dict[str, Any]:
        """The line of results.jsonl that records ``outcome`` graded as ``graded``."""
        response = outcome.response
        case = planned.case
        cell: dict[str, Any] = {
            "test_id": case.id, "category": case.category, "target": planned.target.spec,
            "provider": planned.target.prefix, "model": planned.target.model, "repeat": planned.repeat,
        }
        if response is not None:
            usage = response.usage
            cell.update({
                "status": ("ungraded" if graded.passed is None else "passed" if graded.passed else "failed"),
                "score": graded.score, "threshold": graded.threshold,
                "duration_ms": round(response.latency_ms, 2),
                "ttft_ms": None if response.ttft_ms is None else round(response.ttft_ms, 2),
                "tokens_in": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
                "tokens_out": usage.output_tokens, "cost_usd": response.cost_usd,
                "error": None, "error_kind": None,
                "assertions": [r.to_dict() for r in graded.results],
                "response": response.text[:RESPONSE_CAP] if self.save else None,
                "answered_model": response.model, "cached": response.cached,
            })
            if getattr(graded, "judge_calls", 0):
                cell["judge_tokens_in"] = graded.judge_tokens_in
                cell["judge_tokens_out"] = graded.judge_tokens_out
                cell["judge_cost_usd"] = graded.judge_cost_usd
        else:
            error = outcome.error
            cell.update({
                "status": "error", "score": None, "threshold": None,
                "duration_ms": round(outcome.elapsed_ms, 2), "ttft_ms": None,
                "tokens_in": 0, "tokens_out": 0, "cost_usd": None,
                "error": str(error)[:1000], "error_kind": _error_kind(error),
                "assertions": [], "response": None,
            })
        cell["attempts"] = outcome.attempts
        cell["rate_limited"] = outcome.rate_limited
        cell["run_id"] = new_run_id()
        cell["finished_at"] = now_iso()
        return cell

    def record(self, outcome: Outcome, graded: Any) -> CellRecord:
        cell = self._write(outcome, graded, flush=True)
        self._report(cell)
        return cell

    def _report(self, cell: CellRecord) -> None:
        if self.on_event is not None:
            self.on_event(Event("done", key=cell.key, result=cell))

    def _write(self, outcome: Outcome, graded: Any, flush: bool) -> CellRecord:
        """Append the cell of ``outcome`` to results.jsonl (flushed, or left for a later flush)."""
        planned: PlannedCell = outcome.job.payload
        line = self.line_of(planned, outcome, graded)
        previous = self.run.previous.get(planned.key)
        if previous is not None:
            line["retry_of"] = previous.get("run_id")
        cell = dataset_cell(line)
        self.log.append(cell, flush)
        if cell.status == "error":
            self.errors += 1
            if self.first_error is None:
                self.first_error = f"{line['test_id']}: {line['error']}"
        return cell

    def grade_now(self, outcome: Outcome) -> Any:
        if outcome.response is None:
            return None
        response = outcome.response
        return grade(outcome.job.payload.case, Answer(response.text, response.latency_ms, response.cost_usd),
                     None, judge_skip_reason=self.judge_skip)

    async def __call__(self, outcome: Outcome) -> None:
        if self._failure is not None:
            raise self._failure  # stops the run as a failure of this call would have
        case = outcome.job.payload.case
        if outcome.response is not None and self.judge is not None and needs_judge(case):
            response = outcome.response
            graded = await asyncio.to_thread(grade, case, Answer(response.text, response.latency_ms,
                                                                 response.cost_usd), self.judge)
            self.record(outcome, graded)
            return
        self._queued.append(outcome)
        if len(self._queued) == 1:
            asyncio.get_running_loop().call_soon(self._record_queued)

    def _record_queued(self) -> None:
        # The lines of the answers queued together are flushed once, and only then reported:
        # a cell reported is on disk.
        written: list[CellRecord] = []
        try:
            while self._queued and self._failure is None:
                outcome = self._queued.popleft()
                written.append(self._write(outcome, self.grade_now(outcome), flush=False))
        except BaseException as exc:  # noqa: BLE001 - raised by the next call and by drain()
            self._failure = exc
        try:
            if written:
                self.log.flush()
        except BaseException as exc:  # noqa: BLE001 - as above; nothing of this batch is reported
            self._failure = self._failure or exc
            return
        for cell in written:
            self._report(cell)

    def drain(self) -> None:
        """Record the answers still queued; raise what recording failed with, if it did."""
        self._record_queued()
        if self._failure is not None:
            raise self._failure
