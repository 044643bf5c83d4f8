"""Your own agent: any command that reads a task and edits the workspace (``--agent 'cmd:...'``).

    bench py-bugs --agent 'cmd:mytool --task-file {prompt_file} --log {transcript_file}'

The command runs in the run's sandbox, in the workspace, like an installed agent (the same
seam: its program's folder visible read-only, a private home, the egress relay to its model
under ``bwrap`` and in a container). Placeholders, each replaced by a shell-quoted value:

- ``{prompt_file}``: a file holding the task's prompt; ``{prompt}``: the prompt itself;
- ``{system_prompt_file}``: a file holding the specialist's instructions (empty without one);
- ``{transcript_file}``: where the command may write its transcript (below);
- ``{workspace}``: the workspace's path; ``{model}``: the model asked for (``--model``).

The same are in its environment (``ZEBENCH_PROMPT_FILE``, ``ZEBENCH_SYSTEM_PROMPT_FILE``,
``ZEBENCH_TRANSCRIPT_FILE``, ``ZEBENCH_WORKSPACE``, ``ZEBENCH_MODEL``), with its model endpoint
as an OpenAI-compatible one: ``OPENAI_BASE_URL`` (``--base-url``, default OpenAI's) and
``OPENAI_API_KEY`` (a placeholder behind the relay, which sends the real one). It succeeds
when it exits 0.

The transcript file, if the command writes one, is JSON lines, each an object with any of:
``role`` with ``content``, ``tool_call`` (``{id, name, arguments}``) or ``tool_call_id`` and
``is_error`` (a transcript entry, kept as it is); ``usage`` (``{input_tokens, output_tokens,
cache_read_tokens, cache_write_tokens}``: one model call, summed); ``cost_usd`` (summed: the
cost is known when any line gives it, else priced from the table for ``model``, else
unknown); ``model``; ``final: true`` (its ``content`` is the final answer; else the last
assistant text is).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentNotInstalled, AgentSpec, InstalledAgent, Launch, Output, Task, cap_text
from harness.agents.installed.tools import Package

PREFIX = "cmd:"
PLACEHOLDERS = ("prompt_file", "prompt", "system_prompt_file", "transcript_file", "workspace", "model")


class CommandSpec(AgentSpec):
    """The seam's description of one command line."""

    name = "cmd"
    api = "openai"
    summary = "your own command"

    def __init__(self, command: str) -> None:
        self.command = command
        words = shlex.split(command)
        if not words:
            raise ValueError("--agent 'cmd:...': no command after cmd:")
        self.package = Package("none", words[0], "custom", words[0])
        self.program_dir: str | None = None  # where the program was found: first on its PATH
        unknown = sorted({name for _, name, _, _ in __import__("string").Formatter().parse(command)
                          if name is not None and name not in PLACEHOLDERS})
        if unknown:
            raise ValueError(f"--agent 'cmd:...': unknown placeholder {{{unknown[0]}}}; "
                             f"use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}")

    def launch(self, task: Task) -> Launch:
        files = {"prompt.md": task.prompt, "system-prompt.md": task.specialist or ""}
        values = {"prompt_file": f"{task.home}/prompt.md", "prompt": task.prompt,
                  "system_prompt_file": f"{task.home}/system-prompt.md", "transcript_file": f"{task.home}/transcript.jsonl",
                  "workspace": task.workspace, "model": task.model or ""}
        line = self.command.format(**{k: shlex.quote(v) for k, v in values.items()})
        if self.program_dir:
            line = f'PATH={shlex.quote(self.program_dir)}:"$PATH"; export PATH; {line}'
        env = {"ZEBENCH_PROMPT_FILE": values["prompt_file"], "ZEBENCH_SYSTEM_PROMPT_FILE": values["system_prompt_file"],
               "ZEBENCH_TRANSCRIPT_FILE": values["transcript_file"], "ZEBENCH_WORKSPACE": task.workspace,
               "ZEBENCH_MODEL": task.model or "", "OPENAI_BASE_URL": task.base_url, "OPENAI_API_KEY": task.api_key}
        return Launch(["/bin/sh", "-c", line], env, home_files=files, channel="{system_prompt_file}")

    def parse(self, output: Output) -> AgentResult:
        result = AgentResult(cost_usd=None)
        text = output.home_file("transcript.jsonl") or ""
        costs: list[float] = []
        final = None
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            usage = entry.get("usage")
            if isinstance(usage, dict):
                result.turns += 1
                result.tokens_in += _int(usage.get("input_tokens"))
                result.tokens_out += _int(usage.get("output_tokens"))
                result.cache_read_tokens += _int(usage.get("cache_read_tokens"))
                result.cache_write_tokens += _int(usage.get("cache_write_tokens"))
            if isinstance(entry.get("cost_usd"), (int, float)) and not isinstance(entry.get("cost_usd"), bool):
                costs.append(float(entry["cost_usd"]))
            if isinstance(entry.get("model"), str):
                result.model = entry["model"]
            kept = {k: entry[k] for k in ("role", "content", "tool_call", "tool_call_id", "is_error") if k in entry}
            if "role" in kept:
                if isinstance(kept.get("content"), str):
                    kept["content"] = cap_text(kept["content"])
                result.transcript.append(kept)
                if kept.get("tool_call"):
                    result.tool_calls += 1
                if kept["role"] == "assistant" and isinstance(entry.get("content"), str) and entry["content"]:
                    result.final_answer = entry["content"]
                    if entry.get("final"):
                        final = entry["content"]
        if final is not None:
            result.final_answer = final
        if costs:
            result.cost_usd = sum(costs)
        if output.exit_code not in (0, None):
            result.status = "failed"
            tail = (output.stderr or output.stdout).strip().splitlines()[-1:] or [""]
            result.error = f"the command exited with status {output.exit_code}: {tail[0][:500]}"
        return result


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class CommandAgent(InstalledAgent):
    """``cmd:COMMAND``: an :class:`InstalledAgent` whose program is found on ``PATH`` (or given by
    path), never installed by the harness."""

    def __init__(self, command: str, model: str | None = None, base_url: str | None = None, **_: Any) -> None:
        super().__init__(CommandSpec(command), model=model, base_url=base_url)
        self.name = PREFIX + command

    @property
    def identity(self) -> str:
        return self.name

    def executable(self) -> str:
        program = self.spec.package.executable
        found = program if os.path.sep in program and os.access(program, os.X_OK) else shutil.which(program)
        if not found:
            raise AgentNotInstalled(f"the command agent's program {program!r} is not found "
                                    f"({'not executable' if os.path.sep in program else 'not on PATH'})")
        return os.path.realpath(found)

    def install_root(self) -> Path:
        root = Path(self.executable()).parent
        self.spec.program_dir = str(root)
        return root

    def preflight(self) -> str | None:
        try:
            self.executable()
        except AgentNotInstalled as exc:
            return str(exc)
        return None


def create_command_agent(name: str, model: str | None = None, **options: Any) -> CommandAgent:
    return CommandAgent(name[len(PREFIX):], model=model, **options)
