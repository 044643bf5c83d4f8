"""The one cell every engine records, and the one rule that decides which cells run again.

A *cell* is one attempt at one planned unit of work: a dataset case at one repeat against one
target, a scenario run at one tier and iteration. Whatever engine made it, what it recorded is
read as a :class:`CellRecord`: its key, its name among its run's tests, its outcome in the
words of :mod:`worker.analysis.summary` (with the engine's own status word beside it), whether
a retry may redo it, what it measured (score, duration, time to first token, tokens, cost) and
the line the engine wrote, which keeps the engine's own fields. Each engine reads its record
in one function: :func:`harness.datasets.lines.dataset_cell` (a dataset answer's line),
:func:`harness.scenarios.lines.scenario_cell` (a scenario run's line in a fleet's suite cell,
written by ``scenario_line``), :func:`harness.scenarios.plan.stored_cell` (a run in the
store) and :func:`harness.stress.record.sample_cell` (a load test's request). The lines are
appended to the one results log (:mod:`harness.results_log`) as cells end, and read back for
the resume rule (:meth:`CellRecord.recorded`), the summary
(:func:`worker.analysis.summary.summarize` reads a record as it is), the progress display and
a fleet's tests. A load test reports each request as a cell as it ends; it stores the curve
its requests draw (:class:`~harness.results.records.StressRecord`), not the requests.

Every engine that resumes reads what it stored about each cell's attempts into a
:class:`Recorded` (the cell's key, the status of its latest attempt, and whether a retry may
redo that outcome) and asks :func:`decide` which of its planned cells run. The rule:

- a cell with no record is **missing**: it runs, unless the caller asked for retries alone
  (``missing=False``: a scenario plan's ``--retry-errors`` without ``--resume`` or a shard);
- a cell whose latest record is ``retryable`` is **retried** when ``retry`` is asked;
- any other cell with a record is **done** and does not run.

Only the latest attempt of a cell counts; each engine keeps its own order of attempts and gives
them to :func:`latest` oldest first. The engines and what they record:

- scenario plans (:func:`harness.scenarios.plan.reconcile`, through ``resume`` and
  ``retry_errors``; :func:`harness.scenarios.plan.recorded` maps a stored run): attempts ordered
  by ``(started_at, run_id)``; retryable: an ``error`` of class ``infra`` or ``harness``;
  ``retry`` is ``--retry-errors``;
- dataset runs (:func:`harness.datasets.planning.prepare` with ``--resume``; a line of
  results.jsonl read by :func:`harness.datasets.lines.dataset_cell`): the last line wins;
  retryable: status ``error``; ``retry`` is ``--retry-errors``;
- a fleet's suite cell (a line of the cell's results.jsonl read by
  :func:`harness.scenarios.lines.scenario_cell`) and a fleet's cells
  (:func:`harness.fleet.execute.recorded_entry`, an entry of cells.jsonl): the last line wins;
  a fleet always retries (``retry=True``), a suite run stored as ``error`` and a cell in any
  state but ``completed`` being retryable.

The load test (:mod:`harness.stress`) has no resume: a load test measures an endpoint at one
moment, and resuming it would mix the figures of two moments into one curve.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from worker.analysis.summary import OUTCOMES

T = TypeVar("T")
_OUTCOMES = frozenset(OUTCOMES)


@dataclass(frozen=True)
class Recorded:
    """What is known of a cell's latest attempt."""

    key: Hashable  # the cell's key, as the engine's planned cells name it
    status: str | None  # the engine's own word for the outcome (completed, error, failed...)
    retryable: bool  # an outcome that a retry may redo


class CellRecord(NamedTuple):
    """One recorded attempt at a cell, whichever engine made it (module docstring).

    ``outcome`` is one of :data:`worker.analysis.summary.OUTCOMES` (``passed``, ``failed``,
    ``error``, ``timeout``, ``ungraded``...); ``status`` is the engine's own word for it as
    recorded (a dataset's ``passed``, a scenario run's ``completed`` or ``budget_exceeded``).
    ``error_kind`` names why a cell ended in error when the engine knows (``timeout``,
    ``connect``...). ``cost_usd`` None: unknown (no price), not free. ``line`` is the record as
    the engine wrote it, its own fields included; read it only for those. A tuple, as the
    summary's :class:`~worker.analysis.summary.Figures`, with the same names for what it
    measured: :func:`~worker.analysis.summary.summarize` reads it as it is, thousands at once.
    Build one with :meth:`of`, which checks the outcome."""

    key: Hashable  # the cell's key for the resume rule, as the engine's planned cells name it
    test: str  # the cell's name among its run's tests (a fleet's test key)
    category: str
    outcome: str
    status: str | None
    retryable: bool  # an outcome that a retry may redo
    score: float | None = None
    duration_ms: float | None = None
    ttft_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    error_kind: str | None = None
    run_id: str | None = None
    line: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, *fields: Any) -> "CellRecord":
        """A record of ``fields`` (in the order of the class's), its outcome checked."""
        record = cls(*fields)
        if record.outcome not in _OUTCOMES:
            raise ValueError(f"a cell's outcome is one of {', '.join(OUTCOMES)}, not {record.outcome!r}")
        return record

    @property
    def timed_out(self) -> bool:
        """The cell ran out of time: its outcome is ``timeout``, or an ``error`` of kind ``timeout``
        (a dataset request that timed out is an error of its run, a timeout among a fleet's tests)."""
        return self.outcome == "timeout" or (self.outcome == "error" and self.error_kind == "timeout")

    def recorded(self) -> Recorded:
        """What the cell says for the resume rule."""
        return Recorded(self.key, self.status, self.retryable)



@dataclass(frozen=True)
class Decision(Generic[T]):
    """Which planned cells run, in their planned order, and how the others were counted."""

    run: list[T]  # missing cells (when asked) and retried ones, in the order planned
    retried: list[T]  # the cells of ``run`` whose latest attempt is redone
    done: int  # cells with a record that do not run
    missing: int  # cells with no record (run only when ``missing`` was asked)


def latest(records: Iterable[Recorded]) -> dict[Hashable, Recorded]:
    """The latest record of every key, ``records`` given oldest first (the last one wins)."""
    out: dict[Hashable, Recorded] = {}
    for record in records:
        out[record.key] = record
    return out


def decide(planned: Iterable[T], key: Callable[[T], Hashable], recorded: Mapping[Hashable, Recorded], *,
           retry: bool, missing: bool = True) -> Decision[T]:
    """Apply the rule to ``planned`` (each cell's key given by ``key``) against the latest
    record of each key: missing cells run when ``missing``, retryable ones when ``retry``."""
    run: list[T] = []
    retried: list[T] = []
    done = absent = 0
    for cell in planned:
        record = recorded.get(key(cell))
        if record is None:
            absent += 1
            if missing:
                run.append(cell)
        elif retry and record.retryable:
            run.append(cell)
            retried.append(cell)
        else:
            done += 1
    return Decision(run, retried, done, absent)
