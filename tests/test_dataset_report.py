"""harness.datasets.summary and exports: the summary against figures computed by hand (percentiles, the
Wilson interval from its formula, unknown costs, errors kept out of latencies, categories),
and the exports: results.json round trip, the CSV header and rows, the JUnit report read
back by the project's JUnit reader, and the terminal table."""

from __future__ import annotations

import csv
import json
import math
import os
import stat
import xml.etree.ElementTree as ET
from statistics import NormalDist

import pytest
from rich.console import Console

from harness.cli.dataset_view import render_summary
from harness.datasets.exports import CSV_COLUMNS, write_csv, write_json, write_junit
from harness.datasets.summary import summarize, summary_rows
from harness.grading.evaluators.test_reports import parse_junit

A = "openai:gpt-4o-mini"
B = "anthropic:claude-3-5-haiku"


def cell(test_id="t1", status="passed", target=A, **fields):
    provider, _, model = target.partition(":")
    base = {
        "test_id": test_id, "category": "coding", "target": target, "provider": provider, "model": model,
        "repeat": 0, "status": status, "score": {"passed": 1.0, "failed": 0.0}.get(status),
        "threshold": None, "duration_ms": 100.0, "ttft_ms": None, "tokens_in": 10, "tokens_out": 20,
        "cost_usd": 0.001, "error": None, "error_kind": None, "attempts": 1, "assertions": [],
        "response": "answer", "run_id": "run-1", "finished_at": "2026-11-23T10:00:00Z",
    }
    base.update(fields)
    return base


def wilson(k, n, level=0.95):
    """The Wilson score interval, straight from its formula."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return center - half, center + half


def target_a_cells():
    """Six cells of A: three passes, one failure, one ungraded, one error (a timeout whose
    duration, ttft and missing cost must not count)."""
    return [
        cell("t1", "passed", duration_ms=100.0, ttft_ms=50.0),
        cell("t2", "passed", duration_ms=400.0, category="math"),
        cell("t3", "failed", duration_ms=300.0, score=0.5, ttft_ms=150.0),
        cell("t4", "passed", duration_ms=1000.0),
        cell("t5", "ungraded", duration_ms=200.0, category="math"),
        cell("t6", "error", duration_ms=30000.0, ttft_ms=10.0, tokens_out=0, cost_usd=None,
             error="timed out after 30 s", error_kind="timeout"),
    ]


def test_counts_rates_and_the_wilson_interval():
    block = summarize(target_a_cells())["targets"][A]
    assert (block["target"], block["provider"], block["model"]) == (A, "openai", "gpt-4o-mini")
    assert [block[k] for k in ("cells", "cases", "passed", "failed", "errors", "ungraded")] == [6, 6, 3, 1, 1, 1]
    assert block["error_kinds"] == {"timeout": 1}
    assert block["pass_rate"] == pytest.approx(3 / 4)          # errors and ungraded apart
    assert block["pass_rate_all"] == pytest.approx(3 / 5)      # errors counted as not passing
    low, high = block["pass_rate_ci"]
    assert (low, high) == pytest.approx(wilson(3, 4), abs=1e-12)
    assert (low, high) == pytest.approx((0.3006, 0.9544), abs=1e-4)   # published table value
    assert block["mean_score"] == pytest.approx((1 + 1 + 0.5 + 1) / 4)  # graded cells only


def test_latency_percentiles_leave_errors_out():
    block = summarize(target_a_cells())["targets"][A]
    # non-error durations sorted: 100, 200, 300, 400, 1000 (the error's 30000 is left out);
    # linear interpolation at rank q/100 * (n - 1)
    assert block["latency_ms"] == pytest.approx({
        "p50": 300.0,                       # rank 2
        "p95": 400.0 + 0.8 * 600.0,         # rank 3.8
        "p99": 400.0 + 0.96 * 600.0,        # rank 3.96
        "min": 100.0, "max": 1000.0})
    # ttft of the answered cells: 50 and 150 (the error's 10 is left out)
    assert block["ttft_ms"] == pytest.approx({"p50": 100.0, "p95": 50.0 + 0.95 * 100.0})


def test_tokens_and_known_costs():
    block = summarize(target_a_cells())["targets"][A]
    assert block["tokens_in"] == 60 and block["tokens_out"] == 100
    # five cells produced 20 tokens each in 100+400+300+1000+200 ms = 2 s
    assert block["tokens_per_s"] == pytest.approx(100 / 2.0)
    # the error has no cost and counts as free; the five answers cost 0.001 each
    assert block["cost_unknown_cells"] == 0
    assert block["cost_total"] == pytest.approx(0.005)
    assert block["cost_per_case"] == pytest.approx(0.005 / 6)
    assert block["cost_per_pass"] == pytest.approx(0.005 / 3)


def test_unknown_prices_make_the_cost_unknown_not_zero():
    cells = [cell("t1", target=B, cost_usd=None), cell("t2", target=B, cost_usd=0.002),
             cell("t3", "failed", target=B, cost_usd=None)]
    summary = summarize(target_a_cells() + cells)
    block = summary["targets"][B]
    assert block["cost_unknown_cells"] == 2
    assert block["cost_total"] is None and block["cost_per_case"] is None and block["cost_per_pass"] is None
    assert summary["targets"][A]["cost_total"] == pytest.approx(0.005)
    overall = summary["overall"]
    assert overall["cost_unknown_cells"] == 2 and overall["cost_total"] is None


def test_no_samples_give_nulls():
    block = summarize([cell("t1", "error", tokens_out=0, cost_usd=None, error="refused", error_kind="auth")])["targets"][A]
    assert block["pass_rate"] is None and block["pass_rate_ci"] is None and block["pass_rate_all"] == 0.0
    assert block["mean_score"] is None and block["tokens_per_s"] is None
    assert block["latency_ms"] == {"p50": None, "p95": None, "p99": None, "min": None, "max": None}
    assert block["ttft_ms"] == {"p50": None, "p95": None}
    assert block["cost_total"] == 0.0 and block["cost_per_pass"] is None   # an error costs nothing


def test_categories_per_target_and_overall():
    summary = summarize(target_a_cells() + [cell("t1", "failed", target=B, category="math")])
    assert summary["categories"] == ["coding", "math"]
    coding = summary["targets"][A]["categories"]["coding"]
    assert [coding[k] for k in ("cells", "passed", "failed", "errors", "ungraded")] == [4, 2, 1, 1, 0]
    assert coding["pass_rate"] == pytest.approx(2 / 3)
    assert coding["pass_rate_ci"] == pytest.approx(list(wilson(2, 3)))
    math_a = summary["targets"][A]["categories"]["math"]
    assert (math_a["passed"], math_a["ungraded"], math_a["pass_rate"]) == (1, 1, 1.0)
    assert list(summary["targets"][B]["categories"]) == ["math"]
    overall_math = summary["overall"]["categories"]["math"]
    assert (overall_math["passed"], overall_math["failed"]) == (1, 1)
    assert summary["overall"]["cases"] == 6 and summary["overall"]["cells"] == 7


def test_target_order_and_targets_without_cells():
    cells = [cell("t1", target="x:one"), cell("t1", target=A), cell("t1", target="y:two")]
    assert list(summarize(cells)["targets"]) == ["x:one", A, "y:two"]
    summary = summarize(cells, targets=[A, "z:none", "x:one"])
    assert list(summary["targets"]) == [A, "z:none", "x:one", "y:two"]
    empty = summary["targets"]["z:none"]
    assert (empty["provider"], empty["model"], empty["cells"], empty["pass_rate"]) == ("z", "none", 0, None)
    assert (empty["cost_total"], empty["cost_per_case"], empty["cost_unknown_cells"]) == (0.0, None, 0)   # nothing spent


def test_summary_is_deterministic_json():
    first = json.dumps(summarize(target_a_cells()))
    assert first == json.dumps(summarize(iter(target_a_cells())))
    block = json.loads(first)["targets"][A]
    assert list(block)[:9] == ["target", "provider", "model", "cells", "cases", "passed", "failed", "errors",
                               "ungraded"]


@pytest.mark.parametrize("field, value, message", [
    ("status", "pass", "status 'pass' is not one of passed, failed, error, ungraded"),
    ("duration_ms", float("nan"), "duration_ms must be a finite number or null"),
    ("cost_usd", "0.1", "cost_usd must be a finite number or null"),
    ("target", None, "target must be a non-empty string"),
])
def test_bad_cells_are_named(field, value, message):
    cells = target_a_cells()
    cells[2][field] = value
    with pytest.raises(ValueError) as info:
        summarize(cells)
    assert str(info.value).startswith("cell 2 ('t3' on ") and message in str(info.value)


def test_results_json_round_trip(tmp_path):
    cells = target_a_cells()
    summary = summarize(cells)
    meta = {"dataset": "coding-tasks", "version": "1.0.0", "digest": "0123456789ab"}
    path = tmp_path / "out" / "results.json"
    write_json(path, cells, summary, meta)
    assert json.loads(path.read_text(encoding="utf-8")) == {"meta": meta, "summary": summary, "results": cells}
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]   # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask   # not a private temporary file's mode
    write_json(path, [], {}, {"note": "line\nbreak \u00e9"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"meta": {"note": "line\nbreak \u00e9"}, "summary": {},
                                                            "results": []}


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("previous")
    with pytest.raises(ValueError):
        write_json(path, [cell(duration_ms=float("inf"))], {}, {})
    assert path.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_csv_header_and_rows(tmp_path):
    path = tmp_path / "results.csv"
    cells = target_a_cells() + [cell("t9", target=B, cost_usd=None, ttft_ms=80.5)]
    write_csv(path, cells)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == list(CSV_COLUMNS)
    assert rows[0][:8] == ["test_id", "category", "status", "duration_ms", "tokens", "cost", "model", "error"]
    first = dict(zip(rows[0], rows[1]))
    assert first == {
        "test_id": "t1", "category": "coding", "status": "passed", "duration_ms": "100.0", "tokens": "30",
        "cost": "0.001", "model": "gpt-4o-mini", "error": "", "provider": "openai", "target": A, "repeat": "0",
        "score": "1.0", "threshold": "", "ttft_ms": "50.0", "tokens_in": "10", "tokens_out": "20",
        "error_kind": "", "attempts": "1", "run_id": "run-1", "finished_at": "2026-11-23T10:00:00Z"}
    error = dict(zip(rows[0], rows[6]))
    assert (error["status"], error["error"], error["error_kind"], error["cost"], error["tokens"]) == (
        "error", "timed out after 30 s", "timeout", "", "10")
    unpriced = dict(zip(rows[0], rows[7]))
    assert (unpriced["cost"], unpriced["target"], unpriced["ttft_ms"]) == ("", B, "80.5")
    assert len(rows) == 1 + len(cells)


def test_csv_writes_ten_thousand_rows(tmp_path):
    cells = [cell(f"case-{i}", "passed" if i % 3 else "failed", duration_ms=float(i),
                  error=None if i % 7 else "a message, with \"quotes\"\nand a newline") for i in range(10_000)]
    path = tmp_path / "results.csv"
    write_csv(path, cells)  # its speed is measured by benchmarks/dataset_throughput.py
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 10_001 and rows[1][7] == "a message, with \"quotes\"\nand a newline"


def junit_cells():
    failing = [{"type": "icontains", "score": 0.0, "passed": False, "weight": 1.0, "threshold": 1.0,
                "skipped": False, "detail": "'def fizzbuzz' not found"},
               {"type": "max-words", "score": 1.0, "passed": True, "weight": 1.0, "threshold": 1.0,
                "skipped": False, "detail": "12 words <= 50"},
               {"type": "llm-rubric", "score": None, "passed": None, "weight": 1.0, "threshold": 0.5,
                "skipped": True, "detail": "no judge model"}]
    return [
        cell("fizzbuzz", "passed", duration_ms=1500.0),
        cell("fizzbuzz", "failed", repeat=1, assertions=failing, response="oops \x00\x1b control chars"),
        cell("fib", "error", category="math", error="timed out after 30 s", error_kind="timeout"),
        cell("fib", "ungraded", target=B, category="math"),
        cell("fizzbuzz", "failed", target=B, score=0.5, threshold=0.75,
             assertions=[{"type": "references", "score": 0.5, "passed": False, "skipped": False,
                          "detail": "2 of 4 references found"}]),
    ]


def test_junit_report_parses_with_the_right_counts(tmp_path):
    path = tmp_path / "junit.xml"
    write_junit(path, junit_cells(), "coding-tasks")
    counts = parse_junit(path)   # the JUnit reader the evaluators use
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (1, 2, 1, 1)

    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("name") == "coding-tasks"
    assert [root.get(k) for k in ("tests", "failures", "errors", "skipped")] == ["5", "2", "1", "1"]
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [A, B]
    assert [suites[0].get(k) for k in ("tests", "failures", "errors", "skipped", "time")] == [
        "3", "1", "1", "0", "1.700"]
    assert [suites[1].get(k) for k in ("tests", "failures", "errors", "skipped")] == ["2", "1", "0", "1"]
    properties = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert properties == {"dataset": "coding-tasks", "provider": "openai", "model": "gpt-4o-mini"}

    cases = suites[0].findall("testcase")
    assert [(c.get("name"), c.get("classname")) for c in cases] == [
        ("fizzbuzz#0", "coding-tasks.coding"), ("fizzbuzz#1", "coding-tasks.coding"), ("fib#0", "coding-tasks.math")]
    assert cases[0].get("time") == "1.500" and list(cases[0]) == []
    failure = cases[1].find("failure")
    assert failure.get("message") == "icontains: 'def fizzbuzz' not found"
    assert "FAIL icontains score 0.00 (threshold 1): 'def fizzbuzz' not found" in failure.text
    assert "skip llm-rubric: no judge model" in failure.text
    assert cases[1].find("system-out").text == "oops \ufffd\ufffd control chars"
    error = cases[2].find("error")
    assert (error.get("type"), error.get("message")) == ("timeout", "timed out after 30 s")
    assert suites[1].find("testcase/skipped") is not None
    threshold_failure = suites[1].findall("testcase")[1].find("failure")
    assert threshold_failure.get("message") == "score 0.50 below threshold 0.75; references: 2 of 4 references found"


def recorded(summary, width=120):
    console = Console(record=True, width=width)
    render_summary(summary, console)
    return console.export_text()


def test_render_summary_shows_the_figures():
    cells = target_a_cells() + [cell("t1", target=B, cost_usd=None, duration_ms=2500.0),
                                cell("t2", "failed", target=B, cost_usd=0.002, category="math")]
    summary = summarize(cells)
    text = recorded(summary)
    lines = text.splitlines()
    assert "openai:" in lines[0] and "anthropic:" in lines[0] and "overall" in lines[1]
    assert "gpt-4o-mini" in lines[1] and "claude-3-5-haiku" in lines[1]
    low, high = wilson(3, 4)
    assert f"75.0% [{low * 100:.1f}-{high * 100:.1f}]" == "75.0% [30.1-95.4]"
    assert "75.0% [30.1-95.4]" in text
    row = next(line for line in lines if line.startswith("pass rate incl. errors"))
    assert row.split()[-3:] == ["60.0%", "50.0%", "57.1%"]
    row = next(line for line in lines if line.startswith("latency p50"))
    assert row.split()[-6:] == ["300", "ms", "1,300", "ms", "300", "ms"]   # B: 100 and 2500
    row = next(line for line in lines if line.startswith("cost total"))
    assert "$0.0050" in row and row.count("unknown") == 2   # B and overall
    row = next(line for line in lines if line.startswith("cells without a price"))
    assert row.split()[-3:] == ["0", "1", "1"]
    row = next(line for line in lines if line.startswith("pass rate: coding"))
    assert "66.7% (2/3) +1 err" in row
    row = next(line for line in lines if line.startswith("ttft p50"))
    assert row.split()[-5:] == ["100", "ms", "-", "100", "ms"]   # B streamed nothing
    assert lines[-1] == "1 cell ended in an error (timeout 1), left out of the pass rate: see results.jsonl."
    assert max(len(line) for line in lines) <= 100


def test_render_summary_without_errors_has_no_hint_and_fits_narrow_consoles():
    cells = [cell("t1", target=f"openrouter:vendor/model-with-a-rather-long-name-{i}") for i in range(5)]
    text = recorded(summarize(cells), width=100)
    assert "ended in an error" not in text
    assert max(len(line) for line in text.splitlines()) <= 100
    for i in range(5):   # long names wrap over header lines; columns that do not fit go below
        assert f"-name-{i}" in text
    assert text.count("pass rate [95% CI]") > 1


def test_summary_rows_for_other_tables():
    headers, rows = summary_rows(summarize(target_a_cells()))
    assert headers == ["", A]
    assert ["pass rate [95% CI]", "75.0% [30.1-95.4]"] in rows
    assert ["cost per pass", "$0.0017"] in rows and None in rows
