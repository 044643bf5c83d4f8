"""The one event type of every engine, and the one protocol of the displays that show them.

The four engines (scenario plans in :mod:`harness.scenarios.runner`, prompt datasets in
:mod:`harness.datasets.run`, fleets in :mod:`harness.fleet.execute`, load tests in
:mod:`harness.stress`) tell whoever watches them what happens through one callable,
``on_event(event)``, with an :class:`Event`. A fleet watches the engines it composes the same
way: it counts the ``done`` events of a dataset run and of a scenario plan as its tests.

The kinds, in the order an engine emits them:

- ``plan``: what is to be done is known: ``total`` cells, ``done`` of them already (a resumed
  run); ``result`` may carry the plan itself (a load test's steps).
- ``start``: a cell starts (``key``, ``cell``).
- ``stage``: a cell moves to ``stage`` (a scenario run: workspace, agent, validation, ...).
- ``sample``: a measurement inside a cell (``result``, a :class:`~harness.cells.CellRecord`): a
  load test's request, a fleet cell's finished test.
- ``done``: a cell ends; ``result`` is what it ended with (a stored run record, the
  :class:`~harness.cells.CellRecord` of a dataset's answer, a fleet cell's result, a load-test
  step's figures).
- ``end``: the engine stops (``result``: how it ended).

An engine never lets an error in ``on_event`` stop its work; the displays draw from the events
alone (:class:`Display`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

KINDS = ("plan", "start", "stage", "sample", "done", "end")


@dataclass(frozen=True)
class Event:
    """One thing an engine tells its watchers; see the module docstring for the kinds."""

    kind: str
    key: str = ""  # the cell: a run id, a dataset cell, a fleet cell's key, a load-test step
    cell: Any = None  # the engine's own description of the cell (a plan cell, a fleet cell, a step)
    stage: str | None = None
    result: Any = None
    total: int | None = None
    done: int | None = None
    iteration: int | None = None  # a scenario run's iteration

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown event kind {self.kind!r} (expected one of {', '.join(KINDS)})")


#: What an engine calls with each event.
OnEvent = Callable[[Event], None]


class Display(Protocol):
    """A progress display: opened around the engine's work, called with each event, closed
    when the work ends (also on an error or Ctrl-C). Displays write to the terminal and so
    live in :mod:`harness.cli`."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...

    def __call__(self, event: Event) -> None: ...


def ignore(event: Event) -> None:
    """The watcher of an engine nobody watches."""
