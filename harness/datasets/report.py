"""The summary and exports of a ``bench dataset`` run under one name, for the callers that
import them from here: the figures and their text table are :mod:`harness.datasets.summary`
(``summarize``, ``summary_table``, ``summary_rows``, ``no_answer_reason``), the files are
:mod:`harness.datasets.exports` (``summary_text``, ``write_json``, ``write_csv``,
``write_junit``). Drawing the table on the terminal is the CLI's
(``harness.cli.dataset_view.render_summary``).
"""

from __future__ import annotations

from harness.datasets.exports import CSV_COLUMNS, summary_text, write_csv, write_json, write_junit
from harness.datasets.summary import (
    CONFIDENCE,
    STATUSES,
    SummaryTable,
    no_answer_reason,
    summarize,
    summary_rows,
    summary_table,
)

__all__ = [
    "CONFIDENCE",
    "CSV_COLUMNS",
    "STATUSES",
    "SummaryTable",
    "no_answer_reason",
    "summarize",
    "summary_rows",
    "summary_table",
    "summary_text",
    "write_csv",
    "write_json",
    "write_junit",
]
