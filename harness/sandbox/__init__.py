"""The sandbox: the one way the harness runs a command for an agent or a scenario.

Every such command goes through a :class:`Sandbox`: the agents' ``run_command`` tool,
validation commands, heuristic commands and scripts, hidden tests, warmup and the
``claude-code`` CLI. Backends are chosen by mode (``--sandbox``, ``ZE_BENCHMARKS_SANDBOX``):

- ``bwrap`` (:mod:`harness.sandbox.bwrap`): a private view of the filesystem, processes and
  network; the default (``auto``) where bubblewrap works;
- ``none`` (:mod:`harness.sandbox.process_group`): process-group confinement only; what
  ``auto`` falls back to, with a warning, where bubblewrap cannot run;
- ``podman`` and ``docker`` (:mod:`harness.sandbox.container`): one container per sandbox,
  from the scenario's own image (``sandbox.image``, built locally and cached by content:
  :mod:`harness.sandbox.images`) or from the host's runtime mounted read-only. ``auto`` picks
  one for a scenario that declares an image (:func:`choose_environment`).

All apply the same limits (:mod:`harness.sandbox.limits`), the same clean environment and
the same identity (:mod:`harness.sandbox.identity`: never the host's root).
The kind (and a scenario image's content hash) is recorded with every run and is part of its
``config_hash``.

    >>> spec = SandboxSpec(kind=resolve_mode("auto").kind)
    >>> with open_sandbox(workspace, spec) as box:
    ...     result = box.run("python3 -m pytest -q")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.sandbox.base import (
    CONTAINER_KINDS,
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

if TYPE_CHECKING:
    from harness.sandbox.images import ContainerImage

__all__ = [
    "CONTAINER_KINDS",
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
    "EnvironmentChoice",
    "build_environment",
    "choose_environment",
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
    ``auto`` then falls back to ``none`` and says why in ``fallback_reason``. ``podman`` and
    ``docker`` raise :class:`SandboxUnavailable` where they cannot start a container. ``auto``
    resolves to a host backend (bwrap or none): a scenario that declares an image is given a
    container backend by :func:`choose_environment`.
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
    if mode in CONTAINER_KINDS:
        from harness.sandbox.container import probe as container_probe

        problem = container_probe(mode)
        if problem is not None:
            raise SandboxUnavailable(problem)
        return SandboxChoice(mode, mode)
    problem = probe()
    if problem is None:
        return SandboxChoice(mode, "bwrap")
    if mode == "bwrap":
        raise SandboxUnavailable(problem)
    return SandboxChoice(mode, "none", problem)


def open_sandbox(workspace: str | Path, spec: SandboxSpec, image: "ContainerImage | None" = None) -> Sandbox:
    """A sandbox of kind ``spec.kind`` bound to ``workspace``. ``image``: what a container
    backend starts (None: the host-runtime image); the host backends take none."""
    if spec.kind in CONTAINER_KINDS:
        from harness.sandbox.container import ContainerSandbox

        return ContainerSandbox(Path(workspace), spec, image=image)
    if image is not None:
        raise ValueError(f"the {spec.kind} sandbox runs the host's runtime; it cannot start image {image.tag}")
    if spec.kind == "bwrap":
        from harness.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(Path(workspace), spec)
    if spec.kind == "none":
        from harness.sandbox.process_group import ProcessGroupSandbox

        return ProcessGroupSandbox(Path(workspace), spec)
    raise ValueError(f"unknown sandbox kind {spec.kind!r}; choose one of {', '.join(KINDS)}")


# --------------------------------------------------------------------------- scenarios' images

@dataclass(frozen=True)
class EnvironmentChoice:
    """Where one scenario's commands run: a backend kind, and the build context of the image a
    container backend starts for it (``sandbox.image``; None: the host's runtime)."""

    kind: str
    context: Path | None = None  # the build context the scenario declares, if any
    context_hash: str | None = None
    used: bool = True  # False: the scenario declares an image, but an explicit host backend runs it
    refused: str | None = None  # why the scenario cannot run here (its runs are stored as errors)

    @property
    def image(self) -> bool:
        """Whether the scenario's own image is built and started."""
        return self.context is not None and self.used and self.refused is None

    def config_text(self) -> str:
        """The ``sandbox`` part of the config hash: the kind, and the image's content hash."""
        if self.context is None or not self.used:
            return self.kind
        return f"{self.kind} image {(self.context_hash or '')[:20]}"

    def describe(self) -> dict[str, object] | None:
        """What a run records of a declared image that was not used (None otherwise)."""
        if self.context is None or self.image:
            return None
        why = self.refused or f"--sandbox {self.kind} runs the host's runtime"
        return {"declared": str(self.context), "contextHash": self.context_hash, "used": False, "why": why}


def choose_environment(mode: str, context: Path | None) -> EnvironmentChoice:
    """The backend for a scenario under ``--sandbox MODE`` (``context``: its ``sandbox.image``).

    - no image: ``auto`` resolves as :func:`resolve_mode` does; a kind is itself (a container
      kind starts the host-runtime image);
    - an image under ``podman`` or ``docker``: that backend, with the image;
    - an image under ``auto``: the first container backend that works here (podman, then
      docker), with the image; where none works the scenario is refused (``refused``);
    - an image under an explicit ``bwrap`` or ``none``: the host's runtime, the image not used
      (recorded with each run).
    """
    mode = (mode or default_mode()).strip().lower()
    if context is None:
        return EnvironmentChoice(resolve_mode(mode).kind if mode == "auto" else mode)
    from harness.sandbox.images import context_hash

    digest = context_hash(context)
    if mode in CONTAINER_KINDS:
        return EnvironmentChoice(mode, context, digest)
    if mode != "auto":
        return EnvironmentChoice(mode, context, digest, used=False)
    from harness.sandbox.container import probe

    problems = []
    for kind in CONTAINER_KINDS:
        problem = probe(kind)
        if problem is None:
            return EnvironmentChoice(kind, context, digest)
        problems.append(problem)
    return EnvironmentChoice(CONTAINER_KINDS[0], context, digest,
                             refused=f"it declares an image (sandbox.image) and no container backend works here: "
                                     f"{'; '.join(problems)}")


def build_environment(choice: EnvironmentChoice, *, rebuild: bool = False) -> "ContainerImage | None":
    """The image ``choice`` starts, built (or found in the cache); None for the host's runtime.
    Raises :class:`~harness.sandbox.images.ImageError` and :class:`SandboxUnavailable`."""
    if not choice.image:
        return None
    from harness.sandbox.container import detect_runtime
    from harness.sandbox.images import build_image

    return build_image(choice.context, detect_runtime(choice.kind), rebuild=rebuild)
