"""compare, leaderboard, costs and regressions on runs with known answers (wire-form dicts)."""

from __future__ import annotations

import itertools
import random

import pytest

from worker.analysis.compare import CompareError, compare_metric, compare_runs, parse_side, since_cutoff
from worker.analysis.costs import cost_report, pareto_front
from worker.analysis.leaderboard import leaderboard, parse_by
from worker.analysis.regressions import fails, regressions

_ids = itertools.count()
PARTS = {"scenario": "s1", "prompt": "p1", "tools": "t", "agent": "a", "model": "m", "specialist": "none",
         "sandbox": "bwrap", "judge": "none", "budgets": "b", "baseUrl": "", "timeoutMinutes": "10",
         "cache": "off", "harness": "1"}


def run(scenario: str, iteration: int, score: float | None, *, agent: str = "a", model: str = "m",
        batch: str = "b1", suite: str = "s", tier: str = "L1", status: str | None = None,
        failure_class: str | None = None, success: bool | None = None, cost: float | None = 0.01,
        judge_cost: float | None = None, duration_ms: float = 1000.0, tokens: tuple[int, int] = (100, 50),
        turns: int = 3, parts: dict | None = None, cached: bool = False, retry_of: str | None = None,
        specialist: str | None = None, config_hash: str | None = None, started: str | None = None) -> dict:
    n = next(_ids)
    ok = (score is not None and score >= 0.8) if success is None else success
    meta = {"iteration": iteration, "tierLabel": f"{tier}-x",
            "configParts": {**PARTS, "agent": agent, "model": model,
                            "specialist": specialist or "none", **(parts or {})}}
    if cached:
        meta["cached"] = True
    if retry_of:
        meta["retryOf"] = retry_of
    return {
        "runId": f"run_{n}", "batchId": batch, "suite": suite, "scenario": scenario, "tier": tier, "agent": agent,
        "model": model, "status": status or ("completed" if ok else "failed"), "failureClass": failure_class,
        "isSuccessful": ok, "totalScore": score, "weightedScore": score,
        "successMetric": None if score is None else float(ok), "configHash": config_hash or f"{agent}-{model}",
        "startedAt": started or f"2026-11-01T00:00:{n % 60:02d}Z", "specialistEnabled": specialist is not None,
        "specialistName": specialist, "specialistVersion": "1.0.0" if specialist else None,
        "telemetry": {"costUsd": cost, "judgeCostUsd": judge_cost, "durationMs": duration_ms,
                      "tokensIn": tokens[0], "tokensOut": tokens[1], "turns": turns},
        "metadata": meta,
    }


def side(agent: str, scores: dict[str, list[float]], **kw) -> list[dict]:
    return [run(scen, i, s, agent=agent, **kw) for scen, xs in scores.items() for i, s in enumerate(xs)]


def _metric(result: dict, name: str) -> dict:
    return next(m for m in result["metrics"] if m["metric"] == name)


# ------------------------------------------------------------------------------------ compare


def test_a_clear_difference_with_repeats_is_found_with_a_clustered_test():
    rng = random.Random(1)
    difficulty = {f"sc{i}": rng.uniform(0.3, 0.6) for i in range(10)}
    a = side("a", {k: [min(1, d + 0.3 + rng.gauss(0, 0.05)) for _ in range(3)] for k, d in difficulty.items()})
    b = side("b", {k: [d + rng.gauss(0, 0.05) for _ in range(3)] for k, d in difficulty.items()})
    result = compare_runs(a, b)
    score = _metric(result, "score")
    assert result["verdict"] == score["verdict"] == "A better"
    assert score["pairs"] == 30 and score["clusters"] == 10 and "clustered" in score["why"]
    assert 0.2 < score["difference"] < 0.4 and score["ci"][0] > 0
    assert score["p"] < 0.001 and score["designEffect"] >= 1.0 and score["mde"] < score["difference"]
    assert result["cells"] == {"paired": 30, "onlyA": 0, "onlyB": 0}
    assert result["refused"] == []


def test_the_same_distribution_gives_no_detectable_difference():
    rng = random.Random(7)
    difficulty = {f"sc{i}": rng.uniform(0.2, 0.8) for i in range(12)}
    a = side("a", {k: [d + rng.gauss(0, 0.1) for _ in range(2)] for k, d in difficulty.items()})
    b = side("b", {k: [d + rng.gauss(0, 0.1) for _ in range(2)] for k, d in difficulty.items()})
    score = _metric(compare_runs(a, b), "score")
    assert score["verdict"] == "no detectable difference" and score["p"] > 0.05
    assert score["ci"][0] < 0 < score["ci"][1]


def test_only_cells_both_sides_ran_are_compared():
    # The baseline ran a hard scenario, the specialist an easy one: nothing is comparable.
    a = side("a", {"easy": [1.0, 1.0, 0.9]})
    b = side("b", {"hard": [0.1, 0.2, 0.1]})
    result = compare_runs(a, b)
    assert result["cells"] == {"paired": 0, "onlyA": 3, "onlyB": 3}
    assert result["verdict"] == "not enough runs"
    assert any("only the 0 cells both sides ran" in n for n in result["notes"])


def test_a_constant_difference_on_two_pairs_is_not_evidence():
    a = side("a", {"x": [0.9], "y": [0.8]})
    b = side("b", {"x": [0.4], "y": [0.3]})
    score = _metric(compare_runs(a, b), "score")
    assert score["p"] >= 0.5 and score["verdict"] == "no detectable difference"
    assert "signed-rank" in score["why"]


def test_one_pair_is_not_enough():
    score = _metric(compare_runs(side("a", {"x": [0.9]}), side("b", {"x": [0.1]})), "score")
    assert score["verdict"] == "not enough runs" and score["p"] is None


def test_pass_fail_without_repeats_uses_exact_mcnemar():
    a = side("a", {f"s{i}": [1.0] for i in range(12)})
    b = side("b", {f"s{i}": [0.0] for i in range(12)})
    success = _metric(compare_runs(a, b), "success")
    assert success["test"].startswith("mcnemar") and success["verdict"] == "A better"
    assert success["p"] == pytest.approx(2 / 2 ** 12, rel=1e-5)


def test_lower_is_better_for_cost():
    a = side("a", {f"s{i}": [0.5] for i in range(8)}, cost=0.01)
    b = [run(f"s{i}", 0, 0.5, agent="b", cost=0.05 + i / 1000) for i in range(8)]
    cost = _metric(compare_runs(a, b), "cost")
    assert cost["difference"] < 0 and cost["verdict"] == "A better"


def test_configurations_that_differ_beyond_the_factor_are_refused_unless_allowed():
    a = side("a", {f"s{i}": [0.9, 0.8] for i in range(6)})
    b = side("a", {f"s{i}": [0.5, 0.4] for i in range(6)}, parts={"scenario": "changed", "judge": "j"})
    refused = compare_runs(a, b)
    assert refused["verdict"] == "not comparable"
    assert refused["configuration"]["differingParts"] == ["judge", "scenario"]
    assert "differ in more than the compared factor" in refused["refused"][0]
    allowed = compare_runs(a, b, allow_mixed=True)
    assert allowed["verdict"] == "A better" and any("allow mixed" in n for n in allowed["notes"])
    # Every scenario differs by the same 0.4: no variance for a t-test, the signs decide.
    assert "signed-rank" in _metric(allowed, "score")["why"]
    # One part (the specialist), or the agent with its model, is the compared factor.
    c = side("a", {f"s{i}": [0.5, 0.4] for i in range(6)}, specialist="helper")
    assert compare_runs(a, c)["refused"] == []
    d = side("z", {f"s{i}": [0.5, 0.4] for i in range(6)}, model="other")
    assert compare_runs(a, d)["refused"] == []


def test_exclusions_are_reported_per_side_and_refused_when_they_differ():
    a = side("a", {f"s{i}": [0.9] for i in range(10)})
    b = side("b", {f"s{i}": [0.5] for i in range(10)})
    for r in b[:5]:
        r.update(status="error", failureClass="infra")
    result = compare_runs(a, b)
    assert result["sides"][1]["excluded"] == {"error/infra": 5} and result["sides"][0]["excluded"] == {}
    assert result["verdict"] == "not comparable" and "not measured alike" in result["refused"][0]


def test_an_agent_failure_counts_and_cached_runs_are_left_out_unless_asked():
    a = side("a", {f"s{i}": [0.9] for i in range(6)})
    b = side("b", {f"s{i}": [0.5] for i in range(6)})
    b[0].update(status="error", failureClass="agent", totalScore=None, weightedScore=None)
    result = compare_runs(a, b)
    assert result["sides"][1]["counted"] == 6  # the agent's own error is its failure, scored 0
    cached = side("b", {f"s{i}": [0.5] for i in range(6)}, cached=True)
    assert compare_runs(a, cached)["cells"]["paired"] == 0
    assert compare_runs(a, cached, include_cached=True)["cells"]["paired"] == 6


def test_a_redone_attempt_is_replaced_by_its_retry():
    a = side("a", {f"s{i}": [0.9] for i in range(4)})
    b = side("b", {f"s{i}": [0.5] for i in range(4)})
    retry = run("s0", 0, 0.6, agent="b", retry_of=b[0]["runId"], started="2026-11-02T00:00:00Z")
    result = compare_runs(a, [*b, retry])
    assert result["sides"][1]["excluded"] == {"redone by a retry": 1}
    assert result["cells"]["paired"] == 4


def test_per_scenario_winners_are_holm_corrected():
    a = side("a", {"big": [0.9, 0.95, 0.92, 0.91], "none": [0.5, 0.6, 0.55, 0.52]})
    b = side("b", {"big": [0.1, 0.15, 0.12, 0.11], "none": [0.52, 0.58, 0.56, 0.5]})
    rows = {r["scenario"]: r for r in compare_runs(a, b)["scenarios"]}
    assert rows["s/big"]["winner"] == "A" and rows["s/none"]["winner"] is None
    assert rows["s/big"]["pHolm"] >= rows["s/big"]["p"]


def test_sides_parse_batch_ids_and_filters():
    assert parse_side("batch_1") == {"batchId": "batch_1"}
    assert parse_side("agent=oracle, since=30d") == {"agent": "oracle", "since": "30d"}
    assert parse_side("nightly,agent=oracle") == {"batchId": "nightly", "agent": "oracle"}
    with pytest.raises(CompareError, match="unknown filter 'colour'"):
        parse_side("colour=red")
    with pytest.raises(CompareError, match="KEY=VALUE"):
        parse_side("agent=oracle,model")
    assert since_cutoff("1d", 86_400_000 * 2) == "1970-01-02T00:00:00.000Z"
    assert since_cutoff("2026-01-31", 0) == "2026-01-31T00:00:00.000Z"
    with pytest.raises(CompareError, match="since='soon'"):
        since_cutoff("soon", 0)


def test_compare_metric_refuses_nothing_silently():
    assert compare_metric("score", [])["verdict"] == "not enough runs"
    with pytest.raises(ValueError):
        compare_metric("score", [("x", float("nan"), 0.0), ("y", 0.1, 0.2)])


# ------------------------------------------------------------------------------- leaderboard


def test_leaderboard_ranks_with_intervals_on_common_scenarios_only():
    rng = random.Random(3)
    runs = []
    for agent, level in (("strong", 0.9), ("weak", 0.3), ("strong-too", 0.88)):
        for i in range(8):
            for it in range(2):
                runs.append(run(f"s{i}", it, min(1.0, max(0.0, level + rng.gauss(0, 0.05))), agent=agent,
                                cost=0.02 if agent == "weak" else 0.05))
    runs.append(run("only-weak", 0, 0.0, agent="weak"))
    board = leaderboard(runs, by=("agent",))
    rows = {r["entry"]: r for r in board["entries"]}
    assert board["commonScenarioTiers"] == 8 and rows["weak"]["uncommonRuns"] == 1
    assert rows["weak"]["rank"] == "3" and rows["weak"]["runs"] == 16
    assert rows["strong"]["rankBest"] == 1 and rows["strong"]["rank"] in ("1-2", "1")
    assert rows["strong"]["scoreInterval"][0] < rows["strong"]["meanScore"] < rows["strong"]["scoreInterval"][1]
    lo, hi = rows["weak"]["successInterval"]
    assert 0 <= lo <= rows["weak"]["successRate"] <= hi <= 1
    # Cost per success: the weak agent paid less per run but never succeeded.
    assert rows["weak"]["successes"] == 0 and rows["weak"]["compositeParts"]["cost"] == 0.0
    assert rows["strong"]["compositeParts"]["cost"] == pytest.approx(
        min(1.0, rows["strong-too"]["costPerSuccessUsd"] / rows["strong"]["costPerSuccessUsd"]), abs=1e-6)
    assert rows["strong"]["costPerSuccessUsd"] == pytest.approx(0.05 * 16 / rows["strong"]["successes"])
    assert [r["entry"] for r in board["entries"]][-1] == "weak"


def test_leaderboard_without_a_common_scenario_says_so():
    board = leaderboard([run("x", 0, 1.0, agent="a"), run("y", 0, 1.0, agent="b")])
    assert board["entries"] == [] and "no scenario and tier was run by every entry" in board["notes"][0]
    with pytest.raises(ValueError, match="dimensions are agent, model, specialist"):
        parse_by("colour")
    assert parse_by("agent,model") == ("agent", "model")


# ------------------------------------------------------------------------------------- costs


def test_costs_per_success_score_per_dollar_and_the_pareto_front():
    runs = ([run(f"s{i}", 0, 1.0, agent="pricey", cost=0.10, judge_cost=0.01) for i in range(4)]
            + [run(f"s{i}", 0, 0.5, agent="cheap", success=i < 2, cost=0.01) for i in range(4)]
            + [run(f"s{i}", 0, 0.4, agent="worse", success=False, cost=0.05) for i in range(4)]
            + [run("s9", 0, None, agent="cheap", status="error", failure_class="infra", cost=0.02)])
    report = cost_report(runs, by=("agent",))
    rows = {r["entry"]: r for r in report["entries"]}
    assert rows["pricey"]["totalCostUsd"] == pytest.approx(0.44) and rows["pricey"]["judgeCostUsd"] == pytest.approx(0.04)
    assert rows["pricey"]["costPerSuccessUsd"] == pytest.approx(0.11)
    assert rows["cheap"]["costPerSuccessUsd"] == pytest.approx(0.02) and rows["cheap"]["infraSpendUsd"] == 0.02
    assert rows["cheap"]["scorePerDollar"] == pytest.approx(50.0)
    assert report["paretoFront"] == ["cheap", "pricey"] and not rows["worse"]["paretoOptimal"]
    repriced = cost_report(runs, by=("agent",), reprice=lambda r: (1.0, 0.0))
    assert all(r["repriced"] and r["costPerRunUsd"] == 1.0 for r in repriced["entries"])
    unknown = cost_report([run("s", 0, 1.0, agent="x", cost=None)], by=("agent",))
    assert unknown["entries"][0]["totalCostUsd"] is None and unknown["entries"][0]["unknownCostRuns"] == 1
    assert pareto_front([("a", 1.0, 0.5), ("b", 1.0, 0.5)]) == {"a", "b"}


# ------------------------------------------------------------------------------- regressions


def _history(scenario: str, scores: list[float], batch: str, config: str = "cfg") -> list[dict]:
    return [run(scenario, i, s, batch=batch, config_hash=config) for i, s in enumerate(scores)]


def test_regressions_tell_a_real_drop_from_noise_and_flakiness():
    rng = random.Random(5)
    history, baseline, candidate = [], [], []
    for i in range(6):
        history += _history(f"steady{i}", [0.9 + rng.gauss(0, 0.03) for _ in range(8)], "old")
        baseline += _history(f"steady{i}", [0.9 + rng.gauss(0, 0.03) for _ in range(4)], "base")
        candidate += _history(f"steady{i}", [0.9 + rng.gauss(0, 0.03) for _ in range(4)], "cand")
    history += _history("dropped", [1.0] * 8, "old")
    baseline += _history("dropped", [1.0] * 4, "base")
    candidate += _history("dropped", [0.0] * 4, "cand")
    flaky = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    history += _history("flaky", flaky, "old")
    baseline += _history("flaky", [1.0, 0.0, 1.0, 0.0], "base")
    candidate += _history("flaky", [0.0, 1.0, 0.0, 1.0], "cand")
    baseline += _history("gone", [1.0, 1.0], "base")
    candidate += _history("added", [1.0, 1.0], "cand")
    result = regressions(baseline, candidate, history)
    rows = {r["scenario"]: r for r in result["scenarios"]}
    assert rows["s/dropped"]["status"] == "regressed" and rows["s/dropped"]["severity"] == "major"
    assert rows["s/dropped"]["historyRuns"] == 8 and rows["s/dropped"]["test"].startswith("exact rank")
    assert rows["s/flaky"]["status"] == "flaky"
    assert rows["s/gone"]["status"] == "missing" and rows["s/added"]["status"] == "new"
    assert all(rows[f"s/steady{i}"]["status"] == "unchanged" for i in range(6))
    assert result["counts"]["regressed"] == 1 and result["worst"] == "major"
    assert fails(result, "minor") and fails(result, "major")
    with pytest.raises(ValueError, match="--fail-on 'huge'"):
        fails(result, "huge")


def test_a_difference_inside_the_noise_band_is_not_a_regression():
    history = _history("x", [0.5, 0.7, 0.2, 0.75, 0.4, 0.7, 0.3, 0.6], "old")
    baseline = _history("x", [0.6, 0.7, 0.5], "base")
    candidate = _history("x", [0.45, 0.55, 0.5], "cand")
    (row,) = regressions(baseline, candidate, history)["scenarios"]
    assert row["status"] == "unchanged" and abs(row["difference"]) < row["band"]


def test_too_few_runs_is_inconclusive_not_a_verdict():
    (row,) = regressions(_history("x", [1.0], "b"), _history("x", [0.0], "c"))["scenarios"]
    assert row["status"] == "inconclusive" and row["p"] is None


def test_leaderboard_leaves_out_runs_measured_under_another_setting():
    runs = [run(f"s{i}", 0, 0.9, agent="a") for i in range(3)] + [run(f"s{i}", 0, 0.5, agent="b") for i in range(3)]
    runs.append(run("s0", 1, 0.0, agent="b", parts={"judge": "another judge"}))
    board = leaderboard(runs)
    assert board["excluded"] == {"another setting of the scenario": 1}
    assert {r["entry"]: r["runs"] for r in board["entries"]} == {"a": 3, "b": 3}


def test_a_side_holding_two_agents_in_one_cell_is_refused_not_paired_at_random():
    both = side("oracle", {f"s{i}": [1.0] for i in range(6)}) + side("echo", {f"s{i}": [0.0] for i in range(6)})
    result = compare_runs(both, side("oracle", {f"s{i}": [1.0] for i in range(6)}))
    assert result["verdict"] == "not comparable"
    assert "A holds runs of echo:m, oracle:m in the same cells" in result["refused"][0]
