"""The test suite's own layout: what tests share lives in ``tests/support/`` (``tests/`` itself
holds only test modules and ``conftest.py``), no test module imports another test module, and
nothing reaches for a module by changing ``sys.path`` (pytest's ``pythonpath`` setting puts
``tests/`` and the repository root there). Checked on the syntax trees of the files, including the Python that
tests write into strings for the processes they start."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SAMPLES = TESTS / "data" / "layout"  # sources the check is tried on

# Python held in a string, as a test hands it to a child process.
_STRING_IMPORT = re.compile(r"^\s*(?:from\s+(?:tests\.)?test_\w+\s+import|import\s+(?:tests\.)?test_\w+)", re.M)
_STRING_PATH = re.compile(r"\bsys\.path\.(?:insert|append)\s*\(")


def _is_test_module(name: str) -> bool:
    first = name.split(".")[0]
    return first.startswith("test_") or first == "tests" or first == "conftest"


def layout_problems(source: str, filename: str) -> list[str]:
    """Each import of a test module (``test_*``, ``tests.*``, ``conftest``) and each change of
    ``sys.path`` in ``source``, as ``file:line: what``, in the order of the lines."""
    problems = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            problems += [f"{where}: imports {a.name}" for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _is_test_module(node.module):
            problems.append(f"{where}: imports from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("insert", "append", "extend") and ast.unparse(node.func.value) == "sys.path":
            problems.append(f"{where}: calls sys.path.{node.func.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _STRING_IMPORT.search(node.value):
                problems.append(f"{where}: a string of Python imports a test module")
            if _STRING_PATH.search(node.value):
                problems.append(f"{where}: a string of Python changes sys.path")
    return sorted(problems, key=lambda p: int(p.split(":")[1]))


def _suite_files() -> list[Path]:
    return sorted([*TESTS.glob("*.py"), *(TESTS / "support").glob("*.py")])


def test_no_test_file_imports_a_test_module_or_changes_sys_path():
    files = _suite_files()
    assert TESTS / "test_test_layout.py" in files and TESTS / "support" / "__init__.py" in files
    problems = [p for f in files for p in layout_problems(f.read_text("utf-8"), str(f.relative_to(TESTS)))]
    assert problems == []


def test_what_tests_share_lives_in_support_only():
    beside = sorted(p.name for p in TESTS.glob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py")
    assert beside == [], f"move {', '.join(beside)} to tests/support/"


def test_the_layout_check_finds_each_kind_of_problem():
    found = layout_problems((SAMPLES / "violations.py").read_text("utf-8"), "violations.py")
    assert found == [
        "violations.py:3: imports test_worker_core",
        "violations.py:4: imports from test_dataset_run",
        "violations.py:5: imports from tests.support.worker",
        "violations.py:6: imports conftest",
        "violations.py:7: calls sys.path.insert",
        "violations.py:8: calls sys.path.append",
        "violations.py:9: a string of Python imports a test module",
        "violations.py:9: a string of Python changes sys.path",
    ]


def test_the_layout_check_lets_shared_helpers_and_the_package_through():
    assert layout_problems((SAMPLES / "allowed.py").read_text("utf-8"), "allowed.py") == []
