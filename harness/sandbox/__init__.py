"""The sandbox: the one way the harness runs a command for an agent or a scenario.

Every such command goes through a :class:`Sandbox`: the agents' ``run_command`` tool,
validation commands, heuristic commands and scripts, hidden tests, warmup and the
``claude-code`` CLI. Backends are chosen by mode (``--sandbox``, ``ZE_BENCHMARKS_SANDBOX``):

- ``bwrap`` (:mod:`harness.sandbox.bwrap`): a private view of the filesystem, processes and
  network; the default (``auto``) where bubblewrap works;
- ``none`` (:mod:`harness.sandbox.process_group`): process-group confinement only; what
  ``auto`` falls back to, with a warning, where bubblewrap cannot run.

Both apply the same limits (:mod:`harness.sandbox.limits`), the same clean environment and
the same identity (:mod:`harness.sandbox.identity`: never the host's root).
The kind is recorded with every run and is part of its ``config_hash``.

    >>> spec = SandboxSpec(kind=resolve_mode("auto").kind)
    >>> with open_sandbox(workspace, spec) as box:
    ...     result = box.run("python3 -m pytest -q")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox.base import (
    KINDS,
    MODES,
    Mount,
    Sandbox,
    SandboxClosed,
    SandboxSpec,
    SandboxUnavailable,
)
from harness.sandbox.limits import Limits
from harness.sandbox.output import CommandResult

__all__ = [
    "KINDS",
    "MODES",
    "CommandResult",
    "Limits",
    "Mount",
    "Sandbox",
    "SandboxChoice",
    "SandboxClosed",
    "SandboxSpec",
    "SandboxUnavailable",
    "default_mode",
    "open_sandbox",
    "resolve_mode",
]

MODE_ENV = "ZE_BENCHMARKS_SANDBOX"


@dataclass(frozen=True)
class SandboxChoice:
    """The backend a mode resolved to, and why ``auto`` fell back (None when it did not)."""

    mode: str
    kind: str
    fallback_reason: str | None = None


def default_mode() -> str:
    """``$ZE_BENCHMARKS_SANDBOX`` or ``auto``."""
    return (os.environ.get(MODE_ENV) or "auto").strip().lower()


def resolve_mode(mode: str | None = None) -> SandboxChoice:
    """Pick the backend for ``mode`` (default :func:`default_mode`).

    ``bwrap`` raises :class:`SandboxUnavailable` (saying why) where bubblewrap cannot run;
    ``auto`` then falls back to ``none`` and says why in ``fallback_reason``.
    """
    from harness.sandbox.bwrap import probe
    from harness.sandbox.identity import IdentityError, resolve_identity

    mode = (mode or default_mode()).strip().lower()
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; choose one of {', '.join(MODES)}")
    try:
        resolve_identity()  # no backend runs commands as root
    except IdentityError as exc:
        raise SandboxUnavailable(str(exc)) from None
    if mode == "none":
        return SandboxChoice(mode, "none")
    problem = probe()
    if problem is None:
        return SandboxChoice(mode, "bwrap")
    if mode == "bwrap":
        raise SandboxUnavailable(problem)
    return SandboxChoice(mode, "none", problem)


def open_sandbox(workspace: str | Path, spec: SandboxSpec) -> Sandbox:
    """A sandbox of kind ``spec.kind`` (``bwrap`` or ``none``) bound to ``workspace``."""
    if spec.kind == "bwrap":
        from harness.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(Path(workspace), spec)
    if spec.kind == "none":
        from harness.sandbox.process_group import ProcessGroupSandbox

        return ProcessGroupSandbox(Path(workspace), spec)
    raise ValueError(f"unknown sandbox kind {spec.kind!r}; choose one of {', '.join(KINDS)}")
