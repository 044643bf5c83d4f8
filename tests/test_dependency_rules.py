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
    assert "harness.scenarios.runner" in IMPORTS and "worker.store" in IMPORTS and len(IMPORTS) > 60


def test_the_library_never_imports_the_cli():
    assert {m for m in _importers("harness.cli") if not m.startswith("harness.cli")} == set()


def test_worker_never_imports_harness_tests_or_benchmarks():
    for prefix in ("harness", "tests", "benchmarks"):
        assert {m for m in _importers(prefix) if m.startswith("worker")} == set(), prefix


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_model_sdks_are_imported_only_by_their_provider(sdk):
    assert _importers(sdk) == {f"harness.models.providers.{sdk}_provider"}


#: The real spellings of talking to the terminal and of starting a process, looked for in every
#: module's syntax tree (calls, attributes and imports, wherever they are).
TERMINAL_CALLS = {"print", "input", "breakpoint"}
TERMINAL_ATTRIBUTES = {("sys", "stdout"), ("sys", "stderr"), ("sys", "stdin"), ("sys", "__stdout__"),
                       ("sys", "__stderr__"), ("os", "isatty")}
TERMINAL_MODULES = {"click", "rich", "curses", "readline", "getpass", "tty", "termios"}
PROCESS_ATTRIBUTES = {("os", name) for name in (
    "fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe",
    "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle",
    "spawnlp", "spawnlpe")} | {("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell")}
PROCESS_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent.futures.process"}


def _spellings() -> dict[str, tuple[set[str], set[str]]]:
    """module -> (how it talks to the terminal, how it starts processes), from its syntax tree."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for package in ("harness", "worker"):
        for path in (ROOT / package).rglob("*.py"):
            terminal: set[str] = set()
            processes: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TERMINAL_CALLS:
                    terminal.add(f"{node.func.id}()")
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    pair = (node.value.id, node.attr)
                    if pair in TERMINAL_ATTRIBUTES:
                        terminal.add(".".join(pair))
                    if pair in PROCESS_ATTRIBUTES:
                        processes.add(".".join(pair))
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    if isinstance(node, ast.Import):
                        names = [alias.name for alias in node.names]
                    else:
                        base = node.module or ""
                        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
                    for name in names:
                        if name.split(".")[0] in TERMINAL_MODULES:
                            terminal.add(name.split(".")[0])
                        if name in PROCESS_MODULES or name.split(".")[0] in PROCESS_MODULES or name in {
                                f"{a}.{b}" for a, b in PROCESS_ATTRIBUTES}:
                            processes.add(name)
                        if name in {f"{a}.{b}" for a, b in TERMINAL_ATTRIBUTES}:
                            terminal.add(name)
            found[_module(path)] = (terminal, processes)
    return found


SPELLINGS = _spellings()

#: Who may talk to the terminal outside harness/cli/, and why (docs/architecture.md, rule 2).
TERMINAL_EXCEPTIONS = {
    "harness.models.local_model": "run as `python -m harness.models.local_model serve`, writes the server's address to stdout",
    "harness.data.egress.zebench_egress": "a separate program run inside the sandbox, not imported by the harness",
    "worker.cli": "the `worker` command",
    "worker.devserver": "`worker dev`: its access log and the address it serves on",
}

#: Who may start a process outside harness/sandbox/, and why (docs/architecture.md, rule 6).
PROCESS_EXCEPTIONS = {
    "harness.models.local_model": "the llama.cpp server of the `local` agent",
    "harness.doctor": "version probes for `bench doctor`",
    "harness.fleet.processes": "a shallow git clone of a fleet repository; the detached `bench fleet --no-wait`",
    "harness.agents.installed.tools": "npm or pip installing an agent CLI, never in a run",
    "harness.data.egress.zebench_egress": "the forwarder: runs inside the sandbox and starts the agent there",
    "harness.tasks.swe_git": "git reading a local clone or bundle, and applying patches in the harness's cache",
}


def test_the_spellings_are_found_where_they_are_known_to_be():
    """The search finds what it looks for (a test of the test): the CLI prints and the sandbox starts processes."""
    assert "click" in SPELLINGS["harness.cli.bench"][0]
    assert SPELLINGS["harness.sandbox.bwrap"][1] or SPELLINGS["harness.sandbox"][1]
    assert "sys.stdout" in SPELLINGS["harness.models.local_model"][0]


def test_only_the_cli_talks_to_the_terminal():
    talkers = {m: sorted(t) for m, (t, _) in SPELLINGS.items()
               if t and not m.startswith("harness.cli") and m not in TERMINAL_EXCEPTIONS}
    assert talkers == {}


def test_the_runner_is_imported_only_by_the_run_command_the_fleet_and_bench_check_and_the_plan_not_at_all():
    assert _importers("harness.scenarios.runner") == {"harness.cli.run_cmd", "harness.fleet.execute",
                                            "harness.cli.run_execute", "harness.scaffold.check"}
    assert not any(n.startswith("harness.scenarios.runner") for n in IMPORTS["harness.scenarios.plan"])


def test_agents_and_tools_never_see_scenarios_grading_or_results():
    forbidden = ("harness.scenarios.loading", "harness.scenarios.plan", "harness.scenarios.runner", "harness.grading",
                 "harness.results")
    for module, names in IMPORTS.items():
        if module.startswith(("harness.agents", "harness.tools")):
            assert not [n for n in names if n.startswith(forbidden)], module


def test_processes_start_only_in_the_sandbox_and_the_named_modules():
    starters = {m: sorted(p) for m, (_, p) in SPELLINGS.items()
                if p and not m.startswith("harness.sandbox") and m not in PROCESS_EXCEPTIONS}
    assert starters == {}


def test_the_named_exceptions_are_still_needed():
    """An exception whose module no longer talks to the terminal or starts a process is removed."""
    assert [m for m in TERMINAL_EXCEPTIONS if not SPELLINGS.get(m, (set(), set()))[0]] == []
    assert [m for m in PROCESS_EXCEPTIONS if not SPELLINGS.get(m, (set(), set()))[1]] == []


def test_nothing_in_the_product_imports_tests_or_benchmarks():
    for prefix in ("tests", "benchmarks"):
        assert _importers(prefix) == set(), prefix


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


def test_evaluators_and_scoring_know_neither_the_store_the_runner_nor_the_agents():
    """Rule 9: the one exception is ``AgentResult``, imported by evaluators/base.py for type checking only."""
    forbidden = ("harness.results", "harness.scenarios.runner", "harness.grading.copy", "harness.agents", "harness.tools")
    for module, names in IMPORTS.items():
        if module.startswith("harness.grading.evaluators") or module == "harness.grading.scoring":
            found = {n for n in names if n.startswith(forbidden)}
            if module == "harness.grading.evaluators.base":
                found -= {"harness.agents.base", "harness.agents.base.AgentResult"}
            assert found == set(), module
    base = (ROOT / "harness" / "grading" / "evaluators" / "base.py").read_text()
    checking = base[base.index("if TYPE_CHECKING:"):]
    assert "from harness.agents.base import AgentResult" in checking.split("\n\n")[0]


#: The product modules allowed over 600 lines, each named with its reason in docs/architecture.md
#: ("Module size").
LARGE_MODULES = {"harness/scenarios/runner.py", "harness/sandbox/container.py", "worker/analysis/stats.py"}


def test_at_most_three_product_modules_are_over_600_lines_and_they_are_the_named_ones():
    large = {str(path.relative_to(ROOT)) for package in ("harness", "worker") for path in (ROOT / package).rglob("*.py")
             if len(path.read_text().splitlines()) > 600 and path.name != "dashboard_assets.py"}
    assert large <= LARGE_MODULES, sorted(large - LARGE_MODULES)
    assert len(LARGE_MODULES) <= 3
    named = (ROOT / "docs" / "architecture.md").read_text().split("## Module size", 1)[1]
    assert all(f"`{module}`" in named for module in LARGE_MODULES)


def test_the_small_pieces_import_nothing_of_the_harness_but_each_other():
    """harness/_util/ sits under everything: what it imported would be imported by every layer."""
    modules = [m for m in IMPORTS if m.startswith("harness._util")]
    assert "harness._util.trees" in modules and "harness._util.files" in modules
    for module in modules:
        outside = {n for n in IMPORTS[module] if n.startswith("harness") and not n.startswith("harness._util")}
        assert outside == set(), module
