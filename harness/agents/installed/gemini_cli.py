"""The ``gemini-cli`` agent: Google's Gemini CLI (``gemini``), on the installed-agent seam.

Its model speaks the Gemini API: ``GOOGLE_GEMINI_BASE_URL`` (no ``/v1``) with
``GEMINI_API_KEY``, and its settings (``~/.gemini/settings.json``) choose the API-key
login, turn usage statistics and telemetry off and cap the session's turns. It runs
``gemini -p PROMPT --output-format stream-json --yolo`` with the workspace trusted: events
``init``, ``message`` (the assistant's text in deltas), ``tool_use`` and ``tool_result``,
and a final ``result`` with its status and token counts per model (no cost: priced from the
table when it has the model, else unknown). Its "auto" model first asks a small model for a
routing decision; that call is counted with the others. A specialist reaches it through
``GEMINI.md`` in the workspace, and as a skill (``~/.gemini/skills``).
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, json_lines, register_spec
from harness.agents.installed.tools import Package


def _settings(max_turns: int) -> dict[str, Any]:
    return {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "model": {"maxSessionTurns": max_turns}}


class GeminiCliSpec(AgentSpec):
    name = "gemini-cli"
    package = Package("npm", "@google/gemini-cli", "0.61.0", "gemini")
    api = "gemini"
    summary = "Google's Gemini CLI"

    def launch(self, task: Task) -> Launch:
        argv = [self.package.executable, "-p", task.prompt, "--output-format", "stream-json", "--yolo"]
        if task.model:
            argv += ["--model", task.model]
        env = {"GOOGLE_GEMINI_BASE_URL": task.base_url, "GEMINI_API_KEY": task.api_key,
               "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        files = {"GEMINI.md": task.specialist} if task.specialist else {}
        home = {".gemini/settings.json": json.dumps(_settings(task.max_turns))}
        skill = task.skill()
        if skill:
            home[f".gemini/skills/{skill[0]}/SKILL.md"] = skill[1]
        return Launch(argv, env, home_files=home, workspace_files=files, channel="GEMINI.md, ~/.gemini/skills")

    def parse(self, output: Output) -> AgentResult:
        events = json_lines(output.stdout)
        result = next((e for e in reversed(events) if e.get("type") == "result"), None)
        transcript: list[dict[str, Any]] = []
        answer: list[str] = []
        turns, tool_calls, previous = 0, 0, None
        for event in events:
            kind = event.get("type")
            if kind == "tool_use":
                tool_calls += 1
                if previous != "tool_use":
                    turns += 1
                transcript.append({"role": "assistant", "tool_call": {
                    "id": event.get("tool_id"), "name": event.get("tool_name"),
                    "arguments": cap_text(json.dumps(event.get("parameters") or {}))}})
            elif kind == "tool_result":
                transcript.append({"role": "tool", "tool_call_id": event.get("tool_id"),
                                   "content": cap_text(str(event.get("output") or event.get("error") or "")),
                                   "is_error": event.get("status") != "success"})
            elif kind == "message" and event.get("role") == "assistant":
                if previous != "message":
                    turns += 1
                    answer = []
                answer.append(str(event.get("content") or ""))
            elif kind == "message" and event.get("role") == "user":
                transcript.append({"role": "user", "content": cap_text(str(event.get("content") or ""))})
            if kind in ("tool_use", "tool_result") or (kind == "message" and event.get("role") == "assistant"):
                previous = kind
        text = "".join(answer)
        if text:
            transcript.append({"role": "assistant", "content": cap_text(text)})
        stats = (result or {}).get("stats") or {}
        models = stats.get("models") if isinstance(stats.get("models"), dict) else {}
        main = max(models, key=lambda m: int((models[m] or {}).get("output_tokens") or 0)) if models else None
        cached = int(stats.get("cached") or 0)
        agent_result = AgentResult(
            model=main, final_answer=text, tokens_in=max(0, int(stats.get("input_tokens") or 0) - cached),
            tokens_out=int(stats.get("output_tokens") or 0), cache_read_tokens=cached, cost_usd=None,
            tool_calls=int(stats.get("tool_calls") or tool_calls), turns=turns, transcript=transcript)
        if result is None:
            agent_result.status = "error"
            detail = (output.stderr or output.stdout).strip().splitlines()[-1:] or ["no output"]
            agent_result.error = f"gemini exited with status {output.exit_code} without a result: {detail[0][:500]}"
        elif result.get("status") != "success":
            agent_result.status = "failed"
            error = result.get("error") or {}
            agent_result.error = f"gemini reported {result.get('status')}: {str(error.get('message') if isinstance(error, dict) else error)[:500]}"
        elif output.exit_code not in (0, None):
            agent_result.status = "failed"
            agent_result.error = f"gemini exited with status {output.exit_code}"
        return agent_result

    def provider_failure(self, output: Output) -> str | None:
        for line in f"{output.stderr}\n{output.stdout}".splitlines():
            lowered = line.lower()
            if any(marker in lowered for marker in ("api key not valid", "quota exceeded", "resource_exhausted",
                                                    "status: 5", "fetch failed", "econnrefused", "503",
                                                    "permission_denied")):
                return line.strip()[:500]
        return None


register_spec(GeminiCliSpec())
