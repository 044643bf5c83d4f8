"""The table of agent factories by name, which agent modules fill when they are imported.

It knows no agent: :mod:`harness.agents` loads the built-in agents and the plugins into it,
and builds agents from it (``create_agent``).
"""

from __future__ import annotations

from typing import Callable

from harness.agents.base import Agent

# name -> factory(model, options) -> Agent. Factories import their SDKs lazily.
_REGISTRY: dict[str, Callable[..., Agent]] = {}


def register_agent(name: str, factory: Callable[..., Agent]) -> None:
    """Make ``factory`` the agent ``name`` (``--agent NAME``)."""
    _REGISTRY[name] = factory
