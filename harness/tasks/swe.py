"""SWE-bench instances as scenarios (docs/swe-tasks.md).

An **instance file** is JSONL, one SWE-bench instance per line (a ``.json`` file holding an
array of instances is read too; :mod:`harness.tasks.swe_instances` reads and checks it); the
file is a suite named after its stem, each instance a scenario named by its ``instance_id``.
:func:`load_instance` loads one instance as a :class:`~harness.scenarios.model.Scenario`:

- the prompt is ``problem_statement``, the one tier ``L1`` (label ``L1-problem``);
- the workspace starts as the repository's tree at ``base_commit``, read with git from a local
  clone or bundle in the **repos directory** (:func:`~harness.tasks.swe_git.find_clone`; never
  the network) and exported, without ``.git``, into a cache keyed by repository and commit under
  the workspaces root (:func:`~harness.tasks.swe_git.export_tree`); the user's clone is only read;
- the oracle applies ``patch`` (the gold patch) with ``git apply`` (``patch -p1`` in a sandbox
  without git, as an instance's own image may be): the instance's solution directory holds
  ``gold.patch`` and a ``solve.sh`` that applies it;
- ``test_patch`` is never in the workspace: it is applied at load time to a scratch copy of the
  base tree, and the files it touches, as it leaves them, are what the ``swe_tests`` evaluator
  (:mod:`harness.grading.evaluators.swe_tests`) lays over the grading copy (files it deletes are
  deleted), so whatever the agent wrote at those paths is replaced; then ``FAIL_TO_PASS`` and
  ``PASS_TO_PASS`` run with the test command;
- the zebench fields ``test_command``, ``install`` (the warmup's commands, run again on the
  grading copy before the tests) and ``image`` (a build context for the container backends)
  are optional.

Everything written (the exported tree; the prompt, the solution, the patched test files and
``instance.json``, what the instance says, which the run's ``config_hash`` covers) goes to the
cache, never next to the instance file. The scenario's ``raw`` holds the instance's
grading settings under :data:`RAW_KEY` (read by :func:`instance_settings`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from harness.scenarios.model import JudgeConfig, Scenario, ScenarioError, Suite, TierPrompt
from harness._util.suggest import did_you_mean
from harness.tasks.common import SOLUTION_DIR, SOLVE_SCRIPT, TESTS_DIR, one_prompt, plain_name, raw_settings, title_of
from harness.tasks.swe_git import (
    GitError,
    apply_patch,
    cache_root,
    clone_candidates,
    export_tree,
    find_clone,
    patch_paths,
    publish,
)
from harness.tasks.swe_instances import Instance, check_instance, read_entries

SUFFIXES = (".jsonl", ".json")
RAW_KEY = "swe"
PROMPT_LABEL = "L1-problem"
PROMPT_FILE = "problem_statement.md"
GOLD_PATCH = "gold.patch"
TESTS_PLACEHOLDER = "{tests}"
REPOS_DIR_NAME = "repos"  # the default repos directory, beside the instance file
DEFAULT_TIMEOUT_MINUTES = 60.0
DEFAULT_TEST_TIMEOUT_S = 1800.0

#: The repos directory in force for loading (see :func:`using_repos_dir`); None: the default.
_repos_dir: ContextVar[Path | None] = ContextVar("zebench_swe_repos_dir", default=None)


@contextlib.contextmanager
def using_repos_dir(path: Path | None) -> Iterator[None]:
    """Load instances with ``path`` as the repos directory (None: each instance file's default)."""
    token = _repos_dir.set(None if path is None else Path(path).expanduser().resolve())
    try:
        yield
    finally:
        _repos_dir.reset(token)


def default_repos_dir(file: Path) -> Path:
    """The repos directory of an instance file: the one in force (``--repos-dir``), else
    ``repos/`` beside the file."""
    return _repos_dir.get() or file.parent / REPOS_DIR_NAME


# --------------------------------------------------------------------------- recognising


def is_instance_file(path: Path) -> bool:
    """A file named ``*.jsonl`` or ``*.json`` (whether it holds instances is told when loading)."""
    return path.suffix.lower() in SUFFIXES and path.is_file()


def instance_file(root: Path, suite: str) -> Path | None:
    """The instance file of ``suite`` in the suites directory ``root``, or None."""
    if not plain_name(suite):
        return None
    for suffix in SUFFIXES:
        file = root / f"{suite}{suffix}"
        if file.is_file():
            return file
    return None


def instance_suites(root: Path) -> list[Suite]:
    """The instance files of a suites directory, as suites (a file that cannot be read lists no
    scenario; loading one of its instances says why)."""
    try:
        files = sorted(p for p in root.iterdir() if not p.name.startswith(".") and is_instance_file(p))
    except OSError:
        return []
    suites, seen = [], set()
    for file in files:
        if file.stem in seen:  # x.jsonl and x.json: the first (jsonl) is the suite
            continue
        if file.suffix.lower() == ".json" and not _starts_array(file):
            continue  # a JSON file of something else (a manifest, a configuration) is no suite
        seen.add(file.stem)
        try:
            names = [entry.name for entry in read_entries(file)]
        except ScenarioError:
            names = []
        suites.append(Suite(name=file.stem, path=file, scenarios=names))
    return suites


def _starts_array(file: Path) -> bool:
    try:
        with open(file, "rb") as fh:
            return fh.read(4096).lstrip()[:1] == b"["
    except OSError:
        return False


def is_instance(scenario: Scenario) -> bool:
    """Whether ``scenario`` was loaded from a SWE-bench instance."""
    return raw_settings(scenario, RAW_KEY) is not None


def instance_settings(scenario: Scenario) -> dict[str, Any] | None:
    """What grading needs of an instance (test ids, test command, install, the test files);
    None for other scenarios."""
    return raw_settings(scenario, RAW_KEY)


def instance_prompts(scenario: Scenario) -> list[TierPrompt]:
    """An instance's one prompt: its ``problem_statement`` as tier ``L1``."""
    return one_prompt(scenario, PROMPT_LABEL, PROMPT_FILE)


# --------------------------------------------------------------------------- preparing an instance


# The oracle runs it in the run's sandbox: an instance's own image may have patch but no git.
_SOLVE = """#!/bin/sh
# Applies the instance's gold patch (the file beside this script) to the current directory:
# with git where the sandbox has it, else with patch.
set -e
here=$(cd "$(dirname "$0")" && pwd)
if command -v git >/dev/null 2>&1; then
    GIT_CEILING_DIRECTORIES=$(dirname "$PWD") git apply --whitespace=nowarn --verbose "$here/gold.patch"
elif command -v patch >/dev/null 2>&1; then
    patch -p1 -i "$here/gold.patch"
else
    echo "solve.sh: neither git nor patch is in this sandbox: the gold patch cannot be applied" >&2
    exit 127
fi
"""


def _prepare(instance: Instance, tree: Path, commit: str) -> tuple[Path, list[str], str | None]:
    """(instance directory, paths the test patch deletes, why the test patch does not apply or None).
    The directory holds the prompt, the solution and ``tests/``: the test patch's files as it
    leaves them. Kept in the cache, keyed by what the instance says."""
    # What the instance says, in a file of the directory: its digest is part of every run's
    # config_hash (the scenario's files), so a change of ids, command or image is a new configuration.
    described = json.dumps({
        "instance_id": instance.instance_id, "repo": instance.repo, "base_commit": commit,
        "FAIL_TO_PASS": instance.fail_to_pass, "PASS_TO_PASS": instance.pass_to_pass,
        "test_command": instance.test_command, "install": instance.install,
        "image": None if instance.image is None else instance.image.name,
    }, indent=2) + "\n"
    digest = hashlib.sha256(json.dumps([described, instance.patch, instance.test_patch,
                                        instance.problem_statement, _SOLVE]).encode()).hexdigest()[:16]
    target = cache_root() / "instances" / f"{instance.instance_id}-{digest}"
    state_file = target / "test-patch.json"
    if not state_file.is_file():
        root = cache_root()
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".instance-", dir=root))
        try:
            (scratch / PROMPT_FILE).write_text(instance.problem_statement, "utf-8")
            (scratch / "instance.json").write_text(described, "utf-8")
            solution = scratch / SOLUTION_DIR
            solution.mkdir()
            (solution / GOLD_PATCH).write_text(instance.patch, "utf-8")
            (solution / SOLVE_SCRIPT).write_text(_SOLVE)
            os.chmod(solution / SOLVE_SCRIPT, 0o755)
            tests = scratch / TESTS_DIR
            tests.mkdir()
            touched = patch_paths(instance.test_patch)
            deleted: list[str] = []
            problem = None
            work = scratch / "work"
            try:
                work.mkdir()
                for rel in touched:  # git apply reads only the files it patches
                    source = tree / rel
                    if source.is_file() and not source.is_symlink():
                        (work / rel).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(source, work / rel)
                apply_patch(instance.test_patch, work)
            except GitError as exc:
                problem = str(exc)
            else:
                for rel in touched:
                    source = work / rel
                    if source.is_file() and not source.is_symlink():
                        (tests / rel).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(source, tests / rel)
                    elif not os.path.lexists(source):
                        deleted.append(rel)
            shutil.rmtree(work, ignore_errors=True)
            (scratch / "test-patch.json").write_text(json.dumps({"deleted": deleted, "problem": problem}))
            publish(scratch, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    state = json.loads(state_file.read_text())
    return target, list(state["deleted"]), state["problem"]


def load_instance(file: Path, name: str, suite: str | None = None) -> Scenario:
    """Load the instance ``name`` of the instance file ``file`` as a :class:`Scenario` (see the
    module docstring). :class:`ScenarioError`, one line naming ``file:line`` and the field, for
    an instance that cannot be used."""
    file = file.resolve()
    suite = suite or file.stem
    entries = read_entries(file)
    entry = next((e for e in entries if e.name == name), None)
    if entry is None:
        known = [e.name for e in entries]
        shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
        raise ScenarioError(f"unknown instance {name!r} in {file}{did_you_mean(name, known)}; "
                            f"available: {shown or 'none'}")
    instance = check_instance(entry, file)
    repos_dir = default_repos_dir(file)
    clone = find_clone(repos_dir, instance.repo)
    if clone is None:
        looked = ", ".join(str(p) for p in clone_candidates(repos_dir, instance.repo))
        raise ScenarioError(f"{instance.where}: repo: instance {instance.instance_id}: no clone of {instance.repo} "
                            f"(looked for {looked}; give the directory with --repos-dir)")
    try:
        tree, commit = export_tree(clone, instance.repo, instance.base_commit)
        path, deleted, problem = _prepare(instance, tree, commit)
    except GitError as exc:
        raise ScenarioError(f"{instance.where}: base_commit: instance {instance.instance_id} of {instance.repo}: "
                            f"{exc}") from None
    except OSError as exc:
        raise ScenarioError(f"{instance.where}: instance {instance.instance_id}: cannot prepare it in "
                            f"{cache_root()}: {exc}") from None
    warnings = list(instance.warnings)
    if problem is not None:
        warnings.append(f"{instance.where}: test_patch: does not apply to {instance.repo} at {commit[:12]}: "
                        f"{problem}; every run of this instance is a grading error")
    return Scenario(
        suite=suite,
        name=instance.instance_id,
        path=path,
        suite_path=file.parent,
        id=instance.instance_id,
        title=title_of(instance.problem_statement),
        description=f"{instance.repo} at {commit[:12]}",
        tags=[instance.repo],
        timeout_minutes=DEFAULT_TIMEOUT_MINUTES,
        success_threshold=1.0,
        fixture_dir=tree,
        workspace_required=True,
        validation_required=False,
        validation_commands={},
        solution_dir=path / SOLUTION_DIR,
        hidden_tests_dir=path / TESTS_DIR if problem is None else None,
        llm_judge=JudgeConfig(),
        warmup={"commands": list(instance.install)} if instance.install else None,
        environment=instance.image,
        raw={
            RAW_KEY: {
                "file": str(file),
                "where": instance.where,
                "repo": instance.repo,
                "baseCommit": commit,
                "clone": str(clone),
                "failToPass": instance.fail_to_pass,
                "passToPass": instance.pass_to_pass,
                "testCommand": instance.test_command,
                "install": list(instance.install),
                "testFiles": str(path / TESTS_DIR),
                "deleted": deleted,
                "testPatchProblem": problem,
            },
            "validation": {"timeout_seconds": DEFAULT_TEST_TIMEOUT_S},
        },
        warnings=warnings,
    )
