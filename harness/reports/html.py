"""Self-contained HTML: the page shell with its inline stylesheet, and the building blocks
(tables, sections, stat cards, figures) that reports put in it.

Everything given as text is escaped; only :class:`Markup` (and the HTML these functions
return) goes in as is. The ``fmt_*`` helpers turn numbers into text and ``None`` into
"unknown" (or whatever the caller passes as ``unknown``), never into zero.
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Sequence
from typing import Any

UNKNOWN = "unknown"
MISSING = "—"


class Markup(str):
    """HTML that is trusted and inserted as is (the output of this module's functions)."""


def escape(text: object) -> str:
    """``text`` as HTML text or attribute value; Markup passes through unchanged."""
    if isinstance(text, Markup):
        return str(text)
    return _html.escape("" if text is None else str(text), quote=True)


def _attr(name: str, value: object | None) -> str:
    return "" if value is None else f' {name}="{escape(value)}"'


# --- numbers as text --------------------------------------------------------------------


def fmt_pct(rate: float | None, low: float | None = None, high: float | None = None, *,
            unknown: str = UNKNOWN) -> str:
    """A rate in 0..1 as "75.0%", with its interval when both ends are known: "75.0% (67.1–82.0%)"."""
    if rate is None:
        return unknown
    text = f"{rate * 100:.1f}%"
    if low is not None and high is not None:
        text += f" ({low * 100:.1f}–{high * 100:.1f}%)"
    return text


def fmt_ms(ms: float | None, *, unknown: str = UNKNOWN) -> str:
    """A duration in milliseconds: "8.5 ms", "812 ms", "1.50 s", "2 min 5 s", "1 h 2 min"."""
    if ms is None:
        return unknown
    ms = float(ms)
    if ms == 0:
        return "0 ms"
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    seconds = round(ms / 1000)
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def fmt_cost(usd: float | None, *, unknown: str = UNKNOWN) -> str:
    """A cost in US dollars: "$12.34", "$0.0123", "<$0.0001"; None is ``unknown``, never "$0"."""
    if usd is None:
        return unknown
    usd = float(usd)
    if usd == 0:
        return "$0.00"
    if abs(usd) >= 1:
        return f"${usd:,.2f}"
    if abs(usd) < 0.0001:
        return "<$0.0001"
    return f"${usd:.4f}"


def fmt_number(value: Any, digits: int = 3, *, missing: str = MISSING) -> str:
    """A statistic as text: ``digits`` decimals, or two significant digits when smaller than that."""
    if value is None:
        return missing
    if isinstance(value, float):
        if value != 0 and abs(value) < 10 ** -digits:
            return f"{value:.2g}"
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(value: float | None, *, missing: str = MISSING) -> str:
    """A p-value as text: four decimals, or ``<0.0001``."""
    if value is None:
        return missing
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def fmt_int(n: float | None, *, unknown: str = UNKNOWN) -> str:
    """A count with thousands separators: "52,000"."""
    if n is None:
        return unknown
    return f"{round(n):,}"


# --- building blocks --------------------------------------------------------------------

Cell = object  # str, int, float, Markup or None
LONG_TEXT = 40  # cells longer than this wrap in a box of their own; shorter ones never wrap


def _cell_text(value: Cell, missing: str) -> str:
    if value is None:
        return escape(missing)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return fmt_int(value)
    text = escape(value)
    if not isinstance(value, Markup) and len(str(value)) > LONG_TEXT:
        return f'<div class="long">{text}</div>'
    return text


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], *,
          numeric: Iterable[int | str] = (), caption: str | None = None,
          missing: str = MISSING) -> Markup:
    """A table in a horizontal scroll wrapper. ``numeric`` names columns (by index or header)
    that are right-aligned; a ``None`` cell shows ``missing``; ints get thousands separators.
    Columns are as wide as their text (long text wraps); the wrapper scrolls when the table
    is wider than the page, and in print the table fits the paper's width."""
    right = {h if isinstance(h, int) else list(headers).index(h) for h in numeric}

    def cls(i: int) -> str:
        return ' class="num"' if i in right else ""

    head = "".join(f'<th scope="col"{cls(i)}>{escape(h)}</th>' for i, h in enumerate(headers))
    body = "\n".join(
        "<tr>" + "".join(f"<td{cls(i)}>{_cell_text(v, missing)}</td>" for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return Markup(
        f'<div class="table-wrap"><table>{cap}<thead><tr>{head}</tr></thead>\n'
        f"<tbody>\n{body}\n</tbody></table></div>"
    )


def section(title: str, body: str, *, id: str | None = None) -> Markup:
    """A titled section; ``body`` is HTML."""
    return Markup(f"<section{_attr('id', id)}>\n<h2>{escape(title)}</h2>\n{body}\n</section>")


def stat_cards(items: Iterable[tuple[str, str, str | None]]) -> Markup:
    """A grid of headline figures: (label, value text, note or None)."""
    cards = []
    for label, value, note in items:
        extra = f'<p class="card-note">{escape(note)}</p>' if note else ""
        cards.append(
            f'<div class="card"><p class="card-label">{escape(label)}</p>'
            f'<p class="card-value">{escape(value)}</p>{extra}</div>'
        )
    return Markup('<div class="cards">\n' + "\n".join(cards) + "\n</div>")


def figure(svg: str, *, caption: str | None = None) -> Markup:
    """A chart (an SVG string) kept whole on screen and in print, with an optional caption."""
    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return Markup(f'<figure class="chart">{svg}{cap}</figure>')


def badge(text: str, tone: str = "neutral") -> Markup:
    """A labelled pill; ``tone`` is ok, bad, warn or neutral (the text carries the meaning)."""
    return Markup(f'<span class="badge badge-{escape(tone)}">{escape(text)}</span>')


def key_values(items: Iterable[tuple[str, object]]) -> Markup:
    """A definition list of label: value pairs (values are text or Markup)."""
    rows = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in items)
    return Markup(f'<dl class="facts">{rows}</dl>')


def code(text: str) -> Markup:
    """Inline code (a path or an id) that may wrap after each "/"."""
    return Markup("<code>" + "/<wbr>".join(escape(part) for part in str(text).split("/")) + "</code>")


def paragraph(text: str, *, cls: str | None = None) -> Markup:
    """A paragraph of text, optionally with a class (``note`` or ``alert``)."""
    return Markup(f"<p{_attr('class', cls)}>{escape(text)}</p>")


# --- the page ---------------------------------------------------------------------------

STYLE = """
:root {
  --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --paper: #ffffff;
  --accent: #0072b2; --ok: #00704a; --bad: #b3261e; --warn: #8a5a00;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0; background: var(--soft); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
header.page-head { margin-bottom: 20px; }
h1 { font-size: 1.65rem; line-height: 1.25; margin: 0 0 4px; overflow-wrap: anywhere; }
.subtitle { color: var(--muted); margin: 0 0 12px; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 0 0 12px; }
h3 { font-size: 1rem; margin: 18px 0 8px; }
section {
  background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
  padding: 18px 20px; margin: 0 0 20px;
}
p { margin: 0 0 10px; }
.note { color: var(--muted); font-size: .92rem; }
.alert { border-left: 4px solid var(--warn); background: #fff8e6; padding: 8px 12px; border-radius: 4px; }
.alert-bad { border-left-color: var(--bad); background: #fdecea; }
nav.toc { margin: 0 0 16px; font-size: .92rem; }
nav.toc a { color: var(--accent); margin-right: 14px; white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 6px 20px; margin: 0; }
dl.facts div { min-width: 0; }
dl.facts dt { color: var(--muted); font-size: .82rem; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin: 0 0 20px; }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card p { margin: 0; }
.card-label { color: var(--muted); font-size: .82rem; text-transform: uppercase; letter-spacing: .04em; }
.card-value { font-size: 1.35rem; font-weight: 600; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.card-note { color: var(--muted); font-size: .85rem; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: .85em; font-weight: 600;
  border: 1px solid currentColor; white-space: nowrap; }
.badge-ok { color: var(--ok); } .badge-bad { color: var(--bad); }
.badge-warn { color: var(--warn); } .badge-neutral { color: var(--muted); }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: 0 0 12px; border: 1px solid var(--line);
  border-radius: 6px; }
table { border-collapse: collapse; width: max-content; min-width: 100%; font-size: .9rem; }
caption { text-align: left; padding: 8px 10px; color: var(--muted); font-size: .85rem; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td { white-space: nowrap; }
td .long { white-space: normal; min-width: 26ch; max-width: 48ch; overflow-wrap: break-word; }
tbody tr:nth-child(even) td { background: #fafbfc; }
tbody tr:last-child td { border-bottom: 0; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure.chart { margin: 0 0 18px; overflow-x: auto; }
figure.chart svg { display: block; width: 100%; max-width: 920px; min-width: 600px; height: auto; }
figcaption { color: var(--muted); font-size: .85rem; margin-top: 4px; }
footer { color: var(--muted); font-size: .82rem; text-align: center; margin-top: 8px; }
@media (max-width: 640px) {
  body { font-size: 14px; }
  main { padding: 14px 10px 32px; }
  section { padding: 12px; border-radius: 6px; }
  h1 { font-size: 1.35rem; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
  .card-value { font-size: 1.1rem; }
  th, td { padding: 5px 7px; }
}
@media print {
  @page { size: landscape; margin: 10mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { background: #fff; font-size: 9.5pt; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  section { border: 0; border-radius: 0; padding: 0; margin: 0 0 12pt; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  .table-wrap, figure.chart { overflow: visible; border: 0; }
  table { font-size: 7.5pt; width: 100%; min-width: 0; }
  thead { display: table-header-group; }
  tr, th, td { break-inside: avoid; page-break-inside: avoid; }
  th, td { white-space: normal; padding: 2px 4px; overflow-wrap: break-word; }
  td .long { min-width: 18ch; max-width: none; }
  tbody tr:nth-child(even) td { background: #f6f8fa; }
  figure.chart, figure.chart svg, .card, .cards, dl.facts { break-inside: avoid; page-break-inside: avoid; }
  figure.chart svg { min-width: 0; max-width: 200mm; max-height: 170mm; }
  .cards { grid-template-columns: repeat(auto-fit, minmax(100pt, 1fr)); }
  a { color: inherit; text-decoration: none; }
}
"""


def page(title: str, body: str, *, subtitle: str | None = None) -> str:
    """A complete HTML document: the escaped title (and subtitle) as its header, ``body`` as HTML."""
    sub = f'<p class="subtitle">{escape(subtitle)}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f'<header class="page-head">\n<h1>{escape(title)}</h1>\n{sub}\n</header>\n'
        f"{body}\n</main>\n</body>\n</html>\n"
    )


def toc(items: Iterable[tuple[str, str]]) -> Markup:
    """A row of links to the page's sections, ``(id, label)``; hidden in print."""
    links = "".join(f'<a href="#{escape(key)}">{escape(label)}</a>' for key, label in items)
    return Markup(f'<nav class="toc" aria-label="Sections">{links}</nav>')


def retitle(document: str, title: str) -> str:
    """A document made by :func:`page` with its ``<title>`` and heading replaced by ``title``."""
    import re

    text = escape(title)
    document = re.sub(r"<title>.*?</title>", lambda _: f"<title>{text}</title>", document, count=1, flags=re.S)
    return re.sub(r"<h1>.*?</h1>", lambda _: f"<h1>{text}</h1>", document, count=1, flags=re.S)
