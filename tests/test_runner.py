"""The runner: every run stored with status and failure class, timeouts, iterations, warmup."""

from __future__ import annotations

import time

import pytest

import harness.agents as agents
import harness.scenarios.runner as runner
from harness.agents.base import AgentResult
from harness.scenarios.runner import RunOptions, config_hash, run_batch
from harness.scenarios.loading import load_scenario, resolve_prompt
from harness.scenarios.workspace import WorkspaceError
from harness.testing.results import MemoryResults
from support.scenario_builders import FIXED, make_scenario
from support.scenarios import ADD_ONE_YAML


@pytest.fixture
def setup(tmp_path):
    make_scenario(tmp_path / "suites", yaml_text=ADD_ONE_YAML)
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    prompt = resolve_prompt(scenario, "L1")
    return scenario, prompt, tmp_path / "ws"


def _agent(monkeypatch, name, run):
    class Fake:
        def __init__(self, model=None, **options):
            self.name, self.model, self.options = name, model, options

        def run(self, ctx):
            return run(ctx)

    monkeypatch.setitem(agents._REGISTRY, name, Fake)


def test_oracle_run_is_completed_successful_and_stored(setup):
    scenario, prompt, ws_root = setup
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="oracle", workspaces_root=ws_root), store)
    (run,) = out.runs
    rec = store.runs[run.record.run_id]
    assert (rec.status, rec.failure_class, rec.is_successful) == ("completed", None, True)
    assert rec.total_score == 1.0
    assert [(e.evaluator_name, e.score) for e in rec.evaluations] == [("test", 1.0), ("heuristic_checks", 1.0)]
    assert rec.suite == "demo" and rec.scenario == "add-one" and rec.tier == "L1" and rec.agent == "oracle"
    assert rec.metadata["tierLabel"] == "L1-basic"
    assert rec.metadata["diff"]["changedFiles"] == ["calc.py"]
    assert rec.config_hash and len(rec.config_hash) == 64
    assert rec.telemetry is not None and rec.telemetry.duration_ms > 0 and rec.telemetry.tokens_in == 0
    assert rec.run_id.startswith("run_") and rec.batch_id == out.batch_id and out.batch_id.startswith("batch_")
    batch = store.batches[out.batch_id]
    assert (batch.total_runs, batch.successful_runs, batch.avg_score) == (1, 1, 1.0)
    assert not list(ws_root.iterdir())  # workspace removed


def test_echo_run_fails_validation_and_answers_with_the_prompt(setup):
    scenario, prompt, ws_root = setup
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="echo", workspaces_root=ws_root), store)
    rec = store.runs[out.runs[0].record.run_id]
    assert (rec.status, rec.failure_class, rec.is_successful) == ("failed", "validation", False)
    assert rec.total_score == 0.0
    assert rec.metadata["finalAnswer"] == prompt.text
    assert rec.metadata["gatingFailures"] == ["test"]
    assert store.batches[out.batch_id].successful_runs == 0


def test_iterations_in_parallel_use_separate_workspaces_and_one_batch(setup, monkeypatch):
    scenario, prompt, ws_root = setup
    seen = []

    def run(ctx):
        seen.append((ctx.repeat_index, ctx.workspace))
        (ctx.workspace / "calc.py").write_text(FIXED)
        return AgentResult(final_answer="done", tokens_in=10, tokens_out=5, tool_calls=2, turns=1, cost_usd=0.01)

    _agent(monkeypatch, "t-writer", run)
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="t-writer", iterations=3, parallel=2, batch_id="batch_mine",
                                                 keep_workspace=True, workspaces_root=ws_root), store)
    assert out.batch_id == "batch_mine"
    assert sorted(i for i, _ in seen) == [0, 1, 2]
    assert len({w for _, w in seen}) == 3 and all(w.exists() for _, w in seen)  # kept on request
    assert len(store.runs) == 3 and all(r.batch_id == "batch_mine" for r in store.runs.values())
    assert len({r.config_hash for r in store.runs.values()}) == 1
    tel = next(iter(store.runs.values())).telemetry
    assert (tel.tokens_in, tel.tokens_out, tel.tool_calls, tel.cost_usd) == (10, 5, 2, 0.01)
    assert store.batches["batch_mine"].total_runs == 3 and store.batches["batch_mine"].successful_runs == 3


def test_agent_past_its_deadline_is_stored_as_timeout(setup, monkeypatch):
    scenario, prompt, ws_root = setup

    def run(ctx):
        time.sleep(3)  # ignores ctx.deadline
        return AgentResult()

    _agent(monkeypatch, "t-sleeper", run)
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="t-sleeper", timeout_minutes=0.005, agent_grace_s=0.1,
                                                 workspaces_root=ws_root), store)
    rec = store.runs[out.runs[0].record.run_id]
    assert (rec.status, rec.failure_class, rec.is_successful) == ("timeout", "agent", False)
    assert rec.metadata["agentOverranDeadline"] is True
    assert [e.evaluator_name for e in rec.evaluations] == ["test", "heuristic_checks"]  # still scored


def test_agent_gets_deadline_budgets_and_options(setup, monkeypatch):
    scenario, prompt, ws_root = setup
    got = {}

    def run(ctx):
        got.update(deadline=ctx.deadline, timeout=ctx.budgets.timeout_s, options=ctx.options, prompt=ctx.prompt,
                   model=ctx.model, system=ctx.system_prompt)
        return AgentResult(status="budget_exceeded", model="m-1")

    _agent(monkeypatch, "t-probe", run)
    store = MemoryResults()
    before = time.monotonic()
    out = run_batch(scenario, prompt, RunOptions(agent="t-probe", model="m-1", agent_options={"base_url": "http://127.0.0.1:9"},
                                                 workspaces_root=ws_root), store)
    assert got["timeout"] == 300.0 and before + 299 < got["deadline"] <= time.monotonic() + 300
    assert got["options"] == {"base_url": "http://127.0.0.1:9"} and got["prompt"] == prompt.text
    assert got["model"] == "m-1" and got["system"] is None
    rec = out.runs[0].record
    assert (rec.status, rec.failure_class, rec.model) == ("budget_exceeded", "agent", "m-1")


def test_agent_exception_is_stored_as_agent_error(setup, monkeypatch):
    scenario, prompt, ws_root = setup

    def run(ctx):
        raise RuntimeError("model exploded")

    _agent(monkeypatch, "t-crash", run)
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="t-crash", workspaces_root=ws_root), store)
    rec = store.runs[out.runs[0].record.run_id]
    assert (rec.status, rec.failure_class) == ("error", "agent")
    assert "model exploded" in rec.metadata["agentError"]


def test_harness_exception_is_stored_as_harness_error(setup, monkeypatch):
    scenario, prompt, ws_root = setup

    def broken_diff(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(runner, "compute_diff", broken_diff)
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="echo", workspaces_root=ws_root), store)
    rec = store.runs[out.runs[0].record.run_id]
    assert (rec.status, rec.failure_class, rec.is_successful) == ("error", "harness", False)
    assert "KeyError" in rec.metadata["error"]
    assert store.batches[out.batch_id].total_runs == 1


def test_workspace_failure_is_stored_as_infra_error(setup, monkeypatch):
    scenario, prompt, ws_root = setup

    def no_space(*args, **kwargs):
        raise WorkspaceError("disk full")

    monkeypatch.setattr(runner, "create_workspace", no_space)
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="oracle", workspaces_root=ws_root, skip_warmup=True), store)
    rec = store.runs[out.runs[0].record.run_id]
    assert (rec.status, rec.failure_class) == ("error", "infra") and "disk full" in rec.metadata["error"]


def test_failed_post_is_reported_not_raised(setup):
    scenario, prompt, ws_root = setup
    out = run_batch(scenario, prompt, RunOptions(agent="echo", workspaces_root=ws_root), MemoryResults(fail_posts=True))
    assert out.runs[0].post_outcome is None and "store unavailable" in out.runs[0].post_error
    assert "store unavailable" in out.post_error


def test_unknown_agent_is_rejected_before_any_run(setup):
    scenario, prompt, ws_root = setup
    store = MemoryResults()
    with pytest.raises(agents.UnknownAgentError, match="unknown agent 'nope'; available:"):
        run_batch(scenario, prompt, RunOptions(agent="nope", workspaces_root=ws_root), store)
    assert not store.runs and not store.batches


def test_warmup_runs_in_a_scratch_copy_and_never_touches_the_fixture(tmp_path):
    make_scenario(tmp_path / "suites", yaml_text=ADD_ONE_YAML + 'warmup:\n  commands:\n    - "echo warm >> calc.py"\n'
                  '    - cmd: "touch made-by-warmup"\n')
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    before = (scenario.fixture_dir / "calc.py").read_text()
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="oracle", workspaces_root=tmp_path / "ws"),
                    store)
    assert (scenario.fixture_dir / "calc.py").read_text() == before
    assert not (scenario.fixture_dir / "made-by-warmup").exists()
    assert out.warmup.ok and [c["exitCode"] for c in out.runs[0].record.metadata["warmup"]["commands"]] == [0, 0]
    assert out.runs[0].record.status == "completed"
    assert not list((tmp_path / "ws").iterdir())  # scratch copy removed too


def test_failed_warmup_stores_runs_as_infra_errors_without_running_the_agent(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites", yaml_text=ADD_ONE_YAML + "warmup:\n  commands: [\"exit 3\"]\n")
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    calls = []
    _agent(monkeypatch, "t-count", lambda ctx: calls.append(1) or AgentResult())
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"),
                    RunOptions(agent="t-count", iterations=2, workspaces_root=tmp_path / "ws"), store)
    assert not calls
    assert [(r.status, r.failure_class) for r in store.runs.values()] == [("error", "infra")] * 2
    assert "warmup command failed (exit 3)" in out.runs[0].record.metadata["error"]
    skipped = run_batch(scenario, resolve_prompt(scenario, "L1"),
                        RunOptions(agent="t-count", skip_warmup=True, workspaces_root=tmp_path / "ws"), store)
    assert calls == [1] and skipped.warmup is None


class FakeSpecialist:
    name = "py-helper"
    version = "1.2.0"

    def system_prompt(self, model):
        return f"You fix Python bugs ({model})."

    def run_metadata(self, model):
        return {"specialistPromptSha256": "fake"}


def test_specialist_prompt_reaches_agent_and_run_record(setup, monkeypatch):
    scenario, prompt, ws_root = setup
    got = {}
    _agent(monkeypatch, "t-spec", lambda ctx: got.update(system=ctx.system_prompt) or AgentResult())
    store = MemoryResults()
    out = run_batch(scenario, prompt, RunOptions(agent="t-spec", model="m", specialist=FakeSpecialist(),
                                                 workspaces_root=ws_root), store)
    rec = out.runs[0].record
    assert got["system"] == "You fix Python bugs (m)."
    assert (rec.specialist_enabled, rec.specialist_name, rec.specialist_version) == (True, "py-helper", "1.2.0")
    assert rec.metadata["specialistPromptSha256"] == "fake"


def test_config_hash_tracks_what_makes_runs_comparable(setup):
    scenario, prompt, _ = setup
    base = config_hash(scenario, prompt, "echo", None)
    assert base == config_hash(scenario, prompt, "echo", None)
    assert base != config_hash(scenario, prompt, "echo", "m")
    assert base != config_hash(scenario, prompt, "oracle", None)
    assert base != config_hash(scenario, prompt, "echo", None, FakeSpecialist())
    assert base != config_hash(scenario, resolve_prompt(scenario, "L2"), "echo", None)
    (scenario.fixture_dir / "calc.py").write_text("changed")
    assert base != config_hash(scenario, prompt, "echo", None)


def test_runs_land_in_the_embedded_store(setup, tmp_path):
    from harness.results import open_client

    scenario, prompt, ws_root = setup
    client = open_client(db_path=str(tmp_path / "bench.db"), spool_dir=str(tmp_path / "spool"))
    try:
        out = run_batch(scenario, prompt, RunOptions(agent="oracle", iterations=3, parallel=3, workspaces_root=ws_root),
                        client)
        assert [r.post_outcome for r in out.runs] == ["stored"] * 3
        batch = client.get_batch(out.batch_id)
        assert batch.total_runs == 3 and batch.successful_runs == 3
        assert {r.run_id for r in batch.runs} == {o.record.run_id for o in out.runs}
        stored = client.get_run(out.runs[0].record.run_id)
        assert stored.status == "completed" and stored.config_hash == out.runs[0].record.config_hash
        assert {e.evaluator_name for e in stored.evaluations} == {"test", "heuristic_checks"}
    finally:
        client.close()


def test_reused_batch_id_keeps_every_agent_in_its_metadata(setup, tmp_path):
    from harness.results import open_client

    scenario, prompt, ws_root = setup
    with open_client(db_path=str(tmp_path / "merge.db"), spool_dir=str(tmp_path / "spool")) as store:
        first = run_batch(scenario, prompt, RunOptions(agent="oracle", batch_id="shared", workspaces_root=ws_root),
                          store)
        run_batch(scenario, prompt, RunOptions(agent="echo", batch_id="shared", workspaces_root=ws_root), store)
        batch = store.get_batch("shared")
    assert batch.metadata["agent"] == ["oracle", "echo"] and batch.metadata["suite"] == "demo"
    assert batch.metadata["iterations"] == 2 and batch.metadata["invocations"] == 2
    assert batch.created_at == first.batch.created_at


def test_interrupted_run_is_stored_as_error_not_completed(setup, monkeypatch):
    scenario, prompt, ws_root = setup

    # Interrupting the harness (here: during evaluation) still stores an honest record, then propagates.
    monkeypatch.setattr(runner, "run_evaluators", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    store = MemoryResults()
    with pytest.raises(KeyboardInterrupt):
        run_batch(scenario, prompt, RunOptions(agent="oracle", workspaces_root=ws_root), store)
    (rec,) = store.runs.values()
    assert (rec.status, rec.failure_class, rec.is_successful) == ("error", "harness", False)
    assert rec.metadata["error"] == "interrupted"


def _r(name, score=1.0, status="ok", group=None):
    from harness.grading.evaluators.base import EvaluatorResult

    return EvaluatorResult(name, score, status=status, data={"group": group} if group else {})


@pytest.mark.parametrize(("agent_status", "results", "expected"), [
    ("completed", [_r("test", 1.0, group="validation")], ("completed", None)),
    ("completed", [_r("test", 0.0, group="validation"), _r("h", 1.0)], ("failed", "validation")),
    ("completed", [_r("h", 0.5)], ("failed", "agent")),
    ("completed", [_r("h", 0.5), _r("llm_judge", 0.0, "error")], ("failed", "judge")),
    ("completed", [_r("llm_judge", 0.0, "skipped")], ("error", "judge")),
    ("completed", [], ("error", "harness")),
    ("failed", [_r("h", 1.0)], ("failed", "agent")),
    ("timeout", [_r("h", 1.0)], ("timeout", "agent")),
    ("budget_exceeded", [_r("h", 1.0)], ("budget_exceeded", "agent")),
    ("error", [_r("h", 1.0)], ("error", "agent")),
])
def test_classify_status_and_failure_class(agent_status, results, expected):
    from harness.grading.scoring import score_run

    assert runner.classify(agent_status, score_run(results), results) == expected


def test_artifact_scenario_without_fixture_runs_in_an_empty_workspace(tmp_path):
    import shutil

    scen = make_scenario(tmp_path / "suites", yaml_text="artifact:\n  type: figma\nheuristic_checks:\n  files:\n"
                         "    - {name: report, path: report.md}\n", solution={"report.md": "# Tokens\n"})
    shutil.rmtree(scen / "repo-fixture")
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="oracle", workspaces_root=tmp_path / "ws"),
                    store)
    rec = out.runs[0].record
    assert rec.status == "completed" and rec.metadata["diff"]["changedFiles"] == ["report.md"]


def test_batch_is_posted_even_when_the_store_cannot_be_read(setup):
    scenario, prompt, ws_root = setup

    class WriteOnly(MemoryResults):
        def get_batch(self, batch_id):
            raise ConnectionError("worker unreachable")

    store = WriteOnly()
    out = run_batch(scenario, prompt, RunOptions(agent="echo", workspaces_root=ws_root), store)
    assert out.post_error is None and out.batch_id in store.batches


def test_agent_warmup_runs_the_warmup_prompt_in_a_scratch_copy(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites", yaml_text=ADD_ONE_YAML + "warmup:\n  prompt: Explore the repository first.\n")
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    seen = []

    def run(ctx):
        seen.append((ctx.prompt, ctx.workspace))
        (ctx.workspace / "calc.py").write_text("broken by the warmup\n")
        return AgentResult()

    _agent(monkeypatch, "t-warm", run)
    before = (scenario.fixture_dir / "calc.py").read_text()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="t-warm", workspaces_root=tmp_path / "ws"),
                    MemoryResults())
    assert [p for p, _ in seen] == ["Explore the repository first.", resolve_prompt(scenario, "L1").text]
    assert seen[0][1] != seen[1][1] and "-warmup-" in seen[0][1].name
    assert (scenario.fixture_dir / "calc.py").read_text() == before
    assert out.warmup.ok and out.warmup.kind == "agent"
