"""One kept mutant as an ordinary scenario of the suite format (docs/scenarios.md):

``scenarios/<name>/``: ``scenario.yaml``, ``repo-fixture/`` (the project with the bug, the
failing test files removed), ``solution/`` (the original file), ``hidden-tests/`` (the failing
test files), ``task.json`` (provenance: source, version, sdist hash, file, function, line,
mutation kind, the failing tests); ``prompts/<name>/``: ``L0-minimal.md`` and ``L1-basic.md``,
written from the failing tests only (names and messages: never the diff or the place of the bug).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.scenarios.loading import SCENARIO_FILE
from harness.taskgen.mutants import Mutant
from harness.taskgen.testrun import Failure, pytest_command

TASK_FILE = "task.json"
#: Failures listed in a prompt, and the characters of each message.
PROMPT_FAILURES = 6
MESSAGE_CHARS = 400
#: Never copied into a fixture: version control, caches, virtual environments.
_NOT_COPIED = frozenset({".git", ".hg", ".svn", ".tox", ".nox", ".venv", "__pycache__", ".eggs", ".mypy_cache",
                         ".pytest_cache", ".ruff_cache", ".coverage"})


@dataclass
class TaskText:
    """The prompts of one task (L0 and L1)."""

    l0: str
    l1: str
    written_by: str = "template"


def copy_project(src: Path, dst: Path) -> None:
    """The project without version-control, cache and build directories."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _NOT_COPIED or n.endswith((".pyc", ".pyo"))}

    shutil.copytree(src, dst, ignore=ignore, symlinks=False)


def _short(text: str, limit: int = MESSAGE_CHARS) -> str:
    """One line of at most ``limit`` characters, memory addresses elided (they differ per run)."""
    text = " ".join(line.rstrip() for line in text.strip().splitlines() if line.strip())
    text = re.sub(r"\bat 0x[0-9a-fA-F]+", "at 0x...", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_lines(failures: list[Failure]) -> list[str]:
    lines = []
    for failure in failures[:PROMPT_FAILURES]:
        message = _short(failure.message) or failure.kind
        if failure.kind and not message.startswith(failure.kind) and failure.kind != "AssertionError":
            message = f"{failure.kind}: {message}"
        lines.append(f"- `{failure.file}::{failure.test}`\n  {message}")
    if len(failures) > PROMPT_FAILURES:
        lines.append(f"- and {len(failures) - PROMPT_FAILURES} more test(s) in the same file(s)")
    return lines


def template_text(project: str, failures: list[Failure], hidden: list[str], visible_command: str | None) -> TaskText:
    """The deterministic prompts: what fails and how, from the failing tests alone."""
    names = ", ".join(f"`{f.test}`" for f in failures[:3]) + (" and others" if len(failures) > 3 else "")
    l0 = f"Some tests of {project} fail ({names}). Find the bug in the library code and fix it.\n"
    run = ""
    if visible_command:
        shown = f" (`{visible_command}`)" if len(visible_command) <= 240 else ""
        run = f"The tests that are in your copy pass and must keep passing{shown}.\n"
    l1 = (f"A bug in {project} makes {len(failures)} of its tests fail. These test files are not in your copy "
          f"of the repository ({', '.join(f'`{h}`' for h in hidden)}); they will be run on your fix. "
          "Here is what they report:\n\n" + "\n".join(failure_lines(failures)) + "\n\n"
          "Find the bug in the library code (not in the tests) and fix it so that these tests pass. "
          "Keep the public behaviour the tests do not mention unchanged.\n" + run)
    return TaskText(l0=l0, l1=l1)


def model_text(model: str, base_text: TaskText, base_url: str | None = None) -> TaskText:
    """The L1 prompt rewritten by ``model`` (``PROVIDER:MODEL``) through the provider layer,
    from the same facts as the template (the failing tests), never the diff. Raises
    ValueError when the model cannot be called or answers nothing."""
    from harness.models.providers.registry import build_provider, parse_target
    from harness.models.providers.types import ChatRequest, Message

    target = parse_target(model, base_url=base_url)
    try:
        provider = build_provider(target)
    except Exception as exc:  # noqa: BLE001 - a missing key, an unknown model: one line
        raise ValueError(f"--model {model}: {exc}") from None
    system = ("You write the task statement of a bug-fix exercise for a programmer. You are given the report of "
              "failing tests. Describe the observed misbehaviour in plain words, name the failing tests, say that "
              "those test files are not in the programmer's copy and will be run on the fix, and ask for a fix in "
              "the library code. Do not guess where the bug is and do not propose a fix. Answer with the "
              "statement only, in Markdown, under 250 words.")
    request = ChatRequest(messages=[Message(role="user", content=base_text.l1)], model=target.model, system=system,
                          max_tokens=800, temperature=0.0, prompt_cache=False)
    try:
        response = provider.chat(request)
    except Exception as exc:  # noqa: BLE001 - any provider failure is the model's, said in one line
        raise ValueError(f"--model {model}: the model call failed: {type(exc).__name__}: {exc}") from None
    text = (response.text or "").strip()
    if not text:
        raise ValueError(f"--model {model}: the model answered nothing")
    return TaskText(l0=base_text.l0, l1=text + "\n", written_by=model)


@dataclass
class TaskFiles:
    """What :func:`write_task` needs."""

    suite: str
    name: str
    project_root: Path  # the pristine project
    project_name: str
    mutant: Mutant
    failures: list[Failure]
    hidden: list[str]  # test files that fail: the hidden tests
    visible: list[str]  # test files left in the fixture (all pass on the fixture)
    pythonpath: str | None
    dropped: list[str]  # test files removed because they fail on the pristine source
    provenance: dict[str, Any]
    text_writer: Callable[[TaskText], TaskText] | None = None
    skipped: list[str] = field(default_factory=list)  # node ids skipped on the pristine source: deselected


def write_task(suite_dir: Path, task: TaskFiles) -> Path:
    """Write the scenario and its prompts under ``suite_dir``; the scenario directory."""
    scen = suite_dir / "scenarios" / task.name
    prompts = suite_dir / "prompts" / task.name
    fixture = scen / "repo-fixture"
    copy_project(task.project_root, fixture)
    rel = task.mutant.path
    original = (task.project_root / rel).read_text("utf-8")
    (fixture / rel).write_text(task.mutant.apply(original), "utf-8")
    for test in task.hidden + task.dropped:
        (fixture / test).unlink(missing_ok=True)
    for test in task.hidden:
        target = scen / "hidden-tests" / test
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.project_root / test, target)
    solution = scen / "solution" / rel
    solution.parent.mkdir(parents=True, exist_ok=True)
    solution.write_text(original, "utf-8")

    # Tests skipped on the pristine source are deselected: a skip would count as a test not passed.
    def skipped_in(files: list[str]) -> list[str]:
        return [node for node in task.skipped if node.split("::", 1)[0] in files]

    visible_command = (pytest_command(task.visible, task.pythonpath, deselect=skipped_in(task.visible))
                       if task.visible else None)
    hidden_command = pytest_command(task.hidden, task.pythonpath, deselect=skipped_in(task.hidden))
    text = template_text(task.project_name, task.failures, task.hidden, visible_command)
    if task.text_writer is not None:
        text = task.text_writer(text)
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "L0-minimal.md").write_text(text.l0, "utf-8")
    (prompts / "L1-basic.md").write_text(text.l1, "utf-8")

    first = task.failures[0].test if task.failures else "its tests"
    validation: dict[str, Any] = {"commands": {"test": visible_command}} if visible_command else {"required": False}
    data: dict[str, Any] = {
        "id": f"{task.suite}/{task.name}",
        "title": f"Make {task.project_name}'s failing test {first} pass",
        "description": (f"A small bug in {task.project_name} makes {len(task.failures)} of its own tests fail "
                        f"({', '.join(f.test for f in task.failures[:5])}). The failing test files are hidden "
                        "tests; the fix belongs in the library code. Generated by `bench tasks generate` "
                        f"(provenance in {TASK_FILE})."),
        "tags": ["python", "bugfix", "generated", f"mutation-{task.mutant.kind}"],
        "difficulty": "easy",
        "timeout_minutes": 15,
        # Every hidden test must pass: one failing test among many must still fail the run.
        "success_threshold": 1.0,
        "validation": validation,
        "hidden_tests": {"command": hidden_command},
        "llm_judge": {"enabled": False},
        "rubric_overrides": {"weights": {"hidden_tests": 3}},
    }
    version = task.provenance.get("version")
    header = (f"# Generated by `bench tasks generate` from {task.provenance.get('name')}"
              + (f" {version}" if version else "") + f"; provenance in {TASK_FILE}.\n")
    (scen / SCENARIO_FILE).write_text(header + yaml.safe_dump(data, sort_keys=False, width=100), "utf-8")
    record = {
        **task.provenance,
        "mutation": task.mutant.to_json(),
        "failingTests": [{"file": f.file, "test": f.test, "kind": f.kind, "message": _short(f.message, 1000)}
                         for f in task.failures],
        "hiddenTests": task.hidden,
        "visibleTests": task.visible,
        "droppedTests": task.dropped,
        "promptWrittenBy": text.written_by,
    }
    (scen / TASK_FILE).write_text(json.dumps(record, indent=2) + "\n", "utf-8")
    return scen
