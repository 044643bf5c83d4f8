"""The shipped suites prove themselves: every scenario is solved by its own solution and not by
doing nothing, through the real `bench` command and the embedded results store.

Each scenario runs twice into one batch: `oracle` (lays `solution/` over the workspace) must be
stored as a successful run at or above the scenario's threshold, with every evaluator that ran
scoring full marks; `echo` (changes nothing) must be stored as unsuccessful, and its hidden
tests must not all pass. The content checks below keep the suites to the shape docs/suites.md
promises (prompts per tier, solutions, judge categories, varied heuristics).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.sandbox import SandboxSpec, open_sandbox
from harness.results import open_client
from harness.scenarios.loading import discover_suites, load_scenario, resolve_prompt

SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"
SCENARIOS = [(suite.name, name) for suite in discover_suites(SUITES_DIR) for name in suite.scenarios]
JUDGE_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY")


def _needs_node(suite: str, name: str) -> bool:
    commands = load_scenario(suite, name, SUITES_DIR).validation_commands.values()
    return any(c.split()[0] == "node" for c in commands)


@pytest.fixture
def bench_env(tmp_path, monkeypatch):
    """A private results store and workspace root; no worker URL and no judge credentials."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    for key in JUDGE_KEYS:
        monkeypatch.delenv(key, raising=False)
    return tmp_path


def _bench_json(tmp_path: Path, suite: str, name: str, agent: str, batch_id: str) -> dict:
    args = [suite, name, "--tier", "L1", "--agent", agent, "--json", "--batch-id", batch_id,
            "--suites-dir", str(SUITES_DIR), "--workspaces-dir", str(tmp_path / "workspaces")]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert len(runs) == 1
    return runs[0]


def _scores(run: dict) -> dict[str, float]:
    """Scores of the evaluators that ran (the judge is skipped: no credentials in tests)."""
    return {e["evaluatorName"]: e["score"] for e in run["evaluations"] if e["status"] == "ok"}


@pytest.mark.integration
@pytest.mark.parametrize(("suite", "name"), SCENARIOS, ids=[f"{s}/{n}" for s, n in SCENARIOS])
def test_shipped_scenario_is_solved_by_oracle_and_not_by_echo(bench_env, suite, name):
    if _needs_node(suite, name) and shutil.which("node") is None:
        pytest.skip("node is not installed; the Node suites need Node 20")
    scenario = load_scenario(suite, name, SUITES_DIR)
    batch_id = f"shipped-{suite}-{name}"

    oracle = _bench_json(bench_env, suite, name, "oracle", batch_id)
    oracle_scores = _scores(oracle)
    assert oracle["status"] == "completed", oracle_scores
    assert oracle["isSuccessful"] is True
    assert oracle["totalScore"] >= scenario.success_threshold
    # The reference solution satisfies every check the scenario makes; a check it fails is a
    # broken check (e.g. a regex that only matches one way of writing the fix).
    assert {k: v for k, v in oracle_scores.items() if v < 1.0} == {}
    assert "test" in oracle_scores
    judge = [e for e in oracle["evaluations"] if e["evaluatorName"] == "llm_judge"]
    assert [e["status"] for e in judge] == ["skipped"]

    echo = _bench_json(bench_env, suite, name, "echo", batch_id)
    echo_scores = _scores(echo)
    assert echo["isSuccessful"] is False
    assert echo["status"] == "failed"
    assert echo_scores["test"] == 0.0
    if scenario.hidden_tests_dir is not None:
        assert echo_scores["hidden_tests"] < 1.0

    with open_client(db_path=str(bench_env / "bench.db")) as client:
        batch = client.get_batch(batch_id)
        assert batch is not None
        assert (batch.total_runs, batch.successful_runs) == (2, 1)
        stored = {r.agent: r.is_successful for r in client.list_runs(batchId=batch_id)}
    assert stored == {"oracle": True, "echo": False}


def test_shipped_suites_cover_python_node_and_dependency_updates():
    suites = {s.name: s.scenarios for s in discover_suites(SUITES_DIR)}
    assert {"py-bugs", "node-features", "update-deps"} <= set(suites)
    assert len(SCENARIOS) >= 10


@pytest.mark.parametrize(("suite", "name"), SCENARIOS, ids=[f"{s}/{n}" for s, n in SCENARIOS])
def test_shipped_scenario_has_the_promised_parts(suite, name):
    scenario = load_scenario(suite, name, SUITES_DIR)
    assert scenario.warnings == []
    assert scenario.description.strip() and scenario.title
    assert scenario.solution_dir is not None and any(scenario.solution_dir.rglob("*"))
    assert "test" in scenario.validation_commands
    for tier, label in (("L0", "L0-minimal"), ("L1", "L1-basic"), ("L2", "L2-directed")):
        prompt = resolve_prompt(scenario, tier)
        assert prompt.label == label and prompt.text.strip()
    assert scenario.llm_judge.enabled
    weights = [weight for _, weight, _ in scenario.llm_judge.categories]
    assert len(weights) >= 3 and sum(weights) == pytest.approx(100)
    assert scenario.heuristic_checks.get("enabled") is True
    # No fixture may depend on the network or on packages that are not in the fixture itself.
    for command in scenario.validation_commands.values():
        assert not any(word in command.split() for word in ("npm", "pnpm", "yarn", "pip", "npx"))


def test_shipped_update_deps_scenarios_carry_targets_constraints_and_answers():
    suites = {s.name: s.scenarios for s in discover_suites(SUITES_DIR)}
    kinds: set[str] = set()
    for name in suites["update-deps"]:
        scenario = load_scenario("update-deps", name, SUITES_DIR)
        assert scenario.targets.get("required"), name
        assert scenario.constraints.get("blocklist"), name
        assert scenario.oracle_answers, name
        kinds |= {k for k in ("blocklist", "namespace_migrations", "companion_versions") if scenario.constraints.get(k)}
    assert kinds == {"blocklist", "namespace_migrations", "companion_versions"}


def test_shipped_heuristics_use_every_kind_including_negated_patterns_with_excludes():
    kinds: set[str] = set()
    negated_with_exclude = 0
    for suite, name in SCENARIOS:
        checks = load_scenario(suite, name, SUITES_DIR).heuristic_checks
        kinds |= {k for k in ("commands", "files", "patterns", "structured") if checks.get(k)}
        negated_with_exclude += sum(1 for p in checks.get("patterns") or [] if p.get("negate") and p.get("exclude"))
    assert kinds == {"commands", "files", "patterns", "structured"}
    assert negated_with_exclude >= 1


def test_scenario_commands_run_the_harness_interpreter_without_an_activated_venv(tmp_path, monkeypatch,
                                                                                  sandbox_kind):
    """Validation commands say `python3 -m pytest`; on a fresh machine the system python3 has no
    pytest, so the harness's own interpreter must come first on PATH even when `bench` was
    started as .venv/bin/bench without activating the virtualenv."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with open_sandbox(tmp_path, SandboxSpec(kind=sandbox_kind)) as sandbox:
        result = sandbox.run("python3 -c 'import sys, pytest; print(sys.prefix)'", timeout_s=30)
    assert result.ok, result.combined_output()
    assert result.stdout.strip() == sys.prefix
