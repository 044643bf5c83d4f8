"""The bench CLI end to end on a small local suite: run, list, batches, batch, history, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from support.scenario_builders import make_scenario, use_local_store

YAML = """\
id: add-one
title: Make add_one add one
validation:
  commands:
    test: "{pytest}"
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    make_scenario(suites, yaml_text=YAML)
    use_local_store(monkeypatch, tmp_path, suites)
    return tmp_path


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_oracle_reports_pass_and_stores_the_run(env):
    result = bench("demo", "add-one", "--agent", "oracle")
    assert result.exit_code == 0, result.output
    assert "✓ PASS" in result.stdout and "Run ID:" in result.stdout and "Batch ID:" in result.stdout
    assert "test:" in result.stdout and "Tokens:" in result.stdout
    batch_id = next(line.split()[-1] for line in result.stdout.splitlines() if "Batch ID:" in line)
    shown = bench("batch", batch_id, "--json")
    data = json.loads(shown.stdout)
    assert data["totalRuns"] == 1 and data["successfulRuns"] == 1
    assert data["runs"][0]["status"] == "completed" and data["runs"][0]["agent"] == "oracle"
    assert not any((env / "workspaces").iterdir())  # the workspace and its grading copy are gone
    assert not (env / "results" / "workspaces").exists()


def test_run_json_prints_stored_records(env):
    result = bench("demo", "add-one", "--agent", "echo", "--iterations", "2", "--parallel", "2",
                   "--batch-id", "b-echo", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["batch"]["batchId"] == "b-echo" and data["batch"]["totalRuns"] == 2
    assert [r["status"] for r in data["runs"]] == ["failed", "failed"]
    assert data["runs"][0]["evaluations"][0]["evaluatorName"] == "test"
    assert data["runs"][0]["telemetry"]["toolCalls"] == 0
    history = json.loads(bench("history", "--batch-id", "b-echo", "--json").stdout)
    assert {r["runId"] for r in history} == {r["runId"] for r in data["runs"]}
    batches = json.loads(bench("batches", "--json").stdout)
    assert [b["batchId"] for b in batches] == ["b-echo"]


def test_run_echo_shows_fail_with_exit_zero(env):
    result = bench("demo", "add-one")  # default agent: echo
    assert result.exit_code == 0
    assert "✗ FAIL" in result.stdout and "agent echo" in result.stdout


def test_keep_workspace_leaves_the_workspace(env):
    result = bench("demo", "add-one", "--agent", "oracle", "--keep-workspace")
    assert result.exit_code == 0
    kept = list((env / "workspaces").iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("demo-add-one-")
    assert "return x + 1" in (kept[0] / "calc.py").read_text()


def _one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err
    for fragment in fragments:
        assert fragment in err
    return err


def test_broken_yaml_is_a_one_line_error(env):
    (env / "suites/demo/scenarios/add-one/scenario.yaml").write_text("id: [unclosed\n")
    _one_line_error(bench("demo", "add-one"), "scenario.yaml", "invalid YAML")


def test_schema_violation_names_the_field(env):
    (env / "suites/demo/scenarios/add-one/scenario.yaml").write_text("timeout_minutes: soon\n")
    _one_line_error(bench("demo", "add-one"), "scenario.yaml", "timeout_minutes")


def test_unknown_tier_lists_available_tiers(env):
    _one_line_error(bench("demo", "add-one", "--tier", "L7"), "no prompt for tier 'L7'",
                    "available: L0-minimal, L1-basic, L2-directed")


def test_missing_fixture_is_reported(env):
    shutil.rmtree(env / "suites/demo/scenarios/add-one/repo-fixture")
    _one_line_error(bench("demo", "add-one"), "missing fixture")


def test_unknown_agent_is_reported_and_nothing_is_stored(env):
    _one_line_error(bench("demo", "add-one", "--agent", "gpt-genius"), "unknown agent 'gpt-genius'", "oracle")
    assert json.loads(bench("history", "--json").stdout) == []


def test_unknown_scenario_and_suite(env):
    _one_line_error(bench("demo", "nope"), "unknown scenario 'nope'")
    _one_line_error(bench("nope", "add-one"), "'nope' is neither a command nor a suite.", "Suites: demo")
    _one_line_error(bench("dmeo", "add-one"), "did you mean `bench demo` (a suite)?")
    _one_line_error(bench("batchs"), "did you mean", "`bench batch` (a command)", "`bench batches` (a command)")


def test_list_shows_scenarios_tiers_and_agents(env):
    result = bench("list", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["scenarios"] == [{
        "suite": "demo", "scenario": "add-one", "id": "add-one", "title": "Make add_one add one",
        "difficulty": None, "tags": [], "tiers": ["L0-minimal", "L1-basic", "L2-directed"], "hasSolution": True,
        "hasHiddenTests": False, "warnings": []}]
    assert {"echo", "oracle"} <= set(data["agents"])
    text = bench("list")
    assert "add-one" in text.stdout and "L0 L1 L2" in text.stdout


def test_list_reports_broken_scenarios_with_exit_one(env):
    make_scenario(env / "suites", name="broken", yaml_text="timeout_minutes: [\n")
    result = bench("list", "--json")
    assert result.exit_code == 1
    broken = [s for s in json.loads(result.stdout)["scenarios"] if s["scenario"] == "broken"]
    assert "invalid YAML" in broken[0]["error"]


def test_batch_not_found(env):
    result = bench("batch", "batch_missing")
    assert result.exit_code == 1 and "batch 'batch_missing' not found" in result.stderr


def test_empty_store_messages(env):
    assert "No batches stored yet" in bench("batches").stdout
    assert "No runs stored yet" in bench("history").stdout


def test_bench_help_does_not_import_model_sdks():
    code = ("import sys, harness.cli.bench as b; from click.testing import CliRunner; "
            "CliRunner().invoke(b.main, ['--help']); print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_verbose_shows_evaluation_details(env):
    result = bench("demo", "add-one", "--agent", "echo", "-v")
    assert result.exit_code == 0
    assert "1 failed" in result.stdout and "$ " in result.stdout  # the test command and its output


def test_show_prints_a_stored_run_and_its_transcript(env):
    data = json.loads(bench("demo", "add-one", "--agent", "echo", "--json").stdout)
    run_id = data["runs"][0]["runId"]
    text = bench("show", run_id, "--transcript")
    assert text.exit_code == 0
    assert run_id in text.stdout and "✗ FAIL" in text.stdout
    assert "user: add_one(1) should be 2; fix calc.py." in text.stdout
    shown = json.loads(bench("show", run_id, "--json", "--transcript").stdout)
    assert shown["runId"] == run_id and shown["transcript"][0]["content"] == "add_one(1) should be 2; fix calc.py."
    missing = bench("show", "run_missing")
    assert missing.exit_code == 1 and "run 'run_missing' not found" in missing.stderr


def test_run_options_may_come_before_the_suite_and_scenario(env, monkeypatch):
    monkeypatch.delenv("ZE_BENCHMARKS_SUITES_DIR")
    result = bench("--suites-dir", str(env / "suites"), "--agent", "oracle", "--json", "demo", "add-one")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["runs"][0]["agent"] == "oracle" and data["runs"][0]["isSuccessful"] is True


@pytest.mark.parametrize("agent, env_var", [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"),
                                            ("openrouter", "OPENROUTER_API_KEY")])
def test_missing_api_key_is_refused_before_any_run(env, monkeypatch, agent, env_var):
    monkeypatch.delenv(env_var, raising=False)
    _one_line_error(bench("demo", "add-one", "--agent", agent, "--iterations", "3"), env_var)
    assert json.loads(bench("history", "--json").stdout) == []


def test_openai_compatible_server_needs_no_key(env, monkeypatch):
    from harness.agents import create_agent

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert create_agent("openai", base_url="http://127.0.0.1:9/v1").preflight() is None
    assert "OPENAI_API_KEY" in create_agent("openai").preflight()


def test_a_command_imports_its_own_module_only_and_help_lists_them_all():
    code = ("import sys\n"
            "from click.testing import CliRunner\n"
            "from harness.cli.bench import main\n"
            "r = CliRunner().invoke(main, ['fleet', '--help'])\n"
            "assert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in ('harness.cli.stress_cmd', 'harness.cli.view_cmd', 'harness.cli.fleet_cmd')"
            " if m in sys.modules))\n"
            "r = CliRunner().invoke(main, ['--help'])\n"
            "print(r.exit_code, 'stress' in r.output, 'view' in r.output, 'fleet' in r.output)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["['harness.cli.fleet_cmd']", "0 True True True"]
    assert {"run", "list", "batch", "fleet", "view"} <= set(main.commands)
    assert "no-such-command" not in main.commands and main.commands.get("no-such-command") is None
