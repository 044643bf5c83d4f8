"""The ``qwen-code`` agent: the Qwen Code CLI (``qwen``), on the installed-agent seam.

Its model speaks OpenAI Chat Completions: ``OPENAI_BASE_URL`` (with ``/v1``),
``OPENAI_API_KEY`` and ``OPENAI_MODEL``. It runs one-shot with the task as its prompt,
``--output-format stream-json`` (the same event lines as Claude Code's: an ``init``, the
assistant's and the tools' messages, a final ``result`` with turns and token usage, no
cost) and ``--yolo`` (no approval prompts). Its settings (``~/.qwen/settings.json``) turn
usage statistics and telemetry off. A specialist reaches it through ``QWEN.md`` in the
workspace, which it reads as project instructions, and as a skill (``~/.qwen/skills``).
"""

from __future__ import annotations

import json

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, register_spec
from harness.agents.installed.claude_code import parse_cli_output, result_from_stream
from harness.agents.installed.tools import Package

DEFAULT_MODEL = "qwen3-coder-plus"
SETTINGS = {"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}


class QwenCodeSpec(AgentSpec):
    name = "qwen-code"
    package = Package("npm", "@qwen-code/qwen-code", "0.15.10", "qwen")
    api = "openai"
    summary = "Qwen Code CLI"

    def launch(self, task: Task) -> Launch:
        argv = [self.package.executable, task.prompt, "--output-format", "stream-json", "--yolo",
                "--max-session-turns", str(task.max_turns)]
        env = {"OPENAI_BASE_URL": task.base_url, "OPENAI_API_KEY": task.api_key,
               "OPENAI_MODEL": task.model or DEFAULT_MODEL}
        files = {"QWEN.md": task.specialist} if task.specialist else {}
        home = {".qwen/settings.json": json.dumps(SETTINGS)}
        skill = task.skill()
        if skill:
            home[f".qwen/skills/{skill[0]}/SKILL.md"] = skill[1]
        return Launch(argv, env, home_files=home, workspace_files=files, channel="QWEN.md, ~/.qwen/skills",
                      model=env["OPENAI_MODEL"])

    def parse(self, output: Output) -> AgentResult:
        return result_from_stream(parse_cli_output(output.stdout), output, "qwen")


register_spec(QwenCodeSpec())
