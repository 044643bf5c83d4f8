"""Names and places of scenarios being written: which suite and scenario names ``bench new``
accepts (:func:`name_problem`, :func:`parse_suite_scenario`), which suite directories ``bench check``
searches (:func:`suites_dirs`: the given ones, then the shipped ``suites/``) and the scenarios a
``SUITE`` or ``SUITE/SCENARIO`` word names there (:func:`find_targets`, :class:`Target`).

A bad name is :class:`InvalidName`; an unknown suite or scenario, or a missing directory, is a
:class:`~harness.scenarios.model.ScenarioError` naming what exists.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.scenarios.loading import RESERVED_SUITE_NAMES, SCENARIO_FILE, default_suites_dir
from harness.scenarios.model import ScenarioError

#: A suite or scenario name: a directory name that `bench SUITE SCENARIO` can name as a word
#: (no option-like leading dash, no path separator, no hidden or relative directory).
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_NAME_LENGTH = 100


class InvalidName(ValueError):
    """A suite or scenario name the loader or ``bench`` could not use (bad input)."""


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


def parse_suite_scenario(text: str, *, need_scenario: bool = False) -> tuple[str, str | None]:
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
    repo = Path(__file__).resolve().parents[2] / "suites"
    return repo if repo.is_dir() else None


def suites_dirs(given: Sequence[str | Path] = (), include_shipped: bool = True) -> list[Path]:
    """The suite directories to search, in order: each given one (an entry may be an
    ``os.pathsep``-separated list), then the shipped suites unless ``include_shipped`` is false;
    :func:`~harness.scenarios.loading.default_suites_dir` when that leaves none. Raises
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
        suite, name = parse_suite_scenario(text)
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
