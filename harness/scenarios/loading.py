"""Suites, scenarios and tier prompts (the format: docs/scenarios.md).

Loading and discovery: ``load_scenario``, ``discover_suites``, ``resolve_prompt``, for this
project's ``scenario.yaml`` and, through :mod:`harness.tasks`, for Harbor tasks and SWE-bench
instances. The records they fill (:class:`Scenario`, :class:`TierPrompt`, :class:`Suite`,
:class:`JudgeConfig`), :class:`ScenarioError` and ``VALIDATION_ORDER`` are defined in
:mod:`harness.scenarios.model`, which the task loaders share; import them from there.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from harness.scenarios.model import (
    VALIDATION_ORDER,
    JudgeConfig,
    Scenario,
    ScenarioError,
    Suite,
    TierPrompt,
)
from harness._util.suggest import did_you_mean

# --------------------------------------------------------------------------- loading

SCENARIO_FILE = "scenario.yaml"
FIXTURE_DIRS = ("repo", "repo-fixture")  # checked in this order
TIER_FILE = re.compile(r"^(L\d+|Lx)(-.*)?\.md$", re.IGNORECASE)
DEFAULT_ORACLE_FILE = "oracle-answers.json"
# Blocks whose keys are free-form: any key is accepted inside them.
_FREE_FORM_BLOCKS = {("artifact",), ("baseline",), ("fixtures",)}


def default_suites_dir() -> Path:
    """``ZE_BENCHMARKS_SUITES_DIR`` if set, else the repository's ``suites/`` (a source checkout),
    else ``suites/`` in the current directory (an installed package carries no suites)."""
    env = os.environ.get("ZE_BENCHMARKS_SUITES_DIR")
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[2] / "suites"
    return repo if repo.is_dir() else Path("suites")


def _suites_root(suites_dir: str | Path | None) -> Path:
    root = Path(suites_dir).expanduser() if suites_dir is not None else default_suites_dir()
    if not root.is_dir():
        raise ScenarioError(f"suites directory not found: {root}")
    return root


def discover_suites(suites_dir: str | Path | None = None) -> list[Suite]:
    """Every suite under ``suites_dir`` with a ``scenarios/`` folder, sorted by name.

    A scenario is a directory under ``<suite>/scenarios/`` holding a ``scenario.yaml``. A
    directory of Harbor tasks is a suite too (``suites_dir`` itself when it is one; see
    :mod:`harness.tasks.harbor`), and so is a file of SWE-bench instances (``NAME.jsonl`` or
    ``NAME.json``, the suite ``NAME``; see :mod:`harness.tasks.swe`).
    """
    root = _suites_root(suites_dir)
    from harness.tasks.harbor import task_suites
    from harness.tasks.swe import instance_suites

    tasks = task_suites(root)
    if tasks and tasks[0].path == root:
        return tasks
    tasks += instance_suites(root)
    suites = []
    for child in sorted(root.iterdir()):
        scen_root = child / "scenarios"
        if not child.is_dir() or not scen_root.is_dir():
            continue
        names = sorted(d.name for d in scen_root.iterdir() if (d / SCENARIO_FILE).is_file())
        suites.append(Suite(name=child.name, path=child, scenarios=names))
    return sorted(suites + tasks, key=lambda s: s.name)


#: Words ``bench`` reads as commands (and those planned): a suite of that name could never be
#: run as ``bench NAME``, so loading one is refused.
RESERVED_SUITE_NAMES = frozenset({
    "run", "list", "batches", "batch", "history", "show", "sync", "prices", "doctor",
    "dataset", "datasets", "fleet", "compare", "leaderboard", "regressions", "stress", "report", "view",
    "dashboard", "help", "profile", "costs", "agents", "mock-model",
    "export", "new", "check", "tasks",
})


def _refuse_reserved(root: Path, suite: str) -> None:
    raise ScenarioError(f"suite {suite!r} in {root} has the name of a bench command, so `bench {suite}` "
                        "could never run it; rename its directory")


def _scenario_dir(root: Path, suite: str, name: str) -> tuple[Path, Path]:
    if suite in RESERVED_SUITE_NAMES:
        _refuse_reserved(root, suite)
    suite_path = root / suite
    if not (suite_path / "scenarios").is_dir():
        known = [s.name for s in discover_suites(root)]
        raise ScenarioError(f"unknown suite {suite!r} in {root}{did_you_mean(suite, known)}; "
                            f"available: {', '.join(known) or 'none'}")
    path = suite_path / "scenarios" / name
    if not (path / SCENARIO_FILE).is_file():
        known = sorted(d.name for d in (suite_path / "scenarios").iterdir() if (d / SCENARIO_FILE).is_file())
        raise ScenarioError(
            f"unknown scenario {name!r} in suite {suite!r}{did_you_mean(name, known)}: no {path / SCENARIO_FILE}; "
            f"available: {', '.join(known) or 'none'}"
        )
    return suite_path, path


@lru_cache(maxsize=1)
def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of ``scenario.yaml`` shipped in the package."""
    return json.loads((Path(__file__).resolve().parents[1] / "schemas" / "scenario.schema.json").read_text("utf-8"))


def _field_path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(scenario_schema())


def _validate(data: Any, file: Path) -> None:
    validator = _validator()
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    err = errors[0]
    # A oneOf failure hides the useful message in its context; surface the deepest one.
    while err.context:
        err = sorted(err.context, key=lambda e: -len(e.absolute_path))[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise ScenarioError(f"{file}: {_field_path(err.absolute_path)}: {err.message}{more}")


def _resolve_ref(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref and ref.startswith("#/$defs/"):
        return _resolve_ref(scenario_schema()["$defs"][ref.split("/")[-1]])
    for option in schema.get("oneOf", []):
        option = _resolve_ref(option)
        if option.get("type") == "object":
            return option
    return schema


def _unknown_keys(data: Any, schema: dict[str, Any], path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
    """(path, hint) of every key, at the top level or inside a block, that the schema does not
    name (likely a misspelling): the hint is `` (did you mean 'x'?)`` for a close known key, else
    the keys allowed there. Free-form blocks are not looked into."""
    schema = _resolve_ref(schema)
    found: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(data, dict) and "properties" in schema and path not in _FREE_FORM_BLOCKS:
        known = schema["properties"]
        for key, value in data.items():
            if key in known:
                found += _unknown_keys(value, known[key], (*path, key))
            else:
                hint = did_you_mean(str(key), known) or f" (allowed: {', '.join(known)})"
                found.append(((*path, key), hint))
    elif isinstance(data, list) and "items" in schema:
        for i, item in enumerate(data):
            found += _unknown_keys(item, schema["items"], (*path, i))
    return found


def _check_known_keys(data: Any, file: Path) -> None:
    """:class:`ScenarioError` naming the first unknown key, wherever it is: a misspelled key would
    otherwise be dropped silently (``validaton:`` leaves a run without its test gate,
    ``wieght:`` changes a score)."""
    unknown = _unknown_keys(data, scenario_schema(), ())
    if not unknown:
        return
    path, hint = unknown[0]
    more = f"; also unknown: {', '.join(_field_path(p) for p, _ in unknown[1:])}" if len(unknown) > 1 else ""
    raise ScenarioError(f"{file}: {_field_path(path)}: unknown key{hint}{more}")


_CATEGORY_WEIGHT = re.compile(r"\(\s*(?:weight\s*:?\s*)?(\d+(?:\.\d+)?)\s*%\s*\)", re.IGNORECASE)


def _category_head(text: str) -> str:
    """Text up to the first ``:`` outside parentheses (``"A (Weight: 3%): b"`` -> ``"A (Weight: 3%)"``)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            return text[:i]
    return text


def compile_pattern(check: dict[str, Any]) -> re.Pattern[str]:
    """The regex of a ``heuristic_checks.patterns`` entry. Original suites wrote JavaScript
    regexes, whose named groups ``(?<name>`` are ``(?P<name>`` here; ``flags: i`` ignores case."""
    pattern = re.sub(r"\(\?<(?![=!])", "(?P<", str(check.get("pattern", "")))
    return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if "i" in str(check.get("flags", "")) else 0))


def parse_judge_category(item: str | dict[str, Any]) -> tuple[str, float, str]:
    """``"Dependency Update Correctness (30%): ..."`` -> ``("dependency_update_correctness", 30.0, text)``.

    The slug is the text before the first ``:`` or ``(``, lowercased, non-alphanumerics to
    ``_``; the percentage in the head is the weight (1 when absent). Dict categories
    ``{name, weight, description}`` are accepted too.
    """
    if isinstance(item, dict):
        name = str(item["name"])
        text = f"{name}: {item['description']}" if item.get("description") else name
        weight = float(item.get("weight", 1.0))
    else:
        text = item
        head = re.split(r"[:(]", item, maxsplit=1)[0]
        name = head
        match = _CATEGORY_WEIGHT.search(_category_head(item))
        weight = float(match.group(1)) if match else 1.0
    slug = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_") or "category"
    return slug, weight, text


def _read_yaml(file: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(file.read_text("utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"{file}:{where}: invalid YAML: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None
    if data is None:
        raise ScenarioError(f"{file}: empty file")
    if not isinstance(data, dict):
        raise ScenarioError(f"{file}: (top level): expected a mapping of keys, got {type(data).__name__}")
    return data


def _read_oracle_answers(file: Path) -> dict[str, str]:
    try:
        data = json.loads(file.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{file}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{file}: expected an object of question -> answer")
    answers = {}
    for question, answer in data.items():
        if isinstance(answer, (dict, list)):
            raise ScenarioError(f"{file}: {question!r}: answer must be text, not {type(answer).__name__}")
        answers[str(question)] = "" if answer is None else str(answer)
    return answers


def _environment(file: Path, path: Path, image: str | None) -> Path | None:
    """``sandbox.image``: the build context (relative to the scenario) of the image its
    commands need, checked to hold a Containerfile or Dockerfile."""
    if image is None:
        return None
    from harness.sandbox.images import CONTAINERFILES

    context = (path / image).resolve()
    if not context.is_dir():
        raise ScenarioError(f"{file}: sandbox.image: directory not found: {context}")
    if not any((context / name).is_file() for name in CONTAINERFILES):
        raise ScenarioError(f"{file}: sandbox.image: {context} holds no {' or '.join(CONTAINERFILES)}")
    return context


def load_scenario(suite: str, name: str, suites_dir: str | Path | None = None) -> Scenario:
    """Load ``<suites_dir>/<suite>/scenarios/<name>/scenario.yaml`` into a :class:`Scenario`.

    Raises :class:`ScenarioError` (one line, naming file and field) for anything unusable:
    unknown suite or scenario, broken YAML, a schema violation, an unknown (likely misspelled)
    key at any level, a missing fixture.
    """
    root = _suites_root(suites_dir)
    from harness.tasks.harbor import load_task, task_suite_path

    task_suite = task_suite_path(root, suite)
    if task_suite is not None:  # a directory of Harbor tasks
        if task_suite != root and suite in RESERVED_SUITE_NAMES:  # found by name, not given by path
            _refuse_reserved(root, suite)
        return load_task(task_suite, name, suite)
    from harness.tasks.swe import instance_file, load_instance

    instances = instance_file(root, suite) if not (root / suite / "scenarios").is_dir() else None
    if instances is not None:  # a file of SWE-bench instances
        return load_instance(instances, name, suite)
    suite_path, path = _scenario_dir(root, suite, name)
    file = path / SCENARIO_FILE
    raw = _read_yaml(file)
    _validate(raw, file)
    _check_known_keys(raw, file)
    warnings: list[str] = []

    workspace = raw.get("workspace") or {}
    validation = raw.get("validation") or {}
    commands = validation.get("commands") or {}
    heuristics = dict(raw.get("heuristic_checks") or {})
    artifact = raw.get("artifact")

    fixture = next((path / d for d in FIXTURE_DIRS if (path / d).is_dir()), None)
    workspace_required = bool(workspace.get("required", True)) and artifact is None
    if fixture is None and workspace_required:
        raise ScenarioError(
            f"{path}: missing fixture: neither repo/ nor repo-fixture/ exists "
            f"(set workspace.required: false for a scenario without a workspace)"
        )

    # Original suites named "no_*" patterns meaning "must be absent" but never negated them.
    for i, check in enumerate(heuristics.get("patterns") or []):
        if "negate" not in check and str(check.get("name", "")).startswith("no_"):
            check["negate"] = True
            warnings.append(
                f"{file}: heuristic_checks.patterns[{i}]: {check['name']!r} has no 'negate'; "
                f"treated as negate: true because its name starts with 'no_'"
            )

    oracle_cfg = raw.get("oracle") or {}
    oracle_answers = None
    if oracle_cfg.get("answers_file"):
        answers_path = (path / oracle_cfg["answers_file"]).resolve()
        if not answers_path.is_file():
            raise ScenarioError(f"{file}: oracle.answers_file: file not found: {answers_path}")
        oracle_answers = _read_oracle_answers(answers_path)
    elif (path / DEFAULT_ORACLE_FILE).is_file():
        oracle_answers = _read_oracle_answers(path / DEFAULT_ORACLE_FILE)

    judge_raw = raw.get("llm_judge") or {}
    judge = JudgeConfig(
        enabled=bool(judge_raw.get("enabled", False)),
        model=judge_raw.get("model"),
        provider=judge_raw.get("provider"),
        temperature=float(judge_raw.get("temperature", 0.0)),
        max_tokens=int(judge_raw.get("max_tokens", 2048)),
        categories=[parse_judge_category(c) for c in judge_raw.get("categories") or []],
    )

    for i, check in enumerate(heuristics.get("patterns") or []):
        try:
            compile_pattern(check)
        except re.error as exc:
            raise ScenarioError(f"{file}: heuristic_checks.patterns[{i}].pattern: invalid regular expression "
                                f"{check.get('pattern')!r}: {exc}") from None

    environment = _environment(file, path, (raw.get("sandbox") or {}).get("image"))
    solution = path / "solution"
    hidden = path / "hidden-tests"
    tools = raw.get("tools") or {}
    return Scenario(
        suite=suite,
        name=name,
        path=path,
        suite_path=suite_path,
        id=str(raw.get("id", name)),
        title=str(raw.get("title", "")),
        description=str(raw.get("description", "")),
        tags=list(raw.get("tags") or []),
        difficulty=None if raw.get("difficulty") is None else str(raw["difficulty"]),
        timeout_minutes=float(raw.get("timeout_minutes", 60)),
        success_threshold=float(raw.get("success_threshold", 0.7)),
        fixture_dir=fixture,
        workspace_required=workspace_required,
        workspace_exclude=list(workspace.get("exclude") or []),
        validation_required=bool(validation.get("required", True)),
        validation_commands={k: commands[k] for k in VALIDATION_ORDER if commands.get(k)},
        oracle_answers=oracle_answers,
        solution_dir=solution if solution.is_dir() else None,
        hidden_tests_dir=hidden if hidden.is_dir() else None,
        constraints=dict(raw.get("constraints") or {}),
        targets=dict(raw.get("targets") or {}),
        heuristic_checks=heuristics,
        llm_judge=judge,
        rubric_weights={str(k): float(v) for k, v in ((raw.get("rubric_overrides") or {}).get("weights") or {}).items()},
        artifact=dict(artifact) if artifact is not None else None,
        warmup=dict(raw["warmup"]) if raw.get("warmup") else None,
        allow_fetch_url=bool(tools.get("fetch_url", False)),
        sandbox_network=bool((raw.get("sandbox") or {}).get("network", False)),
        sandbox_limits={k: int(v) for k, v in (raw.get("sandbox") or {}).items() if k not in ("network", "image")},
        environment=environment,
        raw=raw,
        warnings=warnings,
    )


# --------------------------------------------------------------------------- prompts


def list_prompts(scenario: Scenario) -> list[TierPrompt]:
    """The scenario's tier prompts, sorted by file name (without reading their text).

    Prompts live in ``<suite>/prompts/<scenario>/``; ``<scenario>/prompts/`` is read too
    (the layout some original suites used). The first directory holding a file wins per name.
    A Harbor task has one prompt, its ``instruction.md``, as tier ``L1``; a SWE-bench instance
    its ``problem_statement``, as tier ``L1``.
    """
    from harness.tasks.harbor import is_task, task_prompts
    from harness.tasks.swe import instance_prompts, is_instance

    if is_task(scenario):
        return task_prompts(scenario)
    if is_instance(scenario):
        return instance_prompts(scenario)
    found: dict[str, TierPrompt] = {}
    for folder in (scenario.suite_path / "prompts" / scenario.name, scenario.path / "prompts"):
        if not folder.is_dir():
            continue
        for file in sorted(folder.iterdir()):
            match = TIER_FILE.match(file.name)
            if not match or not file.is_file() or file.stem in found:
                continue
            tier = match.group(1)
            tier = "Lx" if tier.lower() == "lx" else tier.upper()
            found[file.stem] = TierPrompt(tier=tier, label=file.stem, path=file, text="")
    return [found[k] for k in sorted(found)]


def available_tiers(scenario: Scenario) -> list[str]:
    """Tier labels (``L0-minimal``, ``L1-basic``, ...) that exist for the scenario."""
    return [p.label for p in list_prompts(scenario)]


def resolve_prompt(scenario: Scenario, tier: str) -> TierPrompt:
    """The prompt for ``tier``: an exact label (``L1-basic``) or a tier (``L1``).

    Matching ignores case. When several files share a tier, the first by sorted name is
    chosen, so the choice is deterministic. A missing tier raises :class:`ScenarioError`
    listing the tiers that exist.
    """
    prompts = list_prompts(scenario)
    wanted = tier.strip().lower()
    chosen = next((p for p in prompts if p.label.lower() == wanted), None)
    if chosen is None:
        chosen = next((p for p in prompts if p.tier.lower() == wanted), None)
    if chosen is None:
        labels = [p.label for p in prompts]
        raise ScenarioError(f"{scenario.key}: no prompt for tier {tier!r}{did_you_mean(tier, labels)}; "
                            f"available: {', '.join(labels) or 'none'}")
    try:
        text = chosen.path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{chosen.path}: cannot read prompt: {exc}") from None
    return TierPrompt(tier=chosen.tier, label=chosen.label, path=chosen.path, text=text)
