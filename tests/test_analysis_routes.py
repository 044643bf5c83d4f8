"""The analysis routes of the worker (/api/compare, /api/leaderboard, /api/regressions,
/api/costs, /api/analysis/runs, profiles) on every backend, and the bench commands that read them."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner

from harness.cli.bench import main as bench
from support.scenario_builders import make_scenario, use_local_store
from support.worker import api, local, run_body, uid  # noqa: F401 - fixtures

PARTS = {"scenario": "s1", "prompt": "p", "tools": "t", "agent": "a", "model": "m", "specialist": "none",
         "sandbox": "none", "judge": "none", "budgets": "b", "baseUrl": "", "timeoutMinutes": "5",
         "cache": "off", "harness": "1"}


def _seed(api, batch: str, agent: str, level: float, seed: int, scenarios: int = 6, iterations: int = 2,
          started: str = "2026-11-01") -> list[str]:
    rng = random.Random(seed)
    ids = []
    for s in range(scenarios):
        for it in range(iterations):
            score = max(0.0, min(1.0, level + s / 50 + rng.gauss(0, 0.05)))
            body = run_body(runId=uid(), batchId=batch, agent=agent, model="m", scenario=f"sc{s}", suite="demo",
                            totalScore=score, weightedScore=score, isSuccessful=score >= 0.8,
                            successMetric=float(score >= 0.8), status="completed" if score >= 0.8 else "failed",
                            configHash=f"cfg-{agent}", startedAt=f"{started}T00:{s:02d}:{it:02d}Z",
                            metadata={"iteration": it, "tierLabel": "L1-basic", "phases": {"agent.model": 10.0 * (s + 1),
                                                                                          "validation.test": 5.0},
                                      "configParts": {**PARTS, "agent": agent}})
            assert api.call("POST", "/api/results", body).status == 201
            ids.append(body["runId"])
    return ids


def test_compare_route_pairs_cells_and_gives_a_verdict(api):
    a_batch, b_batch = uid("batch"), uid("batch")
    _seed(api, a_batch, uid("strong"), 0.85, 1)
    _seed(api, b_batch, uid("weak"), 0.45, 2)
    resp = api.call("GET", f"/api/compare?a={a_batch}&b={b_batch}")
    assert resp.status == 200, resp.body
    body = resp.body
    assert body["verdict"] == "A better" and body["cells"]["paired"] == 12
    score = next(m for m in body["metrics"] if m["metric"] == "score")
    assert "clustered" in score["why"] and score["ci"][0] > 0
    assert body["filters"]["a"] == {"batchId": a_batch}
    assert api.call("GET", f"/api/compare?a={a_batch}").status == 400
    assert api.call("GET", f"/api/compare?a={a_batch}&b={uid('batch')}").status == 404
    bad = api.call("GET", f"/api/compare?a=colour=red&b={b_batch}")
    assert bad.status == 400 and "colour" in json.dumps(bad.body)


def test_leaderboard_costs_and_analysis_runs_routes(api):
    batch = uid("batch")
    strong, weak = uid("strong"), uid("weak")
    _seed(api, batch, strong, 0.85, 3)
    _seed(api, batch, weak, 0.3, 4)
    board = api.call("GET", f"/api/leaderboard?batchId={batch}")
    assert board.status == 200, board.body
    assert [e["entry"] for e in board.body["entries"]] == [strong, weak]
    assert board.body["entries"][1]["rank"] == "2"
    assert api.call("GET", "/api/leaderboard?by=colour").status == 400
    costs = api.call("GET", f"/api/costs?batchId={batch}&by=agent")
    assert costs.status == 200 and {e["entry"] for e in costs.body["entries"]} == {strong, weak}
    assert all(e["judgeCostUsd"] == 0.25 * 12 for e in costs.body["entries"])
    runs = api.call("GET", f"/api/analysis/runs?batchId={batch}&since=2026-10-01")
    assert runs.status == 200 and len(runs.body["runs"]) == 24 and runs.body["truncated"] is False
    one = runs.body["runs"][0]
    assert one["metadata"]["iteration"] in (0, 1) and one["metadata"]["configParts"]["harness"] == "1"
    assert one["telemetry"]["costUsd"] == 2.0
    later = api.call("GET", f"/api/analysis/runs?batchId={batch}&since=2026-12-01")
    assert later.body["runs"] == []


def test_regressions_route_by_batches_and_by_agent(api):
    agent = uid("agent")
    old, new = uid("batch"), uid("batch")
    _seed(api, old, agent, 0.9, 5, started="2026-11-01")
    _seed(api, new, agent, 0.9, 6, started="2026-11-02")
    result = api.call("GET", f"/api/regressions?baseline={old}&candidate={new}")
    assert result.status == 200, result.body
    assert result.body["counts"]["regressed"] == 0 and result.body["baseline"] == old
    latest = api.call("GET", f"/api/regressions?agent={agent}")
    assert latest.status == 200 and (latest.body["baseline"], latest.body["candidate"]) == (old, new)
    assert api.call("GET", f"/api/regressions?baseline={old}").status == 400
    assert api.call("GET", f"/api/regressions?agent={uid('nobody')}").status == 404


def test_profile_routes_name_the_bottleneck(api):
    batch = uid("batch")
    ids = _seed(api, batch, uid("a"), 0.5, 7, scenarios=2, iterations=1)
    one = api.call("GET", f"/api/runs/{ids[0]}/profile")
    assert one.status == 200 and one.body["bottleneck"]["phase"] == "agent.model"
    whole = api.call("GET", f"/api/batches/{batch}/profile")
    assert whole.status == 200 and whole.body["profiledRuns"] == 2
    assert api.call("GET", f"/api/runs/{uid()}/profile").status == 404


# ------------------------------------------------------------------------------ the commands

YAML = """\
id: {name}
timeout_minutes: 5
validation:
  commands:
    test: "{{pytest}}"
"""


def test_bench_compare_leaderboard_regressions_and_costs_on_real_runs(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    for name in ("add-one", "add-two", "add-three"):
        make_scenario(suites, name=name, yaml_text=YAML.format(name=name))
    use_local_store(monkeypatch, tmp_path, suites)
    runner = CliRunner()
    for batch in ("first", "second"):
        out = runner.invoke(bench, ["demo", "--agent", "oracle", "--agent", "echo", "--iterations", "2",
                                    "--batch-id", batch, "--skip-warmup"])
        assert out.exit_code == 0, out.output

    shown = runner.invoke(bench, ["compare", "agent=oracle,batch=first", "agent=echo,batch=first", "--json"])
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.output)
    score = next(m for m in result["metrics"] if m["metric"] == "score")
    assert result["cells"]["paired"] == 6 and score["meanA"] == 1.0 and score["meanB"] == 0.0
    # Two deterministic agents on three scenarios: the signs say A, but three are too few.
    assert result["verdict"] == "no detectable difference" and score["p"] == 0.25
    text = runner.invoke(bench, ["compare", "agent=oracle,batch=first", "agent=echo,batch=first"])
    assert text.exit_code == 0 and "Verdict (score): no detectable difference" in text.output
    assert "signed-rank" in text.output

    board = runner.invoke(bench, ["leaderboard", "--json"])
    assert board.exit_code == 0, board.output
    entries = json.loads(board.output)["entries"]
    assert [e["entry"] for e in entries] == ["oracle", "echo"] and entries[0]["runs"] == 12
    assert "oracle" in runner.invoke(bench, ["leaderboard"]).output

    regress = runner.invoke(bench, ["regressions", "--baseline", "first", "--candidate", "second", "--json"])
    assert regress.exit_code == 0, regress.output
    assert json.loads(regress.output)["counts"]["regressed"] == 0
    gate = runner.invoke(bench, ["regressions", "--baseline", "first", "--candidate", "second", "--fail-on", "minor"])
    assert gate.exit_code == 0, gate.output
    assert runner.invoke(bench, ["regressions", "--baseline", "first"]).exit_code == 2

    costs = runner.invoke(bench, ["costs", "--by", "agent", "--json"])
    assert costs.exit_code == 0, costs.output
    rows = {e["entry"]: e for e in json.loads(costs.output)["entries"]}
    assert rows["oracle"]["totalCostUsd"] == 0.0 and rows["oracle"]["paretoOptimal"]
    repriced = runner.invoke(bench, ["costs", "--by", "agent", "--reprice", "--json"])
    assert repriced.exit_code == 0 and json.loads(repriced.output)["priceTable"]
    assert runner.invoke(bench, ["costs", "--by", "colour"]).exit_code == 1

    missing = runner.invoke(bench, ["compare", "nope", "first"])
    assert missing.exit_code == 1 and "no runs match a=nope" in missing.output


def test_bench_regressions_fails_the_build_on_a_regression(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    for name in ("add-one", "add-two"):
        make_scenario(suites, name=name, yaml_text=YAML.format(name=name))
    use_local_store(monkeypatch, tmp_path, suites)
    runner = CliRunner()
    import harness.agents as agents

    for batch in ("good", "bad"):
        out = runner.invoke(bench, ["demo", "--agent", "oracle", "--iterations", "5", "--batch-id", batch,
                                    "--skip-warmup"])
        assert out.exit_code == 0, out.output
        # The "oracle" breaks: the same agent name, now answering like echo.
        monkeypatch.setitem(agents._REGISTRY, "oracle", agents._REGISTRY["echo"])
    few = runner.invoke(bench, ["regressions", "--baseline", "good", "--candidate", "bad", "--json"])
    # 5 runs a side that never overlap: exact p = 2 / C(10, 5) in both scenarios (Benjamini-Hochberg:
    # the largest of two p-values is not raised).
    rows = json.loads(few.output)["scenarios"]
    assert all(r["status"] == "regressed" and abs(r["pAdjusted"] - 2 / 252) < 1e-6 for r in rows)
    gate = runner.invoke(bench, ["regressions", "--baseline", "good", "--candidate", "bad", "--fail-on", "major"])
    assert gate.exit_code == 1, gate.output
    assert "regressed" in gate.output and "major" in gate.output
