"""Writing scenarios: lay out a new one that already works (``bench new``) and prove one sound
(``bench check``). The guide is docs/writing-scenarios.md; the format docs/scenarios.md.

:func:`create_scenario` writes ``<suites>/<suite>/scenarios/<name>/`` (a fixture with a small
bug and a visible test that shows it, the fixed file in ``solution/``, hidden tests and a
commented ``scenario.yaml``) and the tier prompts in ``<suites>/<suite>/prompts/<name>/``: a
scenario the oracle passes and echo fails, so that its author edits from green.

:func:`check_scenario` runs a scenario through the runner (:func:`harness.runner.run_plan`,
without a results store: nothing is stored) and turns the runs into verdicts:

- ``oracle passes``: the reference solution succeeds (the scenario can be solved as written);
- ``repeats``: a second oracle run has the same outcome (status, score, every evaluation);
- ``echo fails``: doing nothing does not succeed (the scenario tells work from no work);
- ``hidden tests fail on the fixture``: in that echo run, which grades the untouched fixture,
  not every hidden test passes (they test the change asked for);
- ``careless fix fails``, with a patch: the fixture with the patch applied does not succeed.

The judge is off for every run: a check calls no model and costs nothing.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.agents import register_agent
from harness.agents.base import AgentContext, AgentResult
from harness.scenarios import (
    RESERVED_SUITE_NAMES,
    SCENARIO_FILE,
    Scenario,
    ScenarioError,
    available_tiers,
    default_suites_dir,
    load_scenario,
    resolve_prompt,
)

#: A suite or scenario name: a directory name that `bench SUITE SCENARIO` can name as a word
#: (no option-like leading dash, no path separator, no hidden or relative directory).
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_NAME_LENGTH = 100

#: The agent that applies a careless patch (registered for a check only).
PATCH_AGENT = "careless-patch"

# The verdicts' check names, in the order a scenario's rows are reported.
LOADS = "scenario loads"
ORACLE_PASSES = "oracle passes"
REPEATS = "repeats"
ECHO_FAILS = "echo fails"
HIDDEN_FAIL = "hidden tests fail on the fixture"
CARELESS_FAILS = "careless fix fails"
CHECKS = (LOADS, ORACLE_PASSES, REPEATS, ECHO_FAILS, HIDDEN_FAIL, CARELESS_FAILS)


class InvalidName(ValueError):
    """A suite or scenario name the loader or ``bench`` could not use (bad input)."""


class ScenarioExists(FileExistsError):
    """``bench new`` would overwrite a scenario or its prompts."""


# --------------------------------------------------------------------------- names and places


def name_problem(kind: str, name: str) -> str | None:
    """Why ``name`` cannot be a ``kind`` (``suite`` or ``scenario``) name, or None."""
    if not name:
        return f"the {kind} name is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"{kind} name {name[:40]!r}...: at most {MAX_NAME_LENGTH} characters"
    if not NAME_RULE.fullmatch(name):
        return (f"{kind} name {name!r}: use letters, digits, '.', '_' and '-', starting with a letter or digit "
                "(it is a directory name and a word of `bench SUITE SCENARIO`)")
    if kind == "suite" and name in RESERVED_SUITE_NAMES:
        return (f"suite name {name!r} is the name of a bench command, so `bench {name}` could never run it; "
                "choose another")
    return None


def parse_target(text: str, *, need_scenario: bool = False) -> tuple[str, str | None]:
    """``SUITE`` or ``SUITE/SCENARIO`` -> (suite, scenario or None); :class:`InvalidName` when bad."""
    suite, sep, name = text.strip().partition("/")
    if need_scenario and not sep:
        raise InvalidName(f"{text!r}: give SUITE/SCENARIO (e.g. py-bugs/my-scenario)")
    if "/" in name:
        raise InvalidName(f"{text!r}: give SUITE or SUITE/SCENARIO (one '/')")
    problem = name_problem("suite", suite) or (name_problem("scenario", name) if sep else None)
    if problem:
        raise InvalidName(problem)
    return suite, (name if sep else None)


def shipped_suites_dir() -> Path | None:
    """The repository's ``suites/`` (a source checkout), or None (an installed package has none)."""
    repo = Path(__file__).resolve().parent.parent / "suites"
    return repo if repo.is_dir() else None


def suites_dirs(given: Sequence[str | Path] = (), include_shipped: bool = True) -> list[Path]:
    """The suite directories to search, in order: each given one (an entry may be an
    ``os.pathsep``-separated list), then the shipped suites unless ``include_shipped`` is false;
    :func:`~harness.scenarios.default_suites_dir` when that leaves none. Raises
    :class:`ScenarioError` for one that does not exist."""
    dirs: list[Path] = []
    for entry in given:
        for part in str(entry).split(os.pathsep):
            if part.strip():
                dirs.append(Path(part.strip()).expanduser())
    shipped = shipped_suites_dir() if include_shipped else None
    if shipped is not None:
        dirs.append(shipped)
    if not dirs:
        dirs.append(default_suites_dir())
    out: list[Path] = []
    for path in dirs:
        if not path.is_dir():
            raise ScenarioError(f"suites directory not found: {path}")
        if not any(_same_dir(path, seen) for seen in out):
            out.append(path)
    return out


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@dataclass(frozen=True)
class Target:
    """One scenario to check, and the suites directory it was found in."""

    suites_dir: Path
    suite: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"


def _scenario_names(suite_path: Path) -> list[str]:
    root = suite_path / "scenarios"
    return sorted(d.name for d in root.iterdir() if (d / SCENARIO_FILE).is_file())


def find_targets(texts: Sequence[str], dirs: Sequence[Path]) -> list[Target]:
    """The scenarios named by ``SUITE`` or ``SUITE/SCENARIO`` words, each from the first of
    ``dirs`` holding its suite. Raises :class:`InvalidName` for a malformed word and
    :class:`ScenarioError` for an unknown suite or scenario (naming the ones that exist)."""
    targets: list[Target] = []
    for text in texts:
        suite, name = parse_target(text)
        home = next((d for d in dirs if (d / suite / "scenarios").is_dir()), None)
        if home is None:
            known = sorted({p.name for d in dirs for p in d.iterdir() if (p / "scenarios").is_dir()})
            raise ScenarioError(f"unknown suite {suite!r} in {os.pathsep.join(map(str, dirs))}; "
                                f"available: {', '.join(known) or 'none'}")
        names = _scenario_names(home / suite)
        if name is not None and name not in names:
            raise ScenarioError(f"unknown scenario {name!r} in suite {suite!r} (no "
                                f"{home / suite / 'scenarios' / name / SCENARIO_FILE}); "
                                f"available: {', '.join(names) or 'none'}")
        if not names:
            raise ScenarioError(f"suite {suite!r} in {home} has no scenario "
                                f"(no {home / suite}/scenarios/*/{SCENARIO_FILE})")
        for one in [name] if name is not None else names:
            target = Target(home, suite, one)
            if target not in targets:
                targets.append(target)
    return targets


# --------------------------------------------------------------------------- bench new

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


# --------------------------------------------------------------------------- the careless patch


class PatchAgent:
    """Applies a patch to the workspace (``git apply``, else ``patch -p1`` where git is not
    installed), in the run's sandbox: a careless fix played as an agent's work."""

    name = PATCH_AGENT

    def __init__(self, model: str | None = None, patch: str | None = None, patch_name: str = "the patch",
                 **options: Any) -> None:
        self.model = model
        self.patch = patch
        self.patch_name = patch_name

    def run(self, ctx: AgentContext) -> AgentResult:
        transcript: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        if not self.patch:
            return AgentResult(status="error", error="no patch to apply", cost_usd=0.0, transcript=transcript)
        data = self.patch.encode("utf-8", "surrogateescape")  # as read: any bytes the file held
        # git must not take a repository enclosing the workspace for the project's (it would
        # read the patch's paths from that repository's root).
        inner = ctx.sandbox.inner_workspace.rstrip("/") or "/"
        env = {"GIT_CEILING_DIRECTORIES": posixpath.dirname(inner) or "/"}
        timeout = max(1.0, min(120.0, ctx.remaining_s()))
        result = ctx.sandbox.run("git apply --whitespace=nowarn", stdin_data=data, env=env, timeout_s=timeout)
        tool = "git apply"
        if result.exit_code == 127:
            result = ctx.sandbox.run("patch -p1 --batch --forward --no-backup-if-mismatch", stdin_data=data,
                                     timeout_s=timeout)
            tool = "patch -p1"
        if result.exit_code == 127:
            return AgentResult(status="error", error="neither git nor patch is installed: cannot apply the patch",
                               cost_usd=0.0, transcript=transcript)
        if not result.ok:
            why = (result.stderr or result.stdout).strip().splitlines()[:3]
            return AgentResult(status="error", cost_usd=0.0, transcript=transcript,
                               error=f"{self.patch_name} does not apply to the fixture ({tool}: "
                                     f"{'; '.join(why) or result.outcome()})")
        answer = f"Applied {self.patch_name} with {tool}."
        transcript.append({"role": "assistant", "content": answer})
        return AgentResult(status="completed", final_answer=answer, model=self.model, cost_usd=0.0,
                           transcript=transcript)


# --------------------------------------------------------------------------- bench check


@dataclass
class Verdict:
    """One check of one scenario: ``pass``, ``fail`` or ``skip`` (does not apply), and why."""

    scenario: str  # suite/name
    check: str
    status: str
    detail: str = ""
    seconds: float | None = None  # the runs it rests on, when it rests on runs

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "check": self.check, "status": self.status, "detail": self.detail,
                "seconds": None if self.seconds is None else round(self.seconds, 2)}


@dataclass
class CheckOptions:
    """How :func:`check_scenario` runs its runs."""

    sandbox: str | None = None  # bwrap | none; None: resolved as `bench` does (auto)
    workspaces_root: Path | None = None
    tier: str | None = None  # the prompt the runs get (default L1, else the first tier)
    careless: str | None = None  # the text of a patch, applied as a careless fix
    careless_name: str = "the careless patch"
    parallel: int = 1
    skip_warmup: bool = False
    control: Any = None  # harness.control.BatchControl, for Ctrl-C
    oracle_runs: int = 2  # oracle runs whose outcomes must all be the same (``repeats``); at least 2


VerdictCallback = Callable[[Verdict], None]


def _first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def outcome_text(record: Any) -> str:
    """``completed, score 1.00`` / ``failed/validation, score 0.25``."""
    status = record.status + (f"/{record.failure_class}" if record.failure_class else "")
    return status if record.total_score is None else f"{status}, score {record.total_score:.2f}"


def _why(record: Any) -> str:
    """What went wrong in a run, in a few words: its error, else its evaluations short of full marks."""
    meta = record.metadata or {}
    for key in ("error", "agentError"):
        if meta.get(key):
            return _first_line(str(meta[key]))
    short = []
    for e in record.evaluations:
        if e.status == "ok" and e.score < 1.0:
            short.append(f"{e.evaluator_name} {e.score:.2f} ({_first_line(e.details, 80)})")
        elif e.status == "error":
            short.append(f"{e.evaluator_name} error ({_first_line(e.details, 80)})")
    return "; ".join(short)


def _with_why(record: Any) -> str:
    why = _why(record)
    return outcome_text(record) + (f": {why}" if why else "")


def _not_graded(record: Any) -> bool:
    """A run that says nothing about the scenario: the machine or the harness failed."""
    return record.status == "error" and record.failure_class in ("infra", "harness")


def _signature(record: Any) -> tuple[Any, ...]:
    return (record.status, record.failure_class, None if record.total_score is None else round(record.total_score, 6),
            tuple(sorted((e.evaluator_name, e.status, round(e.score, 6)) for e in record.evaluations)))


def _seconds(*records: Any) -> float:
    return sum((r.telemetry.duration_ms or 0.0) if r.telemetry is not None else 0.0 for r in records) / 1000.0


def judge_oracle(key: str, record: Any) -> Verdict:
    if record.is_successful:
        return Verdict(key, ORACLE_PASSES, "pass", outcome_text(record), _seconds(record))
    return Verdict(key, ORACLE_PASSES, "fail", f"the reference solution does not pass: {_with_why(record)}",
                   _seconds(record))


def judge_repeat(key: str, first: Any, second: Any) -> Verdict:
    if _signature(first) == _signature(second):
        return Verdict(key, REPEATS, "pass", f"the same outcome twice: {outcome_text(second)}", _seconds(first, second))
    before = {e.evaluator_name: e for e in first.evaluations}
    differ = [f"{e.evaluator_name} {before[e.evaluator_name].score:.2f} then {e.score:.2f}"
              for e in second.evaluations
              if e.evaluator_name in before and (before[e.evaluator_name].score, before[e.evaluator_name].status)
              != (e.score, e.status)]
    what = "; ".join(differ) or f"{_with_why(first)} then {_with_why(second)}"
    return Verdict(key, REPEATS, "fail", f"two oracle runs differ ({what}): the scenario is flaky",
                   _seconds(first, second))


def judge_echo(key: str, record: Any) -> Verdict:
    if _not_graded(record):
        return Verdict(key, ECHO_FAILS, "fail", f"the untouched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    if record.is_successful:
        return Verdict(key, ECHO_FAILS, "fail", f"doing nothing passes ({outcome_text(record)}): the scenario cannot "
                       "tell work from no work", _seconds(record))
    return Verdict(key, ECHO_FAILS, "pass", _with_why(record), _seconds(record))


def judge_hidden(key: str, record: Any) -> Verdict:
    """From the echo run, which grades the untouched fixture."""
    if _not_graded(record):
        return Verdict(key, HIDDEN_FAIL, "fail", f"the untouched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    hidden = next((e for e in record.evaluations if e.evaluator_name == "hidden_tests"), None)
    if hidden is None:
        return Verdict(key, HIDDEN_FAIL, "skip", "the scenario has no hidden-tests/")
    if hidden.status != "ok":
        return Verdict(key, HIDDEN_FAIL, "fail", f"hidden tests {hidden.status}: {_first_line(hidden.details)}",
                       _seconds(record))
    evidence = (record.metadata or {}).get("tampered") or []
    if record.failure_class == "tampered" or evidence:
        # Nothing changed the fixture, so the canary evidence is about the hidden tests themselves.
        first = _first_line(str(evidence[0]), 200) if evidence else "canary evidence"
        return Verdict(key, HIDDEN_FAIL, "fail", f"the untouched fixture is classed as tampered ({first}): the hidden "
                       "tests' report on it lacks tests (does a hidden test file fail to load?), so an honest "
                       "incomplete fix would be classed as tampering too", _seconds(record))
    if hidden.score >= 1.0:
        return Verdict(key, HIDDEN_FAIL, "fail", f"on the untouched fixture: {_first_line(hidden.details)}; the hidden "
                       "tests do not test the change asked for", _seconds(record))
    return Verdict(key, HIDDEN_FAIL, "pass", f"on the untouched fixture: {_first_line(hidden.details)}",
                   _seconds(record))


def judge_careless(key: str, record: Any) -> Verdict:
    meta = record.metadata or {}
    if meta.get("agentStatus") not in (None, "completed"):
        return Verdict(key, CARELESS_FAILS, "fail", _first_line(meta.get("agentError") or _why(record), 300),
                       _seconds(record))
    if _not_graded(record):
        return Verdict(key, CARELESS_FAILS, "fail", f"the patched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    if record.is_successful:
        return Verdict(key, CARELESS_FAILS, "fail", f"the careless fix passes ({outcome_text(record)}): add a hidden "
                       "test it fails, or raise success_threshold", _seconds(record))
    return Verdict(key, CARELESS_FAILS, "pass", _with_why(record), _seconds(record))


class _Collector:
    """Turns finished runs into verdicts as soon as the runs a verdict rests on are done."""

    def __init__(self, key: str, on_verdict: VerdictCallback | None, oracle_runs: int = 2) -> None:
        self.key = key
        self.oracle_runs = max(2, oracle_runs)
        self.on_verdict = on_verdict
        self.records: dict[tuple[str, int], Any] = {}
        self.verdicts: dict[str, Verdict] = {}
        self.lock = threading.Lock()

    def add(self, verdict: Verdict) -> None:
        self.verdicts[verdict.check] = verdict
        if self.on_verdict is not None:
            self.on_verdict(verdict)

    def run_done(self, event: Any) -> None:
        if event.stage != "done" or event.record is None:
            return
        with self.lock:
            record = event.record
            self.records[(record.agent, event.iteration)] = record
            got = self.records
            ready: list[Verdict] = []
            if record.agent == "oracle" and ORACLE_PASSES not in self.verdicts and ("oracle", 0) in got:
                ready.append(judge_oracle(self.key, got[("oracle", 0)]))
            if REPEATS not in self.verdicts and all(("oracle", i) in got for i in range(self.oracle_runs)):
                # Each further run against the first: the first that differs, else the last.
                repeats = [judge_repeat(self.key, got[("oracle", 0)], got[("oracle", i)])
                           for i in range(1, self.oracle_runs)]
                verdict = next((v for v in repeats if v.failed), repeats[-1])
                if not verdict.failed and self.oracle_runs > 2:
                    verdict = replace(verdict, detail=verdict.detail.replace(
                        "the same outcome twice", f"the same outcome {self.oracle_runs} times", 1))
                ready.append(verdict)
            if ("echo", 0) in got and ECHO_FAILS not in self.verdicts:
                ready += [judge_echo(self.key, got[("echo", 0)]), judge_hidden(self.key, got[("echo", 0)])]
            if (PATCH_AGENT, 0) in got and CARELESS_FAILS not in self.verdicts:
                ready.append(judge_careless(self.key, got[(PATCH_AGENT, 0)]))
            for verdict in ready:
                self.add(verdict)


def _prompt_for(scenario: Scenario, tier: str | None) -> Any:
    if tier is not None:
        return resolve_prompt(scenario, tier)
    tiers = available_tiers(scenario)
    if not tiers:
        raise ScenarioError(f"{scenario.key}: no prompt: add {scenario.suite_path / 'prompts' / scenario.name}"
                            "/L1-basic.md (and L0, L2)")
    try:
        return resolve_prompt(scenario, "L1")
    except ScenarioError:
        return resolve_prompt(scenario, tiers[0])


def check_scenario(target: Target, options: CheckOptions | None = None,
                   on_verdict: VerdictCallback | None = None) -> list[Verdict]:
    """Every check of one scenario (see the module docstring), each reported to ``on_verdict``
    as soon as it is decided; the verdicts in :data:`CHECKS` order. Nothing is stored.

    A scenario that does not load (or has no prompt for the tier) gets one failed
    ``scenario loads`` verdict and no runs. Raises only for bad options (ValueError).
    """
    from harness.evaluators.llm_judge import JudgeChoice
    from harness.plan import Group, Plan
    from harness.runner import RunOptions, new_batch_id, run_plan

    options = options or CheckOptions()
    collector = _Collector(target.key, on_verdict, options.oracle_runs)
    try:
        scenario = load_scenario(target.suite, target.name, target.suites_dir)
        prompt = _prompt_for(scenario, options.tier)
    except ScenarioError as exc:
        collector.add(Verdict(target.key, LOADS, "fail", str(exc)))
        return list(collector.verdicts.values())
    tiers = available_tiers(scenario)
    loaded = f"{len(tiers)} tier(s): {', '.join(tiers)}; runs get {prompt.label}"
    if scenario.warnings:
        loaded += f"; {len(scenario.warnings)} warning(s): {scenario.warnings[0]}"
    collector.add(Verdict(target.key, LOADS, "pass", loaded))

    run_options = RunOptions(parallel=options.parallel, workspaces_root=options.workspaces_root,
                             sandbox=options.sandbox, judge=JudgeChoice("none"), skip_warmup=options.skip_warmup,
                             control=options.control)
    oracle_runs = max(2, options.oracle_runs)
    groups = [Group(scenario, prompt, "oracle", None, None, list(range(oracle_runs))),
              Group(scenario, prompt, "echo", None, None, [0])]
    plan = Plan(batch_id=new_batch_id(), groups=groups, iterations=oracle_runs, planned=oracle_runs + 1)
    run_plan(plan, run_options, None, progress=collector.run_done)
    stopped = options.control is not None and options.control.stopping
    if options.careless is not None and not stopped:
        register_agent(PATCH_AGENT, PatchAgent)
        patched = Plan(batch_id=plan.batch_id, groups=[Group(scenario, prompt, PATCH_AGENT, None, None, [0])],
                       iterations=1, planned=1)
        careless_options = RunOptions(parallel=1, workspaces_root=options.workspaces_root, sandbox=options.sandbox,
                                      judge=JudgeChoice("none"), skip_warmup=options.skip_warmup,
                                      control=options.control,
                                      agent_options={"patch": options.careless, "patch_name": options.careless_name})
        run_plan(patched, careless_options, None, progress=collector.run_done)
    return [collector.verdicts[c] for c in CHECKS if c in collector.verdicts]
