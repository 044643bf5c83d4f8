"""The ``aider`` agent: Aider (``aider-chat``, a Python program), on the installed-agent seam.

Aider edits files through text, not tool calls: the model answers with each changed file's
path and whole new content in a fence (``--edit-format whole``), and Aider writes them. It
runs one-shot (``--message PROMPT``) with every prompt answered yes, no update check, no
analytics sent (the analytics log is kept locally, in its home), and its model an
OpenAI-compatible endpoint: ``--openai-api-base`` (with ``/v1``), ``--openai-api-key`` and
``--model openai/NAME``, with the model's limits in a metadata file (and
``LITELLM_LOCAL_MODEL_COST_MAP``, so no price list is fetched). It finds the files to change
through its repository map, so the workspace is made a git repository for the run (the
commit is the fixture's state; nothing is committed after), and ``.git`` and Aider's own files
are taken out again before grading. Telemetry comes from the analytics log (``message_send``:
tokens per call); its cost is priced from the table. A specialist reaches it as a read-only
conventions file (``--read``).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from harness.agents.base import AgentResult
from harness.agents.installed import AgentSpec, Launch, Output, Task, cap_text, json_lines, register_spec
from harness.agents.installed.tools import Package

DEFAULT_MODEL = "gpt-4.1"
_GIT = "git -c user.name=zebench -c user.email=zebench@localhost"


class AiderSpec(AgentSpec):
    name = "aider"
    package = Package("pip", "aider-chat", "0.86.2", "aider")
    api = "openai"
    summary = "Aider"

    def launch(self, task: Task) -> Launch:
        model = task.model or DEFAULT_MODEL
        home = task.home
        argv = [task.executable, "--yes-always", "--no-auto-commits", "--no-check-update", "--analytics-disable",
                "--no-show-model-warnings", "--no-pretty", "--no-gitignore", "--no-stream", "--edit-format", "whole",
                "--openai-api-base", task.base_url, "--openai-api-key", task.api_key, "--model", f"openai/{model}",
                "--model-metadata-file", f"{home}/model-metadata.json", "--analytics-log", f"{home}/analytics.jsonl",
                "--chat-history-file", f"{home}/chat-history.md", "--input-history-file", f"{home}/input-history",
                "--message", task.prompt]
        if task.specialist:
            argv += ["--read", f"{home}/CONVENTIONS.md"]
        # A git repository of the fixture's state, for Aider's repository map; taken out after the run.
        script = (f"{{ git init -q . && {_GIT} add -A && {_GIT} commit -q --no-verify -m fixture; }} >/dev/null 2>&1; "
                  f"exec {shlex.join(argv)}")
        metadata = {f"openai/{model}": {"max_tokens": 8192, "max_input_tokens": 200000, "max_output_tokens": 8192,
                                        "litellm_provider": "openai", "mode": "chat"}}
        files = {"model-metadata.json": json.dumps(metadata)}
        if task.specialist:
            files["CONVENTIONS.md"] = task.specialist
        return Launch(["/bin/sh", "-c", script], {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}, home_files=files,
                      channel="--read CONVENTIONS.md", model=model, cleanup=(".git", ".aider*"))

    def parse(self, output: Output) -> AgentResult:
        events = json_lines(output.home_file("analytics.jsonl") or "")
        sends = [e.get("properties") or {} for e in events if e.get("event") == "message_send"]
        applied = [line.split("Applied edit to", 1)[1].strip() for line in output.stdout.splitlines()
                   if "Applied edit to" in line]
        transcript: list[dict[str, Any]] = [{"role": "assistant", "content": cap_text(output.stdout.strip())}]
        for i, path in enumerate(applied):
            transcript.append({"role": "assistant", "tool_call": {"id": f"edit-{i}", "name": "edit",
                                                                  "arguments": json.dumps({"path": path})}})
        result = AgentResult(
            tokens_in=sum(int(s.get("prompt_tokens") or 0) for s in sends),
            tokens_out=sum(int(s.get("completion_tokens") or 0) for s in sends),
            cost_usd=None, tool_calls=len(applied), turns=len(sends), transcript=transcript,
            final_answer=cap_text(output.stdout.strip().splitlines()[-1] if output.stdout.strip() else ""))
        if output.exit_code not in (0, None):
            result.status = "failed"
            tail = (output.stderr or output.stdout).strip().splitlines()[-1:] or [""]
            result.error = f"aider exited with status {output.exit_code}: {tail[0][:500]}"
        elif not sends:
            result.status = "error"
            result.error = "aider sent no message to its model: " + (output.stdout.strip().splitlines()[-1:] or [""])[0][:500]
        return result

    def provider_failure(self, output: Output) -> str | None:
        for line in f"{output.stdout}\n{output.stderr}".splitlines():
            lowered = line.lower()
            if any(m in lowered for m in ("apiconnectionerror", "authenticationerror", "ratelimiterror",
                                          "serviceunavailable", "internalservererror", "connection refused")):
                return line.strip()[:500]
        return None


register_spec(AiderSpec())
