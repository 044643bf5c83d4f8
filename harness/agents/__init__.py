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

    for module in ("harness.agents.scripted", "harness.agents.api", "harness.agents.claude_code", "harness.agents.local"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def agent_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def create_agent(name: str, model: str | None = None, **options: Any) -> Agent:
    """Build the agent called ``name``; raise :class:`UnknownAgentError` listing the known ones."""
    _load_builtin()
    if name not in _REGISTRY:
        raise UnknownAgentError(f"unknown agent {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](model=model, **options)
