"""`bench report`: a batch, a comparison and a fleet run as one self-contained HTML file.

The store is seeded by real `bench` runs (the oracle and echo agents on a small suite) and by a
fleet run against the loopback mock model server; `bench report` runs as the CLI, and the page
it writes is parsed: its title, the runs and scores it must show, its SVG charts, its print
stylesheet, and nothing that runs or reaches outside (no script, no external URL). Bad input
(an unknown batch, side or fleet run, a missing output directory) fails with a line naming it
and writes nothing."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.reports import svg as S
from harness.reports.batch import batch_data, render_batch_report
from harness.reports.compare import render_compare_report, scenario_intervals
from harness.reports.fleet import render_executive_report
from harness.results import open_client
from harness.results.records import BatchRecord, RunRecord
from support.scenario_builders import make_scenario, use_local_store
from support.datasets import mock_server
from support.fleets import make_repos, manifest_doc, mock, run_fleet
from support.reports import NS, check_svg, external_references, parse, svg_text, svgs
from worker.analysis.stats import wilson_interval, welch_t

__all__ = ["mock", "mock_server"]  # fixtures of the fleet tests

YAML = """\
id: {name}
timeout_minutes: 5
validation:
  commands:
    test: "{{pytest}}"
"""
SCENARIOS = ("add-one", "add-two", "add-three")
BATCH = "first"
A, B = f"agent=oracle,batch={BATCH}", f"agent=echo,batch={BATCH}"
INTERACTIVE = {"script", "form", "input", "button", "select", "textarea", "iframe", "object", "embed", "link"}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A store holding batch "first": oracle and echo on three scenarios, two iterations each."""
    root = tmp_path_factory.mktemp("seeded")
    for name in SCENARIOS:
        make_scenario(root / "suites", name=name, yaml_text=YAML.format(name=name))
    with pytest.MonkeyPatch.context() as mp:
        use_local_store(mp, root, root / "suites")
        mp.setenv("ZE_BENCHMARKS_CACHE_DIR", str(root / "cache"))
        result = CliRunner().invoke(main, ["demo", "--agent", "oracle", "--agent", "echo", "--iterations", "2",
                                           "--batch-id", BATCH, "--skip-warmup"])
        assert result.exit_code == 0, result.output
    return root / "bench.db"


@pytest.fixture
def bench(tmp_path, monkeypatch, seeded):
    """``bench(*args)`` in an empty working directory, on the seeded store."""
    use_local_store(monkeypatch, tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(seeded))

    def run(*args: str):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return run


def stored_runs(db: Path, batch: str = BATCH) -> list[RunRecord]:
    with open_client(db_path=str(db)) as client:
        return client.list_runs(limit=1000, batch_id=batch)


def check_page(document: str) -> tuple[object, dict[str, ET.Element]]:
    """A complete page with a print stylesheet, nothing interactive and nothing fetched."""
    parsed = parse(document)
    assert parsed.doctype and parsed.doctype.lower() == "doctype html"
    assert {tag for tag, _ in parsed.elements} & INTERACTIVE == set()
    assert not [name for _, attrs in parsed.elements for name in attrs if name.startswith("on")]
    assert external_references(parsed) == []
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", document, re.I)
    css = "".join(parsed.styles)
    assert "@media print" in css
    print_css = css[css.index("@media print"):]
    assert "break-inside: avoid" in print_css and "table-header-group" in print_css
    ids = [attrs["id"] for _, attrs in parsed.elements if attrs.get("id")]
    assert len(ids) == len(set(ids))
    for text in re.findall(r"<svg\b.*?</svg>", document, re.S):
        check_svg(text, ET.fromstring(text).findtext(f"{NS}title"))
    return parsed, svgs(document)


def wrote(result, path: Path) -> None:
    assert result.exit_code == 0, result.output
    assert str(path.resolve()) in result.output and path.is_file()
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- bench report BATCH


def test_a_batch_report_shows_the_figures_breakdowns_failures_and_every_run(bench, seeded, tmp_path):
    out = tmp_path / "batch.html"
    result = bench("report", BATCH, "-o", str(out))
    wrote(result, out)
    document = out.read_text(encoding="utf-8")
    parsed, charts = check_page(document)
    assert document.count("<title>Batch report: first</title>") == 1
    words = parsed.words
    runs = stored_runs(seeded)
    assert len(runs) == 12
    for run in runs:
        row = re.search(rf"<tr><td>{run.run_id}</td>.*?</tr>", document)
        assert row, run.run_id
        cells = parse(row.group(0)).words
        assert f"{run.total_score:.2f}" in cells and run.agent in cells and run.scenario in cells
    low, high = wilson_interval(6, 12)
    assert f"Pass rate 50.0% 95% interval {low * 100:.1f}%–{high * 100:.1f}%" in words
    assert "Runs 12 6 passed" in words and "Mean score 0.50" in words
    assert "Total cost $0.00 all 12 runs priced" in words  # oracle and echo pay no provider
    assert {"Pass rate by scenario", "Mean score by scenario", "Pass rate by agent", "Pass rate by model",
            "Pass rate by tier", "Outcome by agent and model", "Failures by class"} <= set(charts)
    echo = wilson_interval(0, 6)
    assert f"0.0% ({echo[0] * 100:.1f}%–{echo[1] * 100:.1f}%)" in svg_text(charts["Pass rate by agent"])
    failures = document[document.index('<section id="failures">'):document.index('<section id="runs">')]
    assert parse(failures).words.count("gating command failed: test") == 6
    assert "validation" in svg_text(charts["Failures by class"])
    assert 'id="latency"' not in document  # not a dataset batch


def test_the_default_file_is_named_after_the_batch_and_the_title_can_be_set(bench, tmp_path):
    result = bench("report", BATCH, "--title", "Nightly <42> & co")
    out = tmp_path / "report-first.html"
    wrote(result, out)
    document = out.read_text(encoding="utf-8")
    check_page(document)
    assert "<title>Nightly &lt;42&gt; &amp; co</title>" in document and "<h1>Nightly &lt;42&gt; &amp; co</h1>" in document
    assert "Batch report: first" not in document


# --------------------------------------------------------------------------- --compare A B


def test_a_comparison_report_gives_the_verdict_of_bench_compare(bench, tmp_path):
    shown = bench("compare", A, B, "--json")
    assert shown.exit_code == 0, shown.output
    expected = json.loads(shown.output)
    out = tmp_path / "compare.html"
    result = bench("report", "--compare", A, B, "-o", str(out))
    wrote(result, out)
    assert f"Verdict (score): {expected['verdict']}" in result.output
    document = out.read_text(encoding="utf-8")
    parsed, charts = check_page(document)
    words = parsed.words
    assert f"Verdict (score): {expected['verdict']}" in words
    assert {"Score by scenario: A − B", "Score and success rate: A − B"} <= set(charts)
    score = next(m for m in expected["metrics"] if m["metric"] == "score")
    assert f"p (score) {score['p']:.4f} {score['test']}" in words
    assert f"Paired cells {expected['cells']['paired']}" in words
    for row in expected["scenarios"]:
        assert row["scenario"] in svg_text(charts["Score by scenario: A − B"])
        assert f"{row['scenario']} {row['pairs']} {row['meanA']:.3f} {row['meanB']:.3f}" in words
    for side, label in zip(("A", "B"), (A, B)):
        assert f"{side} {label} 6 6 none" in words


def test_scenario_intervals_are_the_welch_intervals_of_the_routes_rows():
    def run(scenario: str, iteration: int, score: float, agent: str) -> dict:
        return {"runId": f"{agent}-{scenario}-{iteration}", "suite": "s", "scenario": scenario, "tier": "L1",
                "agent": agent, "status": "completed", "totalScore": score, "isSuccessful": score >= 0.5,
                "startedAt": f"2026-01-01T00:00:{iteration:02d}Z", "metadata": {"iteration": iteration}}

    a = [run("x", i, s, "a") for i, s in enumerate([0.9, 0.8, 1.0, 0.7])]
    b = [run("x", i, s, "b") for i, s in enumerate([0.2, 0.4, 0.3, 0.1])]
    a += [run("y", i, 1.0, "a") for i in range(2)]
    b += [run("y", i, 0.0, "b") for i in range(2)]
    rows = [{"scenario": "s/x", "pairs": 4, "difference": 0.6}, {"scenario": "s/y", "pairs": 2, "difference": 1.0},
            {"scenario": "s/z", "pairs": 3, "difference": 0.1}]
    found = scenario_intervals(a, b, rows)
    expected = welch_t([0.9, 0.8, 1.0, 0.7], [0.2, 0.4, 0.3, 0.1], level=0.95)
    assert found == {"s/x": [expected.ci_low, expected.ci_high]}  # y: no variation; z: not reproduced
    assert scenario_intervals(a, b, [{"scenario": "s/x", "pairs": 4, "difference": 0.5}]) == {}


def test_a_refused_comparison_says_why_and_draws_what_it_has():
    result = {"sides": [], "verdict": "not comparable", "refused": ["the sides lost <different> shares"],
              "notes": [], "metrics": [], "scenarios": [], "cells": {"paired": 0}}
    document = render_compare_report({"a": "x", "b": "<y>", "result": result})
    parsed, _ = check_page(document)
    assert "Verdict (score): not comparable" in parsed.words
    assert "Refused: the sides lost <different> shares" in parsed.words and "<different>" not in document
    assert "No scenario has paired cells." in parsed.words and "&lt;y&gt;" in document


def test_the_delta_chart_draws_both_signs_intervals_and_missing_values():
    root = check_svg(S.delta_chart([("up", 0.25, 0.1, 0.4), ("down", -0.5, -0.9, 0.1), ("none", None, None, None)],
                                   title="Deltas", value_format=lambda v: f"{v:.2f}", missing="not tested"),
                     "Deltas")
    texts = svg_text(root)
    assert "+0.25 (+0.10 to +0.40)" in texts and "−0.50 (−0.90 to +0.10)" in texts and "not tested" in texts
    assert {"A higher", "B higher", "interval"} <= set(texts)
    fills = {r.get("fill") for r in root.iter(f"{NS}rect") if (r.get("fill") or "").startswith("url(#")}
    assert len(fills) >= 3  # A higher, B higher and the hatched placeholder
    assert "none: not tested" in root.findtext(f"{NS}desc")
    assert "No data" in svg_text(check_svg(S.delta_chart([], title="Empty"), "Empty"))


# --------------------------------------------------------------------------- unknowns and escaping


def test_unknown_costs_and_durations_read_unknown_and_text_is_escaped():
    runs = [RunRecord(run_id=f"r{i}", suite="<s>", scenario="<script>x</script>", tier="L1", agent="api",
                      model="m", batch_id="b", status="completed" if i else "failed",
                      failure_class=None if i else "agent", total_score=1.0 if i else 0.25, is_successful=bool(i),
                      started_at=f"2026-01-01T00:00:0{i}Z", metadata={"error": "boom <1>"} if not i else {})
            for i in range(3)]
    telemetry = {"r0": {"costUsd": None, "durationMs": 1500.0}, "r1": {"costUsd": 0.5, "durationMs": None}, "r2": None}
    batch = BatchRecord(batch_id="b", total_runs=3, successful_runs=2, avg_score=0.75)
    document = render_batch_report(batch_data(batch, runs, telemetry))
    parsed, _ = check_page(document)
    words = parsed.words
    assert "Total cost $0.5000 2 run(s) of unknown cost not included" in words
    assert "<script>" not in document and "&lt;script&gt;x&lt;/script&gt;" in document
    assert "boom <1>" in words and "<1>" not in document
    row = parse(re.search(r"<tr><td>r2</td>.*?</tr>", document).group(0)).words
    assert row.endswith("1.00 unknown unknown")


def test_a_dataset_batch_without_any_known_cost_says_unknown_not_zero():
    runs = [RunRecord(run_id=f"r{i}", suite="qa", scenario=f"q{i}", tier="dataset", agent="openai-compatible",
                      model="m1", batch_id="d", status="completed", total_score=1.0, is_successful=True,
                      metadata={"target": "openai-compatible:m1", "ttftMs": 10.0 + i}) for i in range(4)]
    telemetry = {f"r{i}": {"costUsd": None, "durationMs": 100.0 * (i + 1)} for i in range(4)}
    data = batch_data(BatchRecord(batch_id="d", total_runs=4, successful_runs=4, avg_score=1.0), runs, telemetry)
    document = render_batch_report(data)
    parsed, charts = check_page(document)
    assert "Total cost unknown no run of known cost (4 unknown)" in parsed.words
    assert not re.search(r"\$0\.00(?!\d)", document)
    latency = data["latency"][0]
    assert latency["provider"] == "openai-compatible:m1" and latency["duration"]["p50"] == 250.0
    assert {"Response time by provider", "Time to first token by provider"} <= set(charts)


# --------------------------------------------------------------------------- --fleet RUN_ID


def test_a_fleet_report_is_the_executive_report_and_its_batch_has_latency(tmp_path, monkeypatch, mock):
    use_local_store(monkeypatch, tmp_path)
    server = mock()
    make_repos(tmp_path)
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        results, run_dir = run_fleet(tmp_path, manifest_doc(server.base_url), client=client)
    run_id = results["run_id"]
    runner = CliRunner()

    out = tmp_path / "fleet.html"
    result = runner.invoke(main, ["report", "--fleet", run_id, "-o", str(out)], catch_exceptions=False)
    wrote(result, out)
    document = out.read_text(encoding="utf-8")
    check_page(document)
    saved = json.loads((run_dir / "fleet-results.json").read_text(encoding="utf-8"))
    assert document == render_executive_report(saved) == (run_dir / "executive-report.html").read_text()
    by_path = runner.invoke(main, ["report", "--fleet", str(run_dir), "--title", "Fleet T"], catch_exceptions=False)
    wrote(by_path, tmp_path / f"report-{run_id}.html")
    assert "<h1>Fleet T</h1>" in (tmp_path / f"report-{run_id}.html").read_text()

    # The fleet's runs are a dataset batch in the store: per-provider latency percentiles.
    batch_out = tmp_path / "fleet-batch.html"
    wrote(runner.invoke(main, ["report", run_id, "-o", str(batch_out)], catch_exceptions=False), batch_out)
    page_text = batch_out.read_text(encoding="utf-8")
    parsed, charts = check_page(page_text)
    assert "Response time by provider" in charts
    labels = svg_text(charts["Response time by provider"])
    assert "openai-compatible:m1" in labels and "openai-compatible:m2" in labels
    assert "Total cost unknown no run of known cost (16 unknown)" in parsed.words  # the mock has no price
    assert "Pass rate 75.0%" in parsed.words
    outcome = " ".join(svg_text(charts["Outcome by agent and model"]))
    assert outcome.count("6 passed · 2 completed, not passed · 0 failed") == 2
    # why q0 failed, from its evaluations (the mock does not know its answer)
    assert parsed.words.count("not passed 0.00 assert.contains 0.00/1.00: missing '=0'") == 4

    # Without its results file, the run's batch in the store is named.
    (run_dir / "fleet-results.json").unlink()
    gone = tmp_path / "gone.html"
    missing = runner.invoke(main, ["report", "--fleet", run_id, "-o", str(gone)])
    assert missing.exit_code == 1 and not gone.exists()
    assert f"no fleet-results.json in {run_dir}" in missing.output
    assert f"in the results store as batch {run_id}: `bench report {run_id}`" in missing.output


# --------------------------------------------------------------------------- bad input


def test_bad_input_fails_with_a_line_naming_it_and_writes_nothing(bench, tmp_path):
    out = tmp_path / "x.html"
    cases = [
        (["report", "no-such-batch", "-o", str(out)], 1, "no batch 'no-such-batch'"),
        (["report", BATCH, "-o", str(tmp_path / "missing" / "x.html")], 2,
         f"the directory {tmp_path / 'missing'} does not exist"),
        (["report", BATCH, "-o", str(tmp_path)], 2, "is a directory"),
        (["report", "--compare", "nope", BATCH, "-o", str(out)], 1, "no runs match a=nope"),
        (["report", "--compare", "agent=oracle,colour=red", BATCH, "-o", str(out)], 1, "unknown filter 'colour'"),
        (["report", "--fleet", "no-such-run", "-o", str(out)], 1, "fleet run 'no-such-run'"),
        (["report", "-o", str(out)], 2, "give one of BATCH, --compare A B or --fleet RUN_ID"),
        (["report", BATCH, "--fleet", "x", "-o", str(out)], 2, "not BATCH and --fleet together"),
        (["report", BATCH, "--alpha", "0.1", "-o", str(out)], 2, "--alpha only goes with --compare"),
    ]
    for args, status, message in cases:
        result = bench(*args)
        assert result.exit_code == status, (args, result.output)
        assert message in result.output, (args, result.output)
        assert not out.exists(), args
        assert not list(tmp_path.glob("report-*.html")) and not list(tmp_path.glob(".*.tmp")), args


def test_the_fleet_hint_names_a_stored_batch_when_no_run_directory_is_here(bench, tmp_path):
    result = bench("report", "--fleet", BATCH, "-o", str(tmp_path / "f.html"))
    assert result.exit_code == 1 and not (tmp_path / "f.html").exists()
    assert f"its runs are in the results store as batch {BATCH}".lower() in result.output.lower()
