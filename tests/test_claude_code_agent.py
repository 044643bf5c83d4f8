"""The claude-code agent on the installed-agent seam, driven against a fake ``claude`` executable."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from harness.agents import create_agent
from harness.agents.base import AgentContext, Budgets
from harness.agents.installed import PLACEHOLDER_KEY
from harness.agents.installed.claude_code import parse_cli_output
from harness.sandbox import SandboxSpec, open_sandbox
from support.processes import gone as _gone

# The real CLI's stream-json shape: an init line, assistant/user messages, a final result.
FAKE_CLAUDE = r'''#!{python}
import json, os, sys, time
from pathlib import Path

Path(".fake-claude-record.json").write_text(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}))
mode = os.environ.get("CLAUDE_FAKE_MODE", "success")
if mode == "sleep":
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.execvp("sleep", ["sleep", os.environ["CLAUDE_FAKE_MARKER"]])
    time.sleep(60)
if mode == "crash":
    print("Error: something broke", file=sys.stderr)
    sys.exit(1)

def emit(obj):
    print(json.dumps(obj), flush=True)

emit({{"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": "s-1",
      "tools": ["Read", "Edit", "Bash"], "model": "claude-sonnet-4-5-20250929", "permissionMode": "acceptEdits"}})
emit({{"type": "assistant", "session_id": "s-1", "message": {{"id": "msg_1", "type": "message", "role": "assistant",
      "model": "claude-sonnet-4-5-20250929", "content": [
        {{"type": "text", "text": "Reading the code."}},
        {{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {{"file_path": "calc.py"}}}}],
      "usage": {{"input_tokens": 10, "output_tokens": 5}}}}}})
emit({{"type": "user", "session_id": "s-1", "message": {{"role": "user", "content": [
        {{"type": "tool_result", "tool_use_id": "toolu_1", "content": "def add(a, b): return a - b"}}]}}}})
Path("calc.py").write_text("def add(a, b):\n    return a + b\n")
emit({{"type": "assistant", "session_id": "s-1", "message": {{"id": "msg_2", "type": "message", "role": "assistant",
      "model": "claude-sonnet-4-5-20250929", "content": [
        {{"type": "tool_use", "id": "toolu_2", "name": "Edit", "input": {{"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}}},
        {{"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {{"command": "python -m pytest -q"}}}}]}}}})
emit({{"type": "user", "session_id": "s-1", "message": {{"role": "user", "content": [
        {{"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}},
        {{"type": "tool_result", "tool_use_id": "toolu_3", "content": [{{"type": "text", "text": "1 passed"}}]}}]}}}})
subtype = "error_max_turns" if mode == "max_turns" else "success"
emit({{"type": "result", "subtype": subtype, "is_error": mode == "max_turns", "duration_ms": 5230, "duration_api_ms": 4100,
      "num_turns": 3, "result": "Fixed add() to return a + b; tests pass.", "session_id": "s-1",
      "total_cost_usd": 0.0123, "usage": {{"input_tokens": 120, "cache_creation_input_tokens": 300,
      "cache_read_input_tokens": 4500, "output_tokens": 80}},
      "modelUsage": {{"claude-sonnet-4-5-20250929": {{"inputTokens": 120, "outputTokens": 80,
      "cacheReadInputTokens": 4500, "cacheCreationInputTokens": 300, "costUSD": 0.0123}}}},
      "permission_denials": []}})
'''


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    """A fake ``claude`` given as the agent's executable; it records its argv, environment and
    cwd in the workspace."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "claude"
    exe.write_text(FAKE_CLAUDE.format(python=sys.executable))
    exe.chmod(0o755)
    monkeypatch.setenv("ZE_BENCHMARKS_CLAUDE_CODE_BIN", str(exe))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-for-the-cli")
    return tmp_path / "ws" / ".fake-claude-record.json"


_OPENED = []


@pytest.fixture(autouse=True)
def _close_sandboxes():
    yield
    while _OPENED:
        thing = _OPENED.pop()
        thing.release() if hasattr(thing, "release") else thing.close()


def _context(tmp_path: Path, kind: str = "none", model: str | None = None, **kwargs):
    """(agent, context) as the runner makes them: a sandbox with what the agent asks for."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    agent = create_agent("claude-code", model=model)
    needs = agent.sandbox_needs(kind)
    _OPENED.append(agent)
    sandbox = open_sandbox(workspace, SandboxSpec(kind=kind, network=needs.network, env=needs.env, mounts=needs.mounts))
    _OPENED.append(sandbox)
    return agent, AgentContext(prompt="Fix add() in calc.py", sandbox=sandbox, **kwargs)


def test_claude_code_edits_workspace_and_reports_tokens_cost_turns_and_tool_calls(fake_claude, tmp_path, sandbox_kind):
    agent, ctx = _context(tmp_path, sandbox_kind)
    result = agent.run(ctx)
    assert result.status == "completed", result.error
    assert (ctx.workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert result.final_answer == "Fixed add() to return a + b; tests pass."
    assert (result.tokens_in, result.tokens_out) == (120, 80)
    assert (result.cache_read_tokens, result.cache_write_tokens) == (4500, 300)
    assert result.cost_usd == pytest.approx(0.0123)
    assert result.turns == 3
    assert result.tool_calls == 3
    assert result.model == "claude-sonnet-4-5-20250929"
    tool_names = [e["tool_call"]["name"] for e in result.transcript if "tool_call" in e]
    assert tool_names == ["Read", "Edit", "Bash"]
    assert json.loads(fake_claude.read_text())["cwd"] == ctx.sandbox.inner_workspace
    assert result.metadata["agentInfo"]["version"] == "custom"
    if sandbox_kind == "bwrap":
        assert result.metadata["egress"]["refused"] == []


def test_claude_code_passes_prompt_budgets_model_and_system_prompt_as_flags(fake_claude, tmp_path):
    agent, ctx = _context(tmp_path, model="claude-haiku-4-5", budgets=Budgets(max_turns=7, max_cost_usd=1.5),
                          system_prompt="Be terse.")
    result = agent.run(ctx)
    assert result.metadata["agentInfo"]["specialistChannel"].startswith("--append-system-prompt")
    argv = json.loads(fake_claude.read_text())["argv"]
    assert argv[:2] == ["-p", "Fix add() in calc.py"]
    flags = {argv[i]: argv[i + 1] for i in range(2, len(argv) - 1) if argv[i].startswith("--")}
    assert flags["--output-format"] == "stream-json"
    assert flags["--max-turns"] == "7"
    assert flags["--model"] == "claude-haiku-4-5"
    assert flags["--append-system-prompt"] == "Be terse."
    assert flags["--max-budget-usd"] == "1.5"
    assert "Bash" in flags["--allowedTools"].split(",")


def test_claude_code_environment_holds_no_secret_but_its_own_key_and_under_bwrap_not_even_that(
        fake_claude, tmp_path, monkeypatch, sandbox_kind):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "worker-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret")
    agent, ctx = _context(tmp_path, sandbox_kind)
    agent.run(ctx)
    env = json.loads(fake_claude.read_text())["env"]
    # Behind the egress relay the key stays in the harness, which sets it on the way out.
    assert env["ANTHROPIC_API_KEY"] == (PLACEHOLDER_KEY if sandbox_kind == "bwrap" else "sk-ant-for-the-cli")
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    for name in ("OPENAI_API_KEY", "ZE_BENCHMARKS_API_KEY", "GITHUB_TOKEN"):
        assert name not in env


def test_claude_code_missing_executable_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_TOOLS_DIR", str(tmp_path / "no-tools"))
    monkeypatch.delenv("ZE_BENCHMARKS_CLAUDE_CODE_BIN", raising=False)
    agent, ctx = _context(tmp_path)
    result = agent.run(ctx)
    assert result.status == "error" and result.error_kind == "infra"
    assert "not installed" in result.error and "bench agents install claude-code" in result.error


def test_claude_code_deadline_kills_the_cli_and_its_children(fake_claude, tmp_path, monkeypatch, sandbox_kind):
    marker = f"9{os.getpid() % 1000}.125"
    monkeypatch.setenv("CLAUDE_FAKE_MODE", "sleep")
    monkeypatch.setenv("CLAUDE_FAKE_MARKER", marker)
    agent, ctx = _context(tmp_path, sandbox_kind, deadline=time.monotonic() + 2.0)
    result = agent.run(ctx)
    assert result.status == "timeout"
    assert _gone(f"sleep {marker}"), "the CLI's child process survived the deadline"


def test_claude_code_is_refused_before_running_without_its_cli_or_credentials(tmp_path, monkeypatch, fake_claude):
    agent = create_agent("claude-code")
    assert agent.preflight() is None
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert "needs ANTHROPIC_API_KEY for https://api.anthropic.com" in agent.preflight()
    assert create_agent("claude-code", base_url="http://127.0.0.1:8765").preflight() is None  # a local model
    monkeypatch.delenv("ZE_BENCHMARKS_CLAUDE_CODE_BIN")
    monkeypatch.setenv("ZE_BENCHMARKS_TOOLS_DIR", str(tmp_path / "no-tools"))
    assert "bench agents install claude-code" in create_agent("claude-code").preflight()


def test_claude_code_max_turns_result_is_budget_exceeded(fake_claude, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_FAKE_MODE", "max_turns")
    agent, ctx = _context(tmp_path)
    result = agent.run(ctx)
    assert result.status == "budget_exceeded"
    assert result.tokens_out == 80  # spend is still recorded


def test_claude_code_crash_without_result_is_an_error_with_unknown_cost(fake_claude, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_FAKE_MODE", "crash")
    agent, ctx = _context(tmp_path)
    result = agent.run(ctx)
    assert result.status == "error"
    assert "something broke" in result.error
    assert result.cost_usd is None


def test_parse_cli_output_accepts_single_json_result_object():
    text = json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": "hi",
         "total_cost_usd": 0.002, "usage": {"input_tokens": 3, "output_tokens": 6, "cache_read_input_tokens": 15}}
    )
    parsed = parse_cli_output(text)
    assert parsed.result["result"] == "hi"
    assert parsed.tool_calls == 0


def test_parse_cli_output_accepts_pretty_printed_json_and_arrays_of_messages():
    result = {"type": "result", "subtype": "success", "num_turns": 2, "result": "done", "total_cost_usd": 0.01}
    assert parse_cli_output(json.dumps(result, indent=2)).result["result"] == "done"
    conversation = [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]}},
        result,
    ]
    parsed = parse_cli_output(json.dumps(conversation))
    assert parsed.tool_calls == 1 and parsed.result["num_turns"] == 2
