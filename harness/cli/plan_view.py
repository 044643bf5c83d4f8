"""How ``bench`` shows a plan: the progress of its cells, the summary table, the dry run."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table
from rich.text import Text

from harness.scenarios.plan import Cell, Group, Plan


def agent_label(agent: str, model: str | None) -> str:
    return f"{agent}:{model}" if model else agent


def cell_label(cell: Cell) -> str:
    spec = f" +{cell.specialist}" if cell.specialist else ""
    return f"{cell.suite}/{cell.scenario} {cell.tier} {agent_label(cell.agent, cell.model)}{spec} #{cell.iteration}"


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def money(value: float | None) -> str:
    if value is None:
        return "?"
    if value == 0:
        return "$0"
    if value < 0.0001:
        return "<$0.0001"
    return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"


class PlanProgress:
    """One display for a plan (stderr): cells done of total, passes so far and an ETA, with a
    line per finished run. A live display on a terminal; plain lines in logs (CI)."""

    def __init__(self, console: Any, total: int, enabled: bool) -> None:
        self.console = console
        self.total = total
        self.live = enabled and console.is_terminal
        self.log_lines = enabled and not console.is_terminal
        self.progress: Any = None
        self.tasks: dict[str, Any] = {}
        self.done = 0
        self.passed = 0
        self.started = time.monotonic()

    def headline(self) -> str:
        text = f"cells {self.done}/{self.total}, {self.passed} passed"
        if 0 < self.done < self.total:
            elapsed = time.monotonic() - self.started
            text += f", ETA {duration_text(elapsed / self.done * (self.total - self.done))}"
        return text

    def __enter__(self) -> PlanProgress:
        if self.live:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     TimeElapsedColumn(), console=self.console, transient=True)
            self.progress.start()
            self.overall = self.progress.add_task(self.headline(), total=self.total)
        return self

    def __call__(self, event: Any) -> None:
        label = cell_label(event.cell) if event.cell is not None else f"run {event.iteration + 1}"
        key = event.key
        if event.kind == "done":
            self.done += 1
            rec = event.result
            self.passed += 1 if rec.is_successful else 0
            score = "-" if rec.total_score is None else f"{rec.total_score:.2f}"
            status = rec.status + (f"/{rec.failure_class}" if rec.failure_class else "")
            meta = rec.metadata or {}
            if meta.get("cached"):  # replayed answers: say so where the run is first seen
                status += f" cached {meta.get('cachedCalls', '?')}/{meta.get('modelCalls', '?')}"
            line = f"[{self.done}/{self.total}] {label}: {status} score {score} ({rec.run_id})"
            if self.progress is not None:
                self.progress.console.print(line, highlight=False)
                task = self.tasks.pop(key, None)
                if task is not None:
                    self.progress.remove_task(task)
                self.progress.update(self.overall, completed=self.done, description=self.headline())
            elif self.log_lines:
                self.console.print(f"{line}; {self.headline()}", highlight=False)
            return
        if self.progress is not None:
            task = self.tasks.get(key)
            if task is None:
                self.tasks[key] = self.progress.add_task(f"{label}: {event.stage}", total=None)
            else:
                self.progress.update(task, description=f"{label}: {event.stage}")
            self.progress.update(self.overall, description=self.headline())

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def summary_table(records: list[Any], title: str) -> Table:
    """Scenario (and tier) by agent: successes/runs and the mean score of each."""
    rows: dict[str, dict[str, list[Any]]] = {}
    columns: list[str] = []
    for r in records:
        row = f"{r.suite}/{r.scenario} {(r.metadata or {}).get('tierLabel', r.tier)}"
        column = agent_label(r.agent, r.model) + (f" +{r.specialist_name}" if r.specialist_enabled else "")
        if column not in columns:
            columns.append(column)
        rows.setdefault(row, {}).setdefault(column, []).append(r)
    table = Table(title=title)
    table.add_column("scenario / tier", overflow="fold")
    for column in columns:
        table.add_column(column, justify="right", overflow="fold")
    for row in sorted(rows):
        cells: list[Any] = [row]
        for column in columns:
            runs = rows[row].get(column)
            if not runs:
                cells.append("")
                continue
            ok = sum(1 for r in runs if r.is_successful)
            scores = [r.total_score for r in runs if r.total_score is not None]
            mean = f"{sum(scores) / len(scores):.2f}" if scores else "-"
            errors = sum(1 for r in runs if r.status == "error")
            style = "green" if ok == len(runs) else "red" if ok == 0 else "yellow"
            text = Text(f"{ok}/{len(runs)} ", style=style)
            text.append(f"mean {mean}")
            if errors:
                text.append(f" ({errors} error{'s' if errors > 1 else ''})", style="red")
            cells.append(text)
        table.add_row(*cells)
    return table


def _iterations_text(its: list[int]) -> str:
    if not its:
        return "-"
    if len(its) == 1:
        return str(its[0])
    return f"{its[0]}-{its[-1]}" if its == list(range(its[0], its[-1] + 1)) else ",".join(map(str, its))


def dry_run_table(plan: Plan, estimate: Any) -> tuple[Table, list[str]]:
    """The cells a plan would run, group by group, with the estimated cost of each; and the
    notes that explain the cost bases (one line per distinct basis)."""
    from rich import box

    groups = [g for g in estimate.groups if g.group.iterations]
    suites = {g.group.scenario.suite for g in groups}
    specs = any(g.group.specialist_ref for g in groups)
    numbered = any(g.group.iterations != list(range(len(g.group.iterations))) for g in groups)
    columns = ["scenario", "tier", "agent"] + (["specialist"] if specs else []) + ["runs"] + (
        ["iterations"] if numbered else []) + ["cost/run", "basis"]
    table = Table(title=f"Plan for batch {plan.batch_id}", box=box.SIMPLE_HEAD)
    for col in columns:
        table.add_column(col, justify="right" if col in ("runs", "cost/run") else "left",
                         no_wrap=col not in ("scenario", "agent", "specialist"), overflow="fold")
    notes: list[str] = []
    for g in groups:
        group: Group = g.group
        low, high = money(g.low), money(g.high)
        note = f"{g.basis}: {g.detail}" if g.detail else g.basis
        if note not in notes:
            notes.append(note)
        name = group.scenario.name if len(suites) == 1 else f"{group.scenario.suite}/{group.scenario.name}"
        row = [name, group.prompt.tier, agent_label(group.agent, group.model)]
        row += [group.specialist_ref or ""] if specs else []
        row += [str(len(group.iterations))] + ([_iterations_text(group.iterations)] if numbered else [])
        row += [low if low == high else f"{low}-{high}", f"[{notes.index(note) + 1}]"]
        table.add_row(*row)
    return table, [f"basis [{i + 1}] {n}" for i, n in enumerate(notes)]
