"""The ``claude-code`` agent: the ``claude`` CLI run non-interactively inside the workspace.

The CLI runs its own tool loop (Read, Edit, Bash, ...), so this agent only starts it and
reads what it reports. It is called in print mode with ``--output-format stream-json
--verbose``: one JSON object per line, assistant and user messages as they happen, then a
final ``result`` object with the answer, ``num_turns``, ``total_cost_usd`` and token usage
(the same object ``--output-format json`` prints alone). The message lines are what lets us
count tool calls and keep a transcript; the ``result`` line gives answer, tokens and cost.
Plain ``--output-format json`` output is parsed too.

Sandbox: the CLI runs in the run's sandbox like any agent command (its own ``Bash`` tool
included), with three additions it asks for through ``sandbox_needs()``: the network (it
must reach its API), its own installation directory (read-only), and its credentials. The
environment is the sandbox's clean one plus the variables of the harness's environment whose
names start with ``ANTHROPIC_`` or ``CLAUDE_`` (``ANTHROPIC_API_KEY``, or
``CLAUDE_CODE_OAUTH_TOKEN`` / ``ANTHROPIC_AUTH_TOKEN`` with ``ANTHROPIC_BASE_URL``, and the
CLI's own settings). This is a deliberate exception: without its key the CLI cannot work, so
commands it runs can read that key; no other secret is passed. A login stored in the user's
``~/.claude`` is not visible (the sandbox's ``$HOME`` is private), so a key in the
environment is required; ``preflight()`` refuses the agent without one, or without the CLI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

from pathlib import Path

from harness.agents import register_agent
from harness.agents.base import AgentContext, AgentResult, SandboxNeeds
from harness.sandbox import Mount, SandboxClosed

# Credentials the CLI can work with (one is needed).
CLI_CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
# Variables of the harness's environment handed to the CLI: its credentials and settings.
CLI_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_")

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


OUTPUT_CAP = 32 * 1024 * 1024  # stream-json of a long session; the result line comes last
TRANSCRIPT_TEXT_CAP = 4000  # characters kept per transcript entry


class ClaudeCodeNotFoundError(RuntimeError):
    """The ``claude`` executable is not on PATH."""


@dataclass
class ClaudeCodeOutput:
    """What the CLI reported, parsed from its JSON lines."""

    result: dict[str, Any] | None = None  # the final ``{"type": "result", ...}`` object
    model: str | None = None
    tool_calls: int = 0
    assistant_messages: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)
    unparsed_lines: int = 0


def _cap(text: str, limit: int = TRANSCRIPT_TEXT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} characters omitted]"


def _content_entries(role: str, content: Any) -> list[dict[str, Any]]:
    """Transcript entries for one message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return [{"role": role, "content": _cap(content)}] if content else []
    entries: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            entries.append({"role": role, "content": _cap(str(block["text"]))})
        elif kind == "tool_use":
            entries.append(
                {
                    "role": role,
                    "tool_call": {"id": block.get("id"), "name": block.get("name"), "arguments": _cap(json.dumps(block.get("input", {})))},
                }
            )
        elif kind == "tool_result":
            raw = block.get("content")
            if isinstance(raw, list):
                raw = "\n".join(str(b.get("text", "")) for b in raw if isinstance(b, dict))
            entries.append(
                {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": _cap(str(raw or "")), "is_error": bool(block.get("is_error"))}
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


def cli_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """What the CLI gets on top of the sandbox's clean environment (see the module docstring)."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items()
            if k.startswith(CLI_ENV_PREFIXES) and k != "ZE_BENCHMARKS_CLAUDE_BIN" and v}


class ClaudeCodeAgent:
    """Runs ``claude -p`` in the workspace with the run's budgets and deadline."""

    name = "claude-code"

    def __init__(
        self,
        model: str | None = None,
        executable: str | None = None,
        allowed_tools: tuple[str, ...] | list[str] | None = None,
        disallowed_tools: tuple[str, ...] | list[str] | None = None,
        permission_mode: str = "acceptEdits",
        **_: Any,
    ) -> None:
        self.model = model
        self.executable = executable or os.environ.get("ZE_BENCHMARKS_CLAUDE_BIN") or "claude"
        self.allowed_tools = tuple(allowed_tools or DEFAULT_ALLOWED_TOOLS)
        self.disallowed_tools = tuple(DEFAULT_DISALLOWED_TOOLS if disallowed_tools is None else disallowed_tools)
        self.permission_mode = permission_mode

    def resolve_executable(self) -> str:
        """The CLI's real path (symlinks resolved), or :class:`ClaudeCodeNotFoundError` saying
        how to install it."""
        found = shutil.which(self.executable)
        if not found:
            raise ClaudeCodeNotFoundError(
                f"the claude-code agent needs the `{self.executable}` executable on PATH "
                "(install Claude Code: npm install -g @anthropic-ai/claude-code)"
            )
        return os.path.realpath(found)

    def price(self):  # -> ModelPrice | None
        """The Anthropic price of the model asked for (None for the CLI's own default model,
        whose identity is only known after a run)."""
        from harness.pricing import price_for

        return price_for("anthropic", self.model) if self.model else None

    def preflight(self) -> str | None:
        """Why every run would fail before reaching the model (no CLI, no credentials), or None."""
        try:
            self.resolve_executable()
        except ClaudeCodeNotFoundError as exc:
            return str(exc)
        if not any(os.environ.get(name) for name in CLI_CREDENTIAL_VARS):
            return ("the claude-code agent needs credentials in the environment: set ANTHROPIC_API_KEY "
                    "(or CLAUDE_CODE_OAUTH_TOKEN); a login stored in ~/.claude is not visible in the sandbox")
        return None

    def sandbox_needs(self) -> SandboxNeeds:
        """The network, the CLI's credentials, and its installation directory (read-only)."""
        mounts: tuple[Mount, ...] = ()
        try:
            mounts = (Mount(Path(self.resolve_executable()).parent),)
        except ClaudeCodeNotFoundError:
            pass
        return SandboxNeeds(network=True, env=cli_environment(), mounts=mounts)

    def command(self, executable: str, ctx: AgentContext) -> list[str]:
        """The argument vector for one run."""
        model = ctx.model or self.model
        argv = [executable, "-p", ctx.prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--max-turns", str(ctx.budgets.max_turns)]
        argv += ["--permission-mode", self.permission_mode]
        if self.allowed_tools:
            argv += ["--allowedTools", ",".join(self.allowed_tools)]
        if self.disallowed_tools:
            argv += ["--disallowedTools", ",".join(self.disallowed_tools)]
        if model:
            argv += ["--model", model]
        if ctx.system_prompt:
            argv += ["--append-system-prompt", ctx.system_prompt]
        if ctx.budgets.max_cost_usd is not None:
            argv += ["--max-budget-usd", f"{ctx.budgets.max_cost_usd:g}"]
        return argv

    def run(self, ctx: AgentContext) -> AgentResult:
        try:
            executable = self.resolve_executable()
        except ClaudeCodeNotFoundError as exc:  # the machine lacks the CLI: not the agent's failure
            return AgentResult(status="error", error=str(exc), model=ctx.model or self.model, error_kind="infra")
        timeout = ctx.remaining_s()
        if timeout <= 0:
            return AgentResult(status="timeout", error="no time left before the run's deadline", model=ctx.model or self.model)
        try:
            completed = ctx.sandbox.run_argv(self.command(executable, ctx), timeout_s=timeout,
                                             env=cli_environment(), output_cap=OUTPUT_CAP)
        except SandboxClosed as exc:
            return AgentResult(status="timeout", error=str(exc), model=ctx.model or self.model)
        parsed = parse_cli_output(completed.stdout)
        return self._result(ctx, completed, parsed)

    def _result(self, ctx: AgentContext, completed: Any, parsed: ClaudeCodeOutput) -> AgentResult:
        result = parsed.result or {}
        model_usage = result.get("modelUsage")
        reported = next(iter(model_usage)) if isinstance(model_usage, dict) and len(model_usage) == 1 else None
        model = parsed.model or reported or ctx.model or self.model
        tokens_in, tokens_out, cache_read, cache_write = _usage_totals(result) if result else (0, 0, 0, 0)
        cost = result.get("total_cost_usd") if result else None
        agent_result = AgentResult(
            model=model,
            final_answer=str(result.get("result") or "") if result else "",
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            # The CLI prices its own calls; without a result line the spend is unknown, not zero.
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
        failed_api = None
        if not completed.timed_out and completed.killed_by != "closed":
            if not result:
                failed_api = provider_failure(f"{completed.stderr}\n{completed.stdout}")
            elif result.get("is_error") or subtype.startswith("error"):
                failed_api = provider_failure(str(result.get("result") or ""))
        if completed.timed_out or completed.killed_by == "closed":
            agent_result.status = "timeout"
            agent_result.error = f"claude did not finish before the deadline ({completed.duration_ms / 1000:.0f} s)"
        elif failed_api is not None:
            agent_result.status, agent_result.error_kind = "error", "infra"
            agent_result.error = f"claude's model provider failed, not the agent: {failed_api}"
        elif not result:
            agent_result.status = "error"
            detail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["no output"]
            agent_result.error = f"claude exited with status {completed.exit_code} without a result: {detail[0][:500]}"
        elif subtype in ("error_max_turns", "error_max_budget_usd"):
            agent_result.status = "budget_exceeded"
            agent_result.error = f"claude stopped: {subtype}"
        elif result.get("is_error") or subtype.startswith("error"):
            agent_result.status = "failed"
            agent_result.error = f"claude reported an error ({subtype or 'is_error'}): {str(result.get('result') or '')[:500]}"
        elif completed.exit_code not in (0, None):
            agent_result.status = "failed"
            agent_result.error = f"claude exited with status {completed.exit_code}"
        return agent_result


def _factory(model: str | None = None, **options: Any) -> ClaudeCodeAgent:
    return ClaudeCodeAgent(model=model, **options)


register_agent("claude-code", _factory)
