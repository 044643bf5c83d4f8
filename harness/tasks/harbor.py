"""Harbor task directories as scenarios (the format of Terminal-Bench 2; docs/harbor-tasks.md).

A Harbor **task** is a directory holding::

    task.toml              metadata, [agent] and [verifier] timeouts, [environment] resources
    instruction.md         the prompt
    environment/Dockerfile the image the task runs in (its build context: environment/)
    tests/test.sh          the verifier: writes /logs/verifier/reward.txt (or reward.json)
    solution/solve.sh      the reference solution (optional)

A **task suite** is a directory of tasks. :func:`load_task` loads one task as a
:class:`~harness.scenarios.Scenario`:

- the prompt is ``instruction.md``, the one tier ``L1`` (label ``L1-instruction``);
- the workspace starts as what ``environment/Dockerfile`` copies into the image's final
  ``WORKDIR`` from its build context (:func:`read_image`): one directory (``COPY app/ /app/``,
  ``COPY . .``), or top-level files; empty when nothing is copied there. Nothing else of the
  image exists on the host runtime: its other files, packages and ``RUN`` steps are the
  container backend's (``Scenario.environment`` is the build context it uses);
- the oracle runs ``solution/solve.sh`` in the workspace, with ``solution/`` at ``/solution``;
- ``tests/`` is never in the workspace: the ``harbor_verifier`` evaluator
  (:mod:`harness.evaluators.harbor_verifier`) copies it to ``/tests`` of a sandbox on the
  grading copy only at grading time, runs ``bash /tests/test.sh`` there and reads the reward
  from ``/logs/verifier`` (``reward.json``, else ``reward.txt``, else the exit status);
- ``task.toml``'s settings are honoured where the sandbox has the knob (the agent's timeout,
  the verifier's timeout and environment, memory, storage as the workspace quota, network)
  and refused by name (:class:`~harness.scenarios.ScenarioError` naming the file and the
  field) where it has none: GPUs, more CPUs or memory than this machine has, docker-compose
  services, prebuilt images, network allowlists, named users, MCP servers, multi-step tasks.

The scenario's ``raw`` is not a ``scenario.yaml``: it holds the task's settings under
:data:`RAW_KEY` (read by :func:`task_settings`) and the verifier's timeout as
``validation.timeout_seconds`` (what the grading watchdog allows one command).
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scenario_model import JudgeConfig, Scenario, ScenarioError, Suite, TierPrompt
from harness.suggest import did_you_mean

TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
ENVIRONMENT_DIR = "environment"
IMAGE_FILES = ("Dockerfile", "Containerfile")
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
TESTS_DIR = "tests"
TEST_SCRIPT = "test.sh"
SOLUTION_DIR = "solution"
SOLVE_SCRIPT = "solve.sh"

#: Where the verifier and the oracle find the task's files inside a sandbox, as in Harbor.
TESTS_INNER = "/tests"
SOLUTION_INNER = "/solution"
VERIFIER_LOGS_INNER = "/logs/verifier"
AGENT_LOGS_INNER = "/logs/agent"

RAW_KEY = "harbor"
PROMPT_LABEL = "L1-instruction"
DEFAULT_VERIFIER_TIMEOUT_S = 600.0  # Harbor's default [verifier] timeout_sec
SUCCESS_THRESHOLD = 1.0  # a task is solved when its verifier gives the full reward
TITLE_CHARS = 80
MiB = 1024 * 1024

_NETWORK_MODES = ("public", "no-network", "allowlist")
# The keys task.toml may hold, per table (Harbor ignores others: so do we, with a warning).
_KNOWN = {
    "": ("version", "schema_version", "task", "metadata", "verifier", "agent", "environment", "solution", "source",
         "steps"),
    "task": ("name", "description", "authors", "keywords"),
    "agent": ("timeout_sec", "user", "network_mode", "allowed_hosts"),
    "verifier": ("timeout_sec", "env", "user", "network_mode", "allowed_hosts"),
    "environment": ("build_timeout_sec", "docker_image", "cpus", "memory_mb", "storage_mb", "gpus", "gpu_types",
                    "allow_internet", "network_mode", "allowed_hosts", "mcp_servers", "env", "skills_dir",
                    "healthcheck", "memory", "storage"),
    "solution": ("env",),
}


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
    if not suite or suite in (".", "..") or "/" in suite or os.sep in suite:
        return None
    child = root / suite
    return child if is_task_suite(child) else None


def is_task(scenario: Scenario) -> bool:
    """Whether ``scenario`` was loaded from a Harbor task."""
    return isinstance(scenario.raw.get(RAW_KEY), dict)


def task_settings(scenario: Scenario) -> dict[str, Any] | None:
    """What the harness needs of a Harbor task's settings at run time (the verifier's timeout
    and environment, the image's working directory); None for other scenarios."""
    settings = scenario.raw.get(RAW_KEY)
    return settings if isinstance(settings, dict) else None


def task_prompts(scenario: Scenario) -> list[TierPrompt]:
    """A Harbor task's one prompt: ``instruction.md`` as tier ``L1``."""
    return [TierPrompt(tier="L1", label=PROMPT_LABEL, path=scenario.path / INSTRUCTION_FILE, text="")]


# --------------------------------------------------------------------------- the machine


def machine_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_memory_mb() -> int | None:
    """This machine's physical memory in MiB, None when it cannot be told."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MiB
    except (AttributeError, ValueError, OSError):
        return None


# --------------------------------------------------------------------------- the Dockerfile


@dataclass
class ImageView:
    """What the host runtime reads of a task's Dockerfile: the final ``WORKDIR`` and the files
    the workspace starts with (``fixture`` with ``exclude``; None: an empty workspace)."""

    workdir: str | None  # None when it cannot be told (a variable in it)
    fixture: Path | None = None
    exclude: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what of the Dockerfile the host runtime cannot give


@dataclass
class _Copy:
    line: int
    sources: list[str]
    dest: str  # absolute, normalised


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuations joined."""
    found: list[tuple[int, str, str]] = []
    buffer, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        found.append(_split_instruction(start, buffer))
        buffer = ""
    if buffer:
        found.append(_split_instruction(start, buffer))
    return found


def _split_instruction(line: int, text: str) -> tuple[int, str, str]:
    word, *rest = text.split(None, 1)
    return line, word.upper(), rest[0].strip() if rest else ""


def _copy_args(args: str) -> tuple[dict[str, str], list[str]] | None:
    """(flags, paths) of a COPY or ADD; None for a form this reader does not take (heredocs)."""
    flags: dict[str, str] = {}
    rest = args
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        name, _, value = flag[2:].partition("=")
        flags[name.lower()] = value
        rest = rest.lstrip()
    if rest.startswith("["):
        try:
            parts = json.loads(rest)
        except ValueError:
            return None
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            return None
    elif "<<" in rest:
        return None
    else:
        parts = rest.split()
    return (flags, parts) if len(parts) >= 2 else None


_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz)$", re.IGNORECASE)


def read_image(environment: Path, dockerfile: Path) -> ImageView:
    """The working directory and the starting files of the image ``dockerfile`` builds from the
    context ``environment``, as far as the host runtime can give them (see the module docstring)."""
    try:
        text = dockerfile.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{dockerfile}: cannot read: {exc}") from None
    workdir: str | None = "/"
    copies: list[_Copy] = []
    notes: list[str] = []
    for line, word, args in _instructions(text):
        if word == "FROM":  # a new stage: only the last one is the image
            workdir, copies, notes = "/", [], []
        elif word == "WORKDIR":
            path = args.strip().strip("\"'")
            if "$" in path or workdir is None:
                workdir = None
                notes.append(f"{dockerfile}: line {line}: WORKDIR {path}: a variable, which the host runtime "
                             "does not expand")
            else:
                workdir = posixpath.normpath(posixpath.join(workdir, path))
        elif word in ("COPY", "ADD"):
            parsed = _copy_args(args)
            if parsed is None:
                notes.append(f"{dockerfile}: line {line}: {word} {args}: a form the host runtime does not read")
                continue
            flags, paths = parsed
            if "from" in flags:
                continue  # from another stage or image, not from the build context
            sources, dest = paths[:-1], paths[-1]
            if word == "ADD" and any("://" in s or _ARCHIVE.search(s) for s in sources):
                notes.append(f"{dockerfile}: line {line}: ADD {' '.join(sources)}: a URL or an archive, which "
                             "the host runtime does not fetch or unpack")
                continue
            if "$" in dest or workdir is None:
                notes.append(f"{dockerfile}: line {line}: {word} to {dest}: a destination the host runtime "
                             "cannot tell")
                continue
            copies.append(_Copy(line, sources, posixpath.normpath(posixpath.join(workdir, dest))))
    view = ImageView(workdir=workdir, notes=notes)
    if workdir is None:
        return view
    into = [c for c in copies if c.dest == workdir]
    below = [c for c in copies if workdir != "/" and c.dest.startswith(workdir + "/")]
    for c in below:
        view.notes.append(f"{dockerfile}: line {c.line}: COPY to {c.dest}: only copies into the WORKDIR itself "
                          "start the workspace on the host runtime")
    if not into:
        return view
    sources = [(c, posixpath.normpath(s)) for c in into for s in c.sources]
    for c, source in sources:
        if source.startswith("/") or source == ".." or source.startswith("../") or any(ch in source for ch in "*?["):
            view.notes.append(f"{dockerfile}: line {c.line}: COPY {source}: not a plain path of the build "
                              "context; the workspace starts empty")
            return view
    if len(sources) == 1 and (environment / sources[0][1]).is_dir():
        source = sources[0][1]
        view.fixture = environment if source == "." else environment / source
        if source == ".":
            view.exclude = _dockerignore(environment, view.notes)
        return view
    top_files = [s for _, s in sources]
    if all("/" not in s and s != "." and (environment / s).is_file() for s in top_files):
        view.fixture = environment
        view.exclude = sorted(c.name for c in environment.iterdir() if c.name not in top_files)
        return view
    view.notes.append(f"{dockerfile}: lines {', '.join(str(c.line) for c in into)}: copies into the WORKDIR "
                      "that the host runtime cannot lay out (one directory, or files at the top of the build "
                      "context, are read); the workspace starts empty")
    return view


def _dockerignore(environment: Path, notes: list[str]) -> list[str]:
    """The patterns of the build context's ``.dockerignore`` (negations are not read)."""
    path = environment / ".dockerignore"
    if not path.is_file():
        return []
    patterns = []
    for line in path.read_text("utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            notes.append(f"{path}: {line}: exceptions are not read by the host runtime")
            continue
        patterns.append(line.lstrip("/"))
    return patterns


# --------------------------------------------------------------------------- task.toml


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)", message)
        problem = message[: where.start()].strip() if where else message
        at = f" line {where.group(1)}, column {where.group(2)}:" if where else ""
        raise ScenarioError(f"{file}:{at} invalid TOML: {problem}") from None


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


class _Toml:
    """Typed reads of task.toml, each error naming the file and the field."""

    def __init__(self, file: Path, data: dict[str, Any]) -> None:
        self.file = file
        self.data = data

    def fail(self, where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.file}: {where}: {message}")

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.fail(name, f"expected a table ([{name}]), got {_kind(value)}")
        return value

    def number(self, table: dict[str, Any], section: str, key: str, *, whole: bool = False,
               allow_zero: bool = False) -> float | None:
        if key not in table:
            return None
        value = table[key]
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or (whole and value != int(value))):
            raise self.fail(f"{section}.{key}", f"expected {'a whole number' if whole else 'a number'}, "
                                                f"got {value!r}")
        if value < 0 or (value == 0 and not allow_zero):
            raise self.fail(f"{section}.{key}", f"expected a number {'of 0 or more' if allow_zero else 'above 0'}, "
                                                f"got {value!r}")
        return value

    def text(self, table: dict[str, Any], section: str, key: str) -> str | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, str):
            raise self.fail(f"{section}.{key}", f"expected text, got {_kind(value)}")
        return value

    def flag(self, table: dict[str, Any], section: str, key: str, default: bool) -> bool:
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"{section}.{key}", f"expected true or false, got {value!r}")
        return value

    def strings(self, table: dict[str, Any], section: str, key: str) -> list[str]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{section}.{key}", f"expected an array of text, got {value!r}")
        return list(value)

    def env(self, table: dict[str, Any], section: str) -> dict[str, str]:
        value = table.get("env", {})
        if not isinstance(value, dict):
            raise self.fail(f"{section}.env", f"expected a table of names to text, got {_kind(value)}")
        out = {}
        for name, text in value.items():
            if not isinstance(text, str):
                raise self.fail(f"{section}.env.{name}", f"expected text, got {_kind(text)}")
            out[str(name)] = text
        return out

    def size_mb(self, table: dict[str, Any], section: str, key: str, old: str) -> int | None:
        """``key`` in MiB, or the deprecated ``old`` spelling (``"2G"``, ``"512M"``), which wins as in Harbor."""
        if old in table:
            value = table[old]
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG])\s*", value, re.IGNORECASE) if isinstance(value, str) \
                else None
            if match is None:
                raise self.fail(f"{section}.{old}", f"expected a size such as '2G' or '512M', got {value!r}")
            number, unit = float(match.group(1)), match.group(2).upper()
            mb = int(number * 1024) if unit == "G" else int(number) if unit == "M" else int(number / 1024)
            if mb <= 0:
                raise self.fail(f"{section}.{old}", f"expected a size above 0, got {value!r}")
            return mb
        number = self.number(table, section, key, whole=True)
        return None if number is None else int(number)

    def network_mode(self, table: dict[str, Any], section: str) -> str | None:
        mode = self.text(table, section, "network_mode")
        if mode is not None and mode not in _NETWORK_MODES:
            raise self.fail(f"{section}.network_mode", f"expected one of {', '.join(_NETWORK_MODES)}, got {mode!r}"
                                                       f"{did_you_mean(mode, _NETWORK_MODES)}")
        hosts = self.strings(table, section, "allowed_hosts")
        if hosts or mode == "allowlist":
            raise self.fail(f"{section}.allowed_hosts" if hosts else f"{section}.network_mode",
                            "a network allowlist is not supported here (the sandbox gives all of the network "
                            "or none of it)")
        return mode

    def unknown_keys(self) -> list[str]:
        """One warning per key Harbor's format does not have (Harbor ignores them; so do we)."""
        found = []
        for section, keys in _KNOWN.items():
            table = self.data if not section else self.data.get(section)
            if not isinstance(table, dict):
                continue
            for key in table:
                if key not in keys:
                    where = f"{section}.{key}" if section else key
                    hint = did_you_mean(str(key), keys) or f" (known: {', '.join(keys)})"
                    found.append(f"{self.file}: {where}: unknown key, ignored{hint}")
        return found


@dataclass
class TaskSettings:
    """task.toml, read and checked."""

    agent_timeout_s: float | None
    verifier_timeout_s: float
    verifier_env: dict[str, str]
    network: bool
    cpus: int | None
    memory_mb: int | None
    storage_mb: int | None
    name: str | None
    description: str
    keywords: list[str]
    metadata: dict[str, Any]
    warnings: list[str]


def read_settings(file: Path) -> TaskSettings:
    """Read and check ``task.toml``: a setting the sandbox cannot honour, or this machine cannot
    give, is a :class:`ScenarioError` naming the file and the field."""
    toml = _Toml(file, _read_toml(file))
    data = toml.data
    if "steps" in data:
        raise toml.fail("steps", "multi-step tasks are not supported; give one instruction.md and one tests/")
    task, metadata = toml.table("task"), toml.table("metadata")
    agent, verifier = toml.table("agent"), toml.table("verifier")
    environment, solution = toml.table("environment"), toml.table("solution")
    for section, table in (("agent", agent), ("verifier", verifier)):
        if "user" in table:
            raise toml.fail(f"{section}.user", "commands cannot run as a named user here: they run as the "
                                               "sandbox's unprivileged user")
    if toml.env(solution, "solution"):
        raise toml.fail("solution.env", "an environment for solve.sh is not supported")
    for key, why in (("docker_image", "a prebuilt image cannot be used here; give environment/Dockerfile"),
                     ("healthcheck", "health checks (of services) are not supported"),
                     ("skills_dir", "skills directories are not supported")):
        if environment.get(key) is not None:
            raise toml.fail(f"environment.{key}", why)
    if environment.get("mcp_servers"):
        raise toml.fail("environment.mcp_servers", "MCP servers are not supported")
    env = toml.env(environment, "environment")
    if env:
        raise toml.fail("environment.env", "variables taken from the host's environment are not supported (the "
                                           "sandbox passes none of the harness's environment)")
    gpus = toml.number(environment, "environment", "gpus", whole=True, allow_zero=True)
    if gpus:
        raise toml.fail("environment.gpus", f"{int(gpus)} GPU(s) asked for; this machine's runtime gives none")
    cpus = toml.number(environment, "environment", "cpus", whole=True)
    if cpus is not None and cpus > machine_cpus():
        raise toml.fail("environment.cpus", f"{int(cpus)} CPUs asked for; this machine gives {machine_cpus()}")
    memory_mb = toml.size_mb(environment, "environment", "memory_mb", "memory")
    have = machine_memory_mb()
    if memory_mb is not None and have is not None and memory_mb > have:
        raise toml.fail("environment.memory" if "memory" in environment else "environment.memory_mb",
                        f"{memory_mb} MiB asked for; this machine has {have} MiB")
    storage_mb = toml.size_mb(environment, "environment", "storage_mb", "storage")
    toml.number(environment, "environment", "build_timeout_sec")  # the container backend's; checked only
    allow = toml.flag(environment, "environment", "allow_internet", True)
    base = toml.network_mode(environment, "environment") or ("public" if allow else "no-network")
    agent_mode = toml.network_mode(agent, "agent") or base
    verifier_mode = toml.network_mode(verifier, "verifier") or base
    if agent_mode != verifier_mode:
        raise toml.fail("verifier.network_mode", f"the agent's network ({agent_mode}) and the verifier's "
                                                 f"({verifier_mode}) differ; one setting serves both here")
    verifier_env = toml.env(verifier, "verifier")
    for name, value in verifier_env.items():
        if "${" in value:
            raise toml.fail(f"verifier.env.{name}", "values taken from the host's environment (${...}) are not "
                                                    "supported")
    agent_timeout = toml.number(agent, "agent", "timeout_sec")
    verifier_timeout = toml.number(verifier, "verifier", "timeout_sec")
    keywords = toml.strings(task, "task", "keywords")
    return TaskSettings(
        agent_timeout_s=None if agent_timeout is None else float(agent_timeout),
        verifier_timeout_s=float(verifier_timeout) if verifier_timeout is not None else DEFAULT_VERIFIER_TIMEOUT_S,
        verifier_env=verifier_env, network=agent_mode == "public",
        cpus=None if cpus is None else int(cpus), memory_mb=memory_mb, storage_mb=storage_mb,
        name=toml.text(task, "task", "name"), description=toml.text(task, "task", "description") or "",
        keywords=keywords, metadata=metadata, warnings=toml.unknown_keys(),
    )


# --------------------------------------------------------------------------- loading


def _instruction(path: Path) -> str:
    file = path / INSTRUCTION_FILE
    if not file.is_file():
        raise ScenarioError(f"{file}: missing: a Harbor task's prompt")
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None
    if not text.strip():
        raise ScenarioError(f"{file}: empty: a Harbor task's prompt")
    return text


def _title(instruction: str) -> str:
    first = next((line.strip().lstrip("#").strip() for line in instruction.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 3].rstrip() + "..."


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
    if not name or "/" in name or os.sep in name or name in (".", "..") or not is_task_dir(path):
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
        title=_title(instruction),
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
