"""The grading copy: what evaluators run on, so that the agent cannot steer its own score.

After the agent's sandbox is closed (every process it started is gone, no tool call is
accepted), grading works on a *copy* of the agent's final workspace, in a fresh sandbox:

1. The copy (:func:`prepare_grading`) leaves out build output and dependency folders (the
   validation commands recreate them) and every symlink that points outside the workspace,
   and is written only by the harness, never through a link the agent planted.
2. Protected files are restored from the fixture and protected files the agent added are
   removed. The defaults (:data:`DEFAULT_PROTECT`) close the known ways to steer a test run
   from the workspace: ``conftest.py`` anywhere, pytest's ini files, ``sitecustomize.py`` /
   ``usercustomize.py``, ``.pth`` files and package metadata (plugin entry points), modules
   that shadow the test runner (``pytest.py``, ``_pytest/``), and the configuration and setup
   files of Node test runners and package managers (``.npmrc`` can inject ``--require``). A
   scenario adds globs with ``grading.protect`` and exempts defaults with ``grading.allow``.
   Added top-level modules named like a standard-library module are removed too.
3. pytest reads its settings from a copy of the *fixture's* configuration file (``-c``; it
   sits at the copy's root as ``.zebench-pytest.<ext>``, so relative paths in it keep their
   meaning, and is mounted read-only), so settings the agent wrote into ``pyproject.toml``,
   ``setup.cfg``, ``tox.ini`` or ``pytest.ini`` do not apply to grading.
4. Before every test command the protected files are restored again: an earlier grading
   command (an install step) runs the agent's code, which could plant a ``conftest.py``.
5. Test commands write JUnit reports into a directory outside the workspace
   (:mod:`harness.grading.evaluators.test_reports`); counts come from there.

What this cannot do: code the agent wrote runs inside the test process when the tests
import it, and code in a process can tamper with that process. The diff and the judge are
where such a change shows.
"""

from __future__ import annotations

import configparser
import functools
import os
import pkgutil
import shlex
import shutil
import site
import stat
import sys
import sysconfig
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from harness._util.globs import matches_any, walk_files
from harness._util.ownership import owned
from harness._util.trees import remove_tree, same_content, valid_utf8, walk
from harness.scenarios.workspace import ALWAYS_EXCLUDED, CopyReport, copy_tree, real_directory

if TYPE_CHECKING:
    from harness.agents.base import AgentResult
    from harness.sandbox import Sandbox
    from harness.scenarios.model import Scenario
    from harness.scenarios.workspace import WorkspaceDiff

PYTHON_PROTECT = (
    "**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/tox.ini",
    "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
    "**/*.dist-info/**", "**/*.egg-info/**", "**/__editable__*",
    "pytest.py", "pytest/**", "_pytest/**", "py.py", "pluggy.py", "pluggy/**", "iniconfig/**",
)
NODE_PROTECT = (
    "**/.npmrc", "**/.yarnrc", "**/.yarnrc.yml", "**/.pnpmfile.cjs",
    "**/.mocharc*", "**/jest.config.*", "**/jest.setup.*", "**/vitest.config.*", "**/vitest.setup.*",
    "**/vitest.workspace.*", "**/.babelrc*", "**/babel.config.*",
)
DEFAULT_PROTECT = PYTHON_PROTECT + NODE_PROTECT

REPORTS_INNER = "/zebench/reports"  # where the reports directory appears inside a bwrap sandbox
GUARD_DIR = Path(__file__).resolve().parents[1] / "data" / "pytest_guard"  # zebench_guard.py, and nothing else
GUARD_INNER = "/zebench/pytest-guard"
PYTEST_CONFIG = ".zebench-pytest"  # the fixture's pytest configuration in the grading copy
_PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


# The visible tests as the fixture has them: restored before grading (edited, gutted or deleted
# ones come back), while test files the agent added are kept.
TEST_FILES = (
    "**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**", "**/__tests__/**",
    "**/*.test.js", "**/*.test.mjs", "**/*.test.cjs", "**/*.test.ts", "**/*.spec.js", "**/*.spec.mjs",
    "**/*.spec.cjs", "**/*.spec.ts",
)
_TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__"})
_MODULE_SUFFIXES = ("py", "pyc", "pyo", "so", "pyd")


def _allowed(scenario: "Scenario") -> list[str]:
    return [str(g) for g in (scenario.raw.get("grading") or {}).get("allow") or []]


def protect_globs(scenario: "Scenario") -> list[str]:
    """The defaults minus ``grading.allow``, plus ``grading.protect``."""
    allow = _allowed(scenario)
    chosen = [g for g in DEFAULT_PROTECT if g not in allow]
    return chosen + [str(g) for g in (scenario.raw.get("grading") or {}).get("protect") or [] if str(g) not in chosen]


def restore_globs(scenario: "Scenario") -> list[str]:
    """The fixture's test files to restore (:data:`TEST_FILES`) minus ``grading.allow``."""
    allow = _allowed(scenario)
    return [g for g in TEST_FILES if g not in allow]


@functools.lru_cache(maxsize=1)
def installed_modules() -> frozenset[str]:
    """Top-level names the harness's Python imports from its standard library and its
    site-packages: the test process runs that same Python, so a module of the workspace with
    one of these names would be imported instead of the real one."""
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    paths = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    names.update(m.name for m in pkgutil.iter_modules([p for p in dict.fromkeys(paths) if os.path.isdir(p)]))
    return frozenset(names)


def _shadows_installed(rel: str, present: set[str]) -> bool:
    """An added module or package that would be imported instead of an installed one: in a
    directory that is not a package (the root, a tests folder: both end up on ``sys.path``),
    named like a top-level module of the standard library or site-packages."""
    parts = rel.split("/")
    if parts[-1] == "__init__.py" and len(parts) >= 2:
        name, where = parts[-2], parts[:-2]
    elif parts[-1].rsplit(".", 1)[-1].lower() in _MODULE_SUFFIXES:
        name, where = parts[-1].split(".", 1)[0], parts[:-1]
    else:
        return False
    if "/".join([*where, "__init__.py"]) in present:
        return False  # a module inside a package is imported by its dotted name only
    return name in installed_modules()


def _test_package_marker(rel: str, present: set[str]) -> bool:
    """An ``__init__.py`` in a tests folder (named so, or holding test files): added by the
    agent, it is code pytest imports before any test."""
    parts = rel.split("/")
    if parts[-1] != "__init__.py" or len(parts) < 2:
        return False
    folder = "/".join(parts[:-1])
    if parts[-2].lower() in _TEST_DIRS:
        return True
    prefix = folder + "/"
    return any(p.startswith(prefix) and "/" not in p[len(prefix):]
               and (p.rsplit("/", 1)[-1].startswith("test_") or p.endswith("_test.py")) for p in present)


@dataclass
class Protection:
    """What protecting a grading copy changed."""

    restored: list[str] = field(default_factory=list)  # put back to the original version
    removed: list[str] = field(default_factory=list)  # added by the agent (or its code), taken out

    def to_dict(self) -> dict[str, Any]:
        return {"restored": self.restored[:200], "removed": self.removed[:200]}

    def merge(self, other: "Protection") -> None:
        self.restored += [r for r in other.restored if r not in self.restored]
        self.removed += [r for r in other.removed if r not in self.removed]


Source = tuple[Path, tuple[str, ...]]  # a tree of original files, and globs left out of it


def _matches(rel: str, globs: list[str]) -> bool:
    """Case-insensitive: ``EVIL.DIST-INFO`` is found on a case-sensitive disk all the same."""
    return matches_any(rel.lower(), [g.lower() for g in globs])


def protect(copy: Path, sources: list[Source], globs: list[str], keep: tuple[str, ...] = (),
            restore: list[str] | tuple[str, ...] = ()) -> Protection:
    """Restore the files matching ``globs`` or ``restore`` from the original trees ``sources``
    (later ones win); remove the files matching ``globs`` that none of them has, and the added
    modules that shadow installed ones (:func:`_shadows_installed`) or turn a tests folder
    into a package (:func:`_test_package_marker`). ``keep`` names files never touched."""
    result = Protection()
    originals: dict[str, Path] = {}
    for root, exclude in sources:
        for rel in walk_files(root, ALWAYS_EXCLUDED, exclude, anywhere=True):
            originals[rel] = root / rel
    present = set(walk_files(copy, ALWAYS_EXCLUDED))
    for rel in sorted(present - set(originals) - set(keep)):
        if _matches(rel, globs) or _shadows_installed(rel, present) or _test_package_marker(rel, present):
            remove_tree(copy / rel)
            result.removed.append(valid_utf8(rel))
    if result.removed:
        _prune_empty_dirs(copy, [root for root, _ in sources])
    wanted = [*globs, *restore]
    for rel, source in sorted(originals.items()):
        if not _matches(rel, wanted) or source.is_symlink() or not source.is_file():
            continue
        target = copy / rel
        if rel in present and same_content(target, source):
            continue
        real_directory(copy, rel.rpartition("/")[0])
        remove_tree(target)
        shutil.copyfile(source, target)
        result.restored.append(rel)
    return result


def drop_unsafe_entries(root: Path) -> list[str]:
    """Remove, under ``root``, links that are absolute or resolve outside it, and entries that
    are neither regular files, directories nor links. Returns their relative paths."""
    removed: list[str] = []
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                target = os.readlink(path)
                resolved = os.path.realpath(path)
                unsafe = os.path.isabs(target) or not (resolved == real_root
                                                       or resolved.startswith(real_root + os.sep))
            else:
                unsafe = not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
            if unsafe:
                remove_tree(path)
                removed.append(valid_utf8(os.path.relpath(path, root).replace(os.sep, "/")))
        dirnames[:] = [d for d in dirnames if os.path.isdir(os.path.join(dirpath, d))
                       and not os.path.islink(os.path.join(dirpath, d))]
    return removed


def _prune_empty_dirs(copy: Path, roots: list[Path]) -> None:
    """Remove directories left empty by :func:`protect` that no original tree has (an empty
    ``pytest/`` would still shadow pytest as a namespace package)."""
    for dirpath, dirnames, filenames in walk(copy, topdown=False):
        path = Path(dirpath)
        if path == copy or filenames or any((path / d).exists() for d in dirnames):
            continue
        rel = path.relative_to(copy)
        if not any((root / rel).is_dir() for root in roots):
            try:
                path.rmdir()
            except OSError:
                pass


def _pytest_config(fixture: Path | None) -> Path | None:
    """The fixture's pytest configuration file, found as pytest finds it in the rootdir."""
    if fixture is None:
        return None
    for name in _PYTEST_CONFIGS:
        path = fixture / name
        if not path.is_file():
            continue
        if name in ("pytest.ini", ".pytest.ini"):
            return path
        try:
            if name == "pyproject.toml":
                if "ini_options" in (tomllib.loads(path.read_text("utf-8")).get("tool", {}).get("pytest") or {}):
                    return path
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(path.read_text("utf-8"))
        except (ValueError, OSError, configparser.Error):
            continue
        if parser.has_section("pytest" if name == "tox.ini" else "tool:pytest"):
            return path
    return None


@dataclass
class GradingCopy:
    """A grading copy of an agent's workspace, with its reports directory."""

    path: Path
    reports: Path  # outside the workspace; mounted read-write into the grading sandbox
    pytest_config: Path  # the fixture's pytest configuration, at the copy's root under a harness name
    copy: CopyReport
    protection: Protection
    sources: list[Source]  # the original trees: the fixture, then hidden tests once laid over
    globs: list[str]
    restore: list[str]  # the fixture's test files, restored but not exclusive
    pytest_plugins: list[str] = field(default_factory=list)  # grading.pytest_plugins: loaded with -p
    # Hands what the harness writes into the copy to the uid grading commands run as.
    adopt: Callable[[Path], None] = field(default=lambda path: None, repr=False)

    dropped: list[str] = field(default_factory=list)  # what sanitize() took out after commands

    def summary(self) -> dict[str, Any]:
        data = {**self.protection.to_dict(), "droppedLinks": self.copy.skipped_links[:200]}
        if self.dropped:
            data["droppedAfterCommands"] = self.dropped[:200]
        return data

    def sanitize(self) -> list[str]:
        """After a grading command (which ran the agent's code): remove every link that leads
        out of the copy and everything that is not a regular file, directory or link (FIFOs,
        sockets, devices), so that no later check follows them to the host or waits on them.
        Returns the relative paths removed."""
        removed = drop_unsafe_entries(self.path)
        self.dropped += [r for r in removed if r not in self.dropped]
        return removed

    def remove(self) -> None:
        remove_tree(self.path)
        remove_tree(self.reports)

    def protect(self) -> Protection:
        """Restore protected files again: a grading command before this one (an install step
        runs the agent's code) may have planted or changed some."""
        result = protect(self.path, self.sources, self.globs, keep=(self.pytest_config.name,), restore=self.restore)
        self.protection.merge(result)
        for rel in result.restored:
            self.adopt(self.path / rel.split("/", 1)[0])
        return result

    def lay_over(self, tree: Path) -> CopyReport:
        """Lay ``tree`` (the hidden tests) over the copy; its files count as originals from now on."""
        from harness.scenarios.workspace import overlay

        copied = overlay(tree, self.path)
        self.sources.append((tree, ()))
        for top in os.listdir(tree):
            self.adopt(self.path / top)
        return copied

    # -- the environment of grading commands -----------------------------------------------
    def command_env(self, sandbox: "Sandbox") -> dict[str, str]:
        """For every grading command: pytest reads the fixture's configuration."""
        config = sandbox.inner_path(self.pytest_config)
        return {"PYTEST_ADDOPTS": f"-c {shlex.quote(config)} --rootdir={shlex.quote(sandbox.inner_workspace)}"}

    def prepare_test(self, sandbox: "Sandbox", label: str, runner: str | None = None) -> tuple[dict[str, str], list[Path]]:
        """Before a test command: protected files restored again, reports requested from pytest
        and node; for pytest (``runner``), the workspace is not first on the import path and no
        plugin is loaded from it. Returns the command's environment and where the reports land."""
        self.protect()
        pytest_report = self.reports / f"{label}-pytest.xml"
        node_report = self.reports / f"{label}-node.xml"
        for stale in (pytest_report, node_report):
            stale.unlink(missing_ok=True)
        env = self.command_env(sandbox)
        if runner == "pytest":
            # Modules of the workspace never stand in for pytest, its plugins or the standard
            # library: the workspace goes last on sys.path (zebench_guard), and no plugin is
            # loaded but those the scenario names (grading.pytest_plugins), whatever
            # distribution on the path offers one.
            env["PYTHONSAFEPATH"] = "1"
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            env["PYTHONPATH"] = sandbox.inner_path(GUARD_DIR)
            plugins = ["zebench_guard", *self.pytest_plugins]
            env["PYTEST_ADDOPTS"] += "".join(f" -p {shlex.quote(p)}" for p in plugins)
        env["PYTEST_ADDOPTS"] += f" --junitxml={shlex.quote(sandbox.inner_path(pytest_report))}"
        env["NODE_OPTIONS"] = ("--test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit "
                               f"--test-reporter-destination={_node_quote(sandbox.inner_path(node_report))}")
        return env, [pytest_report, node_report]


def _node_quote(path: str) -> str:
    return f'"{path}"' if any(c.isspace() for c in path) else path


def _write_pytest_config(fixture: Path | None, copy: Path) -> Path:
    """Copy the fixture's pytest configuration to the copy's root as :data:`PYTEST_CONFIG`
    (with the original's suffix, which tells pytest how to read it). At the root, so relative
    paths in it (``pythonpath``) mean what they meant in the fixture."""
    source = _pytest_config(fixture)
    if source is None:
        target = copy / f"{PYTEST_CONFIG}.ini"
        target.write_text("[pytest]\n")
        return target
    suffix = source.suffix or ".ini"
    target = copy / f"{PYTEST_CONFIG}{suffix}"
    text = source.read_text("utf-8")
    if source.name in ("pytest.ini", ".pytest.ini") and "[pytest]" not in text:
        text = "[pytest]\n" + text  # only files named pytest.ini may omit the section
    target.write_text(text, "utf-8")
    return target


def prepare_grading(scenario: "Scenario", agent_workspace: Path, root: Path) -> GradingCopy:
    """Copy ``agent_workspace`` to a new directory under ``root``, protect it, write the pytest
    configuration, make the reports directory. The caller removes it (:meth:`GradingCopy.remove`)."""
    root.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=owned(f"{scenario.suite}-{scenario.name}-grading-"), dir=root))
    reports = Path(tempfile.mkdtemp(prefix=owned("zebench-reports-")))
    try:
        copied = copy_tree(agent_workspace, path)
        sources: list[Source] = []
        if scenario.fixture_dir is not None:
            sources.append((scenario.fixture_dir, tuple(scenario.workspace_exclude)))
        globs = protect_globs(scenario)
        for stale in path.glob(f"{PYTEST_CONFIG}.*"):
            stale.unlink()
        config = _write_pytest_config(scenario.fixture_dir, path)
        restore = restore_globs(scenario)
        grading = scenario.raw.get("grading") or {}
        protection = protect(path, sources, globs, keep=(config.name,), restore=restore)
    except BaseException:
        remove_tree(path)
        remove_tree(reports)
        raise
    os.chmod(reports, 0o700)
    return GradingCopy(path=path.resolve(), reports=reports.resolve(), pytest_config=config.resolve(),
                       copy=copied, protection=protection, sources=sources, globs=globs,
                       restore=restore, pytest_plugins=[str(p) for p in grading.get("pytest_plugins") or []])


class GradingSession:
    """A grading copy of ``agent_workspace`` and a fresh sandbox of ``kind`` on it (a container
    backend: a fresh container of ``image``, None for the host-runtime image), with the
    :class:`~harness.grading.evaluators.base.EvaluationContext` the evaluators get. Use it as a context
    manager: leaving it closes the sandbox and removes the copy and its reports."""

    def __init__(self, scenario: "Scenario", agent_workspace: Path, kind: str, root: Path | None = None, *,
                 prompt: str = "", agent_result: "AgentResult | None" = None, diff: "WorkspaceDiff | None" = None,
                 use_cache: bool = True, judge: Any = None, image: Any = None) -> None:
        from harness.grading.evaluators.base import EvaluationContext
        from harness.grading.evaluators.heuristic_checks import script_mounts
        from harness.sandbox import Mount, SandboxSpec, open_sandbox
        from harness._util.places import default_workspaces_root

        self.copy = prepare_grading(scenario, agent_workspace, Path(root or default_workspaces_root()))
        try:
            # The pytest configuration is read-only inside the sandbox, though it sits in the copy.
            spec = SandboxSpec(kind=kind, network=scenario.sandbox_network, limits=scenario.limits(),
                               mounts=(Mount(self.copy.reports, REPORTS_INNER, writable=True),
                                       Mount(self.copy.pytest_config), Mount(GUARD_DIR, GUARD_INNER),
                                       *script_mounts(scenario)))
            self.sandbox = open_sandbox(self.copy.path, spec, image)
            self.copy.adopt = self.sandbox.adopt
            self.sandbox.adopt(self.copy.reports)
        except BaseException:
            self.copy.remove()
            raise
        self.context: EvaluationContext = EvaluationContext(
            scenario=scenario, workspace=self.copy.path, prompt=prompt, agent_result=agent_result,
            sandbox=self.sandbox, grading=self.copy, diff=diff, use_cache=use_cache, judge=judge)

    def close(self) -> None:
        self.sandbox.close()
        self.copy.remove()

    def __enter__(self) -> "GradingSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
