"""SWE-bench instances as scenarios (docs/swe-tasks.md).

An **instance file** is JSONL, one SWE-bench instance per line (a ``.json`` file holding an
array of instances is read too); the file is a suite named after its stem, each instance a
scenario named by its ``instance_id``. :func:`load_instance` loads one instance as a
:class:`~harness.scenarios.Scenario`:

- the prompt is ``problem_statement``, the one tier ``L1`` (label ``L1-problem``);
- the workspace starts as the repository's tree at ``base_commit``, read with git from a local
  clone or bundle in the **repos directory** (:func:`find_clone`; never the network) and exported,
  without ``.git``, into a cache keyed by repository and commit under the workspaces root
  (:func:`export_tree`); the user's clone is only read;
- the oracle applies ``patch`` (the gold patch) with ``git apply`` (``patch -p1`` in a sandbox
  without git, as an instance's own image may be): the instance's solution directory holds
  ``gold.patch`` and a ``solve.sh`` that applies it;
- ``test_patch`` is never in the workspace: it is applied at load time to a scratch copy of the
  base tree, and the files it touches, as it leaves them, are what the ``swe_tests`` evaluator
  (:mod:`harness.evaluators.swe_tests`) lays over the grading copy (files it deletes are
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
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.leftovers import default_workspaces_root
from harness.scenario_model import JudgeConfig, Scenario, ScenarioError, Suite, TierPrompt
from harness.suggest import did_you_mean

SUFFIXES = (".jsonl", ".json")
RAW_KEY = "swe"
PROMPT_LABEL = "L1-problem"
PROMPT_FILE = "problem_statement.md"
SOLUTION_DIR = "solution"
GOLD_PATCH = "gold.patch"
SOLVE_SCRIPT = "solve.sh"
TESTS_DIR = "tests"
DEFAULT_TEST_COMMAND = "python -m pytest -rA -p no:cacheprovider"
TESTS_PLACEHOLDER = "{tests}"
REPOS_DIR_NAME = "repos"  # the default repos directory, beside the instance file
CACHE_DIR_NAME = "swe-cache"  # under the workspaces root
DEFAULT_TIMEOUT_MINUTES = 60.0
DEFAULT_TEST_TIMEOUT_S = 1800.0
GIT_TIMEOUT_S = 600.0
TITLE_CHARS = 80

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
            "problem_statement")
#: SWE-bench's own fields this loader does not use: accepted silently (environment_setup_commit
#: with a warning when it differs from base_commit: its environment is not built here).
SWE_EXTRAS = ("hints_text", "created_at", "version", "environment_setup_commit")
#: Optional fields of this project (docs/swe-tasks.md).
OWN_FIELDS = ("test_command", "install", "image")
KNOWN_FIELDS = (*REQUIRED, *SWE_EXTRAS, *OWN_FIELDS)

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")
_PATCH_PATH = re.compile(r"^(?:---|\+\+\+) (?:\"?[ab]/)?(.+?)\"?(?:\t.*)?$")

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
    if not suite or suite in (".", "..") or "/" in suite or os.sep in suite:
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
    return isinstance(scenario.raw.get(RAW_KEY), dict)


def instance_settings(scenario: Scenario) -> dict[str, Any] | None:
    """What grading needs of an instance (test ids, test command, install, the test files);
    None for other scenarios."""
    settings = scenario.raw.get(RAW_KEY)
    return settings if isinstance(settings, dict) else None


def instance_prompts(scenario: Scenario) -> list[TierPrompt]:
    """An instance's one prompt: its ``problem_statement`` as tier ``L1``."""
    return [TierPrompt(tier="L1", label=PROMPT_LABEL, path=scenario.path / PROMPT_FILE, text="")]


# --------------------------------------------------------------------------- reading the file


@dataclass(frozen=True)
class Entry:
    """One instance of a file: where it is (``file:line N``), its scenario name and its data,
    or why it cannot be read."""

    where: str
    name: str
    data: dict[str, Any] | None
    problem: str | None = None


@lru_cache(maxsize=8)
def _entries(file: str, mtime_ns: int, size: int) -> tuple[Entry, ...]:
    path = Path(file)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read: {exc}") from None
    items: list[tuple[str, int, Any, str | None]] = []  # (where, number, value, problem)
    if path.suffix.lower() == ".json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(value, list):
            raise ScenarioError(f"{path}: (top level): expected an array of SWE-bench instances, got "
                                f"{type(value).__name__}")
        items = [(f"{path}: [{i}]", i, item, None) for i, item in enumerate(value)]
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{number}", number, json.loads(line), None))
            except json.JSONDecodeError as exc:
                items.append((f"{path}:{number}", number, None, f"invalid JSON: {exc.msg} (column {exc.colno})"))
    entries: list[Entry] = []
    taken: dict[str, str] = {}
    for where, number, value, problem in items:
        fallback = f"line-{number}" if path.suffix.lower() != ".json" else f"item-{number}"
        if problem is None and not isinstance(value, dict):
            problem = f"expected an object (one SWE-bench instance), got {type(value).__name__}"
        if problem is not None:
            entries.append(Entry(where, fallback, None, problem))
            continue
        ident = value.get("instance_id")
        if not isinstance(ident, str) or not SAFE_NAME.match(ident) or ident in (".", ".."):
            why = "missing" if ident is None else f"{ident!r} is not a safe name (letters, digits, '.', '_', '-'; " \
                                                    "first a letter or digit; at most 200)"
            entries.append(Entry(where, fallback, None, f"instance_id: {why}"))
            continue
        if ident in taken:
            entries.append(Entry(where, f"{ident}@{fallback}", None,
                                 f"instance_id: {ident!r} is already the id of {taken[ident]}"))
            continue
        taken[ident] = where
        entries.append(Entry(where, ident, value))
    return tuple(entries)


def read_entries(file: Path) -> tuple[Entry, ...]:
    """The instances of ``file`` (read once per version of the file)."""
    try:
        st = file.stat()
    except OSError as exc:
        raise ScenarioError(f"{file}: cannot read: {exc}") from None
    return _entries(str(file.resolve()), st.st_mtime_ns, st.st_size)


def _fail(where: str, field: str, why: str) -> ScenarioError:
    return ScenarioError(f"{where}: {field}: {why}")


def _text(data: dict[str, Any], where: str, field: str, *, required: bool = True) -> str | None:
    value = data.get(field)
    if value is None and not required:
        return None
    if value is None:
        raise _fail(where, field, "missing")
    if not isinstance(value, str):
        raise _fail(where, field, f"expected text, got {type(value).__name__}")
    if required and not value.strip():
        raise _fail(where, field, "empty")
    return value


def read_test_ids(data: dict[str, Any], where: str, field: str) -> list[str]:
    """A list of test ids, given as a list or (as SWE-bench stores them) as JSON text of one."""
    if field not in data:
        raise _fail(where, field, "missing")
    value = data[field]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _fail(where, field, f"expected a list of test ids (or JSON text of one): {exc.msg}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, field, f"expected a list of test ids, got {value!r}"[:300])
    return list(dict.fromkeys(v.strip() for v in value))


@dataclass
class Instance:
    """One instance, read and checked."""

    where: str
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    problem_statement: str
    test_command: str
    install: list[str]
    image: Path | None
    warnings: list[str]


def check_instance(entry: Entry, file: Path) -> Instance:
    """The instance of ``entry``, checked field by field (:class:`ScenarioError` naming
    ``file:line`` and the field)."""
    if entry.data is None:
        raise ScenarioError(f"{entry.where}: {entry.problem}")
    data, where = entry.data, entry.where
    for field in REQUIRED:
        if field not in data:
            raise _fail(where, field, "missing (a SWE-bench instance needs " + ", ".join(REQUIRED) + ")")
    repo = _text(data, where, "repo")
    if not _REPO.match(repo) or ".." in repo.split("/"):
        raise _fail(where, "repo", f"expected owner/name, got {repo!r}")
    commit = _text(data, where, "base_commit")
    if not _COMMIT.match(commit):
        raise _fail(where, "base_commit", f"expected a commit hash, got {commit!r}")
    patch = _text(data, where, "patch")
    test_patch = _text(data, where, "test_patch")
    statement = _text(data, where, "problem_statement")
    f2p = read_test_ids(data, where, "FAIL_TO_PASS")
    p2p = read_test_ids(data, where, "PASS_TO_PASS")
    if not f2p:
        raise _fail(where, "FAIL_TO_PASS", "empty: an instance nothing fails before the fix is solved by doing nothing")
    warnings = []
    for field in data:
        if field not in KNOWN_FIELDS:
            hint = did_you_mean(str(field), KNOWN_FIELDS) or ""
            warnings.append(f"{where}: {field}: unknown field, ignored{hint}")
    setup = data.get("environment_setup_commit")
    if isinstance(setup, str) and setup and setup != commit:
        warnings.append(f"{where}: environment_setup_commit: ignored (the tests run in the host's runtime or the "
                        "instance's image, not in an environment built at that commit)")
    command = _text(data, where, "test_command", required=False)
    if command is not None and not command.strip():
        raise _fail(where, "test_command", "empty")
    install = data.get("install", [])
    if isinstance(install, str):
        install = [install]
    if not isinstance(install, list) or not all(isinstance(c, str) and c.strip() for c in install):
        raise _fail(where, "install", f"expected a list of commands, got {install!r}"[:300])
    image = _text(data, where, "image", required=False)
    context = None
    if image is not None:
        from harness.sandbox.images import CONTAINERFILES

        context = (file.parent / image).resolve()
        if not context.is_dir():
            raise _fail(where, "image", f"directory not found: {context}")
        if not any((context / name).is_file() for name in CONTAINERFILES):
            raise _fail(where, "image", f"{context} holds no {' or '.join(CONTAINERFILES)}")
    return Instance(where=where, instance_id=entry.name, repo=repo, base_commit=commit.lower(), patch=patch,
                    test_patch=test_patch, fail_to_pass=f2p, pass_to_pass=p2p, problem_statement=statement,
                    test_command=(command or DEFAULT_TEST_COMMAND).strip(), install=list(install), image=context,
                    warnings=warnings)


# --------------------------------------------------------------------------- git


class GitError(RuntimeError):
    """A git command that failed; the message is git's own last line."""


def _git_env() -> dict[str, str]:
    """git reads neither the user's nor the system's configuration, asks for nothing, and never
    finds a repository above the directory it is pointed at."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_ASKPASS="true", LC_ALL="C")
    return env


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input_text: str | None = None) -> str:
    """Run git (the harness's own: reading a local clone, or applying a patch in its cache)."""
    if shutil.which("git") is None:
        raise GitError("git is not installed")
    try:
        done = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "protocol.allow=never",
                               "-c", "protocol.file.allow=always", *args],
                              cwd=cwd, env={**_git_env(), **(env or {})}, input=input_text, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
        raise GitError(lines[-1].strip() if lines else f"git {args[0]} exited {done.returncode}")
    return done.stdout


def clone_candidates(repos_dir: Path, repo: str) -> list[Path]:
    """Where the clone of ``owner/name`` may be, in order."""
    owner, name = repo.split("/", 1)
    return [repos_dir / f"{owner}__{name}", repos_dir / name, repos_dir / f"{owner}__{name}.bundle",
            repos_dir / f"{name}.bundle"]


def find_clone(repos_dir: Path, repo: str) -> Path | None:
    """The first clone (a directory holding ``.git``, or a bare repository) or bundle of ``repo``
    in ``repos_dir``."""
    for candidate in clone_candidates(repos_dir, repo):
        if candidate.suffix == ".bundle":
            if candidate.is_file():
                return candidate
        elif (candidate / ".git").exists() or ((candidate / "HEAD").is_file() and (candidate / "objects").is_dir()):
            return candidate
    return None


def _git_dir(clone: Path) -> Path:
    return clone / ".git" if (clone / ".git").exists() else clone


def cache_root() -> Path:
    """Where exported trees and prepared instances go: ``swe-cache/`` under the workspaces root."""
    return default_workspaces_root() / CACHE_DIR_NAME


def _publish(scratch: Path, target: Path) -> None:
    """Move a finished ``scratch`` directory to ``target`` (another process may have won)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(scratch, target)
    except OSError:
        if not target.is_dir():
            raise
        shutil.rmtree(scratch, ignore_errors=True)


def _extract(git_dir: Path, commit: str, into: Path, scratch: Path) -> None:
    """Write the tree of ``commit`` into ``into`` as a checkout would (through a private index:
    the clone's own index and work tree are untouched), without ``.git``. LFS filters are off:
    nothing is fetched."""
    env = {"GIT_INDEX_FILE": str(scratch / "index")}
    quiet_lfs = ("-c", "filter.lfs.process=", "-c", "filter.lfs.smudge=cat", "-c", "filter.lfs.required=false")
    git(f"--git-dir={git_dir}", f"--work-tree={into}", *quiet_lfs, "read-tree", commit, env=env)
    git(f"--git-dir={git_dir}", f"--work-tree={into}", *quiet_lfs, "checkout-index", "--all", "--force", env=env)


def export_tree(clone: Path, repo: str, commit: str) -> tuple[Path, str]:
    """(directory, full commit) of ``repo``'s tree at ``commit``, exported once into the cache.
    :class:`GitError` when the commit is not in the clone."""
    owner_name = repo.replace("/", "__")
    if len(commit) == 40:
        done = cache_root() / "trees" / owner_name / commit
        if done.is_dir():
            return done, commit
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=root))
    try:
        if clone.suffix == ".bundle":
            git_dir = scratch / "bundle.git"
            git("clone", "--bare", "--quiet", str(clone), str(git_dir))
        else:
            git_dir = _git_dir(clone)
        try:
            full = git(f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
        except GitError:
            raise GitError(f"commit {commit} is not in {clone}") from None
        target = cache_root() / "trees" / owner_name / full
        if target.is_dir():
            return target, full
        tree = scratch / "tree"
        tree.mkdir()
        _extract(git_dir, full, tree, scratch)
        _publish(tree, target)
        return target, full
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def patch_paths(patch: str) -> list[str]:
    """The paths a unified diff touches (old and new names), as written after ``a/`` and ``b/``."""
    found: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            match = _PATCH_PATH.match(line)
            if match and match.group(1) != "/dev/null":
                found.append(match.group(1))
        elif line.startswith(("rename from ", "rename to ", "copy to ")):
            found.append(line.split(" ", 2)[2].strip())
    return list(dict.fromkeys(p for p in found if p))


def apply_patch(patch: str, tree: Path) -> None:
    """``git apply`` ``patch`` in ``tree`` (a plain directory of the harness's cache)."""
    git("apply", "--whitespace=nowarn", "-", cwd=tree, env={"GIT_CEILING_DIRECTORIES": str(tree.parent)},
        input_text=patch)


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
            _publish(scratch, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    state = json.loads(state_file.read_text())
    return target, list(state["deleted"]), state["problem"]


def _title(statement: str) -> str:
    first = next((line.strip().lstrip("#").strip() for line in statement.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 3].rstrip() + "..."


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
        title=_title(instance.problem_statement),
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
