"""The fleet executive report: one self-contained HTML page from a fleet's results dict
(``fleet-results.json``): the run, its headline figures, charts by provider, repository and
category, and the tables behind them.

Unknown figures (no cost, no durations, no tests) read "unknown" or "—", never zero; the
repository × provider grid adds up the counts of its cells before dividing, so a cell of one
test weighs one test. The same input always gives the same page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from harness.reports.html import (
    MISSING,
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

Entry = Mapping[str, Any]

OUTCOMES = (
    ("succeeded", "total_succeeded", "green"),
    ("failed", "total_failed", "vermillion"),
    ("timeout", "total_timeout", "orange"),
    ("skipped", "total_skipped", "grey"),
)
STATE_TONES = {"completed": "ok", "failed": "bad", "interrupted": "warn", "running": "warn",
               "skipped": "neutral", "pending": "neutral"}
COUNT_HEADERS = ["Tests", "Succeeded", "Failed", "Timeout", "Skipped"]


def _pct(v: float) -> str:
    return f"{v * 100:.1f}%"


def _rate(entry: Entry) -> tuple[float | None, float | None, float | None]:
    """(rate, low, high); all None when the entry has no tests."""
    total = entry.get("total_tests")
    if total == 0:
        return None, None, None
    rate = entry.get("success_rate")
    if rate is None and total and entry.get("total_succeeded") is not None:
        rate = entry["total_succeeded"] / total
    if rate is None:
        return None, None, None
    return rate, entry.get("success_rate_low"), entry.get("success_rate_high")


def _counts(entry: Entry) -> list[Any]:
    return [entry.get("total_tests"), *(entry.get(key) for _, key, _ in OUTCOMES)]


def _when(text: str | None) -> str | None:
    """An ISO timestamp as "2026-11-23 10:15:00 UTC" (the text as given when unparsable)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return str(text)
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ordered(first: Iterable[Any], then: Iterable[Any]) -> list[str]:
    """Names from ``first`` in order, then those only in ``then``, without repeats."""
    seen: dict[str, None] = {}
    for name in [*first, *then]:
        if name is not None:
            seen.setdefault(str(name), None)
    return list(seen)


def repo_provider_totals(cells: Iterable[Entry]) -> dict[tuple[str, str], tuple[int, int]]:
    """(repo_id, provider) -> (succeeded, total tests), summed over the cells of that pair."""
    totals: dict[tuple[str, str], tuple[int, int]] = {}
    for cell in cells:
        key = (str(cell.get("repo_id")), str(cell.get("provider")))
        succeeded, total = totals.get(key, (0, 0))
        totals[key] = (succeeded + (cell.get("total_succeeded") or 0), total + (cell.get("total_tests") or 0))
    return totals


def _latency(entry: Entry) -> dict[str, Any]:
    return {k: entry.get(f"{k}_duration_ms") for k in ("min", "p50", "p95", "p99", "max")}


# --- the parts of the page ---------------------------------------------------------------


def _run_facts(results: Entry) -> Markup:
    state = str(results.get("state") or "unknown")
    manifest = results.get("manifest_hash")
    facts: list[tuple[str, object]] = [
        ("Fleet", results.get("fleet_id") or MISSING),
        ("Run", results.get("run_id") or MISSING),
        ("State", badge(state, STATE_TONES.get(state, "neutral"))),
    ]
    if results.get("stopped_reason"):
        facts.append(("Stopped because", results["stopped_reason"]))
    facts += [
        ("Started", _when(results.get("started_at")) or MISSING),
        ("Completed", _when(results.get("completed_at")) or ("not yet" if state == "running" else MISSING)),
        ("Manifest", Markup(f'<code title="{escape(manifest)}">{escape(str(manifest)[:12])}</code>')
         if manifest else MISSING),
    ]
    if results.get("version"):
        facts.append(("Fleet file version", results["version"]))
    if results.get("description"):
        facts.append(("Description", results["description"]))
    return key_values(facts)


def _state_notice(results: Entry) -> str:
    state = results.get("state")
    reason = results.get("stopped_reason")
    because = f" Reason: {reason}." if reason else ""
    if state == "running":
        return paragraph("This run is still in progress: the figures cover the tests finished so far." + because,
                         cls="alert")
    if state == "interrupted":
        return paragraph("This run was interrupted: the figures cover the tests finished before it stopped."
                         + because, cls="alert")
    if state == "failed":
        return paragraph("This run failed: the figures cover the tests finished before it stopped." + because,
                         cls="alert alert-bad")
    return ""


def _headline(summary: Entry, repository_count: int) -> Markup:
    total = summary.get("total_tests") or 0
    rate, low, high = _rate({**summary, "total_tests": total})
    outcome_note = " · ".join(f"{fmt_int(summary.get(key), unknown='?')} {name}" for name, key, _ in OUTCOMES)
    p50, p95 = summary.get("p50_duration_ms"), summary.get("p95_duration_ms")
    extra = [f"{k} {fmt_ms(summary.get(f'{k}_duration_ms'))}" for k in ("p99", "avg")
             if summary.get(f"{k}_duration_ms") is not None]
    unpriced = summary.get("cost_unknown_tests") or 0
    if unpriced:
        cost_note = f"{fmt_int(unpriced)} tests of unknown cost not included"
    elif summary.get("avg_cost_per_repository") is not None:
        cost_note = f"{fmt_cost(summary['avg_cost_per_repository'])} per repository"
    else:
        cost_note = None
    avg_tokens = summary.get("avg_tokens_per_request")
    avg_tests = summary.get("avg_tests_per_repository")
    repos = summary.get("total_repositories")
    return stat_cards([
        ("Tests", fmt_int(total), outcome_note if total else "no tests ran"),
        ("Success rate", fmt_pct(rate, unknown="no tests"),
         f"95% interval {_pct(low)}–{_pct(high)}" if rate is not None and low is not None and high is not None
         else None),
        ("Latency p50 / p95", "unknown" if p50 is None and p95 is None else f"{fmt_ms(p50)} / {fmt_ms(p95)}",
         " · ".join(extra) or ("no durations recorded" if p50 is None and p95 is None else None)),
        ("Total cost", fmt_cost(summary.get("total_cost")), cost_note),
        ("Tokens", fmt_int(summary.get("total_tokens")),
         f"{fmt_int(avg_tokens)} per request on average" if avg_tokens is not None else None),
        ("Repositories", fmt_int(repos if repos is not None else repository_count),
         f"{avg_tests:.1f} tests each on average" if avg_tests is not None else None),
        ("Duration", fmt_ms(summary.get("total_duration_ms")), None),
    ])


def _rate_chart(entries: Sequence[Entry], name_key: str, title: str) -> str:
    items = [(str(e.get(name_key)), *_rate(e)) for e in entries]
    return figure(bar_chart(items, title=title, max_value=1.0, value_format=_pct),
                  caption="Bars: success rate; whiskers and brackets: 95% Wilson interval.")


def _latency_chart(entries: Sequence[Entry], name_key: str, title: str) -> str:
    items = [(str(e.get(name_key)), _latency(e)) for e in entries]
    known = [(label, stats) for label, stats in items if any(v is not None for v in stats.values())]
    unknown = [label for label, stats in items if all(v is None for v in stats.values())]
    parts = []
    if known:
        parts.append(figure(percentile_chart(known, title=title, value_format=fmt_ms)))
    if unknown:
        parts.append(paragraph("No durations recorded for: " + ", ".join(unknown) + ".", cls="note"))
    return "\n".join(parts)


def _providers(providers: Sequence[Entry]) -> str:
    if not providers:
        return paragraph("No providers in this run.", cls="note")
    mix = [(str(p.get("provider")), [p.get(key) or 0 for _, key, _ in OUTCOMES]) for p in providers]
    rows = [
        [p.get("provider"), p.get("repository_count"), *_counts(p), fmt_pct(*_rate(p), unknown=MISSING),
         fmt_ms(p.get("p50_duration_ms")), fmt_ms(p.get("p95_duration_ms")), fmt_ms(p.get("avg_duration_ms")),
         p.get("total_tokens"), fmt_cost(p.get("total_cost"))]
        for p in providers
    ]
    headers = ["Provider", "Repositories", *COUNT_HEADERS, "Success rate (95% interval)", "p50", "p95", "Average",
               "Tokens", "Cost"]
    return "\n".join([
        _rate_chart(providers, "provider", "Success rate by provider"),
        figure(stacked_bar_chart(mix, title="Outcome mix by provider", normalize=True,
                                 series=[(name, colour) for name, _, colour in OUTCOMES])),
        _latency_chart(providers, "provider", "Latency percentiles by provider"),
        table(headers, rows, numeric=headers[1:], caption="Providers, in manifest order."),
    ])


def _grid(repositories: Sequence[Entry], providers: Sequence[Entry], cells: Sequence[Entry]) -> str:
    if not cells:
        return paragraph("No cells yet: nothing to show by repository and provider.", cls="note")
    repos = _ordered((r.get("repo_id") for r in repositories), (c.get("repo_id") for c in cells))
    names = _ordered((p.get("provider") for p in providers), (c.get("provider") for c in cells))
    totals = repo_provider_totals(cells)
    values: list[list[float | None]] = []
    notes: list[list[str | None]] = []
    for repo in repos:
        values.append([])
        notes.append([])
        for name in names:
            succeeded, total = totals.get((repo, name), (0, 0))
            values[-1].append(succeeded / total if total else None)
            notes[-1].append(f"{succeeded:,}/{total:,}" if (repo, name) in totals else None)
    chart = heatmap(repos, names, values, title="Success rate by repository and provider", notes=notes)
    return figure(chart, caption="Each square adds up the succeeded and total tests of its cells "
                                 "(all profiles) before dividing; “—”: no tests.")


def _repositories(repositories: Sequence[Entry], providers: Sequence[Entry], cells: Sequence[Entry]) -> str:
    parts = [_grid(repositories, providers, cells)]
    if not repositories:
        parts.append(paragraph("No repositories in this run.", cls="note"))
        return "\n".join(parts)
    headers = ["Repository", "Adapter", "Source", *COUNT_HEADERS, "Success rate (95% interval)", "p50", "p95",
               "p99", "Tokens", "Cost"]
    rows = [
        [r.get("repo_id"), r.get("adapter"), r.get("source"), *_counts(r), fmt_pct(*_rate(r), unknown=MISSING),
         fmt_ms(r.get("p50_duration_ms")), fmt_ms(r.get("p95_duration_ms")), fmt_ms(r.get("p99_duration_ms")),
         r.get("total_tokens"), fmt_cost(r.get("total_cost"))]
        for r in repositories
    ]
    parts.append(_latency_chart(repositories, "repo_id", "Latency percentiles by repository"))
    parts.append(table(headers, rows, numeric=headers[3:], caption="Repositories, in manifest order."))
    return "\n".join(parts)


def _categories(categories: Sequence[Entry]) -> str:
    if not categories:
        return paragraph("No categories in this run.", cls="note")
    headers = ["Category", "Tests", "Succeeded", "Success rate (95% interval)", "Average duration"]
    rows = [
        [c.get("category"), c.get("total_tests"), c.get("total_succeeded"), fmt_pct(*_rate(c), unknown=MISSING),
         fmt_ms(c.get("avg_duration_ms"))]
        for c in categories
    ]
    return "\n".join([
        _rate_chart(categories, "category", "Success rate by category"),
        table(headers, rows, numeric=headers[1:], caption="Categories, by name."),
    ])


def _cells(cells: Sequence[Entry]) -> str:
    if not cells:
        return paragraph("No cells in this run.", cls="note")
    headers = ["Repository", "Provider", "Profile", "State", *COUNT_HEADERS, "Success rate", "p50", "p95",
               "Tokens", "Cost", "Source", "Results directory", "Error"]
    rows = []
    for c in cells:
        total, succeeded = c.get("total_tests"), c.get("total_succeeded")
        rate = succeeded / total if total and succeeded is not None else _rate(c)[0]
        state = str(c.get("state") or "unknown")
        results_dir = c.get("results_dir")
        profile = f"{c.get('profile')} ({c['kind']})" if c.get("kind") else c.get("profile")
        rows.append([
            c.get("repo_id"), c.get("provider"), profile,
            badge(state, STATE_TONES.get(state, "neutral")), *_counts(c), fmt_pct(rate, unknown=MISSING),
            fmt_ms(c.get("p50_duration_ms")), fmt_ms(c.get("p95_duration_ms")), c.get("total_tokens"),
            fmt_cost(c.get("total_cost")), c.get("source"),
            code(results_dir) if results_dir else None, c.get("error"),
        ])
    numeric = [*COUNT_HEADERS, "Success rate", "p50", "p95", "Tokens", "Cost"]
    return table(headers, rows, numeric=numeric, caption="One row per repository, provider and profile.")


def render_executive_report(results: Mapping[str, Any]) -> str:
    """The fleet executive report as a complete, self-contained HTML document."""
    summary = results.get("summary") or {}
    providers = list(results.get("providers") or [])
    repositories = list(results.get("repositories") or [])
    categories = list(results.get("categories") or [])
    cells = list(results.get("cells") or [])
    fleet_id = str(results.get("fleet_id") or "fleet")
    toc = "".join(f'<a href="#{key}">{label}</a>' for key, label in (
        ("run", "Run"), ("providers", "Providers"), ("repositories", "Repositories"),
        ("categories", "Categories"), ("cells", "Cells")))
    body = [
        f'<nav class="toc" aria-label="Sections">{toc}</nav>',
        _state_notice(results),
        section("Run", _run_facts(results), id="run"),
        _headline(summary, len(repositories)),
        section("Providers", _providers(providers), id="providers"),
        section("Repositories", _repositories(repositories, providers, cells), id="repositories"),
        section("Categories", _categories(categories), id="categories"),
        section("Cells", _cells(cells), id="cells"),
        f"<footer>Fleet {escape(fleet_id)}, run {escape(results.get('run_id') or MISSING)}. "
        "A self-contained page: no scripts, nothing loaded from the network.</footer>",
    ]
    return page(f"Fleet report: {fleet_id}", "\n".join(part for part in body if part),
                subtitle=str(results.get("run_id") or "") or None)
