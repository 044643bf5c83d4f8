"""A Harbor task's ``task.toml``, read and checked (docs/harbor-tasks.md).

:func:`read_settings` reads the file into :class:`TaskSettings`. A setting is honoured where
the sandbox has the knob: the agent's timeout, the verifier's timeout (600 s when not given,
as in Harbor) and environment, memory, storage (the workspace quota), CPUs (checked against
this machine) and the network (all of it or none: ``public`` or ``no-network``, one setting
for the agent and the verifier). One it has no knob for, or that this machine cannot give,
is refused: a :class:`~harness.scenarios.model.ScenarioError`, one line naming the file and the
field (GPUs, more CPUs or memory than this machine has, prebuilt images, network allowlists,
named users, an environment for ``solve.sh``, MCP servers, health checks, skills
directories, variables taken from the host's environment, multi-step tasks). A value of the
wrong type is refused the same way. A key Harbor's format does not have is ignored, as
Harbor does, with a warning naming it.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.scenarios.model import ScenarioError
from harness._util.suggest import did_you_mean
from harness.tasks.common import read_text

DEFAULT_VERIFIER_TIMEOUT_S = 600.0  # Harbor's default [verifier] timeout_sec
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


def _read_toml(file: Path) -> dict[str, Any]:
    text = read_text(file)
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

