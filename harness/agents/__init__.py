"""Agents and the registry that builds them by name (``echo``, ``oracle``, ``anthropic``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.agents.base import Agent, AgentContext, AgentResult, Budgets
from harness.agents.registry import _REGISTRY, register_agent

if TYPE_CHECKING:
    from harness.agents.installed import AgentSpec

__all__ = ["Agent", "AgentContext", "AgentResult", "Budgets", "agent_identity", "agent_names", "create_agent",
           "installed_specs", "is_agent", "register_agent", "unknown_agent"]


class UnknownAgentError(ValueError):
    pass


def unknown_agent(name: str) -> UnknownAgentError:
    """The error for an agent name nobody registered: ``unknown agent 'oracel' (did you mean
    'oracle'?); available: ...``."""
    from harness._util.suggest import did_you_mean

    base = name.partition("@")[0]
    known = agent_names()
    return UnknownAgentError(f"unknown agent {base!r}{did_you_mean(base, known)}; available: {', '.join(known)}")


ENTRY_POINT_GROUP = "zebench.agents"
PLUGIN_ERRORS: list[str] = []  # plugins that could not be loaded, said by ``bench agents``
_plugins_loaded: list[bool] = []


def _load_plugins() -> None:
    """Agents other packages register through the ``zebench.agents`` entry-point group: each
    entry point names an :class:`~harness.agents.installed.AgentSpec` (a class or an instance:
    an installed agent) or a factory ``(model=None, **options) -> Agent``, registered under
    the entry point's name. A plugin that fails to load is reported, never fatal."""
    if _plugins_loaded:
        return
    _plugins_loaded.append(True)
    from importlib.metadata import entry_points

    from harness.agents.installed import AgentSpec, register_spec

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = entry.load()
            if isinstance(target, type) and issubclass(target, AgentSpec):
                target = target()
            if isinstance(target, AgentSpec):
                target.name = entry.name
                register_spec(target)
            elif callable(target):
                register_agent(entry.name, target)
            else:
                raise TypeError(f"{entry.value} is neither an AgentSpec nor a factory")
        except Exception as exc:  # noqa: BLE001 - one broken plugin never stops the others
            PLUGIN_ERRORS.append(f"{entry.name} ({entry.value}): {type(exc).__name__}: {exc}")


def _load_builtin() -> None:
    # Each module registers itself (harness.agents.registry) when it is first imported.
    import harness.agents.scripted  # noqa: F401
    import harness.agents.api  # noqa: F401
    import harness.agents.local  # noqa: F401
    import harness.agents.installed.claude_code  # noqa: F401
    import harness.agents.installed.qwen_code  # noqa: F401
    import harness.agents.installed.gemini_cli  # noqa: F401
    import harness.agents.installed.codex  # noqa: F401
    import harness.agents.installed.opencode  # noqa: F401
    import harness.agents.installed.aider  # noqa: F401
    import harness.agents.installed.mini_swe_agent  # noqa: F401

    _load_plugins()


def agent_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def installed_specs() -> dict[str, AgentSpec]:
    """Every installed agent (built-in and from plugins) by name."""
    from harness.agents.installed import _SPECS

    _load_builtin()
    return dict(_SPECS)


def model_api(agent: str | None) -> str | None:
    """The API of an agent's own model: an API agent's provider (``anthropic``, ``openai``,
    ``openrouter``), an installed agent's API when it is ``anthropic`` or ``openai``; None for
    agents with no such model (echo, oracle, local, ``cmd:``). The judge's default follows it."""
    if not agent:
        return None
    base = agent.partition("@")[0].partition(":")[0]
    if base in ("anthropic", "openai", "openrouter"):
        return base
    spec = installed_specs().get(base)
    return spec.api if spec is not None and spec.api in ("anthropic", "openai") else None


def is_agent(name: str) -> bool:
    """Whether ``name`` names an agent: a registered one (``NAME`` or ``NAME@VERSION``) or a
    command (``cmd:...``)."""
    if name.startswith("cmd:"):
        return True
    _load_builtin()
    return name.partition("@")[0] in _REGISTRY


def create_agent(name: str, model: str | None = None, **options: Any) -> Agent:
    """Build the agent called ``name`` (``NAME@VERSION`` for an installed agent at another
    version than its pinned one); raise :class:`UnknownAgentError` listing the known ones."""
    _load_builtin()
    if name.startswith("cmd:"):
        from harness.agents.installed.command import create_command_agent

        return create_command_agent(name, model=model, **options)
    base, _, version = name.partition("@")
    if base not in _REGISTRY:
        raise unknown_agent(base)
    if version:
        options = {**options, "version": version}
    return _REGISTRY[base](model=model, **options)


def agent_identity(name: str) -> str:
    """What of an ``--agent`` value makes runs comparable: an installed agent's name with the
    version that runs (its pinned one unless given), any other agent's name."""
    if name.startswith("cmd:"):
        return name
    _load_builtin()
    from harness.agents.installed import _SPECS

    base, _, version = name.partition("@")
    spec = _SPECS.get(base)
    return f"{base}@{version or spec.package.version}" if spec is not None else name
