"""The LLM judge evaluator against respx-mocked Anthropic and OpenAI HTTP APIs."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from harness.agents.base import AgentResult
from harness.grading.evaluators.base import EvaluationContext
from harness.grading.evaluators.llm_judge import categories_for, evaluate_llm_judge, infer_provider, weighted_score
from harness.sandbox import CommandResult
from harness.scenarios.model import JudgeConfig, Scenario
from harness.scenarios.workspace import WorkspaceDiff

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"

PATCH = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"

CATEGORIES = [
    ("correctness", 60.0, "Correctness (60%): the fix works"),
    ("code_quality", 40.0, "Code Quality (40%): clean change"),
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "ZE_BENCHMARKS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _ctx(tmp_path, judge: JudgeConfig) -> EvaluationContext:
    scenario = Scenario(
        suite="py-bugs", name="calc", path=tmp_path, suite_path=tmp_path, id="calc",
        description="add() subtracts", constraints={"blocklist": [{"name": "leftpad", "reason": "unneeded"}]},
        llm_judge=judge,
    )
    return EvaluationContext(
        scenario=scenario,
        workspace=tmp_path,
        prompt="Fix add() in calc.py so the tests pass.",
        agent_result=AgentResult(final_answer="I changed the minus to a plus."),
        diff=WorkspaceDiff(modified=["calc.py"], patch=PATCH),
        command_results={"test": CommandResult("pytest -q", 0, "3 passed", "", False, 120.0)},
    )


def _anthropic_reply(text: str, usage=None) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": usage or {"input_tokens": 900, "output_tokens": 120},
    })


def _openai_reply(text: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 700, "completion_tokens": 90, "total_tokens": 790},
    })


def _answer(correctness: int, quality: int) -> str:
    return json.dumps({"scores": {
        "correctness": {"score": correctness, "reasoning": "the diff fixes the operator"},
        "code_quality": {"score": quality, "reasoning": "minimal"},
    }, "summary": "good"})


@respx.mock
def test_judge_honours_scenario_model_temperature_and_max_tokens_on_anthropic(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    route = respx.post(ANTHROPIC_URL).mock(return_value=_anthropic_reply(_answer(5, 3)))
    judge = JudgeConfig(enabled=True, model="claude-haiku-4-5", temperature=0.3, max_tokens=777, categories=CATEGORIES)
    result = evaluate_llm_judge(_ctx(tmp_path, judge))
    assert result.status == "ok", result.details
    body = json.loads(route.calls[0].request.content)
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 777
    assert body["temperature"] == 0.3
    # weights 0.6 / 0.4 of (5-1)/4 = 1 and (3-1)/4 = 0.5
    assert result.score == pytest.approx(0.6 * 1.0 + 0.4 * 0.5)
    assert (result.tokens_in, result.tokens_out) == (900, 120)
    assert result.cost_usd is not None and result.cost_usd > 0


@respx.mock
def test_judge_prompt_contains_task_diff_answer_constraints_and_command_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    route = respx.post(ANTHROPIC_URL).mock(return_value=_anthropic_reply(_answer(4, 4)))
    evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True, model="claude-haiku-4-5", categories=CATEGORIES)))
    body = json.loads(route.calls[0].request.content)
    prompt = body["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(block["text"] for block in prompt)
    assert "+    return a + b" in prompt
    assert "Fix add() in calc.py" in prompt
    assert "I changed the minus to a plus." in prompt
    assert "leftpad" in prompt
    assert "pytest -q" in prompt and "3 passed" in prompt


@respx.mock
def test_judge_uses_openai_for_gpt_models_and_honours_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    route = respx.post(OPENAI_URL).mock(return_value=_openai_reply(_answer(3, 5)))
    judge = JudgeConfig(enabled=True, model="gpt-4o", temperature=0.0, max_tokens=1500, categories=CATEGORIES)
    result = evaluate_llm_judge(_ctx(tmp_path, judge))
    assert result.status == "ok", result.details
    body = json.loads(route.calls[0].request.content)
    assert body["model"] == "gpt-4o"
    assert body["temperature"] == 0.0
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 1500
    assert result.score == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)
    assert (result.tokens_in, result.tokens_out) == (700, 90)


@respx.mock
def test_judge_retries_once_after_unparsable_answer_then_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    route = respx.post(ANTHROPIC_URL).mock(
        side_effect=[_anthropic_reply("I think it is pretty good!"), _anthropic_reply("```json\n" + _answer(5, 5) + "\n```")]
    )
    result = evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True, model="claude-haiku-4-5", categories=CATEGORIES)))
    assert result.status == "ok"
    assert result.score == pytest.approx(1.0)
    assert route.call_count == 2
    retry_messages = json.loads(route.calls[1].request.content)["messages"]
    assert len(retry_messages) == 3  # original prompt, the bad answer, the correction
    assert result.tokens_in == 1800  # both calls count


@respx.mock
def test_judge_is_error_after_two_unparsable_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    route = respx.post(ANTHROPIC_URL).mock(
        side_effect=[_anthropic_reply("no json here"), _anthropic_reply(json.dumps({"scores": {"correctness": 9}}))]
    )
    result = evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True, model="claude-haiku-4-5", categories=CATEGORIES)))
    assert result.status == "error"
    assert route.call_count == 2
    assert "could not be parsed" in result.details
    assert result.tokens_out == 240  # the spend is still recorded


def test_judge_is_skipped_without_credentials(tmp_path):
    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(ANTHROPIC_URL)
        result = evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True, model="claude-haiku-4-5", categories=CATEGORIES)))
        assert not route.called
    assert result.status == "skipped"
    assert "ANTHROPIC_API_KEY" in result.details


def test_judge_without_model_or_any_credentials_is_skipped(tmp_path):
    result = evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True)))
    assert result.status == "skipped"


@respx.mock
def test_judge_default_model_follows_available_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    route = respx.post(OPENAI_URL).mock(return_value=_openai_reply(json.dumps({"scores": {
        c.slug: {"score": 5, "reasoning": "ok"} for c in categories_for([])
    }})))
    result = evaluate_llm_judge(_ctx(tmp_path, JudgeConfig(enabled=True)))
    assert result.status == "ok", result.details
    assert json.loads(route.calls[0].request.content)["model"] == "gpt-4.1"
    assert result.score == pytest.approx(1.0)


def test_category_weights_are_normalised_and_equal_when_absent():
    cats = categories_for([("a", 30.0, ""), ("b", 10.0, "")])
    assert [c.weight for c in cats] == pytest.approx([0.75, 0.25])
    even = categories_for([("a", 0.0, ""), ("b", 0.0, "")])
    assert [c.weight for c in even] == pytest.approx([0.5, 0.5])
    assert weighted_score({"a": 1, "b": 5}, cats) == pytest.approx(0.25)


def test_provider_is_inferred_from_model_name():
    assert infer_provider("claude-opus-4-1") == "anthropic"
    assert infer_provider("gpt-4o-mini") == "openai"
    assert infer_provider("o3-mini") == "openai"
    assert infer_provider("google/gemini-2.5-pro") == "openrouter"
    assert infer_provider("my-model", "openai-compatible") == "openai-compatible"
    with pytest.raises(ValueError, match="llm_judge.provider"):
        infer_provider("mystery-model")


JUDGED_YAML = """\
id: add-one
timeout_minutes: 5
validation:
  commands:
    test: "{pytest}"
llm_judge:
  enabled: true
  model: claude-haiku-4-5
  temperature: 0.2
  max_tokens: 900
  categories:
    - "Correctness (75%): Score 1-5 on whether add_one adds one"
    - "Code Quality (25%): Score 1-5 on a minimal change"
"""


@respx.mock
def test_judged_run_stores_the_judge_score_and_its_tokens_apart_from_the_agent(tmp_path, monkeypatch):
    from harness.testing.results import MemoryResults
    from support.scenario_builders import make_scenario

    from harness.scenarios.runner import RunOptions, run_batch
    from harness.scenarios.loading import load_scenario, resolve_prompt

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    make_scenario(tmp_path / "suites", yaml_text=JUDGED_YAML)
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    route = respx.post(ANTHROPIC_URL).mock(return_value=_anthropic_reply(json.dumps({"scores": {
        "correctness": {"score": 5, "reasoning": "x + 1 now"}, "code_quality": {"score": 3, "reasoning": "fine"}}})))
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="oracle", workspaces_root=tmp_path / "ws"), store)

    body = json.loads(route.calls[0].request.content)
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("claude-haiku-4-5", 0.2, 900)
    prompt = body["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(block["text"] for block in prompt)
    assert "+    return x + 1" in prompt  # the oracle's change, as a diff
    rec = store.runs[out.runs[0].record.run_id]
    judge = next(e for e in rec.evaluations if e.evaluator_name == "llm_judge")
    assert judge.score == pytest.approx(0.75 * 1.0 + 0.25 * 0.5)
    assert (rec.telemetry.judge_tokens_in, rec.telemetry.judge_tokens_out) == (900, 120)
    assert rec.telemetry.judge_cost_usd is not None and rec.telemetry.judge_cost_usd > 0
    assert rec.telemetry.tokens_in == 0  # the oracle agent spent nothing; the judge's tokens are apart


# --------------------------------------------------------------------------- the judge policy


def test_item1_a_local_base_url_never_sends_the_agents_code_to_a_judge_host_nobody_named(tmp_path, monkeypatch):
    """First hour, item 1: with any OPENAI_API_KEY and the agent's model at a local --base-url,
    no judge call goes to api.openai.com; the judge is skipped, saying how to name one."""
    import shutil
    from pathlib import Path

    from harness.grading.evaluators.llm_judge import JudgeChoice
    from harness.scenarios.runner import RunOptions, run_batch
    from harness.scenarios.loading import load_scenario, resolve_prompt
    from support.mock_models import MockModel

    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "suites" / "py-bugs", tmp_path / "suites" / "py-bugs")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key-of-the-user")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real-key-of-the-user")
    monkeypatch.delenv("ZE_BENCHMARKS_JUDGE_MODEL", raising=False)
    scenario = load_scenario("py-bugs", "pagination-off-by-one", tmp_path / "suites")
    local = "http://127.0.0.1:8765/v1"
    model = MockModel("openai", [("done", [])], "local-model")
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{local}/chat/completions").mock(side_effect=model)
        foreign = router.route(host__regex=r"api\.(openai|anthropic)\.com").mock(return_value=httpx.Response(500))
        outcome = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(
            agent="openai", model="local-model", sandbox="none", skip_warmup=True, workspaces_root=tmp_path / "ws",
            judge=JudgeChoice.parse(None), agent_options={"base_url": local}), None)
    record = outcome.runs[0].record
    assert not foreign.called
    judge = next(e for e in record.evaluations if e.evaluator_name == "llm_judge")
    assert judge.status == "skipped" and local in judge.details and "--judge PROVIDER:MODEL" in judge.details
    assert record.failure_class != "infra" and record.metadata["judge"] == "none"


def test_item1_without_a_base_url_the_judge_is_the_agents_own_provider(monkeypatch):
    from harness.agents import model_api
    from harness.grading.evaluators.llm_judge import JudgeChoice, resolve_judge
    from harness.scenarios.model import JudgeConfig

    def for_agent(choice, agent, base_url):
        return choice.for_agent(agent, base_url, model_api(agent))

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-anthropic")
    monkeypatch.delenv("ZE_BENCHMARKS_JUDGE_MODEL", raising=False)
    config = JudgeConfig(enabled=True)
    assert resolve_judge(config, for_agent(JudgeChoice(), "openai", None)).provider == "openai"
    assert resolve_judge(config, for_agent(JudgeChoice(), "anthropic:claude-haiku-4-5", None)).provider == "anthropic"
    assert resolve_judge(config, for_agent(JudgeChoice(), "codex", None)).provider == "openai"
    assert resolve_judge(config, for_agent(JudgeChoice(), "echo", None)).provider == "anthropic"  # the first with a key
    named = resolve_judge(config, for_agent(JudgeChoice.parse("openai:gpt-4.1"), "openai", "http://127.0.0.1:1/v1"))
    assert (named.provider, named.skip_reason) == ("openai", None)  # --judge names one: it runs
    monkeypatch.setenv("ZE_BENCHMARKS_JUDGE_MODEL", "claude-haiku-4-5")
    configured = resolve_judge(config, for_agent(JudgeChoice(), "openai", "http://127.0.0.1:1/v1"))
    assert (configured.provider, configured.model) == ("anthropic", "claude-haiku-4-5")
