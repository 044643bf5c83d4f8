"""The scripted model server (harness/scripted/): four wire formats, read by the real SDKs."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from harness.scripted import ScriptedServer, ScriptError, load_script, parse_script
from support.processes import interruptible

REPO = Path(__file__).resolve().parents[1]
WRITE_TOOL = {"name": "write_file", "description": "Write a file",
              "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                              "content": {"type": "string"}}}}
BASH_TOOL = {"name": "Bash", "description": "Run a command",
             "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}
SCRIPT = [{"write": {"path": "notes.txt", "content": "hello"}}, {"run": "ls -la"}, {"say": "All done."}]


@pytest.fixture
def server():
    with ScriptedServer(parse_script(SCRIPT)) as running:
        yield running


def test_chat_completions_plain_and_streamed_with_the_official_sdk(server):
    import openai

    client = openai.OpenAI(base_url=server.base_url("openai"), api_key="k", max_retries=0)
    tools = [{"type": "function", "function": t} for t in (WRITE_TOOL, BASH_TOOL)]
    messages = [{"role": "user", "content": "do it"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "write_file"
    assert json.loads(call.function.arguments) == {"path": "notes.txt", "content": "hello"}
    assert first.usage.completion_tokens == 20 and first.usage.prompt_tokens > 0
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "wrote"}]
    stream = client.chat.completions.create(model="m", messages=messages, tools=tools, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    calls = [tc for c in chunks for choice in c.choices for tc in (choice.delta.tool_calls or [])]
    assert calls[0].function.name == "Bash" and json.loads(calls[0].function.arguments) == {"command": "ls -la"}
    assert chunks[-1].usage.completion_tokens == 20
    messages += [{"role": "assistant", "content": None, "tool_calls": [
        {"id": calls[0].id, "type": "function", "function": {"name": "Bash", "arguments": calls[0].function.arguments}}]},
        {"role": "tool", "tool_call_id": calls[0].id, "content": "ok"}]
    last = client.chat.completions.create(model="m", messages=messages, tools=tools)
    assert last.choices[0].message.content == "All done." and last.choices[0].finish_reason == "stop"
    assert len(server.requests) == 3 and server.requests[0]["api"] == "chat"


def test_anthropic_messages_streamed_with_the_official_sdk(server):
    import anthropic

    client = anthropic.Anthropic(base_url=server.base_url("anthropic"), api_key="k", max_retries=0)
    tools = [{"name": "Write", "description": "Write", "input_schema": {
        "type": "object", "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}}}]
    with client.messages.stream(model="m", max_tokens=100, system="SPECIALIST-MARKER", tools=tools,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        message = stream.get_final_message()
    block = message.content[0]
    assert block.type == "tool_use" and block.name == "Write"
    assert block.input == {"file_path": "/workspace/notes.txt", "content": "hello"}  # absolute where asked
    assert message.stop_reason == "tool_use" and message.usage.output_tokens == 20
    assert "SPECIALIST-MARKER" in server.bodies_text()


def test_responses_api_streamed_with_the_official_sdk(server):
    import openai

    client = openai.OpenAI(base_url=server.base_url("openai"), api_key="k", max_retries=0)
    tools = [{"type": "function", "name": "shell", "parameters": {
        "type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
        {"type": "function", **WRITE_TOOL}]
    events = list(client.responses.create(model="m", input="go", tools=tools, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    item = events[-1].response.output[0]
    assert item.type == "function_call" and item.name == "write_file"
    previous = [{"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments},
                {"type": "function_call_output", "call_id": item.call_id, "output": "ok"}]
    second = list(client.responses.create(model="m", input=previous, tools=tools, stream=True))[-1].response
    assert second.output[0].name == "shell" and json.loads(second.output[0].arguments) == {
        "command": ["bash", "-lc", "ls -la"]}  # a command as the tool's schema wants it
    assert second.usage.output_tokens == 20


def test_gemini_generate_content_plain_and_streamed(server):
    tools = [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {
        "type": "object", "properties": {"command": {"type": "string"}}}},
        {"name": "write_file", "parameters": WRITE_TOOL["parameters"]}]}]
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": tools}
    plain = httpx.post(f"{server.url}/v1beta/models/gemini-x:generateContent", json=body).json()
    call = plain["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call == {"name": "write_file", "args": {"path": "notes.txt", "content": "hello"}}
    body["contents"] += [{"role": "model", "parts": [{"functionCall": call}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {}}}]}]
    streamed = httpx.post(f"{server.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse", json=body)
    data = json.loads(streamed.text.split("data: ", 1)[1])
    assert data["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "run_shell_command"
    assert data["usageMetadata"]["candidatesTokenCount"] == 20


def test_a_request_without_tools_gets_the_step_as_text_and_a_schema_gets_json(server):
    import openai

    client = openai.OpenAI(base_url=server.base_url("openai"), api_key="k", max_retries=0)
    whole = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "edit"}])
    assert whole.choices[0].message.content == "notes.txt\n```\nhello\n```"  # Aider's "whole" format
    bash = client.chat.completions.create(model="m", messages=[
        {"role": "system", "content": "Reply with exactly one ```bash block."}, {"role": "user", "content": "go"}])
    assert "cat > 'notes.txt' <<'ZEBENCH_EOF'\nhello\nZEBENCH_EOF" in bash.choices[0].message.content
    routed = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "route"}],
                                            response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": {
                                                "type": "object", "properties": {"score": {"type": "integer", "minimum": 1,
                                                                                           "maximum": 100}}}}})
    assert json.loads(routed.choices[0].message.content) == {"score": 1}
    first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}],
                                           tools=[{"type": "function", "function": WRITE_TOOL}])
    assert first.choices[0].message.tool_calls[0].function.name == "write_file"
    assert httpx.get(f"{server.base_url('openai')}/models").json()["data"][0]["id"] == "scripted-model"


def test_scripts_are_checked_and_read_from_files(tmp_path):
    (tmp_path / "fixed.py").write_text("x = 1\n")
    (tmp_path / "fix.yaml").write_text("steps:\n  - write: {path: a.py, content_file: fixed.py}\n  - say: ok\n")
    script = load_script(tmp_path / "fix.yaml")
    assert script.steps[0].value == {"path": "a.py", "content": "x = 1\n"}
    for bad, message in (([{"jump": 1}], "unknown step 'jump'"), ([{"write": {"content": "x"}}], "needs a path"),
                         ({"steps": "x"}, "a list of steps"), ([{"run": 3}], "steps[0].run: must be a string")):
        with pytest.raises(ScriptError, match=re.escape(message)):
            parse_script(bad)
    (tmp_path / "missing.yaml").write_text("- write: {path: a.py, content_file: nope.py}\n")
    with pytest.raises(ScriptError, match="missing.yaml: steps\\[0\\].write.content_file: cannot read"):
        load_script(tmp_path / "missing.yaml")


def test_the_harness_openai_agent_solves_a_scenario_against_the_scripted_server(tmp_path, monkeypatch):
    from harness.grading.evaluators.llm_judge import JudgeChoice
    from harness.scenarios.runner import RunOptions, run_batch
    from harness.scenarios.loading import load_scenario, resolve_prompt

    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    suites = tmp_path / "suites"
    shutil.copytree(REPO / "suites" / "py-bugs", suites / "py-bugs")
    scenario = load_scenario("py-bugs", "pagination-off-by-one", suites)
    fix = (scenario.solution_dir / "pagekit" / "paginator.py").read_text()
    script = parse_script([{"write": {"path": "pagekit/paginator.py", "content": fix}},
                           {"run": "python3 -m pytest -q"}, {"say": "Fixed."}])
    with ScriptedServer(script) as server:
        options = RunOptions(agent="openai", model="scripted-model", sandbox="none", skip_warmup=True,
                             workspaces_root=tmp_path / "ws", judge=JudgeChoice("none"),
                             agent_options={"base_url": server.base_url("openai")})
        outcome = run_batch(scenario, resolve_prompt(scenario, "L1"), options, None)
    record = outcome.runs[0].record
    assert record.status == "completed" and record.total_score == pytest.approx(1.0)
    assert record.telemetry.tool_calls == 2 and record.telemetry.tokens_out == 60


def test_bench_mock_model_serves_a_script_until_interrupted_and_logs_what_it_was_sent(tmp_path):
    import signal
    import subprocess
    import sys

    bench = str(Path(sys.executable).parent / "bench")
    (tmp_path / "s.yaml").write_text("steps:\n  - say: finished\n")
    log = tmp_path / "requests.jsonl"
    process = subprocess.Popen([bench, "mock-model", str(tmp_path / "s.yaml"), "--log", str(log)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    try:
        url = process.stdout.readline().rsplit(" ", 1)[-1].strip()
        answer = httpx.post(f"{url}/v1/messages", json={
            "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]}, timeout=10).json()
        assert answer["content"] == [{"type": "text", "text": "finished"}]
        deadline = time.monotonic() + 10
        while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=10)
    assert "1 request(s) answered" in out
    logged = json.loads(log.read_text().splitlines()[0])
    assert logged["api"] == "anthropic" and logged["body"]["messages"][0]["content"] == "hi"


def test_text_a_client_puts_in_the_models_mouth_before_the_task_is_no_answer():
    from harness.scripted.wire import read_request

    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "context"},
               {"role": "assistant", "content": "Got it. Thanks for the context!"}, {"role": "user", "content": "Fix"}]
    assert read_request("/v1/chat/completions", {"messages": history}, 10).turn == 0
    history += [{"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}, {"role": "tool", "content": "ok"},
                {"role": "assistant", "content": "thinking aloud"}]
    assert read_request("/v1/chat/completions", {"messages": history}, 10).turn == 2
    gemini = {"contents": [{"role": "user", "parts": [{"text": "context"}]}, {"role": "model", "parts": [{"text": "Got it."}]},
                           {"role": "user", "parts": [{"text": "Fix"}]},
                           {"role": "model", "parts": [{"functionCall": {"name": "x"}}]},
                           {"role": "user", "parts": [{"functionResponse": {"name": "x"}}]}]}
    assert read_request("/v1beta/models/m:generateContent", gemini, 10).turn == 1


def test_a_script_plays_its_steps_only_when_the_agent_sent_the_text_it_waits_for():
    import openai

    script = parse_script({"if_sent": "KNOW-THE-FIX", "steps": [{"say": "fixed"}], "otherwise": [{"say": "no idea"}]})
    with ScriptedServer(script) as running:
        client = openai.OpenAI(base_url=running.base_url("openai"), api_key="k", max_retries=0)
        tools = [{"type": "function", "function": WRITE_TOOL}]
        told = client.chat.completions.create(model="m", tools=tools, messages=[
            {"role": "system", "content": "You KNOW-THE-FIX."}, {"role": "user", "content": "go"}])
        untold = client.chat.completions.create(model="m", tools=tools, messages=[{"role": "user", "content": "go"}])
    assert told.choices[0].message.content == "fixed" and untold.choices[0].message.content == "no idea"
    with pytest.raises(ScriptError, match="if_sent"):
        parse_script({"if_sent": "", "steps": []})
