"""benchmarks/stats_validity.py at test size: the simulated stores are well formed and
reproducible, and the figures of a --quick run have their structure and are sane (loose
bounds: the exact figures are in docs/STATISTICS.md)."""

from __future__ import annotations

import json
import random

import pytest

from benchmarks import stats_validity as sv
from harness.results.records import RunRecord


@pytest.fixture(scope="module")
def quick() -> dict:
    return sv.run_all(seed=3, comparisons=sv.QUICK["comparisons"], power_comparisons=sv.QUICK["power_comparisons"],
                      stores=sv.QUICK["stores"], jobs=1)


def test_simulated_runs_are_wire_records_whose_success_follows_the_score():
    a, b, true_score, true_success = sv.comparison_store(sv.Design("t", score_shift=0.1), random.Random(1))
    assert len(a) == len(b) == 60
    assert len({r["runId"] for r in a + b}) == 120
    for run in a + b:
        record = RunRecord.from_wire(run)
        assert record.to_wire()["runId"] == run["runId"]
        if run["status"] == "error":
            assert run["failureClass"] == "infra" and run["totalScore"] is None
            continue
        assert 0.0 <= run["totalScore"] <= 1.0
        assert run["isSuccessful"] == (run["totalScore"] >= sv.THRESHOLD)
        assert run["metadata"]["configParts"]["model"] == run["model"]
    assert 0.0 < true_score < 0.25 and 0.0 < true_success < 0.25


def test_success_shift_draws_success_first_and_the_score_on_its_side():
    rng = random.Random(5)
    draws = [sv.draw(rng, 0.6, 0.15, p_pass=0.5) for _ in range(2000)]
    assert all((score >= sv.THRESHOLD) == success for score, success in draws)
    assert 0.45 < sum(success for _, success in draws) / len(draws) < 0.55


def test_same_seed_same_store_and_the_pool_keeps_the_order():
    design = sv.StoreDesign()
    first = sv.regression_store(design, random.Random("x"))
    again = sv.regression_store(design, random.Random("x"))
    assert first[0] == again[0] and first[1] == again[1] and first[3].kind == again[3].kind
    kinds = list(first[3].kind.values())
    assert kinds.count("regressed") == 4 and kinds.count("flaky") == 6
    tasks = [(0, sv.Design("t", scenarios=5), i) for i in range(4)]
    serial, _ = sv.make_pool(1)
    parallel, close = sv.make_pool(2)
    try:
        assert parallel(sv.one_comparison, tasks) == serial(sv.one_comparison, tasks)
    finally:
        close()


def test_the_history_holds_other_config_hashes_that_must_not_be_pooled():
    baseline, candidate, history, _ = sv.regression_store(sv.StoreDesign(), random.Random(2))
    base_hashes = {r["configHash"] for r in baseline}
    assert not base_hashes & {r["configHash"] for r in candidate}
    assert {r["metadata"]["configParts"]["harness"] for r in history} == {"0.9.0", "1.0.0", "1.1.0"}


def test_quick_figures_have_their_structure(quick):
    assert len(quick["typeOneError"]) == len(sv.null_designs())
    assert len(quick["power"]) == len(sv.power_designs())
    assert len(quick["regressions"]) == len(sv.store_designs())
    for row in quick["typeOneError"]:
        for metric in ("score", "success"):
            for test in ("compare", "naivePairedT"):
                rate = row[metric][test]
                assert rate["n"] == sv.QUICK["comparisons"] and rate["ci95"][0] <= rate["rate"] <= rate["ci95"][1]
    for row in quick["power"]:
        assert row["metric"] in ("score", "success") and 0 <= row["predictedPower"] <= 1
        assert row["pairsNeededFor80"] >= 2 and row["medianMde"] > 0
    for row in quick["regressions"]:
        assert row["stores"] == sv.QUICK["stores"]
        if row["design"]["regressed_share"]:
            assert 0 <= row["precision"]["mean"] <= 1 and 0 <= row["recall"]["mean"] <= 1
        else:  # nothing to find: only false alarms to count
            assert row["precision"]["n"] == row["recall"]["n"] == 0 and row["regressed"] == 0
    json.dumps(quick)  # what --json writes


def test_quick_figures_are_sane(quick):
    for row in quick["typeOneError"]:
        assert row["score"]["compare"]["rate"] < 0.2
        assert row["success"]["compare"]["rate"] < 0.2
        assert row["notComparable"] <= 0.05 * row["comparisons"]  # unequal losses to infra errors
    null_rate = quick["typeOneError"][0]["score"]["compare"]["rate"]
    for row in quick["power"]:
        assert row["power"]["rate"] > null_rate
        assert row["wrongDirection"] <= 0.05 * row["comparisons"]
    big = [row for row in quick["power"] if row["design"]["scenarios"] == 40]
    assert all(row["power"]["rate"] > 0.6 for row in big)
    main = quick["regressions"][0]
    assert main["pooledPrecision"] > 0.8 and main["pooledRecall"] > 0.5
    clean = quick["regressions"][-1]
    assert clean["stores"] - clean["storesWithoutFlags"] <= 0.3 * clean["stores"]  # false alarms of the gate


def test_the_table_prints(quick, capsys):
    sv.print_table(quick)
    out = capsys.readouterr().out
    assert "Type-I error" in out and "Power" in out and "Regressions" in out
