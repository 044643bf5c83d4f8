"""Harbor task directories as scenarios (the format of Terminal-Bench 2; docs/harbor-tasks.md).

A Harbor **task** is a directory holding::

    task.toml              metadata, [agent] and [verifier] timeouts, [environment] resources
    instruction.md         the prompt
    environment/Dockerfile the image the task runs in (its build context: environment/)
    tests/test.sh          the verifier: writes /logs/verifier/reward.txt (or reward.json)
    solution/solve.sh      the reference solution (optional)

A **task suite** is a directory of tasks. :func:`load_task` loads one task as a
:class:`~harness.scenarios.model.Scenario`:

- the prompt is ``instruction.md``, the one tier ``L1`` (label ``L1-instruction``);
- the workspace starts as what ``environment/Dockerfile`` copies into the image's final
  ``WORKDIR`` from its build context (:mod:`harness.tasks.harbor_image`): one directory
  (``COPY app/ /app/``, ``COPY . .``), or top-level files; empty when nothing is copied there.
  Nothing else of the image exists on the host runtime: its other files, packages and ``RUN``
  steps are the container backend's (``Scenario.environment`` is the build context it uses);
- the oracle runs ``solution/solve.sh`` in the workspace, with ``solution/`` at ``/solution``;
- ``tests/`` is never in the workspace: the ``harbor_verifier`` evaluator
  (:mod:`harness.grading.evaluators.harbor_verifier`) copies it to ``/tests`` of a sandbox on the
  grading copy only at grading time, runs ``bash /tests/test.sh`` there and reads the reward
  from ``/logs/verifier`` (``reward.json``, else ``reward.txt``, else the exit status);
- ``task.toml``'s settings (:mod:`harness.tasks.harbor_settings`) are honoured where the
  sandbox has the knob (the agent's timeout, the verifier's timeout and environment, memory,
  storage as the workspace quota, network) and refused by name
  (:class:`~harness.scenarios.model.ScenarioError` naming the file and the field) where it has none:
  GPUs, more CPUs or memory than this machine has, docker-compose services, prebuilt images,
  network allowlists, named users, MCP servers, multi-step tasks.

The scenario's ``raw`` is not a ``scenario.yaml``: it holds the task's settings under
:data:`RAW_KEY` (read by :func:`task_settings`) and the verifier's timeout as
``validation.timeout_seconds`` (what the grading watchdog allows one command).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.scenarios.model import JudgeConfig, Scenario, ScenarioError, Suite, TierPrompt
from harness._util.suggest import did_you_mean
from harness.tasks.common import (
    SOLUTION_DIR,
    SOLVE_SCRIPT,
    TESTS_DIR,
    one_prompt,
    plain_name,
    raw_settings,
    read_text,
    title_of,
)
from harness.tasks.harbor_image import read_image
from harness.tasks.harbor_settings import read_settings

TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
ENVIRONMENT_DIR = "environment"
IMAGE_FILES = ("Dockerfile", "Containerfile")
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
TEST_SCRIPT = "test.sh"

#: Where the verifier and the oracle find the task's files inside a sandbox, as in Harbor.
TESTS_INNER = "/tests"
SOLUTION_INNER = "/solution"
VERIFIER_LOGS_INNER = "/logs/verifier"
AGENT_LOGS_INNER = "/logs/agent"

RAW_KEY = "harbor"
PROMPT_LABEL = "L1-instruction"
SUCCESS_THRESHOLD = 1.0  # a task is solved when its verifier gives the full reward


# --------------------------------------------------------------------------- recognising


def is_task_dir(path: Path) -> bool:
    """A Harbor task: a directory holding ``task.toml``."""
    return (path / TASK_FILE).is_file()


def _children(path: Path) -> list[Path]:
    try:
        return sorted(c for c in path.iterdir() if not c.name.startswith(".") and c.is_dir())
    except OSError:
        return []


def task_names(suite_path: Path) -> list[str]:
    """The tasks of a task suite (the names of its task directories), sorted."""
    return [c.name for c in _children(suite_path) if is_task_dir(c)]


def is_task_suite(path: Path) -> bool:
    """A directory of Harbor tasks: at least one child holds ``task.toml``, and it is no suite
    or suites directory of this project's format (no ``scenarios/`` in it or in a child)."""
    if not path.is_dir() or (path / "scenarios").is_dir():
        return False
    children = _children(path)
    return any(is_task_dir(c) for c in children) and not any((c / "scenarios").is_dir() for c in children)


def task_suites(root: Path) -> list[Suite]:
    """The task suites a suites directory offers: ``root`` itself when it is one, else each
    child that is one."""
    if is_task_suite(root):
        return [Suite(name=root.name, path=root, scenarios=task_names(root))]
    return [Suite(name=c.name, path=c, scenarios=task_names(c)) for c in _children(root) if is_task_suite(c)]


def task_suite_path(root: Path, suite: str) -> Path | None:
    """The task suite called ``suite`` in the suites directory ``root`` (``root`` itself when it
    is that task suite), or None when ``suite`` is no task suite there."""
    if root.name == suite and is_task_suite(root):
        return root
    if not plain_name(suite):
        return None
    child = root / suite
    return child if is_task_suite(child) else None


def is_task(scenario: Scenario) -> bool:
    """Whether ``scenario`` was loaded from a Harbor task."""
    return raw_settings(scenario, RAW_KEY) is not None


def task_settings(scenario: Scenario) -> dict[str, Any] | None:
    """What the harness needs of a Harbor task's settings at run time (the verifier's timeout
    and environment, the image's working directory); None for other scenarios."""
    return raw_settings(scenario, RAW_KEY)


def task_prompts(scenario: Scenario) -> list[TierPrompt]:
    """A Harbor task's one prompt: ``instruction.md`` as tier ``L1``."""
    return one_prompt(scenario, PROMPT_LABEL, INSTRUCTION_FILE)


# --------------------------------------------------------------------------- loading


def _instruction(path: Path) -> str:
    file = path / INSTRUCTION_FILE
    if not file.is_file():
        raise ScenarioError(f"{file}: missing: a Harbor task's prompt")
    text = read_text(file)
    if not text.strip():
        raise ScenarioError(f"{file}: empty: a Harbor task's prompt")
    return text


def _workdir_named(path: Path, workdir: str | None, files: list[Path]) -> list[str]:
    """Warnings for the task's files that name the image's WORKDIR by its absolute path: the
    host runtime's workspace is elsewhere (``/workspace`` under bwrap); a container backend
    running the task's image mounts it at the WORKDIR."""
    if not workdir or workdir == "/":
        return []
    pattern = re.compile(rf"(?<![\w./-]){re.escape(workdir)}(?![\w.-])")
    found = []
    for file in files:
        try:
            if file.is_file() and pattern.search(file.read_text("utf-8", errors="replace")):
                found.append(f"{file}: names {workdir}, the image's WORKDIR; on the host runtime the workspace is "
                             "elsewhere (/workspace under bwrap), so this path does not exist there "
                             "(--sandbox podman or docker mounts the workspace at the WORKDIR)")
        except OSError:
            continue
    return found


def load_task(suite_path: Path, name: str, suite: str | None = None) -> Scenario:
    """Load the Harbor task ``name`` of the task suite at ``suite_path`` as a :class:`Scenario`
    (see the module docstring). :class:`ScenarioError`, one line naming the file and the field,
    for a task that cannot be used."""
    suite = suite or suite_path.name
    path = suite_path / name
    if not plain_name(name) or not is_task_dir(path):
        known = task_names(suite_path)
        raise ScenarioError(f"unknown task {name!r} in task suite {suite!r}{did_you_mean(name, known)}: no "
                            f"{path / TASK_FILE}; available: {', '.join(known) or 'none'}")
    settings = read_settings(path / TASK_FILE)
    instruction = _instruction(path)
    environment = path / ENVIRONMENT_DIR
    compose = next((environment / f for f in COMPOSE_FILES if (environment / f).is_file()), None)
    if compose is not None:
        raise ScenarioError(f"{compose}: tasks of several services (docker-compose) are not supported; "
                            f"task {suite}/{name} needs one image, environment/Dockerfile")
    dockerfile = next((environment / f for f in IMAGE_FILES if (environment / f).is_file()), None)
    if dockerfile is None:
        raise ScenarioError(f"{environment / 'Dockerfile'}: missing: task {suite}/{name} has no image to run in")
    test_script = path / TESTS_DIR / TEST_SCRIPT
    if not test_script.is_file():
        raise ScenarioError(f"{test_script}: missing: task {suite}/{name} has no verifier")
    image = read_image(environment, dockerfile)
    solution = path / SOLUTION_DIR
    solve = solution / SOLVE_SCRIPT
    warnings = [*settings.warnings, *image.notes]
    warnings += _workdir_named(path, image.workdir, [path / INSTRUCTION_FILE, test_script, solve])
    limits: dict[str, int] = {}
    if settings.memory_mb is not None:
        limits["memory_mb"] = settings.memory_mb
    if settings.storage_mb is not None:
        limits["workspace_mb"] = settings.storage_mb
    metadata = settings.metadata
    tags = [*settings.keywords, *(t for t in metadata.get("tags") or [] if isinstance(t, str))]
    difficulty = metadata.get("difficulty")
    return Scenario(
        suite=suite,
        name=name,
        path=path,
        suite_path=suite_path,
        id=settings.name or name,
        title=title_of(instruction),
        description=settings.description or str(metadata.get("description") or ""),
        tags=list(dict.fromkeys(tags)),
        difficulty=None if difficulty is None else str(difficulty),
        timeout_minutes=settings.agent_timeout_s / 60.0 if settings.agent_timeout_s is not None else 60.0,
        success_threshold=SUCCESS_THRESHOLD,
        fixture_dir=image.fixture,
        workspace_required=image.fixture is not None,
        workspace_exclude=image.exclude,
        validation_required=False,
        validation_commands={},
        solution_dir=solution if solve.is_file() else None,
        hidden_tests_dir=path / TESTS_DIR,
        llm_judge=JudgeConfig(),
        sandbox_network=settings.network,
        sandbox_limits=limits,
        environment=environment,
        raw={
            RAW_KEY: {
                "task": str(path),
                "workdir": image.workdir,
                "verifier": {"timeoutSec": settings.verifier_timeout_s, "env": dict(settings.verifier_env)},
                "environment": {"cpus": settings.cpus, "memoryMb": settings.memory_mb,
                                "storageMb": settings.storage_mb, "network": settings.network},
            },
            "validation": {"timeout_seconds": settings.verifier_timeout_s},
        },
        warnings=warnings,
    )


def host_runtime_problem(scenarios: list[Scenario], kind: str) -> str | None:
    """Why the Harbor tasks among ``scenarios`` cannot be graded with the sandbox ``kind``, or
    None: their verifier needs ``/tests`` and ``/logs/verifier``, which only a sandbox with its
    own filesystem view (bwrap) can give."""
    tasks = [s.key for s in scenarios if is_task(s)]
    if not tasks or kind != "none":
        return None
    shown = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
    return (f"{shown}: a Harbor task's verifier needs {TESTS_INNER} and {VERIFIER_LOGS_INNER}, which the process-group "
            "sandbox (--sandbox none) cannot give; run with --sandbox bwrap (`bench doctor` says how to get it)")

