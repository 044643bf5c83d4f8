"""The one summary of cells (worker/analysis/summary.py) and the views that read it: the
dataset summary, the fleet's figures, the HTML batch report's latency table and the worker's
dataset view give the same figures for the same cells."""

from __future__ import annotations

import asyncio
import random

import pytest

from worker.analysis import stats
from worker.analysis.summary import OUTCOMES, Figures, Rate, Spread, summarize


def cells(seed: int = 7, n: int = 60) -> list[Figures]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        outcome = rng.choice(["passed", "passed", "failed", "error", "ungraded"])
        out.append(Figures(outcome, round(rng.uniform(50, 900), 3), round(rng.uniform(5, 40), 3),
                           rng.randint(0, 90), rng.randint(0, 40), round(rng.uniform(0, 0.01), 6),
                           round(rng.random(), 3) if outcome in ("passed", "failed") else None))
    return out


def test_counts_rates_and_spreads_are_those_of_the_statistics_module():
    sample = cells()
    figures = summarize(sample)
    assert figures.cells == len(sample) and set(figures.counts) == set(OUTCOMES)
    passed = sum(c.outcome == "passed" for c in sample)
    graded = sum(c.outcome in ("passed", "failed") for c in sample)
    rate = figures.rate()
    assert (rate.k, rate.n, rate.value) == (passed, graded, passed / graded)
    assert (rate.low, rate.high) == stats.wilson_interval(passed, graded)
    timed = [c.duration_ms for c in sample if c.outcome in ("passed", "failed", "ungraded")]
    assert [figures.duration.p50, figures.duration.p95, figures.duration.p99] == stats.percentiles(timed, (50, 95, 99))
    assert (figures.duration.min, figures.duration.max, figures.duration.count) == (min(timed), max(timed), len(timed))
    assert figures.tokens_in == sum(c.tokens_in for c in sample)
    assert figures.cost_usd == pytest.approx(sum(c.cost_usd for c in sample))
    scores = [c.score for c in sample if c.outcome in ("passed", "failed")]
    assert figures.mean_score == pytest.approx(sum(scores) / len(scores))


def test_an_unknown_cost_of_a_timed_cell_makes_the_total_unknown_but_an_error_s_does_not():
    assert summarize([Figures("passed", 1.0, cost_usd=0.5), Figures("error", cost_usd=None)]).cost_usd == 0.5
    unknown = summarize([Figures("passed", 1.0, cost_usd=0.5), Figures("failed", 2.0, cost_usd=None)])
    assert (unknown.cost_usd, unknown.cost_unknown) == (None, 1)
    every = summarize([Figures("error", cost_usd=None)], timed=OUTCOMES)
    assert (every.cost_usd, every.cost_unknown) == (None, 1)


def test_a_timeout_s_duration_is_not_a_latency_unless_the_view_says_so():
    sample = [Figures("passed", 100.0), Figures("timeout", 30_000.0)]
    assert summarize(sample).duration.max == 100.0
    assert summarize(sample, timed={"passed", "timeout"}).duration.max == 30_000.0


def test_nothing_to_count_gives_none_never_zero():
    empty = summarize([])
    assert empty.rate().value is None and empty.duration == Spread() and empty.mean_score is None
    assert Rate.of(0, 0) == Rate(0, 0, None, None, None)


def test_an_unknown_outcome_is_refused_by_name():
    with pytest.raises(ValueError, match="'won'"):
        summarize([Figures("won")])


def dataset_cells(sample: list[Figures]) -> list[dict]:
    return [{"test_id": f"t{i}", "target": "openai:m", "provider": "openai", "model": "m", "category": None,
             "status": c.outcome, "score": c.score, "duration_ms": c.duration_ms, "ttft_ms": c.ttft_ms,
             "tokens_in": c.tokens_in, "tokens_out": c.tokens_out, "cost_usd": c.cost_usd, "repeat": 0}
            for i, c in enumerate(sample)]


def test_the_dataset_summary_the_fleet_and_the_batch_report_read_the_same_figures():
    from harness.datasets.summary import summarize as dataset_summary
    from harness.fleet.metrics import block
    from harness.reports.batch import _latency

    sample = [c for c in cells(11) if c.outcome != "ungraded"]
    figures = summarize(sample)
    overall = dataset_summary(dataset_cells(sample))["overall"]
    assert overall["pass_rate"] == figures.rate().value
    assert overall["pass_rate_ci"] == [figures.rate().low, figures.rate().high]
    assert overall["latency_ms"]["p95"] == figures.duration.p95 and overall["ttft_ms"]["p50"] == figures.ttft.p50

    # A fleet test: succeeded or failed, an error being a failure that ran (timed, as the fleet defines it).
    tests = [{"outcome": {"passed": "succeeded"}.get(c.outcome, "failed"), "duration_ms": c.duration_ms,
              "tokens": c.tokens_in + c.tokens_out, "cost_usd": c.cost_usd} for c in sample]
    fleet = block(tests, full=True)
    every = summarize(sample, timed=OUTCOMES)
    assert fleet["success_rate"] == round(every.rate(("passed",), OUTCOMES).value, 6)
    assert fleet["p95_duration_ms"] == round(every.duration.p95, 3)

    runs = [{"tier": "dataset", "provider": "openai", "status": "error" if c.outcome == "error" else "completed",
             "successful": c.outcome == "passed", "duration_ms": c.duration_ms, "ttft_ms": c.ttft_ms} for c in sample]
    (row,) = _latency(runs)
    assert row["duration"]["p95"] == figures.duration.p95 and row["ttft"]["p50"] == figures.ttft.p50
    assert row["pass_rate"] == every.rate(("passed",), OUTCOMES).value


def test_the_worker_s_dataset_view_reads_the_same_figures(tmp_path):
    from worker.dashboard_api import datasets as dataset_view

    sample = [c for c in cells(5, 30) if c.outcome != "ungraded"]
    rows = [{"suite": "d", "agent": "openai", "model": "m", "status": "error" if c.outcome == "error" else "completed",
             "is_successful": c.outcome == "passed", "total_score": c.score, "duration_ms": c.duration_ms,
             "cost_usd": c.cost_usd} for c in sample]

    class Rows:
        async def all(self, sql, params=()):
            return [{"suite": "d"}] if sql.startswith("SELECT DISTINCT") else rows

    (group,) = asyncio.run(dataset_view(Rows(), {}))["groups"]
    every = summarize(sample, timed=OUTCOMES, scored=OUTCOMES)
    assert (group["passRate"], group["passRateLow"]) == (every.rate(("passed",), OUTCOMES).value,
                                                         every.rate(("passed",), OUTCOMES).low)
    assert group["latencyMs"]["p99"] == every.duration.p99 and group["costUsd"] == every.cost_usd
