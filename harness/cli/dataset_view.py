"""What ``bench dataset`` shows on the terminal: its progress while it runs (:func:`progress_view`,
for :class:`harness.cli.live.Progress`) and the summary at the end.

:func:`render_summary` draws :func:`harness.datasets.summary.summary_table` as plain text on a
rich console: the figures' labels on the left, one right-aligned column per target
(``provider:`` over the model name, and ``overall`` when there are several), a bold header and
a rule, blank lines between groups of rows. A model name wider than its column's figures and
than 28 characters is wrapped over several header lines; columns that do not fit the console's width go to a further table
that repeats the labels. When some cells ended in errors, one more line (yellow) says how many
and where to look. Text is printed without markup or highlighting, so names are shown as
they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.cli.live import Progress, Tally, View

if TYPE_CHECKING:
    from rich.console import Console

    from harness.cells import CellRecord

_GAP = 2
_MAX_HEADER = 28   # a longer model name is wrapped over several header lines


def _cell_outcome(cell: CellRecord) -> str:
    return cell.outcome if cell.outcome in ("passed", "error") else ""


def progress_view(run: Any) -> View:
    """A dataset run's progress: on a terminal, one row per target (done/total, answers per
    second, passed, errors, ETA); no line per cell (there are thousands), only the notes."""
    totals: dict[str, int] = {}
    for planned in run.cells:
        totals[planned.target.spec] = totals.get(planned.target.spec, 0) + 1

    def rows(progress: Progress) -> list[Any]:
        from rich.table import Table

        elapsed = progress.elapsed()
        table = Table(box=None, pad_edge=False, show_edge=False)
        for name, justify in (("target", "left"), ("done", "right"), ("/s", "right"), ("passed", "right"),
                              ("errors", "right"), ("ETA", "right")):
            table.add_column(name, justify=justify)
        for target, total in totals.items():
            tally = progress.groups.get(target) or Tally()
            eta = "done" if tally.done >= total else (progress.eta(tally.done, total) or "?")
            table.add_row(target, f"{tally.done}/{total}", f"{tally.done / elapsed:.1f}", str(tally.passed),
                          str(tally.errors), eta)
        return [table]

    return View(rows=rows, outcome=_cell_outcome, group=lambda cell: cell.line["target"])


def _wrap(text: str, width: int) -> list[str]:
    return [text[i:i + width] for i in range(0, len(text), width)] or [""]


def render_summary(summary: dict[str, Any], console: Console) -> None:
    """Print ``summary`` (from :func:`harness.datasets.summary.summarize`) as a table on
    ``console`` (module docstring); ``No results.`` when it has no target."""
    from harness.datasets.summary import summary_table

    table = summary_table(summary)
    if not table.columns:
        console.print("No results.", markup=False, highlight=False)
        return
    rows = table.rows
    labels = [row[0] if row else "" for row in rows]
    label_width = max(len(label) for label in labels)
    values = [[row[1][i] if row else "" for row in rows] for i in range(len(table.columns))]
    headers = []
    for lines, texts in zip(table.columns, values):
        width = max(max(len(t) for t in texts), min(_MAX_HEADER, max(len(line) for line in lines)))
        wrapped = [part for line in lines for part in _wrap(line, width)]
        headers.append((wrapped, width))

    available = max(getattr(console, "width", 100) or 100, 40)
    chunks: list[list[int]] = [[]]
    used = label_width
    for index, (_, width) in enumerate(headers):
        if chunks[-1] and used + _GAP + width > available:
            chunks.append([])
            used = label_width
        chunks[-1].append(index)
        used += _GAP + width

    gap = " " * _GAP
    for number, chunk in enumerate(chunks):
        if number:
            console.print("", markup=False, highlight=False)
        height = max(len(headers[i][0]) for i in chunk)
        for line in range(height):
            cells = []
            for i in chunk:
                header, width = headers[i]
                # headers sit on the last lines, just above the figures
                offset = line - (height - len(header))
                cells.append((header[offset] if offset >= 0 else "").rjust(width))
            console.print(" " * label_width + gap + gap.join(cells), markup=False, highlight=False,
                          soft_wrap=True, style="bold")
        rule = "─" * label_width + gap + gap.join("─" * headers[i][1] for i in chunk)
        console.print(rule, markup=False, highlight=False, soft_wrap=True)
        for r, row in enumerate(rows):
            if row is None:
                if 0 < r < len(rows) - 1:
                    console.print("", markup=False, highlight=False)
                continue
            line_text = labels[r].ljust(label_width) + gap + gap.join(
                values[i][r].rjust(headers[i][1]) for i in chunk)
            console.print(line_text, markup=False, highlight=False, soft_wrap=True)
    if table.error_line:
        console.print(table.error_line, markup=False, highlight=False, style="yellow")
