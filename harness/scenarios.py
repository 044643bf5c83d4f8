"""Suites, scenarios and tier prompts (DESIGN section 3).

This module holds the typed model of a scenario. Loading and discovery functions live here
too (``load_scenario``, ``discover_suites``, ``resolve_prompt``); they fill these records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VALIDATION_ORDER = ("install", "build", "lint", "typecheck", "test")


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
    raw: dict[str, Any] = field(default_factory=dict)  # the YAML as read, unknown keys kept
    warnings: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"


@dataclass
class TierPrompt:
    tier: str  # "L1"
    label: str  # "L1-basic"
    path: Path
    text: str
