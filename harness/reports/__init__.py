"""Self-contained HTML reports: pages with inline CSS and inline SVG charts, no scripts and
nothing fetched, readable on screen, on a phone and on paper.

``html`` builds pages, tables, sections and stat cards and formats numbers (unknown stays
"unknown"); ``svg`` draws accessible charts; ``fleet`` renders the fleet executive report.
"""

from harness.reports.fleet import render_executive_report
from harness.reports.html import (
    Markup,
    badge,
    code,
    escape,
    figure,
    fmt_cost,
    fmt_int,
    fmt_ms,
    fmt_pct,
    key_values,
    page,
    paragraph,
    section,
    stat_cards,
    table,
)
from harness.reports.svg import bar_chart, heatmap, percentile_chart, stacked_bar_chart

__all__ = [
    "Markup",
    "badge",
    "bar_chart",
    "code",
    "escape",
    "figure",
    "fmt_cost",
    "fmt_int",
    "fmt_ms",
    "fmt_pct",
    "heatmap",
    "key_values",
    "page",
    "paragraph",
    "percentile_chart",
    "render_executive_report",
    "section",
    "stacked_bar_chart",
    "stat_cards",
    "table",
]
