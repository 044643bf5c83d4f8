"""What a stored run says about itself: a new sample or a replay, whose failure an error is,
score and success as distinct numbers, and where its time went."""

from __future__ import annotations

import json

import httpx
import pytest
import respx
from click.testing import CliRunner

import harness.agents as agents
from harness.agents.base import AgentResult
from harness.cli.bench import main as bench
from harness.grading.evaluators.base import BLAME, BLAME_HARNESS, BLAME_INFRA, BLAME_WORKSPACE, EvaluatorResult
from harness.scenarios.runner import RunOptions, classify, run_batch
from harness.scenarios.loading import load_scenario, resolve_prompt
from harness.grading.scoring import score_run
from harness.testing.results import MemoryResults
from support.mock_models import MockModel
from support.scenario_builders import FIXED, make_scenario, use_local_store
from support.scenarios import ADD_ONE_YAML

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
SCRIPT = [
    ("Looking.", [("read_file", {"path": "calc.py"})]),
    ("", [("write_file", {"path": "calc.py", "content": FIXED})]),
    ("Fixed.", []),
]


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "model-cache"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


@pytest.fixture
def setup(tmp_path):
    make_scenario(tmp_path / "suites", yaml_text=ADD_ONE_YAML)
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    return scenario, resolve_prompt(scenario, "L1"), tmp_path / "ws"


def _options(ws, **kw):
    return RunOptions(agent="anthropic", model="claude-sonnet-4-6", workspaces_root=ws, skip_warmup=True, **kw)


@respx.mock
def test_a_new_batch_asks_the_model_again_and_a_replay_is_marked_cached_with_its_original_cost(setup):
    scenario, prompt, ws = setup
    mock = MockModel("anthropic", SCRIPT, "claude-sonnet-4-6")
    route = respx.post(ANTHROPIC_URL).mock(side_effect=mock)
    store = MemoryResults()
    (first,) = run_batch(scenario, prompt, _options(ws), store).runs
    (second,) = run_batch(scenario, prompt, _options(ws), store).runs
    assert route.call_count == 6  # the second batch is a new sample: every answer asked again
    fresh = second.record
    assert fresh.metadata["cached"] is False and fresh.metadata["modelCalls"] == 3
    assert fresh.metadata["cachedCalls"] == 0 and fresh.telemetry.cost_usd > 0

    (replayed,) = run_batch(scenario, prompt, _options(ws, use_cache=True), store).runs
    assert route.call_count == 6  # nothing sent
    rec = replayed.record
    assert rec.status == "completed"
    assert (rec.metadata["cached"], rec.metadata["cachedCalls"], rec.metadata["modelCalls"]) == (True, 3, 3)
    assert rec.telemetry.cost_usd == first.record.telemetry.cost_usd  # what the original calls cost
    assert rec.telemetry.tokens_in == first.record.telemetry.tokens_in
    assert rec.telemetry.latencies_ms == [] and len(rec.metadata["replayedLatenciesMs"]) == 3
    # The cache mode is part of what makes runs comparable.
    assert rec.metadata["configParts"]["cache"] == "replay" and fresh.metadata["configParts"]["cache"] == "off"
    assert rec.config_hash != fresh.config_hash


@respx.mock
def test_a_provider_outage_after_some_turns_is_an_infra_error_not_the_agents(setup):
    scenario, prompt, ws = setup
    mock = MockModel("anthropic", SCRIPT, "claude-sonnet-4-6")

    def flaky(request):
        if sum(1 for m in json.loads(request.content)["messages"] if m["role"] == "assistant") >= 1:
            return httpx.Response(503, headers={"retry-after": "0"},
                                  json={"type": "error", "error": {"type": "overloaded_error", "message": "down"}})
        return mock(request)

    respx.post(ANTHROPIC_URL).mock(side_effect=flaky)
    store = MemoryResults()
    (run,) = run_batch(scenario, prompt, _options(ws), store).runs
    rec = run.record
    assert (rec.status, rec.failure_class, rec.is_successful) == ("error", "infra", False)
    assert rec.metadata["infraFailure"] == {"turnsDone": 1, "toolCalls": 1}
    assert "503" in rec.metadata["agentError"]


def _vandal_scenario(tmp_path, monkeypatch, manifest: str):
    yaml_text = ADD_ONE_YAML + "targets:\n  required:\n    - {name: requests, to: '>=2'}\n"
    make_scenario(tmp_path / "suites", yaml_text=yaml_text,
                  fixture={"calc.py": "def add_one(x):\n    return x + 2\n",
                           "test_calc.py": "from calc import add_one\n\ndef test_one():\n    assert add_one(1) == 2\n",
                           "pyproject.toml": "[project]\nname = 'calc'\ndependencies = ['requests>=1']\n"})
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")

    class Vandal:  # fixes the code, then leaves a manifest of its own
        def __init__(self, model=None, **options):
            self.name, self.model = "vandal", model

        def run(self, ctx):
            (ctx.workspace / "calc.py").write_text("def add_one(x):\n    return x + 1\n")
            (ctx.workspace / "pyproject.toml").write_text(manifest)
            return AgentResult(status="completed")

    monkeypatch.setitem(agents._REGISTRY, "vandal", Vandal)
    store = MemoryResults()
    (run,) = run_batch(scenario, resolve_prompt(scenario, "L1"),
                       RunOptions(agent="vandal", workspaces_root=tmp_path / "ws"), store).runs
    return run.record


def test_a_manifest_of_the_wrong_shape_is_graded_as_the_agents_work_not_a_harness_error(tmp_path, monkeypatch):
    rec = _vandal_scenario(tmp_path, monkeypatch, 'project = "calc"\n')
    assert (rec.status, rec.failure_class) == ("failed", "agent")
    deps = next(e for e in rec.evaluations if e.evaluator_name == "dependency_targets")
    assert deps.status == "ok" and deps.score == 0.0  # requests is no longer declared
    assert rec.total_score == pytest.approx(2 / 3) and rec.success_metric == 0.0


def test_an_evaluator_the_agents_output_breaks_fails_the_run_instead_of_dropping_it(tmp_path, monkeypatch):
    import harness.grading.evaluators.dependency_targets as dependency_targets

    real = dependency_targets.declared_dependencies

    def reader(root):  # the reader handles the fixture but breaks on what the agent left
        if "pyproject" in (root / "pyproject.toml").read_text() and "odd" in (root / "pyproject.toml").read_text():
            raise AttributeError("'str' object has no attribute 'get'")
        return real(root)

    monkeypatch.setattr(dependency_targets, "declared_dependencies", reader)
    rec = _vandal_scenario(tmp_path, monkeypatch, "# odd pyproject\n[project]\nname = 'calc'\n")
    assert (rec.status, rec.failure_class) == ("failed", "validation")
    assert rec.metadata["workspaceErrors"] == ["dependency_targets"]
    broken = next(e for e in rec.evaluations if e.evaluator_name == "dependency_targets")
    assert broken.status == "error" and "cannot be graded" in broken.details
    # It counts as 0 in the score: the tests and the pattern pass (2 of 3 results).
    assert rec.total_score == pytest.approx(2 / 3)
    assert rec.success_metric == 0.0


def test_score_and_success_are_distinct_numbers(setup, monkeypatch):
    scenario, prompt, ws = setup
    store = MemoryResults()
    (good,) = run_batch(scenario, prompt, RunOptions(agent="oracle", workspaces_root=ws), store).runs
    assert (good.record.total_score, good.record.weighted_score, good.record.success_metric) == (1.0, 1.0, 1.0)
    (bad,) = run_batch(scenario, prompt, RunOptions(agent="echo", workspaces_root=ws), store).runs
    assert bad.record.success_metric == 0.0
    assert bad.record.total_score == bad.record.weighted_score


def test_every_run_records_its_phases_summing_to_its_duration(setup):
    scenario, prompt, ws = setup
    store = MemoryResults()
    (run,) = run_batch(scenario, prompt, RunOptions(agent="oracle", workspaces_root=ws), store).runs
    phases = run.record.metadata["phases"]
    for name in ("workspace", "agent.model", "agent.tools", "agent.other", "diff", "grading.copy",
                 "validation.test", "evaluator.heuristic_checks", "grading.other", "cleanup", "other"):
        assert name in phases and phases[name] >= 0, name
    assert sum(phases.values()) == pytest.approx(run.record.telemetry.duration_ms, abs=1.0)
    assert phases["validation.test"] > 0  # pytest really ran
    batch = store.batches[run.record.batch_id]
    assert run.record.run_id in batch.metadata["storageMs"]


@pytest.mark.parametrize(("agent_status", "kind", "results", "expected"), [
    ("error", "infra", [EvaluatorResult("h", 1.0)], ("error", "infra")),
    ("error", None, [EvaluatorResult("h", 1.0)], ("error", "agent")),
    ("completed", None, [EvaluatorResult("h", 0.5),
                         EvaluatorResult("llm_judge", 0.0, status="error", data={BLAME: BLAME_INFRA})],
     ("error", "infra")),
    ("completed", None, [EvaluatorResult("h", 1.0),
                         EvaluatorResult("d", 0.0, status="error", data={BLAME: BLAME_WORKSPACE})],
     ("failed", "validation")),
    ("completed", None, [EvaluatorResult("h", 1.0),
                         EvaluatorResult("d", 0.0, status="error", data={BLAME: BLAME_HARNESS})],
     ("error", "harness")),
])
def test_classify_blames_the_side_that_failed(agent_status, kind, results, expected):
    assert classify(agent_status, score_run(results), results, kind) == expected


def test_a_workspace_error_counts_as_zero_and_a_harness_error_does_not_count():
    ok = EvaluatorResult("h", 1.0)
    assert score_run([ok, EvaluatorResult("d", 0.0, status="error", data={BLAME: BLAME_WORKSPACE})]).score == 0.5
    assert score_run([ok, EvaluatorResult("d", 0.0, status="error", data={BLAME: BLAME_HARNESS})]).score == 1.0


def test_bench_profile_names_the_bottleneck_of_a_stored_batch(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    make_scenario(suites, yaml_text=ADD_ONE_YAML)
    use_local_store(monkeypatch, tmp_path, suites)
    runner = CliRunner()
    out = runner.invoke(bench, ["demo", "add-one", "--agent", "oracle", "--iterations", "2", "--batch-id", "prof",
                                "--skip-warmup"])
    assert out.exit_code == 0, out.output
    shown = runner.invoke(bench, ["profile", "prof", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["batchId"] == "prof" and data["runs"] == data["profiledRuns"] == 2
    top = max(data["phases"], key=lambda r: r["totalMs"])
    assert data["bottleneck"]["phase"] == top["phase"]
    assert sum(r["share"] for r in data["phases"]) == pytest.approx(1.0, abs=0.01)
    assert any(r["phase"] == "storage" for r in data["phases"])
    text = runner.invoke(bench, ["profile", "prof"])
    assert text.exit_code == 0 and "Bottleneck:" in text.output and top["label"] in text.output
    missing = runner.invoke(bench, ["profile", "nope"])
    assert missing.exit_code != 0 and "nope" in missing.output


@pytest.mark.parametrize(("text", "infra"), [
    ('API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}', True),
    ("API Error: Request timed out.", True),
    ("API Error: Connection error.", True),
    ("Invalid API key · Please run /login", True),
    ("API Error: 400 prompt is too long", False),
    ("I could not fix the bug.", False),
])
def test_claude_code_output_tells_a_provider_failure_from_the_agents(text, infra):
    from harness.agents.installed.claude_code import provider_failure

    assert (provider_failure(f"some output\n{text}\n") is not None) is infra


def test_run_ids_are_unique_and_a_forked_child_draws_its_own():
    import os

    from harness.results.records import new_run_id

    ids = {new_run_id() for _ in range(20_000)}
    assert len(ids) == 20_000
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.write(write, " ".join(new_run_id()[-8:] for _ in range(5)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 4096).decode().split()
    os.close(read)
    mine = [new_run_id()[-8:] for _ in range(5)]
    assert len(child) == 5 and child != mine
