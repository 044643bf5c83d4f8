"""The model of a scenario: the records a loaded suite, scenario and tier prompt are, and the
error a scenario that cannot be used raises.

The loaders fill them: :mod:`harness.scenarios.loading` for this project's ``scenario.yaml`` (and the
dispatch to the others), :mod:`harness.tasks.harbor` for Harbor tasks and
:mod:`harness.tasks.swe` for SWE-bench instances. Callers import these names from here, the
one module that defines them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.sandbox.limits import Limits, MiB

VALIDATION_ORDER = ("install", "build", "lint", "typecheck", "test")


class ScenarioError(ValueError):
    """A scenario, suite or prompt that cannot be used. The message is one line naming the file
    and, where there is one, the field."""


@dataclass
class JudgeConfig:
    enabled: bool = False
    model: str | None = None
    provider: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    # (slug, weight, full text) per category; weights normalised by the judge.
    categories: list[tuple[str, float, str]] = field(default_factory=list)


@dataclass
class Scenario:
    """One benchmark scenario, loaded from ``suites/<suite>/scenarios/<name>/scenario.yaml``."""

    suite: str
    name: str  # the directory name; the scenario's identity
    path: Path  # the scenario directory
    suite_path: Path
    id: str  # display id from the YAML (defaults to name)
    title: str = ""
    description: str = ""
    tags: list[str] = field(default_factory=list)
    difficulty: str | None = None
    timeout_minutes: float = 60.0
    success_threshold: float = 0.7
    fixture_dir: Path | None = None  # repo/ or repo-fixture/; None for artifact-only scenarios
    workspace_required: bool = True
    workspace_exclude: list[str] = field(default_factory=list)
    validation_required: bool = True
    validation_commands: dict[str, str] = field(default_factory=dict)  # in VALIDATION_ORDER
    oracle_answers: dict[str, str] | None = None  # question -> answer; enables ask_user
    solution_dir: Path | None = None
    hidden_tests_dir: Path | None = None
    constraints: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, Any] = field(default_factory=dict)
    heuristic_checks: dict[str, Any] = field(default_factory=dict)
    llm_judge: JudgeConfig = field(default_factory=JudgeConfig)
    rubric_weights: dict[str, float] = field(default_factory=dict)
    artifact: dict[str, Any] | None = None
    warmup: dict[str, Any] | None = None
    allow_fetch_url: bool = False
    sandbox_network: bool = False  # sandbox.network: commands may use the network
    sandbox_limits: dict[str, int] = field(default_factory=dict)  # sandbox.* limits as written
    #: The build context (a directory holding a Dockerfile or Containerfile) of the image the
    #: scenario's commands need; None: the host's runtime serves (bwrap or process group).
    environment: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict)  # the YAML as read
    warnings: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"

    def limits(self) -> Limits:
        """The sandbox limits of this scenario's commands: its ``sandbox`` block over the defaults."""
        base, lim = Limits(), self.sandbox_limits
        return replace(
            base,
            memory_bytes=lim["memory_mb"] * MiB if "memory_mb" in lim else base.memory_bytes,
            max_processes=lim.get("max_processes", base.max_processes),
            file_size_bytes=lim["file_size_mb"] * MiB if "file_size_mb" in lim else base.file_size_bytes,
            tmpfs_bytes=lim["tmp_mb"] * MiB if "tmp_mb" in lim else base.tmpfs_bytes,
            workspace_bytes=lim["workspace_mb"] * MiB if "workspace_mb" in lim else base.workspace_bytes,
            workspace_files=lim.get("workspace_files", base.workspace_files),
        )


@dataclass
class TierPrompt:
    tier: str  # "L1"
    label: str  # "L1-basic"
    path: Path
    text: str


@dataclass
class Suite:
    """A suite directory and the scenarios it holds (names, sorted)."""

    name: str
    path: Path
    scenarios: list[str]
