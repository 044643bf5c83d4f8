"""Integrity at the command line: refusing before spending, the sandbox and judge options, missing
tools, mixed sandboxes in one batch, keys that stay home, and `bench doctor`."""

from __future__ import annotations

import json

import httpx
import pytest
import respx
from click.testing import CliRunner

from harness.cli.bench import main
from harness.grading.evaluators.llm_judge import JudgeChoice, resolve_judge
from harness.models.providers import get_provider
from harness.models.providers.types import ChatRequest, Message
from harness.scenarios.runner import config_hash
from harness.scenarios.loading import load_scenario, resolve_prompt
from harness.scenarios.model import JudgeConfig
from support.scenario_builders import make_scenario


@pytest.fixture
def env(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN",
                 "ANTHROPIC_AUTH_TOKEN", "ZE_BENCHMARKS_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _refused(result, *fragments):
    assert result.exit_code == 2, result.output
    for fragment in fragments:
        assert fragment in result.stderr
    assert "Traceback" not in result.output


def _stored_runs(env) -> int:
    out = bench("history", "--json")
    return len(json.loads(out.stdout)) if out.exit_code == 0 else 0


# --------------------------------------------------------------------------- refuse before spending

def test_max_cost_for_a_model_without_a_price_is_refused_before_any_run(env, monkeypatch):
    result = bench("demo", "add-one", "--agent", "openai", "--base-url", "http://127.0.0.1:9/v1",
                   "--model", "my-local-model", "--max-cost", "0.5")
    _refused(result, "--max-cost cannot be enforced", "my-local-model")
    assert _stored_runs(env) == 0


def test_max_cost_with_a_priced_model_is_accepted_by_the_preflight(env, monkeypatch):
    from harness.agents import create_agent

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert create_agent("anthropic", model="claude-sonnet-4-6").cost_known() is True


def test_claude_code_without_its_cli_is_refused_before_any_run(env, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_TOOLS_DIR", str(env / "no-tools"))
    monkeypatch.delenv("ZE_BENCHMARKS_CLAUDE_CODE_BIN", raising=False)
    _refused(bench("demo", "add-one", "--agent", "claude-code"), "not installed", "bench agents install claude-code")
    assert _stored_runs(env) == 0


def test_claude_code_without_credentials_is_refused_before_any_run(env, monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ZE_BENCHMARKS_CLAUDE_CODE_BIN", str(fake))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _refused(bench("demo", "add-one", "--agent", "claude-code"), "needs ANTHROPIC_API_KEY")


def test_sandbox_bwrap_where_it_cannot_run_is_refused_and_auto_falls_back_with_a_warning(env, monkeypatch):
    from harness.sandbox import bwrap

    monkeypatch.setattr(bwrap, "bwrap_executable", lambda: None)
    bwrap.probe.cache_clear()
    try:
        _refused(bench("demo", "add-one", "--sandbox", "bwrap"), "--sandbox bwrap", "not installed")
        result = bench("demo", "add-one", "--agent", "oracle", "--json")
        assert result.exit_code == 0, result.output
        assert "process-group confinement only" in result.stderr
        run = json.loads(result.stdout)["runs"][0]
        assert run["metadata"]["sandbox"]["kind"] == "none"
    finally:
        bwrap.probe.cache_clear()


@pytest.mark.parametrize("bad", ["nosuchprovider", "anthropic:"])
def test_a_bad_judge_option_is_refused(env, bad):
    _refused(bench("demo", "add-one", "--judge", bad), "--judge")


# --------------------------------------------------------------------------- the judge choice

def test_judge_none_is_recorded_and_changes_the_config_hash(env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    scenario = load_scenario("demo", "add-one", env / "suites")
    scenario.llm_judge = JudgeConfig(enabled=True)
    off = resolve_judge(scenario.llm_judge, JudgeChoice.parse("none"))
    auto = resolve_judge(scenario.llm_judge, JudgeChoice.parse(None))
    explicit = resolve_judge(scenario.llm_judge, JudgeChoice.parse("openai:gpt-4.1-mini", "http://127.0.0.1:9/v1"))
    assert off.identity == "none" and "--judge none" in off.describe()
    assert auto.identity == "anthropic:claude-sonnet-4-6"
    assert explicit.provider == "openai-compatible" and explicit.identity.endswith("@http://127.0.0.1:9/v1")
    prompt = resolve_prompt(scenario, "L1")
    hashes = {config_hash(scenario, prompt, "echo", None, judge=j.identity) for j in (off, auto, explicit)}
    assert len(hashes) == 3
    assert config_hash(scenario, prompt, "echo", None, sandbox="bwrap") != config_hash(scenario, prompt, "echo", None,
                                                                                         sandbox="none")


def test_a_skipped_judge_says_why_on_the_console(env):
    yaml_file = env / "suites" / "demo" / "scenarios" / "add-one" / "scenario.yaml"
    yaml_file.write_text(yaml_file.read_text() + "llm_judge:\n  enabled: true\n")
    result = bench("demo", "add-one", "--agent", "oracle", "--judge", "none")
    assert result.exit_code == 0
    assert "judge skipped: turned off (--judge none)" in result.stderr
    result = bench("demo", "add-one", "--agent", "oracle")
    assert "judge skipped: no judge credentials" in result.stderr


@respx.mock
def test_the_judge_at_a_base_url_gets_no_provider_key(env, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-never-leaves")
    yaml_file = env / "suites" / "demo" / "scenarios" / "add-one" / "scenario.yaml"
    yaml_file.write_text(yaml_file.read_text() + "llm_judge:\n  enabled: true\n  categories: ['Correctness (100%): works']\n")
    seen = []

    def judge(request):
        seen.append(request.headers.get("authorization", ""))
        answer = json.dumps({"scores": {"correctness": {"score": 5, "reasoning": "ok"}}, "summary": "fine"})
        return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": answer}}],
                                         "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})

    respx.post("http://judge.test/v1/chat/completions").mock(side_effect=judge)
    result = bench("demo", "add-one", "--agent", "oracle", "--judge", "openai:judge-model",
                   "--judge-base-url", "http://judge.test/v1", "--json")
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)["runs"][0]
    judged = next(e for e in run["evaluations"] if e["evaluatorName"] == "llm_judge")
    assert judged["status"] == "ok" and judged["score"] == 1.0
    assert seen and all("sk-real-openai-key" not in h for h in seen)
    assert run["metadata"]["judge"] == "openai-compatible:judge-model@http://judge.test/v1"


@respx.mock
def test_a_provider_with_a_foreign_base_url_never_sends_the_environment_key(monkeypatch, tmp_path):
    """As `mint enrich --provider openai --base-url http://127.0.0.1:PORT/v1` builds it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-never-leaves")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real-anthropic-key-never-leaves")
    seen = []

    def reply(request):
        seen.append(dict(request.headers))
        return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                                         "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": "hi"}}],
                                         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    respx.post("http://127.0.0.1:8080/v1/chat/completions").mock(side_effect=reply)
    provider = get_provider("openai", base_url="http://127.0.0.1:8080/v1")
    provider.chat(ChatRequest(messages=[Message(role="user", content="hi")], model="m"), use_cache=False)
    assert provider.name == "openai-compatible"
    assert seen and "sk-real" not in json.dumps(seen)
    anthropic = get_provider("anthropic", base_url="http://127.0.0.1:8081")
    assert anthropic.api_key != "sk-real-anthropic-key-never-leaves"
    assert get_provider("openai").api_key == "sk-real-openai-key-never-leaves"


# --------------------------------------------------------------------------- missing tools, mixed sandboxes

def test_a_missing_validation_program_is_an_infra_error_and_no_agent_runs(env):
    yaml_file = env / "suites" / "demo" / "scenarios" / "add-one" / "scenario.yaml"
    yaml_file.write_text("id: add-one\nvalidation:\n  commands:\n    install: zebench-no-such-installer --ci\n"
                         "    test: \"{x}\"\n".replace("{x}", "true"))
    result = bench("demo", "add-one", "--agent", "oracle", "--json")
    assert result.exit_code == 1  # the run is stored, as an infrastructure error
    run = json.loads(result.stdout)["runs"][0]
    assert (run["status"], run["failureClass"]) == ("error", "infra")
    assert "zebench-no-such-installer" in run["metadata"]["error"] and "bench doctor" in run["metadata"]["error"]
    assert "agentStatus" not in run["metadata"]  # nothing was spent on an agent
    assert "zebench-no-such-installer" in result.stderr


def test_a_missing_python_module_is_an_infra_error(env):
    yaml_file = env / "suites" / "demo" / "scenarios" / "add-one" / "scenario.yaml"
    yaml_file.write_text("id: add-one\nvalidation:\n  commands:\n    test: python3 -m zebench_no_such_module -q\n")
    run = json.loads(bench("demo", "add-one", "--agent", "oracle", "--json").stdout)["runs"][0]
    assert (run["status"], run["failureClass"]) == ("error", "infra")
    assert "python module zebench_no_such_module" in run["metadata"]["error"]


def test_a_batch_mixing_sandbox_kinds_says_so_in_bench_batch_and_mint(env):
    from harness.sandbox.bwrap import probe

    if probe() is not None:
        pytest.skip(f"needs bwrap: {probe()}")
    assert bench("demo", "add-one", "--agent", "oracle", "--batch-id", "mixed", "--sandbox", "bwrap").exit_code == 0
    assert bench("demo", "add-one", "--agent", "echo", "--batch-id", "mixed", "--sandbox", "none").exit_code == 0
    shown = bench("batch", "mixed")
    assert "different sandboxes" in shown.stdout and "1 in bwrap" in shown.stdout and "1 in none" in shown.stdout
    from harness.mint.comparison import comparison_section
    from harness.results import open_client

    with open_client() as client:
        runs = client.get_batch("mixed").runs
    section = comparison_section([r for r in runs if r.agent == "echo"], [r for r in runs if r.agent == "oracle"])
    assert any("different sandboxes" in note for note in section["notes"])


# --------------------------------------------------------------------------- doctor

def test_doctor_reports_every_check_and_how_to_fix_what_is_missing(env, monkeypatch):
    result = bench("doctor", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    names = [c["name"] for c in data["checks"]]
    assert names == ["results store", "bwrap", "containers", "sandbox user", "cgroups", "prlimit", "pytest", "node", "pnpm", "chromium",
                     "agent CLIs", "local model"]
    assert all(c["status"] in ("ok", "missing", "limited") for c in data["checks"])
    assert all(c["fix"] for c in data["checks"] if c["status"] == "missing")
    assert data["sandbox"].startswith("--sandbox auto")
    monkeypatch.setenv("PATH", str(env / "empty-bin"))
    node = next(c for c in json.loads(bench("doctor", "--json").stdout)["checks"] if c["name"] == "node")
    assert node["status"] == "missing" and "Node 20.11" in node["fix"]
    assert "bench doctor" in bench("doctor").stdout


def test_the_library_refuses_an_unenforceable_cost_budget_too(env):
    from harness.agents.base import Budgets
    from harness.scenarios.runner import RunOptions, run_batch

    scenario = load_scenario("demo", "add-one", env / "suites")
    options = RunOptions(agent="openai", model="my-local-model", agent_options={"base_url": "http://127.0.0.1:9/v1"},
                         budgets=Budgets(max_cost_usd=1.0))
    with pytest.raises(ValueError, match="--max-cost cannot be enforced"):
        run_batch(scenario, resolve_prompt(scenario, "L1"), options, None)
