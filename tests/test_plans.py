"""Run plans: whole suites and matrices in one batch, resume, retry, shards, dry runs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.cli.bench import main
from harness.scenarios.plan import (
    AgentChoice,
    Cell,
    PlanError,
    build_plan,
    completeness,
    keep_shard,
    parse_shard,
    reconcile,
    select_scenarios,
)
from harness.results.records import RunRecord
from support.scenario_builders import make_scenario, use_local_store

ROOT = Path(__file__).resolve().parents[1]
BENCH = os.path.join(os.path.dirname(sys.executable), "bench")

SLOW_YAML = """\
id: slow
title: Make add_one add one, slowly checked
timeout_minutes: 5
validation:
  commands:
    test: "sleep 1 && {pytest}"
"""


def _suite(root: Path, names=("add-one", "two", "three")) -> Path:
    suites = root / "suites"
    for name in names:
        make_scenario(suites, name=name)
    return suites


@pytest.fixture
def env(tmp_path, monkeypatch):
    use_local_store(monkeypatch, tmp_path, _suite(tmp_path, ("add-one", "two")))
    return tmp_path


def bench(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _runs(batch_id: str) -> list[dict]:
    result = bench("history", "--batch-id", batch_id, "--json", "--limit", "500")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _cell_keys(runs: list[dict]) -> Counter:
    return Counter(r["metadata"]["cellKey"] for r in runs)


# ------------------------------------------------------------------ the plan as a library


def test_a_plan_multiplies_scenarios_tiers_agents_and_models(tmp_path):
    suites = _suite(tmp_path)
    scenarios = select_scenarios(suites, ["demo"])
    plan = build_plan(scenarios, ["L0", "L1"], [AgentChoice("echo"), AgentChoice.parse("openai"),
                                                AgentChoice.parse("anthropic:claude-haiku-4-5")],
                      2, "b", models=["gpt-4.1-mini", "gpt-4.1"])
    # echo and openai have no model: each runs with both models; anthropic keeps its own.
    agents = sorted({(g.agent, g.model) for g in plan.groups})
    assert agents == [("anthropic", "claude-haiku-4-5"), ("echo", "gpt-4.1"), ("echo", "gpt-4.1-mini"),
                      ("openai", "gpt-4.1"), ("openai", "gpt-4.1-mini")]
    assert len(plan.groups) == 3 * 2 * 5 and plan.planned == len(plan.cells) == 60
    assert len(set(plan.cells)) == 60
    assert {c.tier for c in plan.cells} == {"L0-minimal", "L1-basic"}


def test_bad_plan_input_is_named():
    with pytest.raises(PlanError, match="no model after 'openai':"):
        AgentChoice.parse("openai:")
    for text in ("3", "0/2", "3/2", "a/b", "1/0"):
        with pytest.raises(PlanError, match="--shard"):
            parse_shard(text)
    assert parse_shard(" 2/4 ") == (2, 4)


def test_shards_partition_the_cells_and_a_new_scenario_moves_no_other_cell(tmp_path):
    suites = _suite(tmp_path)
    two = select_scenarios(suites, ["demo"], ["add-one", "two"])
    three = select_scenarios(suites, ["demo"])

    def sharded(scenarios, count):
        out = {}
        for index in range(1, count + 1):
            plan = build_plan(scenarios, ["L0", "L1", "L2"], [AgentChoice("echo"), AgentChoice("oracle")], 5, "b")
            keep_shard(plan, index, count)
            out[index] = set(plan.cells)
        return out

    whole = set(build_plan(three, ["L0", "L1", "L2"], [AgentChoice("echo"), AgentChoice("oracle")], 5, "b").cells)
    parts = sharded(three, 4)
    assert set().union(*parts.values()) == whole
    assert sum(len(p) for p in parts.values()) == len(whole)  # no cell in two shards
    assert all(parts.values())  # 90 cells: every slice has some
    before = sharded(two, 4)
    for index, cells in before.items():
        assert cells <= parts[index]  # adding a scenario added cells; none changed slice


def _record(cell: Cell, status="completed", failure_class=None, config="h", run_id=None, started="1",
            retry_of=None) -> RunRecord:
    meta = {"cellGroup": cell.group_key, "cellKey": cell.key, "iteration": cell.iteration,
            "configParts": {"scenario": "x"}}
    if retry_of:
        meta["retryOf"] = retry_of
    return RunRecord(run_id=run_id or f"run-{cell.key}-{started}", suite=cell.suite, scenario=cell.scenario,
                     tier="L1", agent=cell.agent, status=status, failure_class=failure_class, config_hash=config,
                     started_at=started, metadata=meta)


def _plan(tmp_path, iterations=3):
    suites = _suite(tmp_path, ("add-one",))
    plan = build_plan(select_scenarios(suites, ["demo"]), ["L1"], [AgentChoice("echo")], iterations, "b")
    plan.groups[0].parts = {"scenario": "x"}
    return plan


def test_reconcile_continues_resumes_retries_and_refuses_changes(tmp_path):
    plan = _plan(tmp_path)
    group = plan.groups[0]
    h = group.config_hash
    stored = [_record(group.cell(0), config=h), _record(group.cell(1), "error", "infra", config=h),
              _record(group.cell(2), "error", "agent", config=h)]
    reconcile(plan, stored)  # a plain invocation adds iterations after the stored ones
    assert group.iterations == [3, 4, 5]

    plan = _plan(tmp_path)
    reconcile(plan, stored[:1], resume_batch=True)
    assert plan.groups[0].iterations == [1, 2]

    plan = _plan(tmp_path)
    reconcile(plan, stored, retry=True)  # only the infra error; an agent error is a result
    assert plan.groups[0].iterations == [1] and plan.groups[0].retry_of == {1: stored[1].run_id}

    plan = _plan(tmp_path, iterations=4)
    reconcile(plan, stored, resume_batch=True, retry=True)  # the missing cell and the infra error
    assert plan.groups[0].iterations == [1, 3]

    # A retried cell whose retry succeeded is not retried again.
    plan = _plan(tmp_path)
    redone = _record(group.cell(1), config=h, started="2", retry_of=stored[1].run_id)
    reconcile(plan, [*stored, redone], retry=True)
    assert plan.groups[0].iterations == []

    plan = _plan(tmp_path)
    plan.groups[0].parts = {"scenario": "y"}
    with pytest.raises(PlanError, match="the scenario's files changed since run"):
        reconcile(plan, stored, resume_batch=True)
    reconcile(plan, stored, resume_batch=True, force=True)
    assert any("--force" in note for note in plan.notes)


def test_completeness_of_a_sharded_batch():
    cells = [Cell("s", "x", "L1-basic", "echo", None, None, i) for i in range(4)]
    runs = [_record(c) for c in cells[:3]]
    state = completeness({"plannedCells": 4, "shard": ["1/3", "3/3"]}, runs)
    assert (state.cells, state.planned, state.missing_shards, state.complete) == (3, 4, [2], False)
    assert "not reported: 2/3" in state.describe() and "incomplete" in state.describe()
    done = completeness({"plannedCells": 4, "shard": ["1/3", "2/3", "3/3"], "interrupted": True},
                        runs + [_record(cells[3])])
    assert done.complete is True and "incomplete" not in done.describe()
    assert completeness({}, runs) is None


# ------------------------------------------------------------------ the CLI


def test_a_suite_wide_plan_with_two_agents_and_two_tiers_lands_in_one_batch(env):
    result = bench("demo", "--agent", "oracle", "--agent", "echo", "--tiers", "L0,L1", "--batch-id", "wide")
    assert result.exit_code == 0, result.output
    runs = _runs("wide")
    got = sorted((r["scenario"], r["metadata"]["tierLabel"], r["agent"]) for r in runs)
    assert got == sorted((s, t, a) for s in ("add-one", "two") for t in ("L0-minimal", "L1-basic")
                         for a in ("oracle", "echo"))
    assert all(v == 1 for v in _cell_keys(runs).values())
    assert {r["status"] for r in runs if r["agent"] == "oracle"} == {"completed"}
    assert "successes/runs" in result.stdout and "2/2" not in result.stdout.split("successes/runs")[0]
    batch = json.loads(bench("batch", "wide", "--json").stdout)
    assert batch["totalRuns"] == 8 and batch["metadata"]["plannedCells"] == 8
    assert batch["completeness"] == {"plannedCells": 8, "storedCells": 8, "shardCount": None, "shardsReported": [],
                                     "shardsMissing": [], "complete": True}


def test_invocations_adding_iterations_to_a_batch_never_collide(env):
    for _ in range(2):
        assert bench("demo", "add-one", "--agent", "echo", "-n", "2", "--batch-id", "grow").exit_code == 0
    runs = _runs("grow")
    assert sorted(r["metadata"]["iteration"] for r in runs) == [0, 1, 2, 3]


def test_resume_runs_only_the_missing_cells_and_refuses_a_changed_scenario(env):
    assert bench("demo", "add-one", "--agent", "oracle", "-n", "2", "--batch-id", "r1").exit_code == 0
    result = bench("demo", "--agent", "oracle", "-n", "3", "--resume", "r1")
    assert result.exit_code == 0, result.output
    runs = _runs("r1")
    assert len(runs) == 6 and all(v == 1 for v in _cell_keys(runs).values())
    again = bench("demo", "--agent", "oracle", "-n", "3", "--resume", "r1")
    assert again.exit_code == 0 and "Nothing to run" in again.stderr and len(_runs("r1")) == 6

    (env / "suites" / "demo" / "scenarios" / "two" / "repo-fixture" / "calc.py").write_text("def add_one(x):\n"
                                                                                          "    return x\n")
    refused = bench("demo", "--agent", "oracle", "-n", "4", "--resume", "r1")
    assert refused.exit_code == 2
    assert "the scenario's files changed since run" in refused.stderr and "--force" in refused.stderr
    budgets = bench("demo", "add-one", "--agent", "oracle", "-n", "4", "--resume", "r1", "--max-turns", "9")
    assert budgets.exit_code == 2 and "the budgets changed" in budgets.stderr
    forced = bench("demo", "--agent", "oracle", "-n", "4", "--resume", "r1", "--force")
    assert forced.exit_code == 0, forced.output
    assert len(_runs("r1")) == 8
    assert bench("demo", "--agent", "oracle", "--resume", "nosuch").exit_code == 1  # not in the store


def test_retry_errors_redoes_only_infra_and_harness_errors(env, monkeypatch):
    import harness.scenarios.runner as runner

    real = runner.check_tools
    monkeypatch.setattr(runner, "check_tools",
                        lambda scenario, kind: "not installed: fake-tool" if scenario.name == "two" else real(scenario, kind))
    first = bench("demo", "--agent", "oracle", "--agent", "echo", "--batch-id", "rt")
    assert first.exit_code == 1  # infra errors exit 1
    before = {r["runId"]: r for r in _runs("rt")}
    infra = {rid for rid, r in before.items() if r["status"] == "error"}
    assert {before[rid]["scenario"] for rid in infra} == {"two"} and len(infra) == 2
    assert {r["status"] for r in before.values() if r["scenario"] == "add-one"} == {"completed", "failed"}

    monkeypatch.setattr(runner, "check_tools", real)
    retried = bench("demo", "--agent", "oracle", "--agent", "echo", "--batch-id", "rt", "--retry-errors")
    assert retried.exit_code == 0, retried.output
    after = _runs("rt")
    new = [r for r in after if r["runId"] not in before]
    assert len(after) == 6 and len(new) == 2
    assert {r["metadata"]["retryOf"] for r in new} == infra  # the earlier attempts stay stored
    assert {r["scenario"] for r in new} == {"two"}
    batch = json.loads(bench("batch", "rt", "--json").stdout)
    assert batch["totalRuns"] == 4 and batch["successfulRuns"] == 2  # the latest attempt of each cell
    shown = bench("batch", "rt")
    assert "redo an earlier attempt" in shown.stdout
    nothing = bench("demo", "--agent", "oracle", "--agent", "echo", "--batch-id", "rt", "--retry-errors")
    assert nothing.exit_code == 0 and "no run of the plan" in nothing.stderr
    assert bench("demo", "--retry-errors").exit_code == 2  # which batch?


def test_dry_run_lists_the_cells_and_a_cost_range_and_runs_nothing(env):
    result = bench("demo", "--agent", "anthropic:claude-haiku-4-5", "--agent", "oracle", "-n", "2",
                   "--max-cost", "0.25", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert len(plan["cells"]) == plan["plannedCells"] == 8
    by_agent = {g["cellGroup"].split("/")[3]: g for g in plan["groups"]}
    assert by_agent["oracle"]["basis"] == "free" and by_agent["oracle"]["costPerRunUsd"] == {"low": 0.0, "high": 0.0}
    api = by_agent["anthropic"]
    assert api["basis"] == "prices" and 0 < api["costPerRunUsd"]["low"] < api["costPerRunUsd"]["high"] == 0.25
    assert plan["costUsd"]["high"] == pytest.approx(4 * 0.25)
    assert "ANTHROPIC_API_KEY" in result.stderr  # said, not fatal: nothing runs
    assert not (env / "bench.db").exists()
    table = bench("demo", "--agent", "anthropic:claude-haiku-4-5", "--dry-run")
    assert "Plan for batch" in table.stdout and "Nothing was run" in table.stdout
    assert "no budget bounds it" in table.stdout  # without --max-cost the high end is unknown


def test_plan_input_errors_are_one_line(env):
    cases = [
        (("--all", "demo"), "--all runs every suite"),
        (("demo", "--tiers", "L9"), "L9"),
        (("demo", "nosuch"), "unknown scenario 'nosuch'"),
        (("demo", "--shard", "1/2"), "--shard needs --batch-id"),
        (("demo", "--shard", "5/2", "--batch-id", "b"), "--shard '5/2'"),
        (("demo", "--model", "m"), "--model/--models need --agent"),
        (("demo", "--resume", "a", "--batch-id", "b"), "name two batches"),
        (("--agent", "oracle"), "give a SUITE"),
    ]
    for args, fragment in cases:
        result = bench(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: ") and fragment in result.stderr, (args, result.stderr)


def test_bench_alone_prints_a_guide_and_suites_named_like_commands_are_refused(env):
    result = bench()
    assert result.exit_code == 0 and "bench list" in result.stdout and "--dry-run" in result.stdout
    make_scenario(env / "suites", suite="history", name="x")
    listed = bench("list", "--json")
    assert listed.exit_code == 1
    errors = [r["error"] for r in json.loads(listed.stdout)["scenarios"] if "error" in r]
    assert len(errors) == 1 and "suite 'history'" in errors[0] and "has the name of a bench command" in errors[0]
    from harness.scenarios.loading import RESERVED_SUITE_NAMES

    assert set(main.commands) <= RESERVED_SUITE_NAMES


# ------------------------------------------------------------------ processes


def _env(tmp_path: Path, suites: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_BENCHMARKS_")}
    env.update(ZE_BENCHMARKS_SUITES_DIR=str(suites), ZE_BENCHMARKS_DB=str(tmp_path / "bench.db"),
               ZE_BENCHMARKS_SPOOL_DIR=str(tmp_path / "spool"), ZE_BENCHMARKS_WORKSPACES_DIR=str(tmp_path / "ws"),
               **extra)
    return env


def test_resume_after_sigkill_finishes_the_plan_with_no_duplicate(tmp_path):
    suites = tmp_path / "suites"
    make_scenario(suites, name="slow-a", yaml_text=SLOW_YAML)
    make_scenario(suites, name="slow-b", yaml_text=SLOW_YAML)
    env = _env(tmp_path, suites)
    command = [BENCH, "demo", "--agent", "oracle", "-n", "3", "--batch-id", "killed"]
    proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if (tmp_path / "bench.db").exists():
            with sqlite3.connect(tmp_path / "bench.db") as conn:
                try:
                    stored = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
            if stored >= 2:
                break
        time.sleep(0.1)
    assert proc.poll() is None, "the plan finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    resumed = subprocess.run([*command[:-2], "--resume", "killed"], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "left to run" in resumed.stderr
    with sqlite3.connect(tmp_path / "bench.db") as conn:
        keys = [json.loads(m)["cellKey"] for (m,) in conn.execute("SELECT metadata FROM runs WHERE batch_id = 'killed'")]
        statuses = {s for (s,) in conn.execute("SELECT status FROM runs")}
    assert len(keys) == 6 and len(set(keys)) == 6 and statuses == {"completed"}


@pytest.mark.integration
def test_three_shard_processes_against_one_worker_dev_store_every_cell_once(tmp_path):
    from benchmarks import results_drills

    suites = _suite(tmp_path)
    port = results_drills._free_port()
    worker = results_drills.start_worker(tmp_path / "worker.db", port, tmp_path / "worker.log")
    try:
        env = _env(tmp_path, suites, ZE_BENCHMARKS_WORKER_URL=f"http://127.0.0.1:{port}",
                   ZE_BENCHMARKS_API_KEY=results_drills.KEY)
        plan = ["demo", "--agent", "oracle", "--agent", "echo", "--tiers", "L0,L1", "-n", "2", "--batch-id", "sharded"]
        dry = subprocess.run([BENCH, *plan, "--dry-run", "--json"], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=120)
        assert dry.returncode == 0, dry.stderr
        everything = set(json.loads(dry.stdout)["cells"])
        assert len(everything) == 24
        procs = [subprocess.Popen([BENCH, *plan, "--shard", f"{i}/3"], env=env, cwd=tmp_path,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (1, 2, 3)]
        for p in procs:
            out, err = p.communicate(timeout=600)
            assert p.returncode == 0, err
        listed = subprocess.run([BENCH, "history", "--batch-id", "sharded", "--json", "--limit", "500"], env=env,
                                cwd=tmp_path, capture_output=True, text=True, timeout=120)
        keys = Counter(r["metadata"]["cellKey"] for r in json.loads(listed.stdout))
        assert set(keys) == everything and set(keys.values()) == {1}
        shown = subprocess.run([BENCH, "batch", "sharded", "--json"], env=env, cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
        state = json.loads(shown.stdout)["completeness"]
        assert state == {"plannedCells": 24, "storedCells": 24, "shardCount": 3, "shardsReported": [1, 2, 3],
                         "shardsMissing": [], "complete": True}
        again = subprocess.run([BENCH, *plan, "--shard", "2/3"], env=env, cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
        assert again.returncode == 0 and "Nothing to run" in again.stderr  # a re-run shard adds nothing
    finally:
        results_drills.kill(worker)


# ------------------------------------------------------------------ the shipped examples


def _example_commands() -> list[list[str]]:
    """The bench commands of examples/, with their CI variables filled in."""
    gha = yaml.safe_load((ROOT / "examples" / "github-actions-matrix.yml").read_text())
    k8s = yaml.safe_load((ROOT / "examples" / "k8s-indexed-job.yaml").read_text())
    commands = []
    assert gha["jobs"]["bench"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    for step in gha["jobs"]["bench"]["steps"] + gha["jobs"]["report"]["steps"]:
        text = step.get("run", "")
        if ".venv/bin/bench" in text:
            text = text.replace("${{ matrix.shard }}", "2").replace('"$BATCH_ID"', "nightly-1")
            commands.append(text.split())
    spec = k8s["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 4
    container = spec["template"]["spec"]["containers"][0]
    shards = next(e["value"] for e in container["env"] if e["name"] == "SHARDS")
    assert int(shards) == spec["completions"]
    script = container["args"][0].replace("exec .venv/bin/bench", "printf '%s\\n' .venv/bin/bench")
    out = subprocess.run(["sh", "-c", script], env={"JOB_COMPLETION_INDEX": "3", "SHARDS": shards, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout.split("\n")
    commands.append([w for w in out if w])
    return commands


def test_the_shipped_examples_are_valid_yaml_naming_real_options(tmp_path, monkeypatch):
    commands = _example_commands()
    assert len(commands) == 3
    shards = [c[c.index("--shard") + 1] for c in commands if "--shard" in c]
    assert shards == ["2/4", "4/4"]  # JOB_COMPLETION_INDEX 3 is the last of 4
    monkeypatch.chdir(tmp_path)
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_SUITES_DIR", "ZE_BENCHMARKS_DB"):
        monkeypatch.delenv(name, raising=False)
    for command in commands:
        assert command[0] == ".venv/bin/bench"
        sub = command[1]
        known = bench(*([sub] if sub in main.commands else ["run"]), "--help").stdout
        for word in command[1:]:
            if word.startswith("--"):
                assert word in known, f"{word} is not an option of bench {sub}"
        if "--shard" in command:  # the command itself parses and plans (a dry run reads no store)
            result = bench(*command[1:], "--dry-run", "--json")
            assert result.exit_code == 0, result.output
            plan = json.loads(result.stdout)
            assert plan["shard"] == command[command.index("--shard") + 1] and plan["cells"]


def test_a_specialist_template_with_unknown_keys_is_run_with_a_warning(env):
    text = (ROOT / "templates" / "python-bugfixer.json5").read_text()
    template = env / "custom.json5"
    template.write_text(text.replace("{", "{\n  tone: 'terse',", 1))
    result = bench("demo", "add-one", "--agent", "oracle", "--specialist", str(template), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "tone: unknown key, kept but not used" in result.stderr
