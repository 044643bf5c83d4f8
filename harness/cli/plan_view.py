"""How ``bench`` shows a plan: the progress of its cells (:data:`PLAN_VIEW`, for
:class:`harness.cli.live.Progress`), the summary table, the dry run."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table
from rich.text import Text

from harness.cli.live import Progress, View, duration_text
from harness.events import Event
from harness.scenarios.plan import Cell, Group, Plan


def agent_label(agent: str, model: str | None) -> str:
    return f"{agent}:{model}" if model else agent


def cell_label(cell: Cell) -> str:
    spec = f" +{cell.specialist}" if cell.specialist else ""
    return f"{cell.suite}/{cell.scenario} {cell.tier} {agent_label(cell.agent, cell.model)}{spec} #{cell.iteration}"


def money(value: float | None) -> str:
    if value is None:
        return "?"
    if value == 0:
        return "$0"
    if value < 0.0001:
        return "<$0.0001"
    return f"${value:.4f}" if value < 0.01 else f"${value:.2f}"


def _run_label(event: Event) -> str:
    return cell_label(event.cell) if event.cell is not None else f"run {event.iteration + 1}"


def _run_outcome(record: Any) -> str:
    if record.is_successful:
        return "passed"
    return "error" if record.status == "error" else "failed"


def plan_headline(progress: Progress) -> str:
    """``cells 3/10, 2 passed, ETA 1m05s`` (no ETA before the first cell or after the last)."""
    text = f"cells {progress.all.done}/{progress.total}, {progress.all.passed} passed"
    eta = progress.eta(progress.all.done, progress.total or 0)
    return text + (f", ETA {eta}" if eta else "")


def _run_line(progress: Progress, event: Event) -> str:
    rec = event.result
    score = "-" if rec.total_score is None else f"{rec.total_score:.2f}"
    status = rec.status + (f"/{rec.failure_class}" if rec.failure_class else "")
    meta = rec.metadata or {}
    if meta.get("cached"):  # replayed answers: say so where the run is first seen
        status += f" cached {meta.get('cachedCalls', '?')}/{meta.get('modelCalls', '?')}"
    return (f"[{progress.all.done}/{progress.total}] {_run_label(event)}: {status} score {score} ({rec.run_id}); "
            f"{plan_headline(progress)}")


def _plan_rows(progress: Progress) -> list[Any]:
    from rich.progress_bar import ProgressBar

    overall = Table.grid(padding=(0, 1))
    overall.add_row(Text(plan_headline(progress)),
                    ProgressBar(total=float(progress.total or 1), completed=float(progress.all.done), width=30),
                    Text(duration_text(progress.elapsed())))
    now = time.monotonic()
    return [overall] + [f"  {item.label}: {item.stage}  {duration_text(now - item.started)}"
                        for item in progress.running.values()]


#: A plan's progress: cells done of total, passes and an ETA; a line per finished run
#: (``[3/10] suite/scenario tier agent #i: status score S (run id); cells 3/10, 2 passed, ETA 40s``);
#: on a terminal, the runs under way with their stage.
PLAN_VIEW = View(rows=_plan_rows, line=_run_line, outcome=_run_outcome, label=_run_label)


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
