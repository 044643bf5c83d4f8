"""Charts as standalone SVG strings, for inlining in HTML or saving as ``.svg`` files.

Every chart has ``role="img"`` with a ``<title>`` and a ``<desc>`` that states its figures,
scales with its ``viewBox`` (``width="100%"``), writes each value as text next to its mark,
and tells series apart by fill pattern as well as by colour (the Okabe–Ito palette, which
stays distinct under the common colour-vision deficiencies). Labels too long for their room
are cut with an ellipsis and keep the full text in a ``<title>`` child. No scripts, no fonts,
nothing fetched.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Callable, Mapping, Sequence

Number = float | int
Formatter = Callable[[float], str]

PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "grey": "#8C8C8C",
    "black": "#1F2328",
}
PATTERNS = ("solid", "diagonal", "dots", "cross", "horizontal", "vertical")
HEAT_RAMP = ("#EFF3FF", "#BDD7E7", "#6BAED6", "#3182BD", "#08519C")  # sequential, colour-blind safe

INK = "#1F2328"
MUTED = "#59636E"
GRID = "#D1D9E0"
FONT = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"
WIDTH = 760
PAD = 16
LABEL_W = 190
CHAR_W = 0.58  # average glyph width as a fraction of the font size


# --- helpers ----------------------------------------------------------------------------


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(x: float) -> str:
    """A coordinate, short and stable."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def number(value: float) -> str:
    """The default value text: "1,500", "812", "0.75"."""
    if float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _colour(key: str, index: int) -> str:
    if key in PALETTE:
        return PALETTE[key]
    if key.startswith("#") and len(key) in (4, 7):
        return key
    return list(PALETTE.values())[index % len(PALETTE)]


def _is_light(hex_colour: str) -> bool:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return 0.299 * r + 0.587 * g + 0.114 * b > 150


def _chart_id(kind: str, *parts: object) -> str:
    """An id prefix that is the same for the same chart and distinct between charts on a page."""
    return "c" + hashlib.sha1(repr((kind, parts)).encode()).hexdigest()[:10]


def _fit(text: str, max_px: float, size: float) -> tuple[str, bool]:
    limit = max(1, int(max_px / (size * CHAR_W)))
    if len(text) <= limit:
        return text, False
    return text[: max(1, limit - 1)].rstrip() + "…", True


def _text(x: float, y: float, text: str, *, size: float = 12, anchor: str = "start",
          max_px: float | None = None, fill: str = INK, weight: str | None = None,
          halo: bool = False) -> str:
    """A text element; cut to ``max_px`` with the full text in a ``<title>`` child."""
    shown, cut = _fit(text, max_px, size) if max_px else (text, False)
    attrs = f'x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" text-anchor="{anchor}" fill="{fill}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if halo:
        attrs += ' stroke="#FFFFFF" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'
    tip = f"<title>{_esc(text)}</title>" if cut else ""
    return f"<text {attrs}>{_esc(shown)}{tip}</text>"


def _pattern(pid: str, colour: str, kind: str) -> str:
    """A fill pattern: the colour with marks of one kind over it (contrasting with the colour)."""
    mark = INK if _is_light(colour) else "#FFFFFF"
    marks = {
        "diagonal": f'<path d="M-1,1 l2,-2 M0,8 l8,-8 M7,9 l2,-2" stroke="{mark}" stroke-width="1.6"/>',
        "dots": f'<circle cx="4" cy="4" r="1.6" fill="{mark}"/>',
        "cross": f'<path d="M0,0 L8,8 M8,0 L0,8" stroke="{mark}" stroke-width="1.1"/>',
        "horizontal": f'<path d="M0,4 L8,4" stroke="{mark}" stroke-width="1.6"/>',
        "vertical": f'<path d="M4,0 L4,8" stroke="{mark}" stroke-width="1.6"/>',
        "solid": "",
    }[kind]
    return (f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="8" height="8">'
            f'<rect width="8" height="8" fill="{colour}"/>{marks}</pattern>')


def _unknown_pattern(pid: str) -> str:
    return (f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="8" height="8">'
            f'<rect width="8" height="8" fill="#F3F4F6"/>'
            f'<path d="M-1,1 l2,-2 M0,8 l8,-8 M7,9 l2,-2" stroke="#B6BDC5" stroke-width="1.2"/></pattern>')


def _svg(pid: str, height: float, title: str, desc: str, defs: Sequence[str], body: Sequence[str],
         width: float = WIDTH) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'width="100%" preserveAspectRatio="xMinYMin meet" aria-labelledby="{pid}-t {pid}-d" '
        f'font-family="{FONT}" font-size="12">'
        f'<title id="{pid}-t">{_esc(title)}</title><desc id="{pid}-d">{_esc(desc)}</desc>'
    )
    defs_text = f"<defs>{''.join(defs)}</defs>" if defs else ""
    background = f'<rect width="{_n(width)}" height="{_n(height)}" fill="#FFFFFF"/>'
    heading = _text(PAD, 24, title, size=14, weight="600", max_px=width - 2 * PAD)
    return head + defs_text + background + heading + "".join(body) + "</svg>"


def _nice_scale(top: float, steps: int = 4) -> tuple[float, float]:
    """(axis maximum, tick step) for values up to ``top``: steps of 1, 2, 2.5 or 5 × 10^k."""
    if top <= 0 or not math.isfinite(top):
        return 1.0, 0.25
    raw = top / steps
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    return step * math.ceil(top / step - 1e-9), step


def _ticks(top: float, step: float) -> list[float]:
    count = int(round(top / step))
    return [i * step for i in range(count + 1)]


def _axis(x0: float, x1: float, y_label: float, y_top: float, y_bottom: float, top: float,
          step: float, fmt: Formatter) -> list[str]:
    """Tick labels above the plot and light vertical grid lines through it."""
    out = []
    for t in _ticks(top, step):
        x = x0 + (x1 - x0) * (t / top)
        dash = "" if t == 0 else ' stroke-dasharray="3 3"'
        out.append(f'<line x1="{_n(x)}" y1="{_n(y_top)}" x2="{_n(x)}" y2="{_n(y_bottom)}" '
                   f'stroke="{GRID}" stroke-width="1"{dash}/>')
        out.append(_text(x, y_label, fmt(t), size=11, anchor="middle", fill=MUTED))
    return out


def _empty(pid: str, title: str, message: str = "No data") -> str:
    return _svg(pid, 70, title, f"{title}: {message.lower()}.", [],
                [_text(PAD, 52, message, fill=MUTED)])


def _unknown_rect(pid: str, x: float, y: float, w: float, h: float) -> str:
    """The hatched box that stands where a value is unknown."""
    return (f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="url(#{pid}-unknown)" '
            f'stroke="#B6BDC5" stroke-dasharray="3 2"/>')


def _placeholder(pid: str, x: float, y: float, w: float, h: float) -> list[str]:
    return [_unknown_rect(pid, x, y, w, h), _text(x + 8, y + h / 2 + 4, "unknown", fill=MUTED, halo=True)]


# --- charts -----------------------------------------------------------------------------


def bar_chart(items: Sequence[tuple[str, Number | None, Number | None, Number | None]], *,
              title: str, unit: str = "", max_value: float | None = None,
              value_format: Formatter | None = None) -> str:
    """Horizontal bars of ``(label, value, low, high)``; low and high (both known) draw an
    interval whisker; a ``None`` value draws a hatched placeholder reading "unknown"."""
    fmt: Formatter = value_format or (lambda v: f"{number(v)}{unit}")
    pid = _chart_id("bar", title, tuple(items), unit, max_value)
    if not items:
        return _empty(pid, title)
    known = [v for _, value, low, high in items for v in (value, low, high) if v is not None]
    if max_value is not None and max_value > 0:
        top, step = float(max_value), max_value / 4
    else:
        top, step = _nice_scale(max(known, default=0))
    x0, x1 = PAD + LABEL_W + 10, WIDTH - 170
    row_h, bar_h, y_start = 30, 18, 56
    y_end = y_start + len(items) * row_h

    def x_of(v: float) -> float:
        return x0 + (x1 - x0) * min(max(v, 0.0), top) / top

    body = _axis(x0, x1, 44, y_start - 4, y_end, top, step, fmt)
    summary = []
    for i, (label, value, low, high) in enumerate(items):
        y = y_start + i * row_h + (row_h - bar_h) / 2
        mid = y + bar_h / 2
        body.append(_text(x0 - 10, mid + 4, str(label), anchor="end", max_px=LABEL_W))
        if value is None:
            body += _placeholder(pid, x0, y, x1 - x0, bar_h)
            summary.append(f"{label}: unknown")
            continue
        end = x_of(value)
        body.append(f'<rect x="{_n(x0)}" y="{_n(y)}" width="{_n(max(end - x0, 1))}" height="{_n(bar_h)}" '
                    f'fill="{PALETTE["blue"]}"/>')
        text, right = fmt(value), end
        if low is not None and high is not None:
            lx, hx = x_of(low), x_of(high)
            body.append(
                f'<path d="M{_n(lx)},{_n(mid)} H{_n(hx)} M{_n(lx)},{_n(y - 2)} V{_n(y + bar_h + 2)} '
                f'M{_n(hx)},{_n(y - 2)} V{_n(y + bar_h + 2)}" stroke="{INK}" stroke-width="1.5" fill="none"/>'
            )
            text += f" ({fmt(low)}–{fmt(high)})"
            right = max(right, hx)
        body.append(_text(right + 6, mid + 4, text, max_px=WIDTH - PAD - right - 6))
        summary.append(f"{label}: {text}")
    desc = f"{title}. " + "; ".join(summary) + "."
    return _svg(pid, y_end + 12, title, desc, [_unknown_pattern(f"{pid}-unknown")], body)


def _legend(pid: str, names: Sequence[str], y: float) -> tuple[list[str], float]:
    """Swatches with names, wrapping across the width; returns the elements and the next y."""
    out, x = [], PAD
    for i, name in enumerate(names):
        w = 14 + 6 + len(name) * 12 * CHAR_W + 18
        if x + w > WIDTH - PAD and x > PAD:
            x, y = PAD, y + 20
        out.append(f'<rect x="{_n(x)}" y="{_n(y - 11)}" width="14" height="14" fill="url(#{pid}-s{i})" '
                   f'stroke="{INK}" stroke-width="0.6"/>')
        out.append(_text(x + 20, y, name))
        x += w
    return out, y + 20


def stacked_bar_chart(items: Sequence[tuple[str, Sequence[Number | None]]], *, title: str,
                      series: Sequence[tuple[str, str]], normalize: bool = False,
                      value_format: Formatter | None = None) -> str:
    """Horizontal stacked bars of ``(label, [v1, v2, ...])``, one value per ``series`` entry
    ``(name, colour key)``. Each series has its own colour and fill pattern (see the legend);
    counts are written in the segments wide enough for them and all of them under each bar.
    ``normalize`` draws every bar at full width (the mix); otherwise lengths follow totals."""
    fmt: Formatter = value_format or number
    pid = _chart_id("stacked", title, tuple((label, tuple(v)) for label, v in items), tuple(series), normalize)
    if not items:
        return _empty(pid, title)
    names = [name for name, _ in series]
    defs = [_pattern(f"{pid}-s{i}", _colour(key, i), PATTERNS[i % len(PATTERNS)])
            for i, (_, key) in enumerate(series)]
    body, y_start = _legend(pid, names, 48)
    y_start += 2
    x0, x1 = PAD + LABEL_W + 10, WIDTH - 90
    row_h, bar_h = 44, 18
    totals = [sum(v or 0 for v in values) for _, values in items]
    top = max(totals, default=0) or 1
    summary = []
    for i, (label, values) in enumerate(items):
        y = y_start + i * row_h
        mid = y + bar_h / 2
        total = totals[i]
        body.append(_text(x0 - 10, mid + 4, str(label), anchor="end", max_px=LABEL_W))
        span = (x1 - x0) * (1 if normalize else total / top)
        parts = []
        if total <= 0:
            body.append(f'<rect x="{_n(x0)}" y="{_n(y)}" width="{_n(x1 - x0)}" height="{_n(bar_h)}" '
                        f'fill="none" stroke="{GRID}" stroke-dasharray="3 2"/>')
            body.append(_text(x0 + 8, mid + 4, "none", fill=MUTED))
        x = x0
        for j, raw in enumerate(values[: len(series)]):
            v = raw or 0
            if raw is not None:
                parts.append(f"{fmt(v)} {names[j]}")
            if v <= 0 or total <= 0:
                continue
            w = span * v / total
            body.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(bar_h)}" '
                        f'fill="url(#{pid}-s{j})" stroke="#FFFFFF" stroke-width="1">'
                        f"<title>{_esc(f'{label}: {fmt(v)} {names[j]}')}</title></rect>")
            text = fmt(v)
            if w >= len(text) * 11 * CHAR_W + 8:
                body.append(_text(x + w / 2, mid + 4, text, size=11, anchor="middle", halo=True))
            x += w
        body.append(_text(x0 + span + 6, mid + 4, fmt(total), fill=MUTED))
        breakdown = " · ".join(parts) if parts else "no values"
        body.append(_text(x0, y + bar_h + 14, breakdown, size=11, fill=MUTED, max_px=WIDTH - PAD - x0))
        summary.append(f"{label}: {breakdown} (total {fmt(total)})")
    desc = f"{title}. " + "; ".join(summary) + "."
    return _svg(pid, y_start + len(items) * row_h + 4, title, desc, defs, body)


def _heat_colour(v: float) -> str:
    v = min(max(v, 0.0), 1.0) * (len(HEAT_RAMP) - 1)
    i = min(int(v), len(HEAT_RAMP) - 2)
    t = v - i
    a, b = HEAT_RAMP[i].lstrip("#"), HEAT_RAMP[i + 1].lstrip("#")
    mix = (round(int(a[k:k + 2], 16) * (1 - t) + int(b[k:k + 2], 16) * t) for k in (0, 2, 4))
    return "#" + "".join(f"{c:02X}" for c in mix)


def heatmap(row_labels: Sequence[str], col_labels: Sequence[str],
            values: Sequence[Sequence[float | None]], *, title: str,
            value_format: Formatter | None = None,
            notes: Sequence[Sequence[str | None]] | None = None) -> str:
    """A grid of ``values[r][c]`` in 0..1 shaded light to dark; every cell writes its value
    (and its ``notes[r][c]`` under it, when given); ``None`` is hatched and reads "—"."""
    fmt: Formatter = value_format or (lambda v: f"{v * 100:.0f}%")
    pid = _chart_id("heat", title, tuple(row_labels), tuple(col_labels),
                    tuple(tuple(r) for r in values), tuple(tuple(r) for r in notes or ()))
    if not row_labels or not col_labels:
        return _empty(pid, title)
    x0 = PAD + LABEL_W + 10
    col_w = max(96, min(200, (WIDTH - x0 - PAD) // len(col_labels)))
    cell_h = 40 if notes else 30
    width = max(WIDTH, x0 + len(col_labels) * col_w + PAD)
    y_head, y_start = 50, 60
    body = [_text(x0 + (c + 0.5) * col_w, y_head, str(label), anchor="middle", max_px=col_w - 8,
                  weight="600") for c, label in enumerate(col_labels)]
    summary = []
    for r, label in enumerate(row_labels):
        y = y_start + r * cell_h
        body.append(_text(x0 - 10, y + cell_h / 2 + 4, str(label), anchor="end", max_px=LABEL_W))
        for c, col in enumerate(col_labels):
            v = values[r][c] if r < len(values) and c < len(values[r]) else None
            note = notes[r][c] if notes and r < len(notes) and c < len(notes[r]) else None
            x = x0 + c * col_w
            fill = f"url(#{pid}-unknown)" if v is None else _heat_colour(v)
            ink = "#FFFFFF" if v is not None and v >= 0.55 else INK
            body.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{col_w}" height="{cell_h}" fill="{fill}" '
                        f'stroke="#FFFFFF" stroke-width="2"/>')
            text = "—" if v is None else fmt(v)
            cy = y + (cell_h / 2 - 3 if note else cell_h / 2 + 4)
            body.append(_text(x + col_w / 2, cy, text, anchor="middle", fill=ink, weight="600"))
            if note:
                body.append(_text(x + col_w / 2, cy + 15, note, size=10, anchor="middle", fill=ink,
                                  max_px=col_w - 6))
            summary.append(f"{label} × {col}: {text}" + (f" ({note})" if note else ""))
    y_legend = y_start + len(row_labels) * cell_h + 22
    x = float(x0)
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(f'<rect x="{_n(x)}" y="{_n(y_legend - 11)}" width="18" height="14" '
                    f'fill="{_heat_colour(t)}" stroke="{GRID}"/>')
        body.append(_text(x + 22, y_legend, fmt(t), size=11, fill=MUTED))
        x += 30 + len(fmt(t)) * 11 * CHAR_W
    body.append(f'<rect x="{_n(x)}" y="{_n(y_legend - 11)}" width="18" height="14" '
                f'fill="url(#{pid}-unknown)" stroke="{GRID}"/>')
    body.append(_text(x + 22, y_legend, "— no value", size=11, fill=MUTED))
    desc = f"{title}. " + "; ".join(summary) + "."
    return _svg(pid, y_legend + 12, title, desc, [_unknown_pattern(f"{pid}-unknown")], body, width)


PERCENTILE_KEYS = ("min", "p50", "p95", "p99", "max")


def percentile_chart(items: Sequence[tuple[str, Mapping[str, Number | None]]], *, title: str,
                     value_format: Formatter | None = None) -> str:
    """Range bars of ``(label, {"min", "p50", "p95", "p99", "max"})``: a min–max line with end
    caps, a p50–p95 box with a heavy p50 edge, a p99 diamond; the known values are written
    under each bar. Missing keys are left out; a row with none reads "unknown"."""
    fmt: Formatter = value_format or number
    pid = _chart_id("pct", title, tuple((label, tuple(sorted(s.items()))) for label, s in items))
    if not items:
        return _empty(pid, title)
    known = [s[k] for _, s in items for k in PERCENTILE_KEYS if s.get(k) is not None]
    top, step = _nice_scale(max(known, default=0))
    x0, x1 = PAD + LABEL_W + 10, WIDTH - 40
    blue, sky, red = PALETTE["blue"], PALETTE["sky"], PALETTE["vermillion"]

    def x_of(v: float) -> float:
        return x0 + (x1 - x0) * min(max(v, 0.0), top) / top

    def diamond(x: float, y: float, r: float = 5.5) -> str:
        return (f'<path d="M{_n(x)},{_n(y - r)} L{_n(x + r)},{_n(y)} L{_n(x)},{_n(y + r)} '
                f'L{_n(x - r)},{_n(y)} Z" fill="{red}" stroke="#FFFFFF" stroke-width="1"/>')

    # The key: what each mark means, drawn with the marks themselves.
    ky = 46
    body = [
        f'<path d="M{PAD},{ky - 4} h34 M{PAD},{ky - 9} v10 M{PAD + 34},{ky - 9} v10" stroke="{MUTED}" '
        f'stroke-width="2" fill="none"/>',
        _text(PAD + 40, ky, "min–max"),
        f'<rect x="{PAD + 110}" y="{ky - 11}" width="30" height="14" fill="{sky}" stroke="{blue}"/>'
        f'<line x1="{PAD + 110}" y1="{ky - 11}" x2="{PAD + 110}" y2="{ky + 3}" stroke="{INK}" stroke-width="3"/>',
        _text(PAD + 146, ky, "p50–p95 (heavy edge: p50)"),
        diamond(PAD + 330, ky - 4),
        _text(PAD + 342, ky, "p99"),
    ]
    y_start, row_h, bar_h = 84, 46, 16
    body += _axis(x0, x1, y_start - 10, y_start - 4, y_start + len(items) * row_h - 12, top, step, fmt)
    summary = []
    for i, (label, stats) in enumerate(items):
        y = y_start + i * row_h
        mid = y + bar_h / 2
        s = {k: stats.get(k) for k in PERCENTILE_KEYS}
        body.append(_text(x0 - 10, mid + 4, str(label), anchor="end", max_px=LABEL_W))
        if all(v is None for v in s.values()):
            body += _placeholder(pid, x0, y, x1 - x0, bar_h)
            summary.append(f"{label}: unknown")
            continue
        if s["min"] is not None and s["max"] is not None:
            a, b = x_of(s["min"]), x_of(s["max"])
            body.append(f'<path d="M{_n(a)},{_n(mid)} H{_n(b)} M{_n(a)},{_n(y)} V{_n(y + bar_h)} '
                        f'M{_n(b)},{_n(y)} V{_n(y + bar_h)}" stroke="{MUTED}" stroke-width="2" fill="none"/>')
        if s["p50"] is not None and s["p95"] is not None:
            a, b = x_of(s["p50"]), x_of(s["p95"])
            body.append(f'<rect x="{_n(a)}" y="{_n(y + 1)}" width="{_n(max(b - a, 1))}" height="{bar_h - 2}" '
                        f'fill="{sky}" stroke="{blue}"/>')
        if s["p50"] is not None:
            a = x_of(s["p50"])
            body.append(f'<line x1="{_n(a)}" y1="{_n(y - 1)}" x2="{_n(a)}" y2="{_n(y + bar_h + 1)}" '
                        f'stroke="{INK}" stroke-width="3"/>')
        if s["p99"] is not None:
            body.append(diamond(x_of(s["p99"]), mid))
        text = " · ".join(f"{k} {fmt(v)}" for k, v in s.items() if v is not None)
        body.append(_text(x0, y + bar_h + 14, text, size=11, fill=MUTED, max_px=WIDTH - PAD - x0))
        summary.append(f"{label}: {text}")
    desc = f"{title}. " + "; ".join(summary) + "."
    return _svg(pid, y_start + len(items) * row_h, title, desc, [_unknown_pattern(f"{pid}-unknown")], body)


def _signed(fmt: Formatter) -> Formatter:
    """``fmt`` with an explicit sign: "+0.25", "−0.25" (a true minus), "0"."""
    def signed(v: float) -> str:
        if v > 0:
            return "+" + fmt(v)
        if v < 0:
            return "−" + fmt(-v)
        return fmt(0.0)
    return signed


def delta_chart(items: Sequence[tuple[str, Number | None, Number | None, Number | None]], *, title: str,
                value_format: Formatter | None = None, tick_format: Formatter | None = None,
                positive: str = "A higher", negative: str = "B higher", missing: str = "unknown") -> str:
    """Horizontal bars of differences ``(label, value, low, high)`` drawn from a zero line, to
    the right when positive (named ``positive`` in the legend) and to the left when negative
    (``negative``, another colour and a hatched fill). Low and high (both known) draw an
    interval whisker that may cross zero; the value and its interval are written in a column
    on the right, with their signs (``tick_format`` writes the axis, default compact numbers).
    A ``None`` value draws a hatched placeholder reading ``missing``."""
    base: Formatter = value_format or number
    fmt = _signed(base)
    tick = _signed(tick_format or number)
    pid = _chart_id("delta", title, tuple(items), positive, negative, missing)
    if not items:
        return _empty(pid, title)

    def finite(v: Number | None) -> float | None:
        return float(v) if v is not None and math.isfinite(v) else None

    rows = [(label, finite(v), finite(lo), finite(hi)) for label, v, lo, hi in items]
    known = [abs(v) for _, value, low, high in rows for v in (value, low, high) if v is not None]
    top, step = _nice_scale(max(known, default=0))
    x0, x1 = PAD + LABEL_W + 10, WIDTH - 200
    zero = (x0 + x1) / 2
    colours = (PALETTE["blue"], PALETTE["vermillion"])
    defs = [_pattern(f"{pid}-pos", colours[0], "solid"), _pattern(f"{pid}-neg", colours[1], "diagonal"),
            _unknown_pattern(f"{pid}-unknown")]

    def x_of(v: float) -> float:
        return zero + (x1 - zero) * max(-top, min(top, v)) / top

    # The legend: what each side of the zero line means, and the whisker.
    ky = 46
    body = [
        f'<rect x="{PAD}" y="{ky - 11}" width="14" height="14" fill="url(#{pid}-pos)" stroke="{INK}" '
        f'stroke-width="0.6"/>',
        _text(PAD + 20, ky, positive),
    ]
    x = PAD + 20 + len(positive) * 12 * CHAR_W + 18
    body += [
        f'<rect x="{_n(x)}" y="{ky - 11}" width="14" height="14" fill="url(#{pid}-neg)" stroke="{INK}" '
        f'stroke-width="0.6"/>',
        _text(x + 20, ky, negative),
    ]
    x += 20 + len(negative) * 12 * CHAR_W + 18
    body += [
        f'<path d="M{_n(x)},{ky - 4} h30 M{_n(x)},{ky - 10} v12 M{_n(x + 30)},{ky - 10} v12" stroke="{INK}" '
        f'stroke-width="1.5" fill="none"/>',
        _text(x + 36, ky, "interval"),
    ]
    row_h, bar_h, y_start = 30, 18, 86
    y_end = y_start + len(rows) * row_h
    count = int(round(top / step))
    for i in range(-count, count + 1):
        t = i * step
        tx = x_of(t)
        dash = "" if i == 0 else ' stroke-dasharray="3 3"'
        body.append(f'<line x1="{_n(tx)}" y1="{y_start - 4}" x2="{_n(tx)}" y2="{_n(y_end)}" stroke="{GRID}" '
                    f'stroke-width="1"{dash}/>')
        body.append(_text(tx, y_start - 12, tick(t), size=11, anchor="middle", fill=MUTED))
    summary = []
    for i, (label, value, low, high) in enumerate(rows):
        y = y_start + i * row_h + (row_h - bar_h) / 2
        mid = y + bar_h / 2
        body.append(_text(x0 - 10, mid + 4, str(label), anchor="end", max_px=LABEL_W))
        if value is None:
            body.append(_unknown_rect(pid, x0, y, x1 - x0, bar_h))
            body.append(_text(x1 + 8, mid + 4, missing, fill=MUTED))
            summary.append(f"{label}: {missing}")
            continue
        end = x_of(value)
        left, width = min(zero, end), abs(end - zero)
        fill = f"url(#{pid}-pos)" if value >= 0 else f"url(#{pid}-neg)"
        body.append(f'<rect x="{_n(left)}" y="{_n(y)}" width="{_n(max(width, 1))}" height="{_n(bar_h)}" '
                    f'fill="{fill}" stroke="{INK}" stroke-width="0.4"/>')
        text = fmt(value)
        if low is not None and high is not None:
            lx, hx = x_of(min(low, high)), x_of(max(low, high))
            body.append(
                f'<path d="M{_n(lx)},{_n(mid)} H{_n(hx)} M{_n(lx)},{_n(y - 2)} V{_n(y + bar_h + 2)} '
                f'M{_n(hx)},{_n(y - 2)} V{_n(y + bar_h + 2)}" stroke="{INK}" stroke-width="1.5" fill="none"/>'
            )
            text += f" ({fmt(min(low, high))} to {fmt(max(low, high))})"
        body.append(_text(x1 + 8, mid + 4, text, max_px=WIDTH - PAD - x1 - 8))
        summary.append(f"{label}: {text}")
    body.append(f'<line x1="{_n(zero)}" y1="{y_start - 4}" x2="{_n(zero)}" y2="{_n(y_end)}" stroke="{INK}" '
                f'stroke-width="1.5"/>')
    desc = f"{title}. " + "; ".join(summary) + "."
    return _svg(pid, y_end + 12, title, desc, defs, body)
