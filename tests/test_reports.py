"""harness.reports: pages that parse with every element closed and reach for nothing outside,
charts that are accessible SVG with their values as text, unknowns that read "unknown" (never
"$0.00"), escaping, and the fleet executive report on full, empty, running and failed runs,
with a repository × provider grid that adds up counts instead of averaging rates."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET

import pytest

from harness.reports import html as H
from harness.reports import svg as S
from harness.reports.fleet import render_executive_report, repo_provider_totals
from support.reports import NS, check_svg, external_references, parse, svg_text, svgs

OPENAI, CLAUDE = "openai:gpt-4o-mini", "anthropic:claude-sonnet"


def _counts(total: int, succeeded: int, failed: int, timeout: int, skipped: int) -> dict:
    return {"total_tests": total, "total_succeeded": succeeded, "total_failed": failed,
            "total_timeout": timeout, "total_skipped": skipped}


def _cell(repo: str, provider: str, profile: str, succeeded: int, total: int, **extra) -> dict:
    return {"repo_id": repo, "provider": provider, "profile": profile, "kind": "dataset",
            "source": f"{profile} (built-in)", "state": "completed", "error": None,
            **_counts(total, succeeded, total - succeeded, 0, 0), "success_rate": succeeded / total,
            "p50_duration_ms": 500.0, "p95_duration_ms": 900.0, "total_tokens": 100 * total,
            "total_cost": 0.001, "results_dir": f"{repo}/{provider.replace(':', '_')}/{profile}", **extra}


RESULTS = {
    "fleet_id": "demo-fleet",
    "run_id": "demo-fleet-20261123T101500Z-1a2b3c4d",
    "version": "1.0",
    "description": "Two providers on three repositories",
    "manifest_hash": "0123456789abcdef" * 4,
    "state": "completed",
    "stopped_reason": None,
    "started_at": "2026-11-23T10:15:00.000Z",
    "completed_at": "2026-11-23T10:16:01.000Z",
    "summary": {
        "total_repositories": 3, **_counts(120, 90, 20, 5, 5), "success_rate": 0.75,
        "success_rate_low": 0.671, "success_rate_high": 0.82, "avg_duration_ms": 812.4,
        "p50_duration_ms": 700.0, "p95_duration_ms": 1500.0, "p99_duration_ms": 2100.0,
        "min_duration_ms": 120.0, "max_duration_ms": 2500.0, "total_tokens": 52000,
        "avg_tokens_per_request": 433.3, "total_cost": None, "cost_unknown_tests": 60,
        "avg_cost_per_repository": None, "avg_tests_per_repository": 40.0, "total_duration_ms": 61000,
    },
    "providers": [
        {"provider": OPENAI, "repository_count": 3, **_counts(60, 50, 8, 1, 1), "success_rate": 50 / 60,
         "success_rate_low": 0.72, "success_rate_high": 0.9, "avg_duration_ms": 800.0,
         "p50_duration_ms": 700.0, "p95_duration_ms": 1400.0, "total_tokens": 17000, "total_cost": 0.004},
        {"provider": CLAUDE, "repository_count": 3, **_counts(60, 40, 12, 4, 4), "success_rate": 40 / 60,
         "success_rate_low": 0.54, "success_rate_high": 0.77, "avg_duration_ms": None,
         "p50_duration_ms": None, "p95_duration_ms": None, "total_tokens": 35000, "total_cost": None},
    ],
    "repositories": [
        {"repo_id": "api", "adapter": "native", "source": "/src/api", **_counts(40, 30, 8, 1, 1),
         "success_rate": 0.75, "success_rate_low": 0.6, "success_rate_high": 0.86, "avg_duration_ms": 800.0,
         "p50_duration_ms": 700.0, "p95_duration_ms": 1400.0, "p99_duration_ms": 2000.0,
         "min_duration_ms": 100.0, "max_duration_ms": 2300.0, "total_tokens": 20000, "total_cost": 0.003},
        {"repo_id": "<script>alert(1)</script>", "adapter": "native", "source": "https://example.com/x.git",
         **_counts(0, 0, 0, 0, 0), "success_rate": None, "success_rate_low": None, "success_rate_high": None,
         "avg_duration_ms": None, "p50_duration_ms": None, "p95_duration_ms": None, "p99_duration_ms": None,
         "min_duration_ms": None, "max_duration_ms": None, "total_tokens": 0, "total_cost": None},
    ],
    "categories": [
        {"category": "coding", "total_tests": 30, "total_succeeded": 20, "success_rate": 20 / 30,
         "success_rate_low": 0.49, "success_rate_high": 0.81, "avg_duration_ms": 900.0},
    ],
    "cells": [
        # api × openai: 1/1 and 1/9. Summed: 2/10 = 20%; the mean of the rates would be 55.6%.
        _cell("api", OPENAI, "quick", 1, 1),
        _cell("api", OPENAI, "coding", 1, 9, state="failed", error="runner crashed: <exit 3>"),
        _cell("api", CLAUDE, "coding", 3, 4, total_cost=None),
    ],
}

CHART_TITLES = {
    "Success rate by provider", "Outcome mix by provider", "Latency percentiles by provider",
    "Success rate by repository and provider", "Latency percentiles by repository", "Success rate by category",
}


@pytest.fixture(scope="module")
def report() -> str:
    return render_executive_report(RESULTS)


# --- html -------------------------------------------------------------------------------


def test_a_page_is_a_complete_document_with_screen_phone_and_print_styles():
    document = H.page("Title & more", "<p>body</p>", subtitle="sub <x>")
    parsed = parse(document)
    assert parsed.doctype and parsed.doctype.lower() == "doctype html"
    assert {"charset": "utf-8"} in parsed.tags("meta")
    assert any(m.get("name") == "viewport" for m in parsed.tags("meta"))
    css = "".join(parsed.styles)
    assert "@media print" in css and "@media (max-width" in css
    print_css = css[css.index("@media print"):]
    assert "break-inside: avoid" in print_css and "table-header-group" in print_css
    assert "overflow-x: auto" in css  # tables scroll on a phone instead of overflowing
    assert "Title &amp; more" in document and "sub &lt;x&gt;" in document
    assert parsed.tags("script") == [] and external_references(parsed) == []


def test_the_external_reference_check_catches_what_it_must():
    assert external_references(parse('<img src="https://x.test/a.png">'))
    assert external_references(parse('<p style="background:url(//x.test/a.png)"></p>'))
    assert external_references(parse("<style>@import 'x.css';</style>"))
    assert external_references(parse("<style>@font-face { font-family: x; }</style>"))
    assert not external_references(parse('<a href="#cells">x</a><svg><rect fill="url(#p)"/></svg>'))


@pytest.mark.parametrize(("call", "expected"), [
    (lambda: H.fmt_pct(0.75, 0.671, 0.82), "75.0% (67.1–82.0%)"),
    (lambda: H.fmt_pct(0.75), "75.0%"),
    (lambda: H.fmt_pct(None), "unknown"),
    (lambda: H.fmt_pct(None, unknown="—"), "—"),
    (lambda: H.fmt_ms(812.4), "812 ms"),
    (lambda: H.fmt_ms(1500), "1.50 s"),
    (lambda: H.fmt_ms(61000), "1 min 1 s"),
    (lambda: H.fmt_ms(None), "unknown"),
    (lambda: H.fmt_cost(None), "unknown"),
    (lambda: H.fmt_cost(0), "$0.00"),
    (lambda: H.fmt_cost(0.0123), "$0.0123"),
    (lambda: H.fmt_cost(12.345), "$12.35"),
    (lambda: H.fmt_int(52000), "52,000"),
    (lambda: H.fmt_int(None, unknown="—"), "—"),
])
def test_numbers_become_text_and_unknown_stays_unknown(call, expected):
    assert call() == expected


def test_a_table_aligns_numbers_right_shows_missing_cells_as_asked_and_escapes():
    markup = H.table(["Name", "Tests", "Cost"], [["<b>x</b>", 1200, None], ["y", None, "$1.00"]],
                     numeric=["Tests", 2], caption="Caption", missing="unknown")
    parsed = parse(markup)
    cells = parsed.tags("td")
    assert [c.get("class") for c in cells] == [None, "num", "num"] * 2
    assert "&lt;b&gt;x&lt;/b&gt;" in markup and "<b>" not in markup
    assert "1,200" in parsed.words and parsed.words.count("unknown") == 2
    assert "—" in H.table(["a"], [[None]])
    assert parsed.tags("caption") == [{}] and "table-wrap" in markup


def test_sections_and_stat_cards_escape_their_text():
    markup = H.section("A & B", H.stat_cards([("Cost", "unknown", "3 <tests>"), ("Tests", "5", None)]), id="s")
    parsed = parse(markup)
    assert parsed.tags("section") == [{"id": "s"}]
    assert "A &amp; B" in markup and "3 &lt;tests&gt;" in markup
    assert [c.get("class") for c in parsed.tags("div")].count("card") == 2


# --- svg --------------------------------------------------------------------------------


def test_a_bar_chart_writes_values_and_intervals_and_marks_unknown():
    root = check_svg(S.bar_chart([("a", 0.5, 0.4, 0.6), ("b", None, None, None), ("c", 0.0, None, None)],
                                 title="Rates", max_value=1.0, value_format=lambda v: f"{v:.0%}"), "Rates")
    texts = svg_text(root)
    assert "50% (40%–60%)" in texts and "unknown" in texts and "0%" in texts
    assert any((r.get("fill") or "").startswith("url(#") for r in root.iter(f"{NS}rect"))
    assert "b: unknown" in root.findtext(f"{NS}desc")


def test_a_bar_chart_uses_its_unit_when_no_format_is_given():
    assert "1,500 ms" in svg_text(ET.fromstring(S.bar_chart([("x", 1500, None, None)], title="T", unit=" ms")))


def test_long_labels_are_cut_with_the_full_label_in_a_title():
    label = "a-provider-with-a-rather-long-name:and-a-model-name-longer-still"
    root = ET.fromstring(S.bar_chart([(label, 3, None, None)], title="T"))
    cut = [t for t in root.iter(f"{NS}text") if t.findtext(f"{NS}title") == label]
    assert len(cut) == 1 and cut[0].text.endswith("…") and len(cut[0].text) < len(label)


def test_chart_text_is_escaped():
    text = S.bar_chart([("<script>&", 1, None, None)], title='Q&A "x" <y>')
    root = check_svg(text, 'Q&A "x" <y>')
    assert "<script>&" in svg_text(root) and "<script>" not in text


def test_a_stacked_chart_has_a_legend_of_distinct_patterns_and_writes_counts():
    series = [("succeeded", "green"), ("failed", "vermillion"), ("timeout", "orange"), ("skipped", "grey")]
    text = S.stacked_bar_chart([("p1", [50, 8, 1, 1]), ("p2", [0, 0, 0, 0])], title="Mix", series=series)
    root = check_svg(text, "Mix")
    patterns = {p.get("id"): p for p in root.iter(f"{NS}pattern")}
    marks = [tuple(ET.tostring(child) for child in list(p)[1:]) for p in patterns.values()]
    assert len(patterns) >= 4 and len(set(marks)) == len(marks)  # each series has its own marks
    texts = svg_text(root)
    assert {"succeeded", "failed", "timeout", "skipped"} <= set(texts)
    assert "50" in texts and "50 succeeded · 8 failed · 1 timeout · 1 skipped" in texts
    assert "none" in texts  # the bar with no values


def test_a_heatmap_writes_every_value_and_a_dash_for_none():
    root = check_svg(S.heatmap(["r1", "r2"], ["c1", "c2"], [[0.25, None], [1.0, 0.0]], title="Grid",
                               notes=[["1/4", None], ["3/3", "0/2"]]), "Grid")
    texts = svg_text(root)
    assert {"25%", "100%", "0%", "—", "1/4", "3/3", "0/2"} <= set(texts)
    assert texts.count("—") == 1


def test_a_percentile_chart_labels_its_values_and_marks_unknown_rows():
    root = check_svg(S.percentile_chart(
        [("fast", {"min": 100, "p50": 700, "p95": 1400, "p99": 2000, "max": 2300}),
         ("partial", {"p50": 500, "p95": None}), ("none", {})], title="Latency"), "Latency")
    texts = svg_text(root)
    assert "min 100 · p50 700 · p95 1,400 · p99 2,000 · max 2,300" in texts
    assert "p50 500" in texts and "unknown" in texts


@pytest.mark.parametrize("chart", [
    lambda: S.bar_chart([], title="Empty"),
    lambda: S.stacked_bar_chart([], title="Empty", series=[("a", "blue")]),
    lambda: S.heatmap([], [], [], title="Empty"),
    lambda: S.percentile_chart([], title="Empty"),
])
def test_charts_without_items_are_still_valid(chart):
    assert "No data" in svg_text(check_svg(chart(), "Empty"))


# --- the fleet executive report --------------------------------------------------------


def test_the_report_parses_and_reaches_for_nothing_outside(report):
    parsed = parse(report)
    assert external_references(parsed) == []
    assert parsed.tags("script") == [] and parsed.tags("link") == []
    ids = [attrs["id"] for _, attrs in parsed.elements if attrs.get("id")]
    assert len(ids) == len(set(ids))  # charts inlined side by side must not share pattern ids
    assert "@media print" in "".join(parsed.styles)


def test_the_report_shows_the_run_and_its_headline_figures(report):
    words = parse(report).words
    for text in ("demo-fleet", "demo-fleet-20261123T101500Z-1a2b3c4d", "completed", "0123456789ab",
                 "2026-11-23 10:15:00 UTC", "2026-11-23 10:16:01 UTC", "120", "75.0%",
                 "95% interval 67.1%–82.0%", "700 ms / 1.50 s", "52,000", "1 min 1 s"):
        assert text in words, text
    assert "0123456789abcdef0123" not in words  # the manifest hash is shortened


def test_the_report_has_every_chart_with_title_and_desc(report):
    charts = svgs(report)
    assert set(charts) == CHART_TITLES
    for title, root in charts.items():
        assert root.get("role") == "img" and root.findtext(f"{NS}desc").startswith(title)


def test_chart_values_are_written_as_text(report):
    charts = svgs(report)
    assert "83.3% (72.0%–90.0%)" in svg_text(charts["Success rate by provider"])
    assert "50 succeeded · 8 failed · 1 timeout · 1 skipped" in svg_text(charts["Outcome mix by provider"])
    assert "p50 700 ms · p95 1.40 s" in svg_text(charts["Latency percentiles by provider"])
    assert "66.7% (49.0%–81.0%)" in svg_text(charts["Success rate by category"])


def test_latency_is_charted_only_where_durations_are_known(report):
    chart = svgs(report)["Latency percentiles by provider"]
    labels = svg_text(chart)
    assert OPENAI in labels and CLAUDE not in labels
    assert f"No durations recorded for: {CLAUDE}." in parse(report).words


def test_the_grid_adds_up_counts_instead_of_averaging_rates(report):
    assert repo_provider_totals(RESULTS["cells"]) == {("api", OPENAI): (2, 10), ("api", CLAUDE): (3, 4)}
    texts = svg_text(svgs(report)["Success rate by repository and provider"])
    assert "20%" in texts and "2/10" in texts and "75%" in texts
    assert "56%" not in texts  # the mean of 100% and 11.1%


def test_unknown_costs_read_unknown_never_zero(report):
    words = parse(report).words
    assert "Total cost unknown" in words and "60 tests of unknown cost not included" in words
    assert not re.search(r"\$0\.00(?!\d)", report) and "$0.0040" in words
    provider_row = re.search(rf"<tr><td>{re.escape(CLAUDE)}</td>.*?</tr>", report).group(0)
    assert parse(provider_row).words.endswith("35,000 unknown")


def test_unknown_durations_read_unknown(report):
    row = re.search(r"<tr><td>&lt;script&gt;.*?</tr>", report).group(0)
    assert "unknown unknown unknown" in parse(row).words  # p50, p95, p99
    assert "0 ms" not in parse(row).words


def test_text_from_the_results_is_escaped(report):
    parsed = parse(report)
    assert parsed.tags("script") == [] and "<script>" not in report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in report
    assert "runner crashed: <exit 3>" in parsed.words
    grid = svgs(report)["Success rate by repository and provider"]
    assert "<script>alert(1)</script>" in svg_text(grid)


def test_the_cells_table_shows_state_error_and_results_directory_as_text(report):
    parsed = parse(report)
    assert "api/openai_gpt-4o-mini/coding" in parsed.words and "failed" in parsed.words
    assert not any((a.get("href") or "").endswith("coding") for a in parsed.tags("a"))


def test_empty_results_render():
    for results in ({}, {"fleet_id": "f", "state": "completed", "summary": {"total_tests": 0},
                         "providers": [], "repositories": [], "categories": [], "cells": []}):
        document = render_executive_report(results)
        parsed = parse(document)
        assert external_references(parsed) == []
        assert "Success rate no tests" in parsed.words and "0.0%" not in parsed.words
        assert "No providers in this run." in parsed.words and "No cells in this run." in parsed.words


def test_zero_tests_are_not_a_zero_rate():
    results = copy.deepcopy(RESULTS)
    results["providers"][1].update(_counts(0, 0, 0, 0, 0), success_rate=0.0, success_rate_low=0.0,
                                   success_rate_high=0.0)
    texts = svg_text(svgs(render_executive_report(results))["Success rate by provider"])
    assert "unknown" in texts and "0.0% (0.0%–0.0%)" not in texts


@pytest.mark.parametrize(("state", "reason", "notice"), [
    ("running", None, "This run is still in progress"),
    ("failed", "the worker went away", "This run failed"),
    ("interrupted", "stopped by the user", "This run was interrupted"),
])
def test_unfinished_runs_say_so(state, reason, notice):
    results = {**RESULTS, "state": state, "stopped_reason": reason, "completed_at": None}
    words = parse(render_executive_report(results)).words
    assert notice in words and state in words
    if reason:
        assert f"Stopped because {reason}" in words
    if state == "running":
        assert "Completed not yet" in words


def test_the_same_input_gives_the_same_page():
    assert render_executive_report(copy.deepcopy(RESULTS)) == render_executive_report(copy.deepcopy(RESULTS))
    other = copy.deepcopy(RESULTS)
    other["cells"][0]["total_succeeded"] = 0
    assert render_executive_report(other) != render_executive_report(RESULTS)
