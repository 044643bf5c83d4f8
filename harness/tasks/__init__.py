"""Task formats other than ``scenario.yaml``, loaded as scenarios (docs/harbor-tasks.md).

A **task suite** is a directory of task directories in another benchmark's format; ``bench``
runs it like a suite of its own: by name from a suites directory, or by path where a suite
name goes (``bench path/to/tasks --agent oracle``). The formats: Harbor's
(:mod:`harness.tasks.harbor`, the format of Terminal-Bench 2), and SWE-bench instance files
(:mod:`harness.tasks.swe`: a ``.jsonl`` or ``.json`` file is a suite, each instance a scenario).

:func:`locate_suite` says what a path given where a suite name goes stands for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.tasks.harbor import is_task_dir, is_task_suite
from harness.tasks.swe import is_instance_file


@dataclass(frozen=True)
class SuiteLocation:
    """A suite named by a path: the suites directory to load it from, its name there, and the
    one scenario the path named (a task directory), if it named one."""

    root: Path
    suite: str
    scenario: str | None = None


def locate_suite(path: str | Path) -> SuiteLocation | None:
    """What ``path`` names, or None when it names no suite: a task suite (a directory of Harbor
    tasks: it is its own suites directory), one task of a task suite, a file of SWE-bench
    instances (``NAME.jsonl``: the suite ``NAME`` of the file's directory), or a suite directory
    of this project's format (one holding ``scenarios/``)."""
    where = Path(path).expanduser()
    if is_instance_file(where):
        where = where.resolve()
        return SuiteLocation(root=where.parent, suite=where.stem)
    if not where.is_dir():
        return None
    where = where.resolve()
    if is_task_suite(where):
        return SuiteLocation(root=where, suite=where.name)
    if is_task_dir(where) and is_task_suite(where.parent):
        return SuiteLocation(root=where.parent, suite=where.parent.name, scenario=where.name)
    if (where / "scenarios").is_dir():
        return SuiteLocation(root=where.parent, suite=where.name)
    return None


__all__ = ["SuiteLocation", "locate_suite"]
