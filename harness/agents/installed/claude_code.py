"""The ``claude-code`` agent: Anthropic's ``claude`` CLI, on the installed-agent seam.

Installed with ``bench agents install claude-code`` (npm ``@anthropic-ai/claude-code``). It runs
in print mode, ``claude -p PROMPT --output-format stream-json --verbose``: one JSON object
per line, assistant and user messages as they happen, then a final ``result`` object with
the answer, ``num_turns``, ``total_cost_usd`` and token usage (the same object
``--output-format json`` prints alone, which is read too). The message lines give the tool
calls and the transcript; the ``result`` line the answer, tokens and cost.

Its endpoint is ``ANTHROPIC_BASE_URL`` (no ``/v1``) with ``ANTHROPIC_API_KEY``; start-up
lookups are off (``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``), its edits are accepted
without a prompt (``--permission-mode acceptEdits``, its tools pre-approved, its web tools
refused), and a specialist reaches it through ``--append-system-prompt`` and as a skill of its
own (``~/.claude/skills/NAME/SKILL.md``, in the agent's private home).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, register_spec
from harness.agents.installed.tools import Package

# Tools pre-approved for the CLI in print mode (there is nobody to answer a permission prompt).
DEFAULT_ALLOWED_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "Bash", "Glob", "Grep", "LS")
# The workspace is the task; the network is not.
DEFAULT_DISALLOWED_TOOLS = ("WebFetch", "WebSearch")

# How the CLI reports that its model API failed ("API Error: 529 {...overloaded...}", "API
# Error: Request timed out.", "API Error: Connection error.", "Invalid API key · Please run
# /login"): the provider's or the machine's failure, not the agent's.
_API_ERROR = re.compile(r"API Error(?::\s*|\s*\(\s*)(?:(?P<status>\d{3})\b|(?P<transport>request timed out|"
                        r"connection error|fetch failed|socket hang up|overloaded))", re.IGNORECASE)
_AUTH_ERROR = re.compile(r"invalid api key|please run /login|authentication_error", re.IGNORECASE)
INFRA_STATUSES = frozenset({401, 403, 408, 409, 429})


def provider_failure(text: str) -> str | None:
    """The line of the CLI's output saying its model provider failed (unavailable after the
    CLI's retries, or credentials refused), or None when the failure is not the provider's."""
    for line in text.splitlines():
        match = _API_ERROR.search(line)
        if match and (match.group("transport") or int(match.group("status")) in INFRA_STATUSES
                      or 500 <= int(match.group("status")) <= 599):
            return line.strip()[:500]
        if _AUTH_ERROR.search(line):
            return line.strip()[:500]
    return None




@dataclass
class ClaudeCodeOutput:
    """What the CLI reported, parsed from its JSON lines."""

    result: dict[str, Any] | None = None  # the final ``{"type": "result", ...}`` object
    model: str | None = None
    tool_calls: int = 0
    assistant_messages: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)
    unparsed_lines: int = 0


def _content_entries(role: str, content: Any) -> list[dict[str, Any]]:
    """Transcript entries for one message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return [{"role": role, "content": cap_text(content)}] if content else []
    entries: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            entries.append({"role": role, "content": cap_text(str(block["text"]))})
        elif kind == "tool_use":
            entries.append(
                {
                    "role": role,
                    "tool_call": {"id": block.get("id"), "name": block.get("name"), "arguments": cap_text(json.dumps(block.get("input", {})))},
                }
            )
        elif kind == "tool_result":
            raw = block.get("content")
            if isinstance(raw, list):
                raw = "\n".join(str(b.get("text", "")) for b in raw if isinstance(b, dict))
            entries.append(
                {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": cap_text(str(raw or "")), "is_error": bool(block.get("is_error"))}
            )
    return entries


def parse_cli_output(stdout: str) -> ClaudeCodeOutput:
    """Parse the CLI's stdout: stream-json lines, or the single object of ``--output-format json``."""
    out = ClaudeCodeOutput()
    text = stdout.strip()
    events: list[Any] = []
    if text.startswith("{") and "\n" not in text:
        lines = [text]
    else:
        lines = text.splitlines()
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            out.unparsed_lines += 1
    if not events and text[:1] in "{[":
        try:  # one pretty-printed JSON document
            events.append(json.loads(text))
            out.unparsed_lines = 0
        except ValueError:
            pass
    if len(events) == 1 and isinstance(events[0], list):
        events = events[0]  # some versions print the whole conversation as one JSON array
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            out.model = event.get("model") or out.model
        elif kind == "assistant":
            message = event.get("message") or {}
            out.assistant_messages += 1
            out.model = message.get("model") or out.model
            content = message.get("content")
            if isinstance(content, list):
                out.tool_calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
            out.transcript.extend(_content_entries("assistant", content))
        elif kind == "user":
            message = event.get("message") or {}
            out.transcript.extend(_content_entries("user", message.get("content")))
        elif kind == "result":
            out.result = event
    return out


def _usage_totals(result: dict[str, Any]) -> tuple[int, int, int, int]:
    """(input, output, cache read, cache write) tokens: summed over ``modelUsage`` when present
    (it includes every model the session used), else the top-level ``usage``."""
    model_usage = result.get("modelUsage")
    if isinstance(model_usage, dict) and model_usage:
        totals = [0, 0, 0, 0]
        for figures in model_usage.values():
            if not isinstance(figures, dict):
                continue
            totals[0] += int(figures.get("inputTokens") or 0)
            totals[1] += int(figures.get("outputTokens") or 0)
            totals[2] += int(figures.get("cacheReadInputTokens") or 0)
            totals[3] += int(figures.get("cacheCreationInputTokens") or 0)
        return totals[0], totals[1], totals[2], totals[3]
    usage = result.get("usage") or {}
    return (
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        int(usage.get("cache_read_input_tokens") or 0),
        int(usage.get("cache_creation_input_tokens") or 0),
    )


class ClaudeCodeSpec(AgentSpec):
    name = "claude-code"
    package = Package("npm", "@anthropic-ai/claude-code", "2.1.197", "claude")
    api = "anthropic"
    summary = "Anthropic's Claude Code CLI"
    env_prefixes = ("CLAUDE_", "ANTHROPIC_")

    def __init__(self, allowed_tools: tuple[str, ...] = DEFAULT_ALLOWED_TOOLS,
                 disallowed_tools: tuple[str, ...] = DEFAULT_DISALLOWED_TOOLS,
                 permission_mode: str = "acceptEdits") -> None:
        self.allowed_tools = allowed_tools
        self.disallowed_tools = disallowed_tools
        self.permission_mode = permission_mode

    def launch(self, task: Task) -> Launch:
        argv = [self.package.executable, "-p", task.prompt, "--output-format", "stream-json", "--verbose",
                "--max-turns", str(task.max_turns), "--permission-mode", self.permission_mode]
        if self.allowed_tools:
            argv += ["--allowedTools", ",".join(self.allowed_tools)]
        if self.disallowed_tools:
            argv += ["--disallowedTools", ",".join(self.disallowed_tools)]
        if task.model:
            argv += ["--model", task.model]
        if task.specialist:
            argv += ["--append-system-prompt", task.specialist]
        if task.max_cost_usd is not None:
            argv += ["--max-budget-usd", f"{task.max_cost_usd:g}"]
        env = {"ANTHROPIC_BASE_URL": task.base_url, "ANTHROPIC_API_KEY": task.api_key,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}
        skill = task.skill()
        files = {f".claude/skills/{skill[0]}/SKILL.md": skill[1]} if skill else {}
        return Launch(argv, env, home_files=files, channel="--append-system-prompt, ~/.claude/skills")

    def provider_failure(self, output: Output) -> str | None:
        parsed = parse_cli_output(output.stdout)
        text = str((parsed.result or {}).get("result") or "") + f"\n{output.stderr}\n{output.stdout[-4000:]}"
        return provider_failure(text)

    def parse(self, output: Output) -> AgentResult:
        return result_from_stream(parse_cli_output(output.stdout), output, "claude")


def result_from_stream(parsed: ClaudeCodeOutput, output: Output, program: str) -> AgentResult:
    """The run's result from stream-json events (Claude Code's format, which Qwen Code shares):
    tokens, cost (when the CLI reports one: else None, priced later from the table), turns,
    tool calls, transcript, and the status its ``result`` line or its exit says."""
    result = parsed.result or {}
    model_usage = result.get("modelUsage")
    reported = next(iter(model_usage)) if isinstance(model_usage, dict) and len(model_usage) == 1 else None
    tokens_in, tokens_out, cache_read, cache_write = _usage_totals(result) if result else (0, 0, 0, 0)
    cost = result.get("total_cost_usd") if result else None
    agent_result = AgentResult(
        model=parsed.model or reported,
        final_answer=str(result.get("result") or "") if result else "",
        tokens_in=tokens_in, tokens_out=tokens_out, cache_read_tokens=cache_read, cache_write_tokens=cache_write,
        # The CLI prices its own calls, when it does; an unreported spend is unknown, not zero.
        cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
        tool_calls=parsed.tool_calls,
        turns=int(result.get("num_turns") or parsed.assistant_messages) if result else parsed.assistant_messages,
        transcript=parsed.transcript,
    )
    # The CLI's own measure of the time its API calls took; its tools are not told apart.
    api_ms = result.get("duration_api_ms") if result else None
    if isinstance(api_ms, (int, float)) and not isinstance(api_ms, bool) and api_ms >= 0:
        agent_result.model_ms = float(api_ms)
    subtype = str(result.get("subtype") or "")
    if not result:
        agent_result.status = "error"
        detail = (output.stderr or output.stdout).strip().splitlines()[-1:] or ["no output"]
        agent_result.error = f"{program} exited with status {output.exit_code} without a result: {detail[0][:500]}"
    elif subtype in ("error_max_turns", "error_max_budget_usd"):
        agent_result.status = "budget_exceeded"
        agent_result.error = f"{program} stopped: {subtype}"
    elif result.get("is_error") or subtype.startswith("error"):
        agent_result.status = "failed"
        agent_result.error = f"{program} reported an error ({subtype or 'is_error'}): {str(result.get('result') or '')[:500]}"
    elif output.exit_code not in (0, None):
        agent_result.status = "failed"
        agent_result.error = f"{program} exited with status {output.exit_code}"
    return agent_result


register_spec(ClaudeCodeSpec())
