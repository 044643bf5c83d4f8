"""The one progress display of the four engines (:class:`Progress`), shaped per engine by a
:class:`View`.

:class:`Progress` follows :class:`harness.events.Display`: it is entered around an engine's work
and called with each of its events. It keeps what every engine has: the cells done of the total
(from ``plan`` and ``done`` events), the passes, failures and errors among them (also per group:
a dataset's targets), the samples (``sample`` events: a load test's requests, a fleet's tests),
the cells running now with their stage (``start``/``stage``), the notes, and the ETA. On a
terminal (and not ``quiet``) it is a panel redrawn by rich a few times a second, with the line of
each finished cell and each note printed above it; elsewhere (a log, CI) it prints those lines
only. Events may come from worker threads; the counts are kept under a lock.

What differs per engine is a :class:`View`: how a cell is named, what its result counts as, the
line of a finished cell, the rows of the panel. The views live beside their commands
(``plan_view.py``, ``dataset_view.py``, ``stress_view.py``, ``fleet_cmd.py``). rich is imported
only when a display starts, so that ``bench --help`` stays quick.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.events import Event


def duration_text(seconds: float) -> str:
    """``42s``, ``3m07s``, ``2h05m``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass
class Tally:
    """Cells done, and what they ended as."""

    done: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0

    def add(self, outcome: str) -> None:
        self.done += 1
        if outcome == "passed":
            self.passed += 1
        elif outcome == "failed":
            self.failed += 1
        elif outcome == "error":
            self.errors += 1


@dataclass
class Item:
    """A cell running now: its name, its stage, when it started, and its samples so far (how
    many passed and failed, and the values they measured)."""

    label: str
    stage: str | None
    started: float
    ok: int = 0
    failed: int = 0
    values: list[float] = field(default_factory=list)


def _key(event: Event) -> str:
    return event.key


def _counted(result: Any) -> str | None:
    return ""


def _no_line(progress: Progress, event: Event) -> str | None:
    return None


@dataclass(frozen=True)
class View:
    """What one engine's progress looks like.

    - ``rows(progress)``: the panel on a terminal, top to bottom (strings or rich renderables);
      called under the display's lock.
    - ``line(progress, event)``: the line printed when a cell is done (``done`` event, already
      counted), or None for no line.
    - ``outcome(result)``: what a ``done`` event's result counts as: ``"passed"``, ``"failed"``,
      ``"error"``, ``""`` (done, none of those), or None (not done: a cell interrupted).
    - ``label(event)``: how a running cell is named (default: the event's key).
    - ``group(result)``: a further tally to count a done result in (a dataset's target).
    - ``sample(result)``: whether a sample passed and the value it measured (or None).
    """

    rows: Callable[[Progress], list[Any]]
    line: Callable[[Progress, Event], str | None] = _no_line
    outcome: Callable[[Any], str | None] = _counted
    label: Callable[[Event], str] = _key
    group: Callable[[Any], str] | None = None
    sample: Callable[[Any], tuple[bool, float | None]] | None = None


class Progress:
    """The progress display of an engine (module docstring). ``console`` is where it writes
    (default: stderr, lines never wrapped); ``total`` the cells to do when no ``plan`` event
    says it; ``quiet`` shows nothing."""

    def __init__(self, view: View, *, console: Any = None, total: int | None = None, quiet: bool = False) -> None:
        self.view = view
        self.console = console
        self.total = total
        self.quiet = quiet
        self.lock = threading.RLock()  # re-entered by a Ctrl-C note on the thread holding it
        self.all = Tally()
        self.groups: dict[str, Tally] = {}
        self.samples = 0
        self.running: dict[str, Item] = {}
        self.notes: list[str] = []
        self.started = time.monotonic()
        self.live: Any = None

    # -- what the views read ---------------------------------------------------------------------
    def elapsed(self) -> float:
        return max(1e-6, time.monotonic() - self.started)

    def eta(self, done: int, total: int) -> str | None:
        """The time left at the pace so far, or None when nothing or everything is done."""
        if done <= 0 or done >= total:
            return None
        return duration_text(self.elapsed() / done * (total - done))

    # -- the Display protocol --------------------------------------------------------------------
    def __enter__(self) -> Progress:
        if not self.quiet and self._out().is_terminal:
            from rich.live import Live

            self.live = Live(get_renderable=self._panel, console=self.console, refresh_per_second=4, transient=True)
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def __call__(self, event: Event) -> None:
        line = None
        view = self.view
        with self.lock:
            kind = event.kind
            if kind == "plan":
                if event.total is not None:
                    self.total = event.total
                self.all.done = event.done or 0
            elif kind in ("start", "stage"):
                item = self.running.get(event.key)
                if item is None:
                    self.running[event.key] = Item(view.label(event), event.stage, time.monotonic())
                else:
                    item.stage = event.stage
            elif kind == "sample":
                self.samples += 1
                item = self.running.get(event.key)
                if item is not None and view.sample is not None:
                    ok, value = view.sample(event.result)
                    if ok:
                        item.ok += 1
                    else:
                        item.failed += 1
                    if value is not None:
                        item.values.append(value)
            elif kind == "done":
                self.running.pop(event.key, None)
                outcome = view.outcome(event.result)
                if outcome is not None:
                    self.all.add(outcome)
                    if view.group is not None:
                        self.groups.setdefault(view.group(event.result), Tally()).add(outcome)
                line = view.line(self, event)
        if line is not None:  # printed outside the lock: the panel's refresh takes it
            self._say(line)

    def note(self, text: str) -> None:
        """Something to tell while the work goes on (e.g. that Ctrl-C was heard)."""
        with self.lock:
            self.notes.append(text)
        self._say(text)

    # -- drawing ---------------------------------------------------------------------------------
    def _out(self) -> Any:
        if self.console is None:
            from rich.console import Console

            self.console = Console(stderr=True, soft_wrap=True)
        return self.console

    def _say(self, text: str) -> None:
        if not self.quiet:
            self._out().print(text, markup=False, highlight=False, emoji=False)

    def _panel(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        with self.lock:
            rows = self.view.rows(self)
        return Group(*(Text(row) if isinstance(row, str) else row for row in rows))
