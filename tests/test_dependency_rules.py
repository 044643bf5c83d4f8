"""The rules of dependency of docs/architecture.md, checked on every import statement
(including imports inside functions) of harness/ and worker/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> every module it imports (absolute names; relative imports resolved)."""
    found: dict[str, set[str]] = {}
    for package in ("harness", "worker"):
        for path in (ROOT / package).rglob("*.py"):
            name = _module(path)
            names: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        anchor = name.split(".")[: -node.level] if path.name != "__init__.py" else name.split(".")[
                            : len(name.split(".")) - node.level + 1]
                        base = ".".join([*anchor, base] if base else anchor)
                    names.add(base)
                    names.update(f"{base}.{alias.name}" for alias in node.names)
            found[name] = names
    return found


IMPORTS = _imports()


def _importers(prefix: str) -> set[str]:
    return {m for m, names in IMPORTS.items() if any(n == prefix or n.startswith(prefix + ".") for n in names)}


def test_the_rules_are_checked_on_the_real_tree():
    assert "harness.runner" in IMPORTS and "worker.store" in IMPORTS and len(IMPORTS) > 60


def test_the_library_never_imports_the_cli():
    assert {m for m in _importers("harness.cli") if not m.startswith("harness.cli")} == set()


def test_worker_never_imports_harness_tests_or_benchmarks():
    for prefix in ("harness", "tests", "benchmarks"):
        assert {m for m in _importers(prefix) if m.startswith("worker")} == set(), prefix


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_model_sdks_are_imported_only_by_their_provider(sdk):
    assert _importers(sdk) == {f"harness.providers.{sdk}_provider"}


def test_only_the_cli_talks_to_the_terminal():
    for lib in ("click", "rich"):
        assert {m for m in _importers(lib) if not m.startswith("harness.cli")} == set(), lib


def test_the_runner_is_imported_only_by_the_run_command_the_fleet_and_bench_check_and_the_plan_not_at_all():
    assert _importers("harness.runner") == {"harness.cli.run_cmd", "harness.fleet.execute", "harness.scaffold"}
    assert not any(n.startswith("harness.runner") for n in IMPORTS["harness.plan"])


def test_agents_and_tools_never_see_scenarios_grading_or_results():
    forbidden = ("harness.scenarios", "harness.evaluators", "harness.grading", "harness.results", "harness.runner")
    for module, names in IMPORTS.items():
        if module.startswith(("harness.agents", "harness.tools")):
            assert not [n for n in names if n.startswith(forbidden)], module


def test_processes_start_only_in_the_sandbox_and_five_named_modules():
    starters = _importers("subprocess") | _importers("os.system") | _importers("os.posix_spawn")
    assert {m for m in starters if not m.startswith("harness.sandbox")} == {
        "harness.local_model", "harness.doctor", "harness.fleet.processes",
        "harness.agents.installed.tools",  # npm or pip installing an agent CLI, never in a run
        "harness.data.egress.zebench_egress",  # the forwarder: runs inside the sandbox and starts the agent there
        "harness.tasks.swe",  # git reading a local clone or bundle, and applying patches in the harness's cache
    }


def test_worker_analysis_imports_only_the_standard_library_and_itself():
    """worker/analysis/ runs in the CLI and in the Cloudflare Python Worker (Pyodide): the
    standard library and other worker.analysis modules only."""
    import sys

    own = {m for m in IMPORTS if m == "worker.analysis" or m.startswith("worker.analysis.")}
    assert "worker.analysis.stats" in own
    for module in own:
        outside = {n for n in IMPORTS[module]
                   if not (n == "worker.analysis" or n.startswith("worker.analysis.")
                           or n.split(".")[0] in sys.stdlib_module_names)}
        assert outside == set(), module
