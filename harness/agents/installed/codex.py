"""The ``codex`` agent: OpenAI's Codex CLI (``codex exec``), on the installed-agent seam.

Its model speaks the OpenAI Responses API, set in ``$CODEX_HOME/config.toml``: a model
provider with the base URL (with ``/v1``), the variable holding its key and
``wire_api = "responses"`` (``OPENAI_BASE_URL`` is not read); plugins and analytics are off,
so it looks up no other host. It runs ``codex exec --json --skip-git-repo-check --ephemeral
--dangerously-bypass-approvals-and-sandbox PROMPT`` with nothing on stdin (the run's sandbox
is its sandbox): JSON lines of ``item.*`` events (``file_change``, ``command_execution``,
``agent_message``, ...) and a ``turn.completed`` with token usage (no cost: priced from the
table). Without ``--model`` it asks for ``gpt-5.5``, a model it knows (it offers its
``apply_patch`` file tool only to models it knows). It has no turn limit of its own. A
specialist reaches it through ``AGENTS.md`` in the workspace, and as a skill
(``$CODEX_HOME/skills``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, json_lines, register_spec
from harness.agents.installed.tools import Package

DEFAULT_MODEL = "gpt-5.5"
KEY_VAR = "ZEBENCH_MODEL_KEY"
_PROVIDER_ERROR = re.compile(r"\b(401|403|429|5\d\d)\b|unauthorized|rate limit|connection (refused|error|reset)"
                             r"|error sending request|stream disconnected|timed out", re.IGNORECASE)


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def config_toml(base_url: str, model: str) -> str:
    return "\n".join([
        f"model = {_toml_string(model)}",
        'model_provider = "zebench"',
        "",
        "[model_providers.zebench]",
        'name = "zebench"',
        f"base_url = {_toml_string(base_url)}",
        f"env_key = {_toml_string(KEY_VAR)}",
        'wire_api = "responses"',
        "",
        "[features]",
        "plugins = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
    ])


class CodexSpec(AgentSpec):
    name = "codex"
    package = Package("npm", "@openai/codex", "0.171.0", "codex")
    api = "openai"
    summary = "OpenAI's Codex CLI"

    def launch(self, task: Task) -> Launch:
        argv = [self.package.executable, "exec", "--json", "--skip-git-repo-check", "--ephemeral",
                "--dangerously-bypass-approvals-and-sandbox", task.prompt]
        codex_home = f"{task.home}/.codex"
        env = {"CODEX_HOME": codex_home, KEY_VAR: task.api_key}
        files = {"AGENTS.md": task.specialist} if task.specialist else {}
        model = task.model or DEFAULT_MODEL
        home = {".codex/config.toml": config_toml(task.base_url, model)}
        skill = task.skill()
        if skill:
            home[f".codex/skills/{skill[0]}/SKILL.md"] = skill[1]
        return Launch(argv, env, home_files=home, workspace_files=files, channel="AGENTS.md, $CODEX_HOME/skills",
                      model=model)

    def parse(self, output: Output) -> AgentResult:
        transcript: list[dict[str, Any]] = []
        answer, errors = "", []
        tool_calls = turns = 0
        tokens_in = tokens_out = cached = 0
        completed_turn = failed_turn = False
        for event in json_lines(output.stdout):
            kind = event.get("type")
            item = event.get("item") if isinstance(event.get("item"), dict) else {}
            if kind == "item.completed":
                item_type = item.get("type")
                if item_type == "agent_message":
                    answer = str(item.get("text") or "")
                    turns += 1
                    transcript.append({"role": "assistant", "content": cap_text(answer)})
                elif item_type in ("file_change", "command_execution", "mcp_tool_call", "web_search"):
                    tool_calls += 1
                    turns += 1
                    if item_type == "command_execution":
                        name, arguments = "exec_command", {"command": item.get("command")}
                        result = str(item.get("aggregated_output") or "")
                        failed = item.get("exit_code") not in (0, None) or item.get("status") == "failed"
                    elif item_type == "file_change":
                        name, arguments = "apply_patch", {"changes": item.get("changes")}
                        result, failed = str(item.get("status") or ""), item.get("status") == "failed"
                    else:
                        name, arguments = item_type, {k: v for k, v in item.items() if k not in ("id", "type")}
                        result, failed = str(item.get("status") or ""), item.get("status") == "failed"
                    call_id = item.get("id")
                    transcript.append({"role": "assistant", "tool_call": {
                        "id": call_id, "name": name, "arguments": cap_text(json.dumps(arguments))}})
                    transcript.append({"role": "tool", "tool_call_id": call_id, "content": cap_text(result),
                                       "is_error": bool(failed)})
            elif kind == "turn.completed":
                completed_turn = True
                usage = event.get("usage") or {}
                cached += int(usage.get("cached_input_tokens") or 0)
                tokens_in += int(usage.get("input_tokens") or 0)
                tokens_out += int(usage.get("output_tokens") or 0)
            elif kind == "turn.failed":
                failed_turn = True
                errors.append(str((event.get("error") or {}).get("message") or "the turn failed"))
            elif kind == "error":
                errors.append(str(event.get("message") or "error"))
        result = AgentResult(final_answer=answer, tokens_in=max(0, tokens_in - cached), tokens_out=tokens_out,
                             cache_read_tokens=cached, cost_usd=None, tool_calls=tool_calls, turns=turns,
                             transcript=transcript)
        if failed_turn or (errors and not completed_turn):
            result.status = "failed"
            result.error = f"codex: {errors[-1][:500] if errors else 'the turn failed'}"
        elif not completed_turn:
            result.status = "error"
            detail = (output.stderr or output.stdout).strip().splitlines()[-1:] or ["no output"]
            result.error = f"codex exited with status {output.exit_code} without finishing its turn: {detail[0][:500]}"
        elif output.exit_code not in (0, None):
            result.status = "failed"
            result.error = f"codex exited with status {output.exit_code}"
        return result

    def provider_failure(self, output: Output) -> str | None:
        for event in json_lines(output.stdout):
            if event.get("type") in ("error", "turn.failed"):
                message = str(event.get("message") or (event.get("error") or {}).get("message") or "")
                if _PROVIDER_ERROR.search(message) and "the script cannot answer" not in message:
                    return message[:500]
        return None


register_spec(CodexSpec())
