"""The ``mini-swe-agent`` agent (``mini``, a Python program), on the installed-agent seam.

It gives its model one tool, ``bash``, and ends the task with the command ``echo
COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``. It runs ``mini -y --exit-immediately -t PROMPT`` with
its built-in ``mini.yaml`` first and a configuration of the run's own after it (the model's
OpenAI-compatible endpoint: ``api_base`` with ``/v1`` and ``api_key``; the run's turn limit as
its step limit; cost tracking that does not stop on a model it cannot price), with no
first-run setup (``MSWEA_CONFIGURED``) and no price list fetched. Its trajectory
(``-o trajectory.json``) gives the transcript (each command and its output), the model calls
and their tokens, and how it ended (``exit_status``); its cost is priced from the table. A
specialist reaches it through its system template.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, register_spec
from harness.agents.installed.tools import Package

DEFAULT_MODEL = "gpt-4.1"
BASE_SYSTEM = "You are a helpful assistant that can interact with a computer.\n"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


class MiniSweAgentSpec(AgentSpec):
    name = "mini-swe-agent"
    package = Package("pip", "mini-swe-agent", "2.4.6", "mini")
    api = "openai"
    summary = "mini-swe-agent"

    def launch(self, task: Task) -> Launch:
        model = task.model or DEFAULT_MODEL
        config: dict[str, Any] = {
            "model": {"cost_tracking": "ignore_errors",
                      "model_kwargs": {"api_base": task.base_url, "api_key": task.api_key}},
            "agent": {"step_limit": task.max_turns},
        }
        if task.specialist:
            config["agent"]["system_template"] = BASE_SYSTEM + "\n" + task.specialist + "\n"
        argv = [task.executable, "-y", "--exit-immediately", "-m", f"openai/{model}", "-c", "mini.yaml",
                "-c", f"{task.home}/zebench.yaml", "-l", "0", "-o", f"{task.home}/trajectory.json", "-t", task.prompt]
        env = {"MSWEA_CONFIGURED": "true", "MSWEA_GLOBAL_CONFIG_DIR": f"{task.home}/mini-swe-agent",
               "MSWEA_COST_TRACKING": "ignore_errors", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        return Launch(argv, env, home_files={"zebench.yaml": yaml.safe_dump(config)},
                      channel="agent.system_template", model=model)

    def parse(self, output: Output) -> AgentResult:
        raw = output.home_file("trajectory.json")
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            tail = (output.stderr or output.stdout).strip().splitlines()[-1:] or ["no trajectory"]
            return AgentResult(status="error", cost_usd=None,
                               error=f"mini exited with status {output.exit_code} without a trajectory: {tail[0][:500]}")
        info = data.get("info") or {}
        stats = info.get("model_stats") or {}
        transcript: list[dict[str, Any]] = []
        tokens_in = tokens_out = tool_calls = 0
        answer = ""
        for message in data.get("messages") or []:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
            usage = ((extra.get("response") or {}).get("usage") or {}) if isinstance(extra.get("response"), dict) else {}
            tokens_in += int(usage.get("prompt_tokens") or 0)
            tokens_out += int(usage.get("completion_tokens") or 0)
            if role == "assistant":
                text = _text(message.get("content"))
                if text:
                    answer = text
                    transcript.append({"role": "assistant", "content": cap_text(text)})
                for i, action in enumerate(extra.get("actions") or []):
                    tool_calls += 1
                    command = action.get("command") if isinstance(action, dict) else action
                    call_id = (action.get("tool_call_id") if isinstance(action, dict) else None) or f"action-{len(transcript)}-{i}"
                    transcript.append({"role": "assistant", "tool_call": {
                        "id": call_id, "name": "bash", "arguments": cap_text(json.dumps({"command": command}))}})
            elif role in ("tool", "user") and transcript:
                transcript.append({"role": "tool" if role == "tool" else "user", "tool_call_id": message.get("tool_call_id"),
                                   "content": cap_text(_text(message.get("content")))})
        exit_status = str(info.get("exit_status") or "")
        result = AgentResult(final_answer=str(info.get("submission") or answer)[:8000], tokens_in=tokens_in,
                             tokens_out=tokens_out, cost_usd=None, tool_calls=tool_calls,
                             turns=int(stats.get("api_calls") or 0), transcript=transcript)
        if exit_status in ("LimitsExceeded", "TimeExceeded"):
            result.status = "budget_exceeded"
            result.error = f"mini stopped: {exit_status}"
        elif exit_status and exit_status != "Submitted":
            result.status = "failed"
            result.error = f"mini ended with {exit_status}"
        elif output.exit_code not in (0, None) and exit_status != "Submitted":
            result.status = "failed"
            result.error = f"mini exited with status {output.exit_code}"
        return result

    def provider_failure(self, output: Output) -> str | None:
        for line in f"{output.stdout}\n{output.stderr}".splitlines():
            lowered = line.lower()
            if any(m in lowered for m in ("apiconnectionerror", "authenticationerror", "ratelimiterror",
                                          "serviceunavailable", "internalservererror")):
                return line.strip()[:500]
        return None


register_spec(MiniSweAgentSpec())
