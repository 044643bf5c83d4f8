"""A project's own pytest tests: found, run in the sandbox, read from their JUnit report.

Every command runs through :mod:`harness.sandbox` (the one way the harness starts a command),
with the harness's Python first on the PATH, as a scenario's validation does.
"""

from __future__ import annotations

import os
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.sandbox import Limits, SandboxSpec, open_sandbox

#: Directories never searched for modules or tests.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "build", "dist",
                       "node_modules", "__pycache__", ".eggs", ".mypy_cache", ".pytest_cache", "site-packages",
                       "docs", "doc", "examples", "benchmarks", "benchmark"})
TEST_DIRS = frozenset({"tests", "test", "testing"})
REPORT = ".taskgen-report.xml"


def _walk_py(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            if name.endswith(".py"):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return out


def is_test_file(rel: str) -> bool:
    """A pytest test module: ``test_*.py`` or ``*_test.py``."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def find_tests(root: Path) -> list[str]:
    """The project's pytest test modules, relative and sorted."""
    return [rel for rel in _walk_py(root) if is_test_file(rel)]


def find_modules(root: Path) -> list[str]:
    """The project's own modules that may be mutated: not tests, test helpers, conftest or
    packaging scripts."""
    out = []
    for rel in _walk_py(root):
        parts = rel.split("/")
        if is_test_file(rel) or parts[-1] in ("conftest.py", "setup.py", "noxfile.py", "fabfile.py"):
            continue
        if any(p in TEST_DIRS for p in parts[:-1]):
            continue
        out.append(rel)
    return out


def python_path(root: Path) -> str | None:
    """``src`` for a project laid out with ``src/``, else None (the root is on ``sys.path``)."""
    src = root / "src"
    if src.is_dir() and any((src / d / "__init__.py").is_file() or d.endswith(".py") for d in os.listdir(src)):
        return "src"
    return None


def pytest_command(files: list[str], pythonpath: str | None, report: str | None = None,
                   deselect: list[str] = ()) -> str:
    """The command that runs ``files`` (the project's configured ``addopts`` off: they often
    name plugins that are not installed), without the tests of ``deselect`` (node ids)."""
    parts = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    if report:
        parts += ["-o", "junit_family=xunit1", f"--junitxml={report}"]
    if pythonpath:
        # pytest's own setting, not $PYTHONPATH: grading sets that variable for its guard.
        parts += ["-o", f"pythonpath={pythonpath}"]
    for node in deselect:
        parts += ["--deselect", node]
    return shlex.join(parts + files)


@dataclass
class Failure:
    """A test that did not pass."""

    file: str
    test: str  # the name pytest gives it (Class::name[params] without the file)
    phase: str  # failure (in the test) | error (setup, teardown or collection)
    kind: str  # the exception type, e.g. AssertionError
    message: str


@dataclass
class TestRun:
    """What one run of the tests said."""

    exit_code: int | None
    passed: int = 0
    failures: list[Failure] = field(default_factory=list)
    collection_errors: list[str] = field(default_factory=list)  # files (or messages) that did not load
    skipped: list[str] = field(default_factory=list)  # node ids of skipped (and xfailed) tests
    timed_out: bool = False
    output: str = ""
    seconds: float = 0.0

    @property
    def failed_files(self) -> list[str]:
        return sorted({f.file for f in self.failures})

    @property
    def report_read(self) -> bool:
        return self.passed + len(self.failures) + len(self.collection_errors) > 0


def _file_of(case: ET.Element) -> str:
    file = case.get("file")
    if file:
        return file.replace(os.sep, "/")
    classname = case.get("classname") or ""
    return classname.replace(".", "/") + ".py"


def _test_of(case: ET.Element, file: str) -> str:
    classname = case.get("classname") or ""
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    klass = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
    return "::".join(p for p in (klass.replace(".", "::"), case.get("name") or "") if p)


def read_report(path: Path) -> tuple[int, list[Failure], list[str], list[str]]:
    """(tests passed, failures, collection errors, skipped node ids) of a pytest JUnit report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return 0, [], [], []
    passed, failures, collection, skipped = 0, [], [], []
    for case in root.iter("testcase"):
        file = _file_of(case)
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            if case.find("skipped") is None:
                passed += 1
            else:
                skipped.append(f"{file}::{_test_of(case, file)}")
            continue
        message = (bad.get("message") or "").strip()
        if bad.tag == "error" and "collection failure" in message:
            collection.append(file)
            continue
        text = bad.text or ""
        kind = _exception_type(text, message)
        failures.append(Failure(file=file, test=_test_of(case, file), phase=bad.tag, kind=kind,
                                message=message[:2000]))
    return passed, failures, collection, skipped


def _exception_type(text: str, message: str) -> str:
    """The exception of a failure: the ``E   Type: ...`` line of pytest's traceback."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("E ") and ":" in stripped:
            name = stripped[1:].strip().split(":", 1)[0].strip()
            if name and name.replace(".", "").replace("_", "").isalnum() and " " not in name:
                return name.rsplit(".", 1)[-1]
        if stripped.startswith("E ") and stripped[1:].strip().startswith("assert "):
            return "AssertionError"
    if message.startswith("assert ") or message.startswith("AssertionError"):
        return "AssertionError"
    head = message.split(":", 1)[0].strip()
    return head if head and " " not in head else "Exception"


class Runner:
    """Runs a project's tests in a sandbox bound to one working copy."""

    def __init__(self, workdir: Path, sandbox_kind: str, timeout_s: float = 300.0, control: Any = None) -> None:
        self.workdir = Path(workdir)
        self.control = control  # harness.control.BatchControl: a second Ctrl-C kills the running tests
        self.spec = SandboxSpec(kind=sandbox_kind, limits=Limits(timeout_s=timeout_s),
                                env={"PYTHONDONTWRITEBYTECODE": "1"})
        self.timeout_s = timeout_s

    def run(self, files: list[str], pythonpath: str | None) -> TestRun:
        report = self.workdir / REPORT
        report.unlink(missing_ok=True)
        with open_sandbox(self.workdir, self.spec) as box:
            if self.control is not None:
                self.control.register(box)
            try:
                result = box.run(pytest_command(files, pythonpath, REPORT), timeout_s=self.timeout_s)
            finally:
                if self.control is not None:
                    self.control.unregister(box)
        passed, failures, collection, skipped = read_report(report)
        report.unlink(missing_ok=True)
        run = TestRun(exit_code=result.exit_code, passed=passed, failures=failures, collection_errors=collection,
                      skipped=skipped, timed_out=result.timed_out or result.exit_code is None, output=result.combined_output()[-4000:],
                      seconds=result.duration_ms / 1000.0)
        if result.exit_code not in (0, 1, 5) and not collection and not run.timed_out:
            # pytest itself failed (usage error, internal error, an unloadable conftest)
            run.collection_errors.append(f"pytest exit {result.exit_code}")
        return run
