"""The shared tool loop, driven by a scripted provider: budgets, tool errors, telemetry, transcript."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.agents.base import AgentContext, Budgets
from harness.agents.loop import LoopSettings, Transcript, run_tool_loop
from harness.models.providers.types import ChatResponse, ProviderError, ToolCall, Usage
from harness.tools import ToolConfig, Toolset


class ScriptedProvider:
    """Answers each chat() with the next scripted response and keeps the requests."""

    name = "scripted"

    def __init__(self, responses, cost=0.01):
        self.responses = list(responses)
        self.requests = []
        self.cost = cost

    def chat(self, request, *, repeat_index=0, use_cache=False, deadline=None, record=None):
        self.requests.append(request)
        if not self.responses:
            raise AssertionError("the loop asked for more turns than scripted")
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def reply(text="", calls=(), tokens=(100, 10), cost=0.01, cache=(0, 0)):
    return ChatResponse(
        text=text,
        tool_calls=list(calls),
        usage=Usage(tokens[0], tokens[1], cache[0], cache[1]),
        model="scripted-model",
        stop_reason="tool_use" if calls else "end_turn",
        latency_ms=12.5,
        cost_usd=cost,
    )


def call(name, args, cid=None, raw=None):
    return ToolCall(id=cid or f"id_{name}_{id(args)}", name=name, arguments=args, raw_arguments=raw or "")


@pytest.fixture
def ctx(tmp_path, make_sandbox):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")

    def make(**budget):
        return AgentContext(prompt="do the task", sandbox=make_sandbox(ws), budgets=Budgets(**budget))

    return make


def run(ctx, responses, **kw):
    provider = ScriptedProvider(responses)
    result = run_tool_loop(ctx, provider, Toolset.for_context(ctx), LoopSettings(model="scripted-model", system="sys", **kw))
    return result, provider


def test_parallel_tool_calls_all_run_and_return_together(ctx):
    c = ctx()
    result, provider = run(
        c,
        [
            reply(calls=[call("read_file", {"path": "a.txt"}, "c1"), call("write_file", {"path": "b.txt", "content": "B"}, "c2")]),
            reply("all done"),
        ],
    )
    assert result.status == "completed" and result.final_answer == "all done"
    assert result.tool_calls == 2 and result.turns == 2
    second = provider.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool", "tool"]
    assert [m.tool_call_id for m in second[2:]] == ["c1", "c2"]
    assert second[2].content == "alpha\n"
    assert (c.workspace / "b.txt").read_text() == "B"


def test_telemetry_sums_tokens_cache_cost_and_latencies(ctx):
    result, _ = run(
        ctx(),
        [reply(calls=[call("list_directory", {})], tokens=(100, 20), cache=(5, 7), cost=0.25), reply("ok", tokens=(50, 5), cost=0.5)],
    )
    assert (result.tokens_in, result.tokens_out) == (150, 25)
    assert (result.cache_read_tokens, result.cache_write_tokens) == (5, 7)
    assert result.cost_usd == pytest.approx(0.75)
    assert result.latencies_ms == [12.5, 12.5]
    assert result.model == "scripted-model"


def test_one_unknown_price_makes_the_run_cost_unknown(ctx):
    result, _ = run(ctx(), [reply(calls=[call("list_directory", {})], cost=None), reply("ok", cost=0.5)])
    assert result.cost_usd is None


def test_malformed_tool_arguments_become_an_error_result_and_the_loop_continues(ctx):
    result, provider = run(
        ctx(),
        [reply(calls=[ToolCall(id="bad", name="read_file", arguments=None, raw_arguments='{"path": ')]), reply("recovered")],
    )
    assert result.status == "completed" and result.final_answer == "recovered"
    tool_msg = provider.requests[1].messages[-1]
    assert tool_msg.is_error and "not a valid JSON object" in tool_msg.content
    assert result.transcript[2]["tool_calls"][0]["arguments"] == '{"path": '


def test_tool_failures_are_returned_to_the_model_not_raised(ctx):
    result, provider = run(
        ctx(),
        [reply(calls=[call("read_file", {"path": "../../etc/passwd"}), call("no_such_tool", {})]), reply("fine")],
    )
    results = provider.requests[1].messages[-2:]
    assert all(m.is_error for m in results)
    assert result.status == "completed"


def test_max_turns_ends_the_run_as_budget_exceeded(ctx):
    loop_forever = [reply(calls=[call("list_directory", {})]) for _ in range(3)]
    result, provider = run(ctx(max_turns=3), loop_forever)
    assert result.status == "budget_exceeded" and result.turns == 3 and len(provider.requests) == 3
    assert "max turns (3)" in result.error
    assert result.transcript[-1]["role"] == "note"


def test_token_budget_ends_the_run_with_telemetry_kept(ctx):
    result, _ = run(ctx(max_total_tokens=250), [reply(calls=[call("list_directory", {})], tokens=(100, 10)) for _ in range(5)])
    assert result.status == "budget_exceeded" and "token budget" in result.error
    assert result.turns == 3 and result.tokens_in == 300


def test_cost_budget_ends_the_run(ctx):
    result, _ = run(ctx(max_cost_usd=0.05), [reply(calls=[call("list_directory", {})], cost=0.03) for _ in range(5)])
    assert result.status == "budget_exceeded" and "cost budget" in result.error
    assert result.turns == 2 and result.cost_usd == pytest.approx(0.06)


def test_max_output_tokens_per_call_is_sent_with_each_request(ctx):
    _, provider = run(ctx(max_output_tokens_per_call=321), [reply("x")])
    assert provider.requests[0].max_tokens == 321
    assert provider.requests[0].system == "sys"
    assert [t.name for t in provider.requests[0].tools] == ["read_file", "write_file", "list_directory", "run_command"]


def test_passed_deadline_ends_the_run_as_timeout(ctx):
    c = ctx()
    c.deadline = time.monotonic() - 1
    result, provider = run(c, [reply("never")])
    assert result.status == "timeout" and provider.requests == []


def test_provider_failure_ends_the_run_as_error_keeping_earlier_turns(ctx):
    refused = ProviderError("anthropic: HTTP 400: bad", kind="refused", status=400)
    result, _ = run(ctx(), [reply(calls=[call("list_directory", {})]), refused])
    assert result.status == "error" and "HTTP 400" in result.error
    assert result.turns == 1 and result.tool_calls == 1
    assert result.error_kind is None  # the request was refused: the agent's side


def test_provider_outage_after_progress_is_an_infra_error_with_the_turns_kept(ctx):
    down = ProviderError("anthropic: giving up after retries: HTTP 503", kind="unavailable", status=503)
    result, _ = run(ctx(), [reply(calls=[call("list_directory", {})]), down])
    assert (result.status, result.error_kind) == ("error", "infra")
    assert result.turns == 1 and result.tool_calls == 1 and result.model_calls == 1
    assert "after 1 answered turn" in result.transcript[-1]["content"]


def test_model_and_tool_time_are_measured_apart(ctx):
    result, _ = run(ctx(), [reply(calls=[call("run_command", {"command": "sleep 0.2"})]), reply("done")])
    assert result.model_ms is not None and result.tool_ms is not None
    assert 0 <= result.model_ms < result.tool_ms  # scripted answers are instant; the command sleeps
    assert result.model_calls == 2 and result.cached_calls == 0 and result.replayed_latencies_ms == []


def test_replayed_answers_keep_their_cost_and_are_not_latencies_of_the_run(ctx):
    import dataclasses

    replayed = dataclasses.replace(reply("done", cost=0.25), cached=True, latency_ms=800.0)
    result, _ = run(ctx(), [replayed])
    assert result.cost_usd == 0.25 and result.tokens_in == 100
    assert (result.model_calls, result.cached_calls) == (1, 1)
    assert result.latencies_ms == [] and result.replayed_latencies_ms == [800.0]


def test_ask_user_questions_are_kept_in_the_result(ctx, tmp_path):
    c = ctx()
    c.tools = ToolConfig(oracle_answers={"Which framework?": "pytest"})
    result, provider = run(c, [reply(calls=[call("ask_user", {"question": "which framework?"})]), reply("ok")])
    assert provider.requests[1].messages[-1].content == "pytest"
    assert result.questions[0]["question"] == "which framework?"


def test_transcript_is_size_capped_but_keeps_the_final_entry():
    t = Transcript(entry_cap=100, total_cap=1000)
    for i in range(100):
        t.add({"role": "tool", "content": "x" * 500})
    t.add({"role": "assistant", "content": "final answer"}, force=True)
    total = sum(len(str(e)) for e in t.entries)
    assert total < 2000
    assert all(len(e["content"]) < 200 for e in t.entries)
    assert t.entries[-1]["content"] == "final answer"
    assert "omitted" in t.entries[-2]["content"]
