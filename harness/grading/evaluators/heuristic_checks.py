"""The ``heuristic_checks`` evaluator: cheap, deterministic checks on the finished workspace.

Kinds (each check has ``name``, ``weight`` default 1, ``description``):

- ``commands``: ``command`` exits 0 in the workspace.
- ``files``: ``path`` (a glob) exists; ``negate: true`` passes when it does not.
- ``patterns``: regex ``pattern`` is found in a file matching the glob ``file``, skipping
  ``exclude`` globs; ``negate: true`` passes when no matching file contains it (so a
  "no_console_log" check rewards absence, not presence).
- ``structured``: in ``file``, a JSON path ``$.a.b`` / ``$.items[0].name`` exists (optionally
  ``equals`` a value, or ``exists: false``), or a markdown heading contains ``section_header``.
- ``scripts``: ``script`` (looked up in the scenario directory, then the suite directory,
  then the workspace) exits 0; ``args`` may use ``${scenario.id}``, ``${scenario.suite}``,
  ``${scenario.name}``, ``${artifact.<key>}`` and ``${workspace}`` (the workspace's path as
  commands see it). A script from the scenario or suite is mounted read-only into the grading
  sandbox (:func:`script_mounts`); nothing else of the suite is visible there.

Commands and scripts run in the grading sandbox, with pytest reading the fixture's settings.

Score = passed weight / total weight.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.grading.evaluators.base import EvaluationContext, EvaluatorResult
from harness.grading.evaluators.validation import run_graded
from harness._util.globs import glob_files
from harness.sandbox import Mount
from harness.scenarios.loading import compile_pattern
from harness._util.trees import is_regular, read_regular
from harness.scenarios.workspace import ALWAYS_EXCLUDED

NAME = "heuristic_checks"
KINDS = ("commands", "files", "patterns", "structured", "scripts")
DEFAULT_CHECK_TIMEOUT_S = 300.0
MAX_SCAN_BYTES = 5_000_000  # per file read by a pattern check


@dataclass
class CheckOutcome:
    kind: str
    name: str
    passed: bool
    weight: float
    detail: str = ""
    description: str = ""


def _weight(check: dict[str, Any]) -> float:
    return float(check.get("weight", 1.0))


def _run_check_command(command: str, check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    result = run_graded(ctx, command, "heuristic", test=False,
                        timeout_s=float(check.get("timeout_seconds", DEFAULT_CHECK_TIMEOUT_S))).result
    if result.ok:
        return True, "exit 0"
    if result.timed_out:
        return False, "timed out"
    first = (result.stderr or result.stdout).strip().splitlines()
    return False, result.outcome() + (f": {first[-1][:200]}" if first else "")


def _command_check(check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    return _run_check_command(check["command"], check, ctx)


def _file_check(check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    path = check["path"]
    exists = (ctx.workspace / path).exists() or bool(glob_files(ctx.workspace, path, prune_dirs=ALWAYS_EXCLUDED))
    if check.get("negate"):
        return not exists, "absent" if not exists else f"{path} exists"
    return exists, "found" if exists else f"not found: {path}"


def _pattern_check(check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    try:
        regex = compile_pattern(check)
    except re.error as exc:  # refused when the scenario loads; kept for scenarios built in code
        return False, f"invalid regex {check['pattern']!r}: {exc}"
    files = glob_files(ctx.workspace, check["file"], exclude=check.get("exclude") or [], prune_dirs=ALWAYS_EXCLUDED)
    negate = bool(check.get("negate"))
    hits = []
    for rel in files:
        data = read_regular(ctx.workspace / rel, MAX_SCAN_BYTES)  # never a FIFO, never through a link
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        if regex.search(text):
            hits.append(rel)
            if not negate:
                break
    if negate:
        if hits:
            return False, f"pattern present in {', '.join(hits[:5])}"
        return True, f"pattern absent from {len(files)} file(s)"
    if not files:
        return False, f"no files match {check['file']}"
    return (True, f"found in {hits[0]}") if hits else (False, f"not found in {len(files)} file(s)")


_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")
_MISSING = object()


def json_path_get(data: Any, path: str) -> Any:
    """Value at ``$.a.b[0]`` in ``data``, or a sentinel when absent. Keys may hold ``/`` (``$.paths./users``)."""
    if path in ("$", "$."):
        return data
    current = data
    for key, index, quoted in _PATH_TOKEN.findall(path[1:]):
        if index:
            if not isinstance(current, list) or int(index) >= len(current):
                return _MISSING
            current = current[int(index)]
        else:
            key = key or quoted
            if not isinstance(current, dict) or key not in current:
                return _MISSING
            current = current[key]
    return current


def _parse_structured(text: str, suffix: str) -> Any:
    """JSON, YAML (.yaml/.yml) or TOML (.toml, e.g. pyproject.toml), by file extension."""
    if suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    if suffix == ".toml":
        return tomllib.loads(text)
    return json.loads(text)


def _structured_check(check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    file = ctx.workspace / check["file"]
    data = read_regular(file, MAX_SCAN_BYTES) if is_regular(file) else None
    if data is None:
        return check.get("exists") is False, f"file not found: {check['file']}"
    text = data.decode("utf-8", errors="replace")
    if check.get("json_path"):
        try:
            data = _parse_structured(text, file.suffix)
        except (json.JSONDecodeError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
            return False, f"cannot parse {check['file']}: {(str(exc).splitlines() or [type(exc).__name__])[0]}"
        except RecursionError:
            return False, f"cannot parse {check['file']}: nested too deeply"
        except ValueError as exc:  # e.g. an integer of thousands of digits
            return False, f"cannot parse {check['file']}: {str(exc)[:200]}"
        value = json_path_get(data, check["json_path"])
        present = value is not _MISSING and value is not None
        if check.get("exists") is False:
            return not present, "absent" if not present else f"{check['json_path']} present"
        if not present:
            return False, f"{check['json_path']} not found"
        if "equals" in check:
            ok = value == check["equals"]
            return ok, "value matches" if ok else f"{check['json_path']} is {value!r}, expected {check['equals']!r}"
        return True, f"{check['json_path']} present"
    if check.get("section_header"):
        wanted = check["section_header"].lstrip("#").strip().lower()
        headings = [line.lstrip("#").strip().lower() for line in text.splitlines() if re.match(r"^\s{0,3}#{1,6}\s", line)]
        found = any(wanted in h for h in headings)
        return found, "heading found" if found else f"no heading containing {check['section_header']!r}"
    return True, "file exists"


def _substitute(arg: str, ctx: EvaluationContext) -> str:
    scenario = ctx.scenario
    values = {
        "scenario.id": scenario.id,
        "scenario.suite": scenario.suite,
        "scenario.name": scenario.name,
        "workspace": ctx.sandbox.inner_workspace,
    }
    for key, value in (scenario.artifact or {}).items():
        values[f"artifact.{key}"] = "" if value is None else str(value)

    def repl(m: re.Match[str]) -> str:
        # Unknown variables become empty, as the original harness did for missing artifact fields.
        return values.get(m.group(1), "")

    return re.sub(r"\$\{([A-Za-z0-9_.]+)\}", repl, str(arg))


def _suite_script(script: str, scenario: Any) -> Path | None:
    """A check's script in the scenario or suite directory (absolute paths as given)."""
    if os.path.isabs(script):
        return Path(script) if Path(script).is_file() else None
    for base in (scenario.path, scenario.suite_path):
        if (base / script).is_file():
            return (base / script).resolve()
    return None


def script_mounts(scenario: Any) -> tuple[Mount, ...]:
    """Read-only mounts of the scripts the scenario's checks run from outside the workspace."""
    mounts: list[Mount] = []
    for i, check in enumerate((scenario.heuristic_checks or {}).get("scripts") or []):
        path = _suite_script(str(check.get("script", "")), scenario)
        if path is not None:
            mounts.append(Mount(path, f"/zebench/scripts/{i}/{path.name}"))
    return tuple(mounts)


def _resolve_script(script: str, ctx: EvaluationContext) -> tuple[Path, str] | None:
    """The script's host path and its path as the grading sandbox sees it. Scenario and suite
    first: a script the agent planted in the workspace must not shadow them."""
    path = _suite_script(script, ctx.scenario)
    if path is None and not os.path.isabs(script) and (ctx.workspace / script).is_file():
        path = ctx.workspace / script
    if path is None:
        return None
    try:
        return path, ctx.sandbox.inner_path(path)
    except ValueError:
        return None


_INTERPRETERS = {".py": sys.executable, ".js": "node", ".mjs": "node", ".cjs": "node", ".sh": "sh"}


def _script_check(check: dict[str, Any], ctx: EvaluationContext) -> tuple[bool, str]:
    found = _resolve_script(check["script"], ctx)
    if found is None:
        return False, f"script not found: {check['script']}"
    host, inner = found
    args = [_substitute(a, ctx) for a in check.get("args") or []]
    if host.suffix not in _INTERPRETERS and os.access(host, os.X_OK):
        argv = [inner, *args]
    else:
        argv = [_INTERPRETERS.get(host.suffix, "sh"), inner, *args]
    return _run_check_command(shlex.join(argv), check, ctx)


_RUNNERS = {
    "commands": _command_check,
    "files": _file_check,
    "patterns": _pattern_check,
    "structured": _structured_check,
    "scripts": _script_check,
}


def run_checks(ctx: EvaluationContext) -> list[CheckOutcome]:
    """Run every configured check, in kind order, and report each outcome."""
    config = ctx.scenario.heuristic_checks
    outcomes = []
    for kind in KINDS:
        for check in config.get(kind) or []:
            try:
                passed, detail = _RUNNERS[kind](check, ctx)
            except (OSError, ValueError, KeyError) as exc:
                passed, detail = False, f"{type(exc).__name__}: {exc}"
            outcomes.append(CheckOutcome(kind, str(check.get("name", kind)), passed, _weight(check), detail,
                                         str(check.get("description", ""))))
    return outcomes


def evaluate_heuristic_checks(ctx: EvaluationContext) -> EvaluatorResult | None:
    """Weighted pass fraction of the checks; None when the scenario configures none."""
    config = ctx.scenario.heuristic_checks
    if not config or not any(config.get(kind) for kind in KINDS):
        return None
    if config.get("enabled") is False:
        return EvaluatorResult(NAME, 0.0, status="skipped", details="heuristic_checks.enabled is false")
    outcomes = run_checks(ctx)
    total = sum(o.weight for o in outcomes)
    if total <= 0:
        return EvaluatorResult(NAME, 0.0, status="skipped", details="all heuristic checks have weight 0")
    passed_w = sum(o.weight for o in outcomes if o.passed)
    lines = [f"Passed: {sum(o.passed for o in outcomes)}/{len(outcomes)} checks"]
    for o in outcomes:
        mark = "✓" if o.passed else "✗"
        lines.append(f"{mark} {o.kind}/{o.name} (weight {o.weight:g}): {o.detail}")
    return EvaluatorResult(NAME, passed_w / total, details="\n".join(lines),
                           data={"checks": [asdict(o) for o in outcomes]})
