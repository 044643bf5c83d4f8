"""Canary tests: generated tests planted in every hidden-test run, to catch a forged report.

The code under test runs inside the test process, and code in a process can rewrite what
that process reports (patch pytest's report class, rewrite the JUnit file at exit, end the
process with status 0). Every hidden-test run therefore gets *canaries*: tests made for this
run alone, appended to each hidden test file of the grading copy, named from the words of
that file's own test names, half of which must pass and half must fail whatever the agent
did (they test arithmetic and sorting, never the agent's code).

:meth:`CanarySet.check` reads the run's test cases and returns the real ones, plus the
evidence of tampering: a must-fail canary that passed, a must-pass canary that did not, a
canary missing while tests of its file were reported, or (pytest) a test of the hidden files
missing while its file was reported. Any evidence marks the run ``failed`` with failure class
``tampered``.

What a canary cannot catch: a forger that reads the test files at run time can tell canaries
from real tests by their bodies (they never import the project) and flip only the real ones.
Canaries catch the blanket forgeries (every report passed, every failure dropped, the report
rewritten wholesale); the suspicious-change flags (:mod:`harness.grading.evaluators.suspicious`) and
the diff show the rest to a reviewer.
"""

from __future__ import annotations

import ast
import json
import random
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from harness.grading.evaluators.test_reports import CaseResult
from harness._util.globs import walk_files

_PY_TEST = re.compile(r"^(test_.*|.*_test)\.py$")
_NODE_TEST = re.compile(r".*test.*\.(m|c)?js$", re.IGNORECASE)
_PY_NAME = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)
_NODE_TITLE = re.compile(r"\b(?:test|it)\s*\(\s*(['\"`])(.+?)\1")
_SELECTION = re.compile(r"(\s-k\b|\s-m\b|--deselect|::|\s--lf\b|\s--last-failed\b|\s-x\b|--exitfirst|--maxfail)")
_SPARE_WORDS = ("value", "items", "result", "empty", "limit", "order", "case", "input", "output", "range", "count",
                "first", "last", "next", "total", "size", "default", "edge", "single", "many", "keeps", "returns")


@dataclass(frozen=True)
class Canary:
    """One planted test: the file it is in, its name, what it must do."""

    file: str  # relative to the grading copy
    name: str  # pytest: the function's name; node: the test's title
    must_pass: bool
    classname: str  # pytest's JUnit classname for the file ("tests.test_x"); "" for node


@dataclass
class CanarySet:
    """The canaries of one run, and the real tests of the hidden files (pytest)."""

    runner: str
    canaries: list[Canary] = field(default_factory=list)
    real_tests: dict[str, list[str]] = field(default_factory=dict)  # classname -> test names found in the source
    selects: bool = False  # the command selects tests (-k, ::, ...): a missing real test proves nothing

    def check(self, cases: list[CaseResult]) -> tuple[list[CaseResult], list[str]]:
        """(the real cases, evidence of tampering) from the cases a report holds."""
        names = {c.name for c in self.canaries}
        planted = [c for c in cases if c.name in names and self._of_file(c, self._classname_of(c.name))]
        real = [c for c in cases if c not in planted]
        evidence: list[str] = []
        for canary in self.canaries:
            seen = [c for c in planted if c.name == canary.name]
            of_file = [c for c in real if self._of_file(c, canary.classname)]
            if not seen:
                if self._did_not_load(real, canary.file):
                    continue  # the whole file failed (e.g. an import the code lacks): its tests never ran
                if of_file:
                    evidence.append(f"canary {canary.name!r} ({canary.file}) is missing from the report, "
                                    "though tests of its file are there")
                continue
            outcome = seen[0].outcome
            if outcome == "skipped":
                if any(c.outcome != "skipped" for c in of_file):
                    evidence.append(f"canary {canary.name!r} ({canary.file}) was reported skipped, "
                                    "though tests of its file ran")
            elif canary.must_pass and outcome != "passed":
                evidence.append(f"canary {canary.name!r} ({canary.file}), which must pass, was reported {outcome}")
            elif not canary.must_pass and outcome == "passed":
                evidence.append(f"canary {canary.name!r} ({canary.file}), which must fail, was reported passed")
        if self.runner == "pytest" and not self.selects:
            for classname, tests in self.real_tests.items():
                reported = [c for c in real if self._of_file(c, classname)]
                if not reported:
                    continue  # the file was not collected (a collection error is its own verdict)
                for test in tests:
                    if not any(c.name == test or c.name.startswith(test + "[") for c in reported):
                        evidence.append(f"hidden test {classname}::{test} is missing from the report")
        return real, evidence

    def _did_not_load(self, real: list[CaseResult], file: str) -> bool:
        """Whether the report holds the file itself as one failed case, as node's runner
        reports a test file that threw while loading (the case is named by the file's path).
        Reporting it so gains a forger nothing: the hidden tests then fail."""
        if self.runner == "pytest":
            return False
        return any(c.outcome in ("failed", "error") and (c.name == file or c.name.endswith("/" + file))
                   for c in real)

    def _classname_of(self, name: str) -> str:
        return next((c.classname for c in self.canaries if c.name == name), "")

    def _of_file(self, case: CaseResult, classname: str) -> bool:
        if self.runner != "pytest" or not classname:
            return True
        return case.classname == classname or case.classname.startswith(classname + ".")


def _words(names: list[str]) -> list[str]:
    words = [w for n in names for w in re.split(r"[^A-Za-z0-9]+", n.lower()) if w and w != "test" and not w.isdigit()]
    return list(dict.fromkeys(words))


def _name(rng: random.Random, words: list[str], taken: set[str], sep: str, prefix: str) -> str:
    pool = words if len(words) >= 4 else [*words, *_SPARE_WORDS]
    while True:
        chosen = rng.sample(pool, k=min(len(pool), rng.randint(3, 5)))
        name = prefix + sep.join(chosen)
        if name not in taken:
            taken.add(name)
            return name


def _python_body(rng: random.Random, must_pass: bool) -> str:
    a, b = rng.randint(2, 97), rng.randint(2, 97)
    values = rng.sample(range(1, 200), k=rng.randint(3, 6))
    if rng.random() < 0.5:
        expected = a * b if must_pass else a * b + rng.randint(1, 9)
        return f"    assert {a} * {b} == {expected}\n"
    wanted = sorted(values) if must_pass else sorted(values, reverse=True)
    return f"    assert sorted({values}) == {wanted}\n"


def _js_check(rng: random.Random, must_pass: bool, assert_name: str) -> str:
    a, b = rng.randint(2, 97), rng.randint(2, 97)
    expected = a + b if must_pass else a + b + rng.randint(1, 9)
    return f"{assert_name}.equal({a} + {b}, {expected});"


def _classname(rel: str) -> str:
    return rel[:-3].replace("/", ".") if rel.endswith(".py") else rel


def _is_esm(copy: Path, rel: str) -> bool:
    if rel.endswith(".mjs"):
        return True
    if rel.endswith(".cjs"):
        return False
    folder = (copy / rel).parent
    while True:
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                return json.loads(manifest.read_text("utf-8")).get("type") == "module"
            except (OSError, ValueError, AttributeError):
                return False
        if folder == copy or folder == folder.parent:
            return False
        folder = folder.parent


#: CPython 3.11's AST constructor keeps its recursion count in state threads share: two
#: ``ast.parse`` at once (runs graded in parallel) can fail with "SystemError: AST constructor
#: recursion depth mismatch". One parse at a time.
_PARSE_LOCK = threading.Lock()


def _real_python_tests(source: str) -> list[str] | None:
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names += [n.name for n in node.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]
    return list(dict.fromkeys(names))


def plant(copy: Path, hidden_tests: Path, runner: str | None, command: str,
          rng: random.Random | None = None) -> CanarySet | None:
    """Append canaries to each hidden test file of ``runner``'s kind in ``copy`` (one that must
    pass and one that must fail per file). None when the runner is not one the harness reads
    reports of, or the hidden tests hold no test file of its kind."""
    if runner not in ("pytest", "node"):
        return None
    rng = rng or random.SystemRandom()
    # Options after the runner's name (``python3 -m pytest -k x``: the ``-m`` before is Python's).
    options = command.split("pytest", 1)[1] if runner == "pytest" and "pytest" in command else command
    result = CanarySet(runner, selects=bool(_SELECTION.search(" " + options)))
    pattern = _PY_TEST if runner == "pytest" else _NODE_TEST
    files = [rel for rel in walk_files(hidden_tests) if pattern.match(rel.rsplit("/", 1)[-1])]
    for rel in files:
        target = copy / rel
        try:
            source = target.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if runner == "pytest":
            existing = _PY_NAME.findall(source)
            real = _real_python_tests(source)
            if real is None:
                continue  # a file pytest cannot import: its own error, canaries would add nothing
            result.real_tests[_classname(rel)] = real
            taken = set(existing)
            code = ["\n\n"]
            for must_pass in rng.sample([True, False], k=2):
                name = _name(rng, _words(existing), taken, "_", "test_")
                code.append(f"def {name}():\n{_python_body(rng, must_pass)}\n\n")
                result.canaries.append(Canary(rel, name, must_pass, _classname(rel)))
        else:
            titles = [m.group(2) for m in _NODE_TITLE.finditer(source)]
            taken = set(titles)
            tag = f"{rng.getrandbits(32):08x}"
            test_fn, assert_mod = f"t{tag}", f"a{tag}"
            calls = []
            for must_pass in rng.sample([True, False], k=2):
                title = _name(rng, _words(titles), taken, " ", "")
                calls.append(f"{test_fn}({json.dumps(title)}, () => {{ {_js_check(rng, must_pass, assert_mod)} }});")
                result.canaries.append(Canary(rel, title, must_pass, ""))
            if _is_esm(copy, rel):
                code = ["\n", f'import {{ test as {test_fn} }} from "node:test";\n',
                        f'import {assert_mod} from "node:assert/strict";\n', *(c + "\n" for c in calls)]
            else:
                code = ["\n{\n", f'  const {{ test: {test_fn} }} = require("node:test");\n',
                        f'  const {assert_mod} = require("node:assert/strict");\n',
                        *("  " + c + "\n" for c in calls), "}\n"]
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("".join(code))
    return result if result.canaries else None
