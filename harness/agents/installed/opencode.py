"""The ``opencode`` agent: the OpenCode CLI (``opencode run``), on the installed-agent seam.

Its model is an OpenAI-compatible provider declared in its configuration file
(``OPENCODE_CONFIG``, written in the agent's private home): ``@ai-sdk/openai-compatible``
(bundled with the CLI) with the base URL (with ``/v1``) and key, its edits and shell commands
allowed without a prompt and its web tool denied; model list fetching and auto-update are
off, and ``--pure`` loads no external plugin. It runs ``opencode run --format json PROMPT``:
JSON lines of ``step_start``, ``tool_use`` (each call with its input, output and status),
``text`` and ``step_finish`` (tokens, with cache reads and writes) events. Its own cost
figure comes from model prices it is not given, so the cost is priced from the table. A
specialist reaches it through ``AGENTS.md`` in the workspace, and as a skill
(``~/.config/opencode/skill``).
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, json_lines, register_spec
from harness.agents.installed.tools import Package

DEFAULT_MODEL = "gpt-4.1"


def config(base_url: str, key: str, model: str) -> dict[str, Any]:
    return {
        "provider": {"zebench": {"npm": "@ai-sdk/openai-compatible", "name": "zebench",
                                 "options": {"baseURL": base_url, "apiKey": key},
                                 "models": {model: {"name": model}}}},
        "model": f"zebench/{model}", "small_model": f"zebench/{model}", "autoupdate": False, "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
    }


class OpenCodeSpec(AgentSpec):
    name = "opencode"
    package = Package("npm", "opencode-ai", "1.18.33", "opencode")
    api = "openai"
    summary = "The OpenCode CLI"

    def launch(self, task: Task) -> Launch:
        argv = [self.package.executable, "run", "--format", "json", "--pure", task.prompt]
        env = {"OPENCODE_CONFIG": f"{task.home}/opencode.json", "OPENCODE_DISABLE_MODELS_FETCH": "1",
               "OPENCODE_DISABLE_AUTOUPDATE": "1"}
        files = {"AGENTS.md": task.specialist} if task.specialist else {}
        model = task.model or DEFAULT_MODEL
        home = {"opencode.json": json.dumps(config(task.base_url, task.api_key, model))}
        skill = task.skill()
        if skill:
            home[f".config/opencode/skill/{skill[0]}/SKILL.md"] = skill[1]
        return Launch(argv, env, home_files=home, workspace_files=files, channel="AGENTS.md, ~/.config/opencode/skill",
                      model=model)

    def parse(self, output: Output) -> AgentResult:
        transcript: list[dict[str, Any]] = []
        answer, errors = "", []
        turns = tool_calls = 0
        tokens_in = tokens_out = cache_read = cache_write = 0
        finished = False
        for event in json_lines(output.stdout):
            kind = event.get("type")
            part = event.get("part") if isinstance(event.get("part"), dict) else {}
            if kind == "step_start":
                turns += 1
            elif kind == "tool_use":
                tool_calls += 1
                state = part.get("state") if isinstance(part.get("state"), dict) else {}
                call_id = part.get("callID")
                transcript.append({"role": "assistant", "tool_call": {
                    "id": call_id, "name": part.get("tool"), "arguments": cap_text(json.dumps(state.get("input") or {}))}})
                transcript.append({"role": "tool", "tool_call_id": call_id,
                                   "content": cap_text(str(state.get("output") or state.get("error") or "")),
                                   "is_error": state.get("status") == "error"})
            elif kind == "text" and part.get("text"):
                answer = str(part["text"])
                transcript.append({"role": "assistant", "content": cap_text(answer)})
            elif kind == "step_finish":
                tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
                cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
                tokens_in += int(tokens.get("input") or 0)
                tokens_out += int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0)
                cache_read += int(cache.get("read") or 0)
                cache_write += int(cache.get("write") or 0)
                finished = part.get("reason") == "stop" or finished
            elif kind == "error":
                error = event.get("error")
                errors.append(json.dumps(error)[:500] if error is not None else "error")
        result = AgentResult(final_answer=answer, tokens_in=tokens_in, tokens_out=tokens_out,
                             cache_read_tokens=cache_read, cache_write_tokens=cache_write, cost_usd=None,
                             tool_calls=tool_calls, turns=turns, transcript=transcript)
        if errors:
            result.status = "failed"
            result.error = f"opencode: {errors[-1]}"
        elif not turns:
            result.status = "error"
            detail = (output.stderr or output.stdout).strip().splitlines()[-1:] or ["no output"]
            result.error = f"opencode exited with status {output.exit_code} without a step: {detail[0][:500]}"
        elif output.exit_code not in (0, None):
            result.status = "failed"
            result.error = f"opencode exited with status {output.exit_code}"
        return result

    def provider_failure(self, output: Output) -> str | None:
        for event in json_lines(output.stdout):
            if event.get("type") == "error":
                text = json.dumps(event.get("error"))
                if any(m in text.lower() for m in ("apicallerror", "connect", "401", "429", "503", "unauthorized")):
                    return text[:500]
        return None


register_spec(OpenCodeSpec())
