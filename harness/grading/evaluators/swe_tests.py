"""The ``swe_tests`` evaluator: a SWE-bench instance's ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` tests.

On the grading copy (protected files restored, as before every test command):

1. the instance's test files are put in place: every file ``test_patch`` touches is replaced
   by the version ``test_patch`` makes of it from the base commit, and every file it deletes is
   deleted (prepared at load time, :mod:`harness.tasks.swe`). Whatever the agent wrote at those
   paths is gone: it can neither pre-write the hidden tests nor keep an edited copy of them.
   They count as original files from then on, so later commands cannot change them either;
2. the instance's ``install`` commands run, in order (a failing one scores 0);
3. the test command runs once with every ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` id
   (``python -m pytest -rA -p no:cacheprovider <ids>`` unless the instance's ``test_command``
   says otherwise; ``{tests}`` in it is where the ids go, else they are appended).

Each id's outcome comes from the runner's JUnit report when the command is pytest (the
harness asks for one, outside the workspace, as for every test command), else from the
``PASSED``/``FAILED``/``ERROR``/``SKIPPED`` lines of pytest's ``-rA`` short summary in the
output. Only ``passed`` counts; an id found in neither is failed. The score is the fraction of
all the ids that passed; the details and data carry ``FAIL_TO_PASS`` and ``PASS_TO_PASS``
passed/total and the ids that did not pass, never the command's output (the code under test
can print the tests into it). The run succeeds only when every id passes (the instance's
success threshold is 1). A ``test_patch`` that does not apply to the base commit is a grading
error blamed on the instance (``error``/``harness``), with git's reason.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from harness.grading.evaluators.base import BLAME, BLAME_HARNESS, EvaluationContext, EvaluatorResult
from harness.grading.evaluators.test_reports import CaseResult
from harness.grading.evaluators.validation import run_graded
from harness.tasks.swe import DEFAULT_TEST_TIMEOUT_S, TESTS_PLACEHOLDER, instance_settings
from harness._util.trees import remove_tree
from harness.scenarios.workspace import overlay, real_directory

NAME = "swe_tests"
IDS_SHOWN = 50

_SUMMARY_HEAD = re.compile(r"^=+ short test summary info =+$", re.MULTILINE)
_SUMMARY_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)(?:\s+-\s.*)?$")
_OUTCOMES = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped", "XFAIL": "skipped",
             "XPASS": "failed"}
_RANK = {"error": 3, "failed": 2, "skipped": 1, "passed": 0}


def junit_key(node_id: str) -> tuple[str, str]:
    """(classname, name) pytest's JUnit report gives the test ``node_id``:
    ``tests/test_a.py::TestB::test_c[1]`` -> ``("tests.test_a.TestB", "test_c[1]")``."""
    base, bracket, param = node_id.partition("[")
    parts = base.split("::")
    file = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    module = file.replace("/", ".").replace("\\", ".")
    return ".".join([module, *parts[1:-1]]), (parts[-1] if len(parts) > 1 else "") + bracket + param


def outcomes_from_cases(cases: list[CaseResult]) -> dict[tuple[str, str], str]:
    """(classname, name) -> outcome; a test reported twice keeps its worse outcome."""
    found: dict[tuple[str, str], str] = {}
    for case in cases:
        key = (case.classname, case.name)
        if key not in found or _RANK.get(case.outcome, 3) > _RANK.get(found[key], 3):
            found[key] = case.outcome
    return found


def outcomes_from_summary(output: str) -> dict[str, str]:
    """node id -> outcome from the last ``short test summary info`` section of pytest ``-rA``
    output (lines earlier in the output, which the code under test may print, are not read)."""
    heads = list(_SUMMARY_HEAD.finditer(output))
    if not heads:
        return {}
    found: dict[str, str] = {}
    for line in output[heads[-1].end():].splitlines():
        match = _SUMMARY_LINE.match(line.strip())
        if match is None:
            continue
        outcome = _OUTCOMES[match.group(1)]
        node = match.group(2)
        if node not in found or _RANK[outcome] > _RANK[found[node]]:
            found[node] = outcome
    return found


def build_test_command(template: str, ids: list[str]) -> str:
    """The test command for ``ids``: at ``{tests}`` in ``template``, else appended."""
    quoted = " ".join(shlex.quote(i) for i in ids)
    return template.replace(TESTS_PLACEHOLDER, quoted) if TESTS_PLACEHOLDER in template else f"{template} {quoted}"


def _place_tests(ctx: EvaluationContext, tests: Path, deleted: list[str]) -> int:
    """Lay the test patch's files over the grading copy and delete those it deletes; the
    fixture no longer restores a deleted one. Returns the files laid."""
    grading = ctx.grading
    copied = grading.lay_over(tests) if grading is not None else overlay(tests, ctx.workspace)
    for rel in deleted:
        parent, _, name = rel.rpartition("/")
        remove_tree(real_directory(ctx.workspace, parent) / name)
    if grading is not None and deleted:
        for i, (root, exclude) in enumerate(grading.sources):
            if root == ctx.scenario.fixture_dir:
                grading.sources[i] = (root, (*exclude, *deleted))
    return copied.files


def _ids_text(label: str, ids: list[str], outcomes: dict[str, str]) -> str:
    passed = sum(outcomes[i] == "passed" for i in ids)
    return f"{label} {passed}/{len(ids)}"


def evaluate_swe_tests(ctx: EvaluationContext) -> EvaluatorResult | None:
    """Run a SWE-bench instance's tests on the grading copy; None for other scenarios."""
    settings = instance_settings(ctx.scenario)
    if settings is None:
        return None
    if ctx.sandbox is None:
        raise RuntimeError("the swe_tests evaluator needs the grading sandbox")
    problem = settings.get("testPatchProblem")
    if problem:
        return EvaluatorResult(NAME, 0.0, status="error",
                               details=f"the instance's test_patch does not apply to {settings['repo']} at "
                                       f"{str(settings['baseCommit'])[:12]}: {problem}",
                               data={BLAME: BLAME_HARNESS, "test_patch": problem})
    f2p, p2p = list(settings["failToPass"]), list(settings["passToPass"])
    files = _place_tests(ctx, Path(settings["testFiles"]), list(settings.get("deleted") or []))
    timeout = float((ctx.scenario.raw.get("validation") or {}).get("timeout_seconds", DEFAULT_TEST_TIMEOUT_S))
    data: dict[str, object] = {"test_files": files}
    for i, step in enumerate(settings.get("install") or []):
        graded = run_graded(ctx, step, f"{NAME}-install-{i}", test=False, timeout_s=timeout)
        if not graded.result.ok:
            data.update(install=step, exit_code=graded.result.exit_code, timed_out=graded.result.timed_out)
            if graded.missing_tool:
                data["missing_tool"] = graded.missing_tool
            return EvaluatorResult(NAME, 0.0, data=data,
                                   details=f"0: the install command failed ({graded.result.outcome()}): {step}")
    ids = list(dict.fromkeys([*f2p, *p2p]))
    command = build_test_command(str(settings["testCommand"]), ids)
    graded = run_graded(ctx, command, NAME, test=True, timeout_s=timeout)
    result = graded.result
    data.update(command=command, exit_code=result.exit_code, timed_out=result.timed_out,
                killed_by=result.killed_by, runner=graded.runner)
    if graded.missing_tool:
        data["missing_tool"] = graded.missing_tool
    if graded.cases is not None:
        reported = outcomes_from_cases(graded.cases)
        outcomes = {i: reported.get(junit_key(i), "missing") for i in ids}
        data["outcomes_from"] = "junit report"
    else:
        summary = outcomes_from_summary(result.stdout)
        outcomes = {i: summary.get(i, "missing") for i in ids}
        data["outcomes_from"] = "-rA summary"
        if graded.report_problem:
            data["report_problem"] = graded.report_problem
    f2p_passed = [i for i in f2p if outcomes[i] == "passed"]
    p2p_passed = [i for i in p2p if outcomes[i] == "passed"]
    not_passed = {i: outcomes[i] for i in ids if outcomes[i] != "passed"}
    data.update(
        fail_to_pass={"passed": len(f2p_passed), "total": len(f2p),
                      "failing": [i for i in f2p if i in not_passed][:IDS_SHOWN]},
        pass_to_pass={"passed": len(p2p_passed), "total": len(p2p),
                      "failing": [i for i in p2p if i in not_passed][:IDS_SHOWN]},
        passed=len(ids) - len(not_passed), total=len(ids),
    )
    score = (len(ids) - len(not_passed)) / len(ids) if ids else 0.0
    # Never the command's output: the code under test could print the hidden tests into it.
    ran = f"$ {command}\n{result.outcome()} in {result.duration_ms / 1000:.1f}s (output not kept: hidden tests)"
    head = (f"{len(ids) - len(not_passed)}/{len(ids)} tests passed: {_ids_text('FAIL_TO_PASS', f2p, outcomes)}, "
            f"{_ids_text('PASS_TO_PASS', p2p, outcomes)} (outcomes from the {data['outcomes_from']})")
    lines = [f"✗ {i} ({'not run or not reported' if o == 'missing' else o})"
             for i, o in list(not_passed.items())[:IDS_SHOWN]]
    if len(not_passed) > IDS_SHOWN:
        lines.append(f"... {len(not_passed) - IDS_SHOWN} more")
    if result.timed_out:
        head += f"; the test command did not finish within {timeout:g} s"
    return EvaluatorResult(NAME, score, details="\n".join([head, ran, *lines]), data=data)
