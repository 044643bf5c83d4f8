"""What the task formats of :mod:`harness.tasks` share (Harbor tasks, SWE-bench instances).

Each format is loaded as a :class:`~harness.scenarios.model.Scenario` the same way:

- its files are read as UTF-8 text; one that cannot be read is a
  :class:`~harness.scenarios.model.ScenarioError` naming the file (:func:`read_text`);
- a suite or scenario name given by the user is one plain path component (:func:`plain_name`);
- the title is the first non-empty line of the prompt, without Markdown's ``#``, cut to
  :data:`TITLE_CHARS` (:func:`title_of`);
- the one prompt is tier ``L1``, read from a file of the scenario's directory (:func:`one_prompt`);
- the reference solution is ``solution/solve.sh``, which the oracle agent runs in the
  workspace; ``tests/`` holds what grading lays over the grading copy, never the workspace;
- the format's grading settings live in the scenario's ``raw`` under a key of the format's own
  (:func:`raw_settings`: None for a scenario of another format).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.scenarios.model import Scenario, ScenarioError, TierPrompt

SOLUTION_DIR = "solution"
SOLVE_SCRIPT = "solve.sh"  # a solution/ holding it is a script the oracle runs
TESTS_DIR = "tests"
TITLE_CHARS = 80


def read_text(file: Path) -> str:
    """The text of ``file``; :class:`ScenarioError` naming the file when it cannot be read."""
    try:
        return file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None


def plain_name(name: str) -> bool:
    """Whether ``name`` is one plain path component (not empty, ``.`` or ``..``, no separator)."""
    return bool(name) and name not in (".", "..") and "/" not in name and os.sep not in name


def title_of(prompt: str) -> str:
    """The first non-empty line of ``prompt``, without a heading's ``#``, at most :data:`TITLE_CHARS`."""
    first = next((line.strip().lstrip("#").strip() for line in prompt.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 3].rstrip() + "..."


def raw_settings(scenario: Scenario, key: str) -> dict[str, Any] | None:
    """The settings a task format keeps under ``key`` of the scenario's ``raw``; None when the
    scenario is of another format."""
    settings = scenario.raw.get(key)
    return settings if isinstance(settings, dict) else None


def one_prompt(scenario: Scenario, label: str, file: str) -> list[TierPrompt]:
    """A task's one prompt: tier ``L1`` labelled ``label``, read from ``file`` of its directory."""
    return [TierPrompt(tier="L1", label=label, path=scenario.path / file, text="")]
