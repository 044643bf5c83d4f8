"""The tool loop shared by every API agent (docs/agents.md, "The tool loop").

The model gets the tier prompt and the workspace's tools; each turn it either calls tools —
all calls of a turn are executed in order and their results go back together — or answers
without a tool call, which ends the run. Budgets end the run early as ``budget_exceeded``
(turns, total tokens, cost) or ``timeout`` (the run's deadline); whatever happened up to
that point is kept: telemetry, the transcript, the ``ask_user`` log.

Telemetry is measured, never estimated: tokens and cache tokens as the API reported them,
cost from the price table (``None`` as soon as one call's price is unknown), the latency of
every model call, tool calls and turns, and the wall time spent in model calls and in tools.
An answer replayed from the response cache keeps the usage and cost of the call it replays;
its original latency is kept apart (``replayed_latencies_ms``), never as a latency of this run.

A provider failure that is not the agent's (:attr:`ProviderError.infrastructure`: the API
unavailable after retries, credentials refused) ends the run as ``error`` with
``error_kind="infra"``, whatever turns were done before it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentContext, AgentResult
from harness.models.providers.types import ChatRequest, ChatResponse, Message, ProviderError, ToolCall

if TYPE_CHECKING:
    from harness.models.providers.base import Provider
    from harness.tools import Toolset

# Transcript caps: each text field, and the whole transcript (characters of JSON).
TRANSCRIPT_ENTRY_CAP = 4_000
TRANSCRIPT_TOTAL_CAP = 400_000
# Upper bound of one model call; the run's deadline shortens it.
DEFAULT_CALL_TIMEOUT_S = 300.0


def _clip(text: str, cap: int = TRANSCRIPT_ENTRY_CAP) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n... [{len(text) - cap} characters omitted] ...\n{text[-half:]}"


class Transcript:
    """A size-capped record of the conversation: every entry clipped, the whole bounded.

    Once the total cap is reached, later entries are counted instead of stored; the final
    entry (the answer, or why the run stopped) is always kept.
    """

    def __init__(self, entry_cap: int = TRANSCRIPT_ENTRY_CAP, total_cap: int = TRANSCRIPT_TOTAL_CAP) -> None:
        self.entries: list[dict[str, Any]] = []
        self.entry_cap = entry_cap
        self.total_cap = total_cap
        self.size = 0
        self.omitted = 0

    def add(self, entry: dict[str, Any], *, force: bool = False) -> None:
        entry = {k: _clip(v, self.entry_cap) if isinstance(v, str) else v for k, v in entry.items()}
        size = len(json.dumps(entry, default=str))
        if not force and self.size + size > self.total_cap:
            self.omitted += 1
            return
        if force and self.omitted:
            self.entries.append({"role": "note", "content": f"{self.omitted} entries omitted (transcript size cap)"})
            self.omitted = 0
        self.entries.append(entry)
        self.size += size


@dataclass
class LoopSettings:
    """What the loop needs beyond the agent context."""

    model: str
    system: str | None = None
    temperature: float | None = 0.0
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S


def _call_record(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments if call.arguments is not None else call.raw_arguments,
    }


def run_tool_loop(ctx: AgentContext, provider: "Provider", toolset: "Toolset", settings: LoopSettings) -> AgentResult:
    """Run the model with the tools until it answers or a budget ends; return what it did."""
    budgets = ctx.budgets
    result = AgentResult(model=settings.model)
    transcript = Transcript()
    messages: list[Message] = [Message(role="user", content=ctx.prompt)]
    if settings.system:
        transcript.add({"role": "system", "content": settings.system})
    transcript.add({"role": "user", "content": ctx.prompt})
    cost: float | None = 0.0
    stop_note: str | None = None
    result.model_ms = 0.0
    result.tool_ms = 0.0

    def out_of_time() -> bool:
        return ctx.deadline is not None and time.monotonic() >= ctx.deadline

    try:
        while True:
            if ctx.cancelled:
                result.status, result.error = "error", "interrupted"
                stop_note = "interrupted: the batch was asked to stop"
                break
            if out_of_time():
                result.status, stop_note = "timeout", "the run's wall-clock limit was reached"
                break
            if budgets.max_turns is not None and result.turns >= budgets.max_turns:
                result.status, stop_note = "budget_exceeded", f"max turns ({budgets.max_turns}) reached"
                break
            call_timeout = settings.call_timeout_s
            if ctx.deadline is not None:
                call_timeout = max(1.0, min(call_timeout, ctx.deadline - time.monotonic()))
            request = ChatRequest(
                messages=list(messages),
                model=settings.model,
                system=settings.system,
                tools=toolset.specs,
                max_tokens=budgets.max_output_tokens_per_call,
                temperature=settings.temperature,
                timeout_s=call_timeout,
            )
            called = time.monotonic()
            try:
                # Answers are always recorded, so that a later run can replay this one on purpose.
                response: ChatResponse = provider.chat(
                    request, repeat_index=ctx.repeat_index, use_cache=ctx.use_cache, deadline=ctx.deadline,
                    record=True,
                )
            except ProviderError as exc:
                if out_of_time():
                    result.status, stop_note = "timeout", f"the run's wall-clock limit was reached during a model call ({exc})"
                else:
                    result.status, result.error = "error", str(exc)
                    if exc.infrastructure:
                        result.error_kind = "infra"
                        stop_note = (f"model provider failed after {result.turns} answered turn(s), not the agent: "
                                     f"{exc}")
                    else:
                        stop_note = f"model call failed: {exc}"
                break
            finally:
                result.model_ms += (time.monotonic() - called) * 1000.0

            result.turns += 1
            result.model_calls += 1
            result.tokens_in += response.usage.input_tokens
            result.tokens_out += response.usage.output_tokens
            result.cache_read_tokens += response.usage.cache_read_tokens
            result.cache_write_tokens += response.usage.cache_write_tokens
            if response.cached:
                result.cached_calls += 1
                result.replayed_latencies_ms.append(response.latency_ms)
            else:
                result.latencies_ms.append(response.latency_ms)
            cost = None if (cost is None or response.cost_usd is None) else cost + response.cost_usd
            if response.model:
                result.model = response.model
            transcript.add(
                {
                    "role": "assistant",
                    "content": response.text,
                    "tool_calls": [_call_record(c) for c in response.tool_calls],
                    "stop_reason": response.stop_reason,
                    "usage": {
                        "input": response.usage.input_tokens,
                        "output": response.usage.output_tokens,
                        "cache_read": response.usage.cache_read_tokens,
                        "cache_write": response.usage.cache_write_tokens,
                    },
                    "latency_ms": round(response.latency_ms, 1),
                    "cached": response.cached,
                },
                force=not response.tool_calls,
            )

            if not response.tool_calls:
                result.final_answer = response.text
                result.status = "completed"
                break

            exceeded = _budget_exceeded(result, cost, ctx)
            if exceeded:
                # The budget is spent: the calls of this turn are not executed.
                result.status, stop_note = "budget_exceeded", exceeded
                break

            messages.append(Message(role="assistant", content=response.text, tool_calls=list(response.tool_calls)))
            for call in response.tool_calls:
                if ctx.cancelled:
                    tool_result_content, is_error = "not run: the batch was interrupted", True
                elif out_of_time():
                    tool_result_content, is_error = "not run: the run's wall-clock limit was reached", True
                else:
                    started = time.monotonic()
                    try:
                        executed = toolset.execute(call.name, call.arguments)
                    finally:
                        result.tool_ms += (time.monotonic() - started) * 1000.0
                    tool_result_content, is_error = executed.content, executed.is_error
                    result.tool_calls += 1
                messages.append(
                    Message(role="tool", content=tool_result_content, tool_call_id=call.id, is_error=is_error)
                )
                transcript.add(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "name": call.name,
                        "content": tool_result_content,
                        "is_error": is_error,
                    }
                )
    except Exception as exc:  # keep everything measured so far; the runner stores the run
        result.status = "error"
        result.error = f"{type(exc).__name__}: {exc}"
        stop_note = f"agent loop failed: {result.error}"

    result.cost_usd = cost
    result.questions = toolset.questions
    if stop_note:
        transcript.add({"role": "note", "content": stop_note}, force=True)
        if result.status != "completed" and not result.error:
            result.error = stop_note
    result.transcript = transcript.entries
    return result


def _budget_exceeded(result: AgentResult, cost: float | None, ctx: AgentContext) -> str | None:
    budgets = ctx.budgets
    total = result.tokens_in + result.tokens_out + result.cache_read_tokens + result.cache_write_tokens
    if budgets.max_total_tokens is not None and total >= budgets.max_total_tokens:
        return f"token budget ({budgets.max_total_tokens}) exhausted: {total} tokens used"
    if budgets.max_cost_usd is not None and cost is not None and cost >= budgets.max_cost_usd:
        return f"cost budget (${budgets.max_cost_usd:g}) exhausted: ${cost:.4f} spent"
    return None
