"""Small scenario suites built in a temporary directory for the harness tests."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

# Test commands use this interpreter (it has pytest) with plugin autoload off, which keeps a
# pytest run inside a fixture well under a second.
PYTHON = shlex.quote(sys.executable)
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PYTHON} -m pytest -q -p no:cacheprovider"

DEFAULT_YAML = """\
id: add-one
title: Make add_one add one
timeout_minutes: 5
validation:
  commands:
    test: "{pytest}"
"""

BUGGY = "def add_one(x):\n    return x + 2\n"
FIXED = "def add_one(x):\n    return x + 1\n"
TEST = "from calc import add_one\n\n\ndef test_add_one():\n    assert add_one(1) == 2\n"


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)


def make_scenario(
    suites_dir: Path,
    suite: str = "demo",
    name: str = "add-one",
    yaml_text: str | None = DEFAULT_YAML,
    fixture: dict[str, str | bytes] | None = None,
    prompts: dict[str, str] | None = None,
    solution: dict[str, str | bytes] | None = None,
    hidden: dict[str, str | bytes] | None = None,
    fixture_dir: str = "repo-fixture",
    extra: dict[str, str | bytes] | None = None,
) -> Path:
    """Create ``suites_dir/suite/scenarios/name`` with a Python fixture whose test fails until
    the solution is applied. Returns the scenario directory."""
    scen = suites_dir / suite / "scenarios" / name
    scen.mkdir(parents=True, exist_ok=True)
    if yaml_text is not None:
        text = textwrap.dedent(yaml_text).replace("{pytest}", PYTEST).replace("{python}", PYTHON)
        (scen / "scenario.yaml").write_text(text)
    write_tree(scen / fixture_dir, fixture if fixture is not None else {"calc.py": BUGGY, "test_calc.py": TEST})
    if solution is not False:
        write_tree(scen / "solution", solution if solution is not None else {"calc.py": FIXED})
    if hidden:
        write_tree(scen / "hidden-tests", hidden)
    if extra:
        write_tree(scen, extra)
    prompt_dir = suites_dir / suite / "prompts" / name
    write_tree(prompt_dir, prompts if prompts is not None else {
        "L0-minimal.md": "Fix calc.",
        "L1-basic.md": "add_one(1) should be 2; fix calc.py.",
        "L2-directed.md": "In calc.py, add_one adds 2 instead of 1. Fix it and run pytest.",
    })
    return scen


def use_local_store(monkeypatch, root: Path, suites: Path | None = None) -> None:
    """Point every ``bench``/``mint`` command of a test at a store, spool and workspaces under
    ``root`` (and at ``suites``), run from ``root``, with no worker URL from the environment."""
    monkeypatch.chdir(root)
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(root / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(root / "spool"))
    monkeypatch.setenv("ZE_BENCHMARKS_WORKSPACES_DIR", str(root / "workspaces"))
    if suites is not None:
        monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(suites))


def git_repository(source: Path) -> Path:
    """``source`` (its files already written) made a git repository of one commit."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", *args], cwd=source, check=True, env=env)
    return source
