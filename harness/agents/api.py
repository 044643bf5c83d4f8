"""Agents backed by model APIs: ``anthropic``, ``openai`` (also any OpenAI-compatible server via
``base_url``) and ``openrouter``. All three run the same tool loop (:mod:`harness.agents.loop`).

Options (from ``create_agent(name, model, **options)`` or ``AgentContext.options``, the
latter winning): ``base_url``, ``api_key``, ``temperature`` (default 0), ``call_timeout_s``,
and ``provider`` (a ready :class:`harness.models.providers.Provider`, for embedding and tests).
"""

from __future__ import annotations

from typing import Any

from harness.agents.base import AgentContext, AgentResult
from harness.agents.registry import register_agent

DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4o-mini",
    "openrouter": "anthropic/claude-sonnet-4.6",
}

DEFAULT_SYSTEM_PROMPT = """\
You are an experienced software engineer working on a repository checked out in your \
workspace. Complete the task you are given by inspecting and changing the code with the \
tools provided.

How to work:
- Start by looking around: list the directory and read the files that matter before \
changing anything.
- Make focused changes that solve the task; keep the existing style and behaviour that \
the task does not ask you to change.
- Write whole files with write_file (it replaces the file's content).
- Run the project's tests or other checks with run_command to verify your change, and fix \
what fails.
- All paths are relative to the workspace root. Commands run in the workspace root with a \
time limit and no network credentials.
- When you are done, reply with a short summary of what you changed and how you verified \
it, without calling a tool."""


def compose_system_prompt(specialist_prompt: str | None) -> str:
    """The default coding-agent prompt, followed by the specialist's system prompt when there is one."""
    if specialist_prompt and specialist_prompt.strip():
        return f"{DEFAULT_SYSTEM_PROMPT}\n\n{specialist_prompt.strip()}"
    return DEFAULT_SYSTEM_PROMPT


class ApiAgent:
    """An agent that drives a model API through the shared tool loop."""

    def __init__(self, name: str, model: str | None = None, **options: Any) -> None:
        self.name = name
        self.model = model or DEFAULT_MODELS[name]
        self.options = options

    def _provider_name(self, base_url: str | None) -> str:
        if self.name == "openai" and base_url and "api.openai.com" not in base_url:
            return "openai-compatible"  # Ollama, vLLM, llama.cpp: no OpenAI key is sent there
        return self.name

    def preflight(self) -> str | None:
        """A problem that would fail every run before any model call (a missing key), or None."""
        from harness.models.providers import CREDENTIAL_ENV, MissingCredentialsError, has_credentials

        if self.options.get("provider") is not None or self.options.get("api_key"):
            return None
        name = self._provider_name(self.options.get("base_url"))
        if has_credentials(name):
            return None
        return str(MissingCredentialsError(CREDENTIAL_ENV[name] or "", name))

    def price(self, model: str | None = None):  # -> ModelPrice | None
        """The price table's row for this agent's model, or None when it has none."""
        from harness.models.pricing import price_for

        return price_for(self._provider_name(self.options.get("base_url")), model or self.model)

    def cost_known(self, model: str | None = None) -> bool:
        """Whether the price table prices this agent's model, so a cost budget can be enforced."""
        return self.price(model) is not None

    def unpriced_reason(self, model: str | None = None) -> str:
        """Why :meth:`price` is None, naming the server when it is not the provider's own."""
        from harness.models.pricing import unpriced_reason

        return unpriced_reason(self._provider_name(self.options.get("base_url")), model or self.model)

    def run(self, ctx: AgentContext) -> AgentResult:
        from harness.agents.loop import LoopSettings, run_tool_loop
        from harness.models.providers import ProviderError, get_provider
        from harness.tools import Toolset

        options = {**self.options, **ctx.options}
        model = ctx.model or self.model
        provider = options.get("provider")
        owned = provider is None
        if provider is None:
            base_url = options.get("base_url")
            try:
                provider = get_provider(self._provider_name(base_url), base_url=base_url, api_key=options.get("api_key"))
            except ProviderError as exc:  # missing credentials: the machine's problem, not the agent's
                return AgentResult(status="error", error=str(exc), model=model, cost_usd=0.0,
                                   error_kind="infra" if exc.infrastructure else None)
        settings = LoopSettings(
            model=model,
            system=compose_system_prompt(ctx.system_prompt),
            temperature=options.get("temperature", 0.0),
            call_timeout_s=float(options.get("call_timeout_s", 300.0)),
        )
        try:
            return run_tool_loop(ctx, provider, Toolset.for_context(ctx), settings)
        finally:
            if owned:
                provider.close()


def _factory(name: str):
    def build(model: str | None = None, **options: Any) -> ApiAgent:
        return ApiAgent(name, model, **options)

    return build


for _name in DEFAULT_MODELS:
    register_agent(_name, _factory(_name))
