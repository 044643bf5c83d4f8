"""Canary tests: planted in hidden test files, checked against the report (harness/grading/evaluators/canaries.py)."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.grading.evaluators.canaries import plant
from harness.grading.evaluators.test_reports import CaseResult, parse_cases

PY_TESTS = """\
from mylib import total


def test_total_of_an_empty_list_is_zero():
    assert total([]) == 0


class TestTotals:
    def test_total_adds_every_item(self):
        assert total([1, 2]) == 3
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """(a grading copy, the hidden tests tree) holding ``files``."""
    hidden, copy = tmp_path / "hidden", tmp_path / "copy"
    for root in (hidden, copy):
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    return copy, hidden


def _pytest_report(copy: Path, tmp_path: Path, *args: str) -> list[CaseResult]:
    report = tmp_path / "report.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                    "--rootdir", str(copy), *args], cwd=copy, capture_output=True)
    return parse_cases(report)


def test_pytest_canaries_are_named_like_the_files_tests_and_honest_runs_show_no_evidence(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_totals.py": PY_TESTS, "mylib.py": "def total(xs):\n    return sum(xs)\n"})
    canaries = plant(copy, hidden, "pytest", "python3 -m pytest tests", random.Random(7))
    assert len(canaries.canaries) == 2 and {c.must_pass for c in canaries.canaries} == {True, False}
    words = {"total", "of", "an", "empty", "list", "is", "zero", "adds", "every", "item"}
    for canary in canaries.canaries:
        assert canary.name.startswith("test_") and set(canary.name[5:].split("_")) <= words
        assert canary.classname == "tests.test_totals"
    real, evidence = canaries.check(_pytest_report(copy, tmp_path, "tests"))
    assert evidence == []
    assert sorted(c.name for c in real) == ["test_total_adds_every_item", "test_total_of_an_empty_list_is_zero"]


def test_a_report_forced_to_passed_gives_evidence(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_totals.py": PY_TESTS, "mylib.py": "def total(xs):\n    return 0\n"})
    canaries = plant(copy, hidden, "pytest", "python3 -m pytest", random.Random(1))
    forged = [CaseResult(c.classname, c.name, "passed") for c in _pytest_report(copy, tmp_path, "tests")]
    _, evidence = canaries.check(forged)
    assert len(evidence) == 1 and "must fail, was reported passed" in evidence[0]


def test_a_report_with_made_up_tests_gives_evidence_of_missing_ones(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_totals.py": PY_TESTS})
    canaries = plant(copy, hidden, "pytest", "python3 -m pytest", random.Random(2))
    made_up = [CaseResult("tests.test_totals", f"test_{i}", "passed") for i in range(3)]
    _, evidence = canaries.check(made_up)
    assert sum("canary" in e and "missing" in e for e in evidence) == 2
    assert sum("hidden test" in e for e in evidence) == 2


def test_a_file_that_failed_to_collect_or_was_skipped_whole_is_no_evidence(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_totals.py": PY_TESTS})
    canaries = plant(copy, hidden, "pytest", "python3 -m pytest", random.Random(3))
    collection_error = [CaseResult("", "tests.test_totals", "error")]
    assert canaries.check(collection_error)[1] == []
    all_skipped = [CaseResult("tests.test_totals", c.name, "skipped") for c in canaries.canaries]
    all_skipped += [CaseResult("tests.test_totals.TestTotals", "test_total_adds_every_item", "skipped"),
                    CaseResult("tests.test_totals", "test_total_of_an_empty_list_is_zero", "skipped")]
    assert canaries.check(all_skipped)[1] == []


def test_a_command_selecting_tests_does_not_count_unselected_ones_missing(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_totals.py": PY_TESTS})
    canaries = plant(copy, hidden, "pytest", "python3 -m pytest -k empty", random.Random(4))
    reported = [CaseResult("tests.test_totals", "test_total_of_an_empty_list_is_zero", "passed")]
    reported += [CaseResult(c.classname, c.name, "passed" if c.must_pass else "failed") for c in canaries.canaries]
    assert canaries.check(reported)[1] == []


def test_no_canaries_for_a_runner_without_reports_or_a_file_python_cannot_parse(tmp_path):
    copy, hidden = _tree(tmp_path, {"tests/test_broken.py": "def test_x(:\n"})
    assert plant(copy, hidden, None, "make test") is None
    assert plant(copy, hidden, "pytest", "python3 -m pytest") is None
    assert (copy / "tests/test_broken.py").read_text() == "def test_x(:\n"


NODE_TESTS = """\
const test = require('node:test');
const assert = require('node:assert');
test('parses a simple pair', () => { assert.equal(1, 1); });
test('keeps an empty value', () => { assert.equal('', ''); });
"""
NODE_ESM_TESTS = """\
import test from 'node:test';
import assert from 'node:assert';
test('retries until it succeeds', () => { assert.ok(true); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("layout", ["commonjs", "esm-by-package-type", "mjs"])
def test_node_canaries_run_in_commonjs_and_es_modules(tmp_path, layout):
    rel, files = {
        "commonjs": ("test/parse-hidden.test.js", {"test/parse-hidden.test.js": NODE_TESTS}),
        "esm-by-package-type": ("test/retry-hidden.test.js", {"test/retry-hidden.test.js": NODE_ESM_TESTS,
                                                              "package.json": '{"type": "module"}'}),
        "mjs": ("test/retry-hidden.test.mjs", {"test/retry-hidden.test.mjs": NODE_ESM_TESTS}),
    }[layout]
    copy, hidden = _tree(tmp_path, files)
    canaries = plant(copy, hidden, "node", f"node --test {rel}", random.Random(5))
    assert len(canaries.canaries) == 2
    report = tmp_path / "node.xml"
    subprocess.run(["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={report}", rel],
                   cwd=copy, capture_output=True)
    cases = parse_cases(report)
    real, evidence = canaries.check(cases)
    assert evidence == []
    assert {c.name for c in real} == {m for m in ("parses a simple pair", "keeps an empty value",
                                                   "retries until it succeeds") if m in files[rel]}
    forged = [CaseResult(c.classname, c.name, "passed") for c in cases]
    assert any("must fail" in e for e in canaries.check(forged)[1])


NODE_TESTS_IMPORTING_MISSING = """\
const test = require('node:test');
const assert = require('node:assert');
const { MERGE_OPTIONS } = require('../src/merge-options.js');
test('merges nested keys', () => { assert.ok(MERGE_OPTIONS.deep); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_test_file_that_throws_while_loading_is_no_evidence(tmp_path):
    # The hidden tests import what the untouched fixture lacks: node reports the file as one
    # failed case named by its path, and its canaries never ran. That is a failing run, not a
    # forged one.
    rel = "test/merge-hidden.test.js"
    copy, hidden = _tree(tmp_path, {rel: NODE_TESTS_IMPORTING_MISSING, "src/merge.js": "module.exports = {};\n",
                                    "test/other.test.js": "require('node:test')('other passes', () => {});\n"})
    canaries = plant(copy, hidden, "node", "node --test test/", random.Random(7))
    assert canaries.canaries
    report = tmp_path / "node.xml"
    subprocess.run(["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={report}", "test/"],
                   cwd=copy, capture_output=True)
    cases = parse_cases(report)
    assert any(c.name.endswith(rel) and c.outcome == "failed" for c in cases), cases
    real, evidence = canaries.check(cases)
    assert evidence == []
    # Dropping the canaries from a report of a file that did load is still caught.
    loaded = [CaseResult("test", "merges nested keys", "passed"), CaseResult("test", "other passes", "passed")]
    assert any("missing" in e for e in canaries.check(loaded)[1])

