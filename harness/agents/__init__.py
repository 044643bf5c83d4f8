"""Agents and the registry that builds them by name (``echo``, ``oracle``, ``anthropic``, ...)."""

from __future__ import annotations

from typing import Any, Callable

from harness.agents.base import Agent, AgentContext, AgentResult, Budgets

__all__ = ["Agent", "AgentContext", "AgentResult", "Budgets", "create_agent", "register_agent", "agent_names"]

# name -> factory(model, options) -> Agent. Factories import their SDKs lazily.
_REGISTRY: dict[str, Callable[..., Agent]] = {}


class UnknownAgentError(ValueError):
    pass


def register_agent(name: str, factory: Callable[..., Agent]) -> None:
    _REGISTRY[name] = factory


def _load_builtin() -> None:
    # Each module registers itself on import; missing modules simply are not available yet.
    import importlib

    for module in ("harness.agents.scripted", "harness.agents.api", "harness.agents.local",
                   "harness.agents.installed.claude_code", "harness.agents.installed.qwen_code",
                   "harness.agents.installed.gemini_cli", "harness.agents.installed.codex",
                   "harness.agents.installed.opencode"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def agent_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def create_agent(name: str, model: str | None = None, **options: Any) -> Agent:
    """Build the agent called ``name`` (``NAME@VERSION`` for an installed agent at another
    version than its pinned one); raise :class:`UnknownAgentError` listing the known ones."""
    _load_builtin()
    base, _, version = name.partition("@")
    if base not in _REGISTRY:
        raise UnknownAgentError(f"unknown agent {base!r}; available: {', '.join(sorted(_REGISTRY))}")
    if version:
        options = {**options, "version": version}
    return _REGISTRY[base](model=model, **options)


def agent_identity(name: str) -> str:
    """What of an ``--agent`` value makes runs comparable: an installed agent's name with the
    version that runs (its pinned one unless given), any other agent's name."""
    _load_builtin()
    from harness.agents.installed import _SPECS

    base, _, version = name.partition("@")
    spec = _SPECS.get(base)
    return f"{base}@{version or spec.package.version}" if spec is not None else name
