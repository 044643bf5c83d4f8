"""The comparison report: ``bench compare A B`` as one self-contained HTML page.

:func:`collect_comparison` asks the store's compare route (``GET /api/compare``, the code of
:mod:`worker.analysis.compare` that ``bench compare`` runs) with the same parameters as
``bench compare``, so the page and the terminal give the same figures and verdict. The route
states each scenario's difference and Welch p-value but not its interval; to draw one,
the runs of both sides are read once more (``GET /api/analysis/runs`` with the filters the
route echoed), paired the way the route pairs them, and each scenario's Welch interval (at
1 - alpha, the test behind the row's p) is computed here. A scenario whose recomputed
difference does not match the route's gets no interval rather than a wrong one.

:func:`render_compare_report` draws the page: the sides, the verdict, every metric with its
interval, test, p and power figures, the differences by scenario as a chart with interval
whiskers and as a table, and what was refused or noted.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from harness.reports.html import (
    MISSING,
    Markup,
    badge,
    escape,
    figure,
    fmt_number,
    fmt_p,
    key_values,
    page,
    paragraph,
    section,
    stat_cards,
    table,
    toc,
)
from harness.reports.svg import delta_chart
from worker.analysis import stats
from worker.analysis.compare import metric_value, split_counted, tier_label

Entry = Mapping[str, Any]

VERDICT_TONES = {"A better": "ok", "B better": "ok", "no detectable difference": "neutral",
                 "not enough runs": "warn", "not comparable": "bad"}
CHARTED_METRICS = ("score", "success")


# --- collecting -------------------------------------------------------------------------


def compare_query(side_a: str, side_b: str, *, alpha: float = 0.05, allow_mixed: bool = False,
                  include_cached: bool = False) -> dict[str, Any]:
    """The query of ``GET /api/compare``, as ``bench compare`` sends it."""
    return {"a": side_a, "b": side_b, "allowMixed": "true" if allow_mixed else None,
            "includeCached": "true" if include_cached else None, "alpha": str(alpha)}


def _cells(runs: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """One run per cell (suite, scenario, tier, iteration), the latest when a cell ran twice;
    runs without an iteration are numbered in start order within their scenario and tier
    (the pairing of :func:`worker.analysis.compare.compare_runs`)."""
    order: dict[tuple[str, ...], int] = defaultdict(int)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for run in sorted(runs, key=lambda r: (str(r.get("startedAt") or ""), str(r.get("runId")))):
        base = (str(run.get("suite")), str(run.get("scenario")), tier_label(run))
        meta = run.get("metadata") if isinstance(run.get("metadata"), dict) else {}
        iteration = meta.get("iteration")
        if isinstance(iteration, int) and not isinstance(iteration, bool):
            key = (*base, iteration)
        else:
            key = (*base, f"#{order[base]}")
            order[base] += 1
        out[key] = run
    return out


def scenario_intervals(a_runs: Sequence[dict[str, Any]], b_runs: Sequence[dict[str, Any]],
                       rows: Sequence[Entry], *, alpha: float = 0.05,
                       include_cached: bool = False) -> dict[str, list[float]]:
    """scenario -> [low, high]: the Welch interval of A - B on the score, at 1 - alpha, for
    each row of the route's ``scenarios`` whose pairs and difference this pairing reproduces."""
    a_cells = _cells(split_counted(a_runs, include_cached)[0])
    b_cells = _cells(split_counted(b_runs, include_cached)[0])
    groups: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for key in set(a_cells) & set(b_cells):
        name = f"{key[0]}/{key[1]}"
        x, y = metric_value(a_cells[key], "score"), metric_value(b_cells[key], "score")
        if x is not None and y is not None:
            groups[name][0].append(x)
            groups[name][1].append(y)
    out: dict[str, list[float]] = {}
    for row in rows:
        name = str(row.get("scenario"))
        a, b = groups.get(name, ([], []))
        if len(a) != row.get("pairs") or len(a) < 2 or len(b) < 2:
            continue
        difference = (stats.mean(a) or 0.0) - (stats.mean(b) or 0.0)
        if row.get("difference") is None or abs(difference - row["difference"]) > 1e-5:
            continue
        test = stats.welch_t(a, b, level=1 - alpha)
        if stats.is_degenerate(test) or test.ci_low is None or test.ci_high is None \
                or not (math.isfinite(test.ci_low) and math.isfinite(test.ci_high)):
            continue
        out[name] = [test.ci_low, test.ci_high]
    return out


def collect_comparison(client: Any, side_a: str, side_b: str, *, alpha: float = 0.05, allow_mixed: bool = False,
                       include_cached: bool = False) -> dict[str, Any]:
    """Everything the comparison report shows, read through ``client`` (a results client with
    the analysis routes). A side that matches no runs or cannot be read raises the client's
    error (``ResultsError``) with the store's message."""
    result = client.analysis("/api/compare", compare_query(side_a, side_b, alpha=alpha, allow_mixed=allow_mixed,
                                                           include_cached=include_cached))
    intervals: dict[str, list[float]] = {}
    filters = result.get("filters") or {}
    rows = result.get("scenarios") or []
    if rows and filters.get("a") is not None and filters.get("b") is not None:
        loaded = [client.analysis("/api/analysis/runs", filters[side]) for side in ("a", "b")]
        if not any(answer.get("truncated") for answer in loaded):
            intervals = scenario_intervals(loaded[0].get("runs") or [], loaded[1].get("runs") or [], rows,
                                           alpha=float(result.get("alpha") or alpha), include_cached=include_cached)
    return {"a": side_a, "b": side_b, "result": result, "scenario_intervals": intervals}


# --- rendering --------------------------------------------------------------------------




def _interval(iv: Sequence[float] | None, digits: int = 3) -> str:
    return MISSING if not iv or iv[0] is None or iv[1] is None else f"[{fmt_number(iv[0], digits)}, {fmt_number(iv[1], digits)}]"


def _verdict(verdict: str) -> Markup:
    return badge(verdict, VERDICT_TONES.get(verdict, "neutral"))


def _sides(result: Entry) -> str:
    sides = result.get("sides") or []
    headers = ["Side", "Selection", "Runs", "Counted", "Left out", "Agents", "Models", "Specialists", "Batches"]
    rows = []
    for name, side in zip(("A", "B"), sides):
        excluded = ", ".join(f"{n} {reason}" for reason, n in (side.get("excluded") or {}).items()) or "none"
        rows.append([name, side.get("label"), side.get("runs"), side.get("counted"), excluded,
                     ", ".join(side.get("agents") or []) or None, ", ".join(side.get("models") or []) or None,
                     ", ".join(side.get("specialists") or []) or None, ", ".join(side.get("batches") or []) or None])
    cells = result.get("cells") or {}
    facts = key_values([
        ("Paired cells", f"{cells.get('paired', 0):,}"),
        ("Only in A", f"{cells.get('onlyA', 0):,}"),
        ("Only in B", f"{cells.get('onlyB', 0):,}"),
        ("Confidence level", f"{float(result.get('confidenceLevel') or 0.95) * 100:g}%"),
    ])
    return table(headers, rows, numeric=["Runs", "Counted"],
                 caption="A cell is (suite, scenario, tier, iteration); only cells both sides ran are "
                         "compared.") + facts


def _headline(result: Entry) -> Markup:
    metrics = {m.get("metric"): m for m in result.get("metrics") or []}
    score = metrics.get("score") or {}
    success = metrics.get("success") or {}
    cells = result.get("cells") or {}
    level = f"{float(result.get('confidenceLevel') or 0.95) * 100:g}%"
    return stat_cards([
        ("Score A − B", fmt_number(score.get("difference")),
         f"{level} interval {_interval(score.get('ci'))}" if score.get("ci") else None),
        ("p (score)", fmt_p(score.get("p")), score.get("test")),
        ("Mean score", f"{fmt_number(score.get('meanA'))} vs {fmt_number(score.get('meanB'))}", "A vs B"),
        ("Success rate A − B", fmt_number(success.get("difference")), success.get("verdict")),
        ("Paired cells", f"{cells.get('paired', 0):,}",
         f"in {score['clusters']} scenario{'' if score['clusters'] == 1 else 's'}" if score.get("clusters") else None),
    ])


def _metrics(result: Entry) -> str:
    metrics = result.get("metrics") or []
    if not metrics:
        return paragraph("No metric could be compared.", cls="note")
    level = f"{float(result.get('confidenceLevel') or 0.95) * 100:g}%"
    charted = [m for m in metrics if m.get("metric") in CHARTED_METRICS]
    parts = []
    if charted:
        items = [(str(m.get("label")), m.get("difference") if m.get("pairs", 0) >= 1 else None,
                  *(m.get("ci") or (None, None))) for m in charted]
        parts.append(figure(delta_chart(items, title="Score and success rate: A − B", missing="not enough runs",
                                        value_format=lambda v: f"{v:.3f}"),
                            caption=f"Bars: mean difference on the paired cells; whiskers: {level} interval."))
    headers = ["Metric", "Pairs", "Mean A", "Mean B", "A − B", f"{level} interval", "Test", "p", "d_z", "MDE",
               "Pairs needed", "Verdict"]
    rows = [[m.get("label"), m.get("pairs"), fmt_number(m.get("meanA")), fmt_number(m.get("meanB")), fmt_number(m.get("difference")),
             _interval(m.get("ci")), m.get("test"), fmt_p(m.get("p")), fmt_number(m.get("effectSize"), 2), fmt_number(m.get("mde")),
             m.get("pairsNeeded"), _verdict(str(m.get("verdict")))] for m in metrics]
    parts.append(table(headers, rows, numeric=headers[1:6] + headers[7:11],
                       caption="Higher is better for score and success rate, lower for the others."))
    why = [(str(m.get("label")), m.get("why"), m.get("notes") or []) for m in metrics if m.get("why") or m.get("notes")]
    if why:
        items = "".join(
            f"<li><strong>{escape(label)}</strong>: "
            + escape("; ".join(str(part).rstrip(".") for part in [text, *notes] if part) + ".") + "</li>"
            for label, text, notes in why)
        parts.append(f'<h3>Why these tests</h3>\n<ul class="note">{items}</ul>')
    return "\n".join(parts)


def _scenarios(result: Entry, intervals: Mapping[str, Sequence[float]]) -> str:
    rows = result.get("scenarios") or []
    if not rows:
        return paragraph("No scenario has paired cells.", cls="note")
    alpha = float(result.get("alpha") or 0.05)
    level = f"{(1 - alpha) * 100:g}%"
    items = [(str(r.get("scenario")), r.get("difference"), *(intervals.get(str(r.get("scenario"))) or (None, None)))
             for r in rows]
    chart = delta_chart(items, title="Score by scenario: A − B", value_format=lambda v: f"{v:.3f}")
    headers = ["Scenario", "Pairs", "Mean A", "Mean B", "A − B", f"{level} interval (Welch)", "p", "p (Holm)",
               "Winner", "Note"]
    body = [[r.get("scenario"), r.get("pairs"), fmt_number(r.get("meanA")), fmt_number(r.get("meanB")), fmt_number(r.get("difference")),
             _interval(intervals.get(str(r.get("scenario")))), fmt_p(r.get("p")), fmt_p(r.get("pHolm")),
             r.get("winner") or "none", r.get("note")] for r in rows]
    return "\n".join([
        figure(chart, caption=f"Bars: mean score of A's runs minus B's on the scenario's paired cells; whiskers: "
                              f"{level} Welch interval (none with fewer than two repeats a side or no variation)."),
        table(headers, body, numeric=headers[1:8],
              caption=f"Welch's test of A's repeats against B's in each scenario; a winner only when the "
                      f"Holm-corrected p is below {alpha:g}."),
    ])


def _configuration(result: Entry) -> str:
    config = result.get("configuration") or {}
    parts = config.get("differingParts") or []
    return key_values([
        ("Config parts that differ", ", ".join(parts) or "none"),
        ("Pairs differing beyond the compared factor", f"{config.get('pairsBeyondFactor', 0):,}"),
        ("Pairs stored without config parts", f"{config.get('pairsWithoutParts', 0):,}"),
    ])


def render_compare_report(data: Mapping[str, Any], *, title: str | None = None) -> str:
    """The comparison report as a complete, self-contained HTML document."""
    result = data.get("result") or {}
    a, b = str(data.get("a") or "A"), str(data.get("b") or "B")
    notices = [paragraph(f"Refused: {reason}", cls="alert alert-bad") for reason in result.get("refused") or []]
    notices += [paragraph(f"Note: {note}", cls="alert") for note in result.get("notes") or []]
    verdict = str(result.get("verdict") or MISSING)
    banner = Markup(f'<p class="verdict" style="font-size: 1.15rem; font-weight: 600;">Verdict (score): '
                    f"{_verdict(verdict)}</p>")
    body = [
        toc([("sides", "Sides"), ("metrics", "Metrics"), ("scenarios", "By scenario"),
             ("configuration", "Configuration")]),
        banner,
        *notices,
        _headline(result),
        section("Sides", _sides(result), id="sides"),
        section("Metrics on the paired cells", _metrics(result), id="metrics"),
        section("By scenario", _scenarios(result, data.get("scenario_intervals") or {}), id="scenarios"),
        section("Configuration", _configuration(result), id="configuration"),
        f"<footer>A = {escape(a)}, B = {escape(b)}. The figures of bench compare; a self-contained page: no "
        "scripts, nothing loaded from the network.</footer>",
    ]
    return page(title or f"Comparison: {a} vs {b}", "\n".join(str(part) for part in body if part),
                subtitle=f"A = {a} · B = {b} · verdict: {verdict}")
