"""Test counts from machine-readable reports, never from the text a test run prints.

Grading runs test commands with the test runner told to write a JUnit XML report into a
directory outside the workspace (:mod:`harness.grading.copy` sets ``PYTEST_ADDOPTS`` for pytest
and ``NODE_OPTIONS`` for ``node --test``). The report is what counts: a ``conftest.py`` that
prints "5 passed" changes nothing, and a test that is skipped, xfailed or deselected is not
a pass.

Runners are recognised by the command: ``pytest`` anywhere in it (``python3 -m pytest``,
``pytest -q``) is pytest; ``node ... --test`` or a package manager's ``test`` script
(``npm test``, ``pnpm test``, ``yarn test``) is Node's test runner. A recognised runner that
writes no report did not run the tests (a replaced script, a crash) and passes nothing.
Other commands are judged by exit status alone.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

_PYTEST = re.compile(r"(^|[\s/;&|(])(py\.test|pytest)([\s;&|)]|$)")
_NODE_TEST = re.compile(r"(^|[\s/;&|(])node(\s+[^;&|]*)?\s--test(\s|=|$)")
_SCRIPT_TEST = re.compile(r"(^|[\s;&|(])(npm|pnpm|yarn)(\s+run)?\s+(test|t)(\s|$)")
MAX_REPORT_BYTES = 50_000_000


class ReportError(ValueError):
    """A report exists but cannot be read as JUnit XML."""


def detect_runner(command: str) -> str | None:
    """``"pytest"``, ``"node"`` or None (a runner whose report the harness cannot request)."""
    if _PYTEST.search(command):
        return "pytest"
    if _NODE_TEST.search(command) or _SCRIPT_TEST.search(command):
        return "node"
    return None


@dataclass(frozen=True)
class TestCounts:
    """What a report says. ``passed`` excludes skipped, xfailed and todo tests."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    __test__ = False  # not a pytest test class

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def clean(self) -> bool:
        """At least one test passed and none failed or errored."""
        return self.passed > 0 and self.failed == 0 and self.errors == 0

    def __add__(self, other: "TestCounts") -> "TestCounts":
        return TestCounts(self.passed + other.passed, self.failed + other.failed,
                          self.errors + other.errors, self.skipped + other.skipped)

    def summary(self) -> str:
        parts = [f"{self.passed} passed"]
        for label, n in (("failed", self.failed), ("errors", self.errors), ("skipped", self.skipped)):
            if n:
                parts.append(f"{n} {label}")
        return ", ".join(parts)


@dataclass(frozen=True)
class CaseResult:
    """One ``<testcase>`` of a report: its id and outcome (``passed``, ``failed``, ``error``,
    ``skipped``); never its output or traceback."""

    classname: str
    name: str
    outcome: str

    __test__ = False

    @property
    def test_id(self) -> str:
        return f"{self.classname}::{self.name}" if self.classname else self.name


def parse_cases(path: Path) -> list[CaseResult]:
    """The ``<testcase>`` elements of a JUnit XML file (pytest's and node's), in order."""
    try:
        size = path.stat().st_size
        if size > MAX_REPORT_BYTES:
            raise ReportError(f"{path.name}: report is {size} bytes, more than {MAX_REPORT_BYTES}")
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ReportError(f"{path.name}: not valid XML: {exc}") from None
    cases = []
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        outcome = ("error" if "error" in tags else "failed" if "failure" in tags
                   else "skipped" if "skipped" in tags else "passed")
        cases.append(CaseResult(case.get("classname") or "", case.get("name") or "", outcome))
    return cases


def counts_of(cases: list[CaseResult]) -> TestCounts:
    """How many cases passed, failed, errored and were skipped."""
    tally = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for case in cases:
        tally[case.outcome] += 1
    return TestCounts(tally["passed"], tally["failed"], tally["error"], tally["skipped"])


def parse_junit(path: Path) -> TestCounts:
    """Counts of the ``<testcase>`` elements of a JUnit XML file (pytest's and node's)."""
    return counts_of(parse_cases(path))


def read_cases(paths: list[Path]) -> list[CaseResult] | None:
    """The cases of every report in ``paths`` that exists, in order; None when none exists."""
    found = [p for p in paths if p.is_file()]
    if not found:
        return None
    return [case for path in found for case in parse_cases(path)]


def read_reports(paths: list[Path]) -> TestCounts | None:
    """The counts of every report in ``paths`` that exists, summed; None when none exists."""
    cases = read_cases(paths)
    return None if cases is None else counts_of(cases)
