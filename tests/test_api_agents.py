"""API agents end to end: respx mocks the Anthropic and OpenAI HTTP APIs, the official SDKs,
our provider layer, the tool loop and the sandboxed tools all run for real.

The mocked model reads a file, writes the fix, runs the tests and answers. The last tests run
a shipped scenario through the runner to a stored, successful run.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from harness.agents import create_agent
from harness.agents.api import DEFAULT_SYSTEM_PROMPT, compose_system_prompt
from harness.agents.base import AgentContext, Budgets
from support.mock_models import MockModel

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"
REPO = Path(__file__).resolve().parents[1]

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def fix_script(fixed_path: str, fixed_text: str, test_command: str):
    return [
        ("Let me look at the code.", [("read_file", {"path": fixed_path})]),
        ("", [("write_file", {"path": fixed_path, "content": fixed_text})]),
        ("", [("run_command", {"command": test_command})]),
        ("Fixed the bug and the tests pass.", []),
    ]


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "model-cache"))
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def calc_ctx(tmp_path, make_sandbox):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(BUGGY)
    (ws / "test_calc.py").write_text(TEST)
    return AgentContext(prompt="add() is broken; fix it.", sandbox=make_sandbox(ws), budgets=Budgets())


@pytest.mark.parametrize(
    "agent, url, api, model, env",
    [
        ("anthropic", ANTHROPIC_URL, "anthropic", "claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
        ("openai", OPENAI_URL, "openai", "gpt-4o-mini-2024-07-18", "OPENAI_API_KEY"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions", "openai", "anthropic/claude-sonnet-4.5", "OPENROUTER_API_KEY"),
    ],
)
@respx.mock
def test_agent_reads_fixes_tests_and_answers_through_the_real_sdk(calc_ctx, monkeypatch, agent, url, api, model, env):
    monkeypatch.setenv(env, "test-key")
    mock = MockModel(api, fix_script("calc.py", FIXED, "python3 -m pytest -q -p no:cacheprovider"), model)
    route = respx.post(url).mock(side_effect=mock)
    result = create_agent(agent).run(calc_ctx)

    assert result.status == "completed", result.error
    assert result.final_answer == "Fixed the bug and the tests pass."
    assert (calc_ctx.workspace / "calc.py").read_text() == FIXED
    assert route.call_count == 4 and result.turns == 4 and result.tool_calls == 3
    # What the tools returned really went back to the model.
    assert mock.tool_results(1) == [BUGGY]
    assert "exit code: 0" in mock.tool_results(3)[0] and "1 passed" in mock.tool_results(3)[0]
    assert result.tokens_in == sum(1000 + t for t in range(4))
    assert result.tokens_out == 400
    assert result.cost_usd is not None and result.cost_usd > 0
    assert len(result.latencies_ms) == 4
    assert mock.bodies[0]["messages"][0]["role"] in ("user", "system")
    assert [e["role"] for e in result.transcript][:2] == ["system", "user"]
    if api == "anthropic":
        assert result.cache_read_tokens == 500 * (0 + 1 + 2 + 3) and result.cache_write_tokens == 800
        assert {t["name"] for t in mock.bodies[0]["tools"]} == {"read_file", "write_file", "list_directory", "run_command"}
    else:
        assert mock.bodies[0]["messages"][0]["content"].startswith(DEFAULT_SYSTEM_PROMPT[:40])


@respx.mock
def test_openai_agent_with_base_url_talks_to_a_compatible_server_without_a_key(calc_ctx):
    mock = MockModel("openai", fix_script("calc.py", FIXED, "python3 -m pytest -q -p no:cacheprovider"), "qwen2.5-coder")
    route = respx.post("http://127.0.0.1:11434/v1/chat/completions").mock(side_effect=mock)
    result = create_agent("openai", model="qwen2.5-coder", base_url="http://127.0.0.1:11434/v1").run(calc_ctx)
    assert result.status == "completed" and (calc_ctx.workspace / "calc.py").read_text() == FIXED
    assert route.call_count == 4
    assert result.cost_usd is None  # a local model has no price: unknown, not zero


def test_missing_credentials_end_the_run_as_an_error_naming_the_variable(calc_ctx):
    result = create_agent("anthropic").run(calc_ctx)
    assert result.status == "error" and "ANTHROPIC_API_KEY" in result.error
    assert create_agent("openrouter").run(calc_ctx).error.count("OPENROUTER_API_KEY") == 1


@respx.mock
def test_a_run_is_a_new_sample_unless_replay_is_asked(calc_ctx, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    mock = MockModel("anthropic", fix_script("calc.py", FIXED, "true"), "claude-sonnet-4-6")
    route = respx.post(ANTHROPIC_URL).mock(side_effect=mock)
    first = create_agent("anthropic").run(calc_ctx)
    (calc_ctx.workspace / "calc.py").write_text(BUGGY)
    fresh = create_agent("anthropic").run(calc_ctx)  # the default: every answer asked again
    assert route.call_count == 8 and fresh.cached_calls == 0 and fresh.cost_usd == first.cost_usd
    (calc_ctx.workspace / "calc.py").write_text(BUGGY)
    calc_ctx.use_cache = True
    again = create_agent("anthropic").run(calc_ctx)
    assert route.call_count == 8
    assert again.status == "completed" and (again.model_calls, again.cached_calls) == (4, 4)
    # A replay reports what the original calls cost and used, and no latency of its own.
    assert again.cost_usd == first.cost_usd > 0 and again.tokens_in == first.tokens_in
    assert again.latencies_ms == [] and len(again.replayed_latencies_ms) == 4
    assert (calc_ctx.workspace / "calc.py").read_text() == FIXED  # cached answers still drive real tools
    calc_ctx.repeat_index = 1
    (calc_ctx.workspace / "calc.py").write_text(BUGGY)
    create_agent("anthropic").run(calc_ctx)
    assert route.call_count == 12


@respx.mock
def test_rate_limit_inside_a_run_is_retried_and_the_run_completes(calc_ctx, monkeypatch):
    import harness.models.providers.retry as retry

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    waits: list[float] = []
    monkeypatch.setattr(retry.RetryPolicy, "__init__", _policy_init_with(waits))
    mock = MockModel("openai", [("done", [])], "gpt-4o-mini")
    responses = iter([httpx.Response(429, headers={"retry-after": "3"}, json={"error": {"message": "rate"}})])

    def side_effect(request):
        try:
            return next(responses)
        except StopIteration:
            return mock(request)

    respx.post(OPENAI_URL).mock(side_effect=side_effect)
    result = create_agent("openai").run(calc_ctx)
    assert result.status == "completed" and result.final_answer == "done"
    assert len(waits) == 1 and waits[0] >= 3.0


def _policy_init_with(waits):
    original = __import__("harness.models.providers.retry", fromlist=["RetryPolicy"]).RetryPolicy.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.sleep = waits.append

    return init


def test_specialist_prompt_is_added_to_the_default_system_prompt():
    assert compose_system_prompt(None) == DEFAULT_SYSTEM_PROMPT
    assert compose_system_prompt("Prefer small diffs.").endswith("\n\nPrefer small diffs.")
    assert compose_system_prompt("Prefer small diffs.").startswith(DEFAULT_SYSTEM_PROMPT)


@respx.mock
def test_specialist_prompt_reaches_the_model(calc_ctx, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    mock = MockModel("anthropic", [("ok", [])], "claude-sonnet-4-6")
    respx.post(ANTHROPIC_URL).mock(side_effect=mock)
    calc_ctx.system_prompt = "You are a pagination specialist."
    create_agent("anthropic").run(calc_ctx)
    assert mock.bodies[0]["system"][0]["text"].endswith("You are a pagination specialist.")


# -- a shipped scenario through the runner, to a stored successful run --------------------

SCENARIO = ("py-bugs", "pagination-off-by-one")


@pytest.mark.integration
@pytest.mark.parametrize(
    "agent, url, api, model",
    [
        ("anthropic", ANTHROPIC_URL, "anthropic", "claude-sonnet-4-6"),
        ("openai", OPENAI_URL, "openai", "gpt-4o-mini"),
    ],
)
@respx.mock
def test_shipped_scenario_runs_end_to_end_to_a_stored_successful_run(tmp_path, monkeypatch, agent, url, api, model):
    from harness.results import open_client
    from harness.scenarios.runner import RunOptions, run_batch
    from harness.scenarios.loading import load_scenario, resolve_prompt

    suites = REPO / "suites"
    scenario = load_scenario(*SCENARIO, suites)
    prompt = resolve_prompt(scenario, "L1")
    solution = scenario.solution_dir / "pagekit" / "paginator.py"
    mock = MockModel(
        api,
        fix_script("pagekit/paginator.py", solution.read_text(), scenario.validation_commands["test"]),
        model,
    )
    route = respx.post(url).mock(side_effect=mock)
    monkeypatch.chdir(tmp_path)
    client = open_client(db_path=tmp_path / "bench.db")
    # The key goes to the agent only, so the LLM judge has no credentials and is skipped.
    options = RunOptions(
        agent=agent,
        model=model,
        workspaces_root=tmp_path / "workspaces",
        agent_options={"api_key": "test-key"},
    )
    outcome = run_batch(scenario, prompt, options, client)

    run = outcome.runs[0]
    assert route.call_count == 4
    assert "exit code: 0" in mock.tool_results(3)[0]
    stored = client.get_run(run.record.run_id)
    assert stored is not None
    assert stored.status == "completed" and stored.is_successful, (stored.status, stored.failure_class)
    assert stored.agent == agent
    telemetry = stored.telemetry
    assert telemetry.tool_calls == 3 and telemetry.turns == 4
    assert telemetry.tokens_in == sum(1000 + t for t in range(4)) and telemetry.tokens_out == 400
    assert telemetry.cost_usd is not None and telemetry.cost_usd > 0
    assert len(telemetry.latencies_ms) == 4
    evaluations = {e.evaluator_name: e for e in stored.evaluations}
    assert evaluations["hidden_tests"].score == 1.0
    transcript = client.get_transcript(run.record.run_id)
    assert transcript and transcript[-1]["content"] == "Fixed the bug and the tests pass."
    client.close()


@respx.mock
def test_malformed_openai_tool_arguments_reach_the_model_as_an_error_result(calc_ctx, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    bodies: list[dict] = []

    def model(request):
        body = json.loads(request.content)
        bodies.append(body)
        if len(bodies) == 1:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "calc.py"'}}],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": "gave up"}, "stop"
        return httpx.Response(
            200,
            json={
                "id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    respx.post(OPENAI_URL).mock(side_effect=model)
    result = create_agent("openai").run(calc_ctx)
    assert result.status == "completed" and result.final_answer == "gave up"
    tool_message = bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "c1"
    assert tool_message["content"].startswith("ERROR:") and "not a valid JSON object" in tool_message["content"]
    # The malformed call is replayed exactly as the model sent it.
    assert bodies[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == '{"path": "calc.py"'


@respx.mock
def test_turn_budget_through_a_real_api_agent_ends_as_budget_exceeded(calc_ctx, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    endless = [("", [("list_directory", {})])] * 10
    respx.post(ANTHROPIC_URL).mock(side_effect=MockModel("anthropic", endless, "claude-sonnet-4-6"))
    calc_ctx.budgets = Budgets(max_turns=2)
    result = create_agent("anthropic").run(calc_ctx)
    assert result.status == "budget_exceeded" and result.turns == 2 and result.tool_calls == 2
    assert result.cost_usd > 0 and len(result.latencies_ms) == 2
