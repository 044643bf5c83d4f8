"""``bench new``: lay out a new scenario that already works.

:func:`create_scenario` writes ``<suites>/<suite>/scenarios/<name>/`` (a fixture with a small
bug and a visible test that shows it, the fixed file in ``solution/``, hidden tests and a
commented ``scenario.yaml``) and the tier prompts in ``<suites>/<suite>/prompts/<name>/``: a
scenario the oracle passes and echo fails, so that its author edits from green. The files are
written aside and moved in place only once complete; nothing existing is overwritten
(:class:`ScenarioExists`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.scaffold.names import InvalidName, name_problem
from harness.scenarios.loading import SCENARIO_FILE, load_scenario


class ScenarioExists(FileExistsError):
    """``bench new`` would overwrite a scenario or its prompts."""


_MODULE = "rangekit"

_YAML = """\
# {suite}/{name}: a scenario laid out by `bench new`. Every key is described in
# docs/scenarios.md; docs/writing-scenarios.md says how to turn this example into your task.
# After each change, `bench check {suite}/{name}` proves it still sound: the oracle passes,
# echo fails, the outcome repeats and the hidden tests fail on the untouched fixture.

# Shown in listings and reports (the scenario's identity is its directory name, not this id).
id: {suite}/{name}
title: Make rangekit.clamp keep values inside their range
# What the task is, for people and for the judge (the agent reads the prompts, not this).
description: |
  rangekit.clamp(value, low, high) returns values above the range unchanged instead of
  high, and accepts a range whose low end is above its high end. Fix rangekit/clamp.py so
  that clamp returns low for values below low, high for values above high, the value
  itself inside the range (both ends included), and raises ValueError when low > high.
tags: [python, bugfix]
difficulty: easy
# The agent's deadline; a run past it is stored as a timeout.
timeout_minutes: 10
# The score (0..1) a run needs to count as a success. Keep it above what a partial fix scores.
success_threshold: 0.9

# Commands run on a copy of the agent's workspace once it has finished, in the order install,
# build, lint, typecheck, test. A failing install or test fails the run.
validation:
  commands:
    test: python3 -m pytest -q -p no:cacheprovider

# hidden-tests/ is laid over the graded copy (the agent never sees it), then this command runs;
# its score is the fraction of hidden tests passed. Run them alone so that the score measures
# them only.
hidden_tests:
  command: python3 -m pytest -q -p no:cacheprovider tests/test_clamp_hidden.py

# Cheap checks on the result: commands that must exit 0, files that must (not) exist, regular
# expressions that must (not) match.
heuristic_checks:
  patterns:
    - name: tests_not_weakened
      file: "tests/**/*.py"
      pattern: "pytest\\\\.(skip|mark\\\\.skip|mark\\\\.xfail)"
      negate: true
      weight: 1
      description: No test was skipped or marked xfail to make the suite pass

# The LLM judge scores the diff by these categories when enabled (it costs a model call per run;
# `bench check` always runs without it).
llm_judge:
  enabled: false
  categories:
    - "Correctness (70%): Score 1-5 on clamp's result below, inside and above the range, and on low > high."
    - "Code Quality (30%): Score 1-5 on a small fix that keeps the signature and the docstring."

# Each evaluator result's weight in the score (1 by default): here the hidden tests count most.
rubric_overrides:
  weights:
    hidden_tests: 3
"""

_PYPROJECT = """\
[project]
name = "rangekit"
version = "0.1.0"
description = "Small helpers for numeric ranges"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

_INIT = """\
from rangekit.clamp import clamp

__all__ = ["clamp"]
"""

_BUGGY = '''\
def clamp(value, low, high):
    """Return ``value`` limited to the range ``low..high`` (both ends included).

    Raises ValueError when ``low`` is greater than ``high``.
    """
    if value < low:
        return low
    if value > high:
        return value
    return value
'''

_FIXED = '''\
def clamp(value, low, high):
    """Return ``value`` limited to the range ``low..high`` (both ends included).

    Raises ValueError when ``low`` is greater than ``high``.
    """
    if low > high:
        raise ValueError(f"empty range: low {low!r} is greater than high {high!r}")
    if value < low:
        return low
    if value > high:
        return high
    return value
'''

_VISIBLE_TEST = """\
from rangekit import clamp


def test_inside_the_range_is_unchanged():
    assert clamp(2, 0, 3) == 2


def test_below_the_range_is_low():
    assert clamp(-1, 0, 3) == 0


def test_above_the_range_is_high():
    assert clamp(7, 0, 3) == 3
"""

_HIDDEN_TEST = """\
import pytest

from rangekit import clamp


def test_both_ends_are_included():
    assert clamp(0, 0, 3) == 0
    assert clamp(3, 0, 3) == 3


def test_far_above_the_range_is_high():
    assert clamp(10**9, -5, 5) == 5


def test_floats_are_clamped_too():
    assert clamp(2.5, 0.0, 1.5) == 1.5


def test_an_empty_range_is_refused():
    with pytest.raises(ValueError):
        clamp(1, 3, 0)
"""

_PROMPTS = {
    "L0-minimal.md": "`clamp` in this repository returns wrong values. Fix it.\n",
    "L1-basic.md": """\
`rangekit.clamp(value, low, high)` should limit `value` to the range `low..high`, but values
above the range come back unchanged. Fix the bug so that `clamp` behaves as its docstring
says, and make sure the tests pass (`python3 -m pytest`). Keep the function's signature.
""",
    "L2-directed.md": """\
Fix `clamp` in `rangekit/clamp.py`:

1. a value below `low` gives `low`, a value above `high` gives `high`, a value inside the
   range (both ends included) is returned unchanged;
2. a range whose `low` is greater than its `high` raises `ValueError`, whatever the value;
3. integers and floats both work.

Keep the signature and the docstring. Run `python3 -m pytest -q` until it passes, without
skipping or weakening a test; add tests for the cases above if you like.
""",
}


def scaffold_files(suite: str, name: str) -> dict[str, str]:
    """What :func:`create_scenario` writes: path relative to the suite directory -> text."""
    scen = f"scenarios/{name}"
    files = {
        f"{scen}/{SCENARIO_FILE}": _YAML.format(suite=suite, name=name),
        f"{scen}/repo-fixture/pyproject.toml": _PYPROJECT,
        f"{scen}/repo-fixture/{_MODULE}/__init__.py": _INIT,
        f"{scen}/repo-fixture/{_MODULE}/clamp.py": _BUGGY,
        f"{scen}/repo-fixture/tests/test_clamp.py": _VISIBLE_TEST,
        f"{scen}/solution/{_MODULE}/clamp.py": _FIXED,
        f"{scen}/hidden-tests/tests/test_clamp_hidden.py": _HIDDEN_TEST,
    }
    files.update({f"prompts/{name}/{file}": text for file, text in _PROMPTS.items()})
    return files


@dataclass
class Created:
    """What :func:`create_scenario` wrote."""

    suite: str
    name: str
    scenario_dir: Path
    prompts_dir: Path
    files: list[Path]

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"


def create_scenario(suites_dir: str | Path, suite: str, name: str) -> Created:
    """Write a working scenario ``suite/name`` under ``suites_dir`` (created if missing).

    Raises :class:`InvalidName` for a name the loader or ``bench`` could not use, and
    :class:`ScenarioExists` when the scenario's directory or its prompts directory exists
    (nothing is overwritten). The files are written aside, moved in place at the end and
    loaded as ``bench`` loads them, so a failure leaves no half-made scenario.
    """
    for kind, value in (("suite", suite), ("scenario", name)):
        problem = name_problem(kind, value)
        if problem:
            raise InvalidName(problem)
    root = Path(suites_dir).expanduser()
    suite_path = root / suite
    scenario_dir = suite_path / "scenarios" / name
    prompts_dir = suite_path / "prompts" / name
    for path in (scenario_dir, prompts_dir):
        if os.path.lexists(path):
            raise ScenarioExists(f"{path} already exists: `bench new` never overwrites a scenario; "
                                 "choose another name or remove it first")
    (suite_path / "scenarios").mkdir(parents=True, exist_ok=True)
    (suite_path / "prompts").mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bench-new-", dir=suite_path))
    files = scaffold_files(suite, name)
    moved: list[Path] = []
    try:
        for rel, text in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, "utf-8")
        for staged, final in ((staging / "scenarios" / name, scenario_dir), (staging / "prompts" / name, prompts_dir)):
            if os.path.lexists(final):  # made meanwhile by someone else
                raise ScenarioExists(f"{final} already exists: `bench new` never overwrites a scenario")
            staged.rename(final)
            moved.append(final)
        load_scenario(suite, name, root)  # what `bench` reads: a ScenarioError here undoes the scenario
    except BaseException:
        for final in moved:  # the half of a scenario moved in place before the failure
            shutil.rmtree(final, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Created(suite, name, scenario_dir, prompts_dir, sorted(suite_path / rel for rel in files))
