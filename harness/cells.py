"""The one rule that decides which cells of interrupted work run again.

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
- dataset runs (:func:`harness.datasets.planning.prepare` with ``--resume``;
  :func:`harness.datasets.results_log.recorded` maps a line of results.jsonl): the last line
  wins; retryable: status ``error``; ``retry`` is ``--retry-errors``;
- a fleet's suite cell (:func:`harness.fleet.execute.recorded_suite_line`, a line of the cell's
  results.jsonl) and a fleet's cells (:func:`harness.fleet.execute.recorded_entry`, an entry of
  cells.jsonl): the last line wins; a fleet always retries (``retry=True``), a suite run stored
  as ``error`` and a cell in any state but ``completed`` being retryable.

The load test (:mod:`harness.stress`) has no resume: a load test measures an endpoint at one
moment, and resuming it would mix the figures of two moments into one curve.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Recorded:
    """What is known of a cell's latest attempt."""

    key: Hashable  # the cell's key, as the engine's planned cells name it
    status: str | None  # the engine's own word for the outcome (completed, error, failed...)
    retryable: bool  # an outcome that a retry may redo


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
