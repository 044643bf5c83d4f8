"""Evaluators on small workspaces: validation, hidden tests, heuristic checks, dependency targets."""

from __future__ import annotations

import json

import pytest

from harness.grading.evaluators.dependency_targets import evaluate_dependency_targets
from harness.grading.evaluators.heuristic_checks import evaluate_heuristic_checks, json_path_get
from harness.grading.evaluators.hidden_tests import evaluate_hidden_tests
from harness.grading.evaluators.pipeline import run_evaluators
from harness.grading.evaluators.test_reports import TestCounts, detect_runner, parse_junit
from harness.grading.evaluators.validation import evaluate_validation
from harness.grading.copy import GradingSession
from harness.sandbox import resolve_mode
from harness.scenarios.loading import load_scenario
from harness.scenarios.workspace import create_workspace, overlay
from support.scenario_builders import FIXED, make_scenario, write_tree

_SESSIONS: list[GradingSession] = []


@pytest.fixture(autouse=True)
def _close_grading_sessions():
    yield
    while _SESSIONS:
        _SESSIONS.pop().close()


def _ctx(tmp_path, yaml_text, fixture=None, hidden=None, solve=False, extra=None):
    """The evaluation context the runner builds: a grading copy of a fresh workspace in a sandbox
    of this machine's default kind (bwrap where it works)."""
    make_scenario(tmp_path / "suites", yaml_text=yaml_text, fixture=fixture, hidden=hidden, extra=extra)
    scenario = load_scenario("demo", "add-one", tmp_path / "suites")
    ws = create_workspace(scenario, tmp_path / "ws")
    if solve:
        overlay(scenario.solution_dir, ws.path)
    session = GradingSession(scenario, ws.path, resolve_mode().kind, tmp_path / "grading", prompt="p")
    _SESSIONS.append(session)
    return session.context


# ---------------------------------------------------------------- validation

def test_validation_runs_commands_in_order_including_test(tmp_path):
    ctx = _ctx(tmp_path, """\
validation:
  commands:
    test: "echo test >> order.log; {pytest}"
    lint: "echo lint >> order.log"
    install: "echo install >> order.log"
    build: "echo build >> order.log"
    typecheck: "echo typecheck >> order.log"
""")
    results = evaluate_validation(ctx)
    assert [r.name for r in results] == ["install", "build", "lint", "typecheck", "test"]
    assert (ctx.workspace / "order.log").read_text().split() == ["install", "build", "lint", "typecheck", "test"]
    assert [r.score for r in results] == [1, 1, 1, 1, 0]  # the fixture's test fails until fixed
    assert "1 failed" in results[-1].details
    assert set(ctx.command_results) == {"install", "build", "lint", "typecheck", "test"}


def test_validation_passes_after_fix(tmp_path):
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: {pytest}\n", solve=True)
    assert [r.score for r in evaluate_validation(ctx)] == [1.0]


def test_validation_timeout_kills_command_and_its_children(tmp_path):
    ctx = _ctx(tmp_path, """\
validation:
  timeout_seconds: 0.5
  commands:
    test: "(sleep 1; touch child-survived) & sleep 30"
""")
    (result,) = evaluate_validation(ctx)
    assert result.score == 0 and result.data["timed_out"] is True
    assert "timed out" in result.details
    import time

    time.sleep(1.5)  # the child would have created the marker by now had it survived
    assert not (ctx.workspace / "child-survived").exists()


def test_test_command_exiting_0_with_no_passing_test_fails_the_gate(tmp_path):
    skipped = {"test_calc.py": "import pytest\n\n@pytest.mark.skip\ndef test_add_one():\n    assert False\n"}
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: {pytest}\n", fixture={"calc.py": FIXED, **skipped})
    (result,) = evaluate_validation(ctx)
    assert ctx.command_results["test"].exit_code == 0
    assert result.score == 0.0 and "0 passed, 1 skipped" in result.details


def test_a_runner_without_a_report_is_judged_by_exit_status(tmp_path):
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: 'true'\n")
    (result,) = evaluate_validation(ctx)
    assert result.score == 1.0 and "judged by exit status" in result.details


# ---------------------------------------------------------------- hidden tests

HIDDEN = {"tests_hidden/test_more.py": "from calc import add_one\n\n\ndef test_zero():\n    assert add_one(0) == 1\n\n\n"
          "def test_negative():\n    assert add_one(-1) == 0\n\n\ndef test_type():\n    assert add_one(1.5) == 2.5\n"}


def test_hidden_tests_score_passed_over_total(tmp_path):
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: {pytest}\n",
               hidden=HIDDEN, solve=True)
    assert not (ctx.workspace / "tests_hidden").exists()
    result = evaluate_hidden_tests(ctx)
    assert (ctx.workspace / "tests_hidden" / "test_more.py").exists()
    assert result.score == 1.0 and result.data["passed"] == 4 and result.data["total"] == 4


def test_hidden_tests_partial_score_on_unfixed_code(tmp_path):
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: {pytest}\n", hidden=HIDDEN)
    result = evaluate_hidden_tests(ctx)
    assert result.data["total"] == 4 and result.score == pytest.approx(0 / 4)


def test_hidden_tests_with_node_test_runner(tmp_path):
    fixture = {"sum.js": "module.exports = (a, b) => a - b;\n"}
    hidden = {"sum.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
              "const sum = require('./sum.js');\ntest('adds', () => assert.strictEqual(sum(2, 2), 4));\n"
              "test('zero', () => assert.strictEqual(sum(0, 0), 0));\n"}
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: node --test\n", fixture=fixture, hidden=hidden)
    result = evaluate_hidden_tests(ctx)
    assert (result.data["passed"], result.data["total"]) == (1, 2)
    assert result.score == 0.5


def test_hidden_tests_without_counts_score_by_exit_status(tmp_path):
    ctx = _ctx(tmp_path, "hidden_tests:\n  command: sh check.sh\n", hidden={"check.sh": "exit 0\n"})
    assert evaluate_hidden_tests(ctx).score == 1.0


def test_hidden_tests_absent_means_no_result(tmp_path):
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: 'true'\n")
    assert evaluate_hidden_tests(ctx) is None


def test_hidden_tests_printing_a_fake_summary_earn_nothing(tmp_path):
    ctx = _ctx(tmp_path, "hidden_tests:\n  command: \"echo '5 passed in 0.1s'; {pytest} --co -q >/dev/null\"\n",
               hidden=HIDDEN)
    result = evaluate_hidden_tests(ctx)
    assert result.score == 0.0 and result.data["total"] == 0


@pytest.mark.parametrize(("command", "runner"), [
    ("python3 -m pytest -q", "pytest"), ("pytest tests/x.py", "pytest"), ("cd a && py.test", "pytest"),
    ("node --test", "node"), ("node --experimental-vm-modules --test test/", "node"), ("npm test", "node"),
    ("pnpm run test", "node"), ("node tools/install.mjs", None), ("sh check.sh", None), ("echo pytest-free", None),
])
def test_detect_runner(command, runner):
    assert detect_runner(command) == runner


def test_parse_junit_counts_skips_xfails_and_errors_apart_from_passes(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text("""<testsuites><testsuite name="s">
<testcase name="a"/><testcase name="b"><failure message="x"/></testcase>
<testcase name="c"><skipped message="xfail"/></testcase><testcase name="d"><error message="e"/></testcase>
<testsuite name="nested"><testcase name="e"/></testsuite></testsuite></testsuites>""")
    counts = parse_junit(report)
    assert counts == TestCounts(passed=2, failed=1, errors=1, skipped=1)
    assert counts.total == 5 and not counts.clean


# ---------------------------------------------------------------- heuristic checks

HEURISTICS = """\
heuristic_checks:
  enabled: true
  commands:
    - {name: tests_pass, command: "{pytest}", weight: 3}
  files:
    - {name: has_calc, path: calc.py}
    - {name: no_tmp_files, path: "**/*.tmp", negate: true}
  patterns:
    - {name: returns_plus_one, file: "*.py", pattern: "return x \\\\+ 1", exclude: ["test_*.py"]}
    - {name: no_print, file: "**/*.py", pattern: "print\\\\(", negate: true, exclude: ["vendor/**"]}
  structured:
    - {name: has_version, file: meta.json, json_path: "$.package.version"}
    - {name: version_is_2, file: meta.json, json_path: "$.package.version", equals: "2.0"}
    - {name: first_author, file: meta.json, json_path: "$.authors[0].name"}
    - {name: has_usage, file: NOTES.md, section_header: "Usage"}
  scripts:
    - {name: script_sees_ids, script: check_args.py, args: ["${scenario.id}", "${scenario.suite}"]}
"""

FIXTURE = {
    "calc.py": "def add_one(x):\n    return x + 2\n",
    "test_calc.py": "from calc import add_one\n\n\ndef test_add_one():\n    assert add_one(1) == 2\n",
    "vendor/lib.py": "print('vendored code may print')\n",
    "meta.json": json.dumps({"package": {"version": "1.0"}, "authors": [{"name": "Ada"}]}),
    "NOTES.md": "# Notes\n\nSome text mentioning Usage without a heading.\n",
}
SCRIPT = {"check_args.py": "import sys\nsys.exit(0 if sys.argv[1:] == ['add-one', 'demo'] else 1)\n"}


def _checks(result):
    return {c["name"]: c["passed"] for c in result.data["checks"]}


def test_heuristic_checks_each_kind_on_unfixed_workspace(tmp_path):
    ctx = _ctx(tmp_path, HEURISTICS, fixture=FIXTURE, extra=SCRIPT)
    result = evaluate_heuristic_checks(ctx)
    assert _checks(result) == {
        "tests_pass": False, "has_calc": True, "no_tmp_files": True, "returns_plus_one": False, "no_print": True,
        "has_version": True, "version_is_2": False, "first_author": True, "has_usage": False,
        "script_sees_ids": True,
    }
    # weights: tests_pass 3, everything else 1 -> 6 of 12
    assert result.score == pytest.approx(6 / 12)


def test_heuristic_checks_all_pass_when_work_is_done(tmp_path):
    ctx = _ctx(tmp_path, HEURISTICS, fixture=FIXTURE, extra=SCRIPT)
    write_tree(ctx.workspace, {"calc.py": FIXED, "meta.json": json.dumps({"package": {"version": "2.0"},
                                                                            "authors": [{"name": "Ada"}]}),
                               "NOTES.md": "# Notes\n\n## Usage\n\nrun it\n"})
    result = evaluate_heuristic_checks(ctx)
    assert all(_checks(result).values()) and result.score == 1.0


def test_negated_pattern_fails_when_anti_pattern_is_present(tmp_path):
    ctx = _ctx(tmp_path, HEURISTICS, fixture=FIXTURE, extra=SCRIPT)
    (ctx.workspace / "debug.py").write_text("print('debugging')\n")
    (ctx.workspace / "junk.tmp").write_text("x")
    checks = _checks(evaluate_heuristic_checks(ctx))
    assert checks["no_print"] is False and checks["no_tmp_files"] is False


def test_pattern_with_no_matching_files_fails_unless_negated(tmp_path):
    ctx = _ctx(tmp_path, """\
heuristic_checks:
  patterns:
    - {name: present, file: "src/**/*.ts", pattern: "export"}
    - {name: absent, file: "src/**/*.ts", pattern: "console.log", negate: true}
""")
    result = evaluate_heuristic_checks(ctx)
    assert _checks(result) == {"present": False, "absent": True}


def test_script_check_missing_script_fails(tmp_path):
    ctx = _ctx(tmp_path, "heuristic_checks:\n  scripts:\n    - {name: s, script: nowhere.sh}\n")
    result = evaluate_heuristic_checks(ctx)
    assert result.score == 0 and "script not found" in result.details


def test_disabled_heuristic_checks_are_skipped(tmp_path):
    ctx = _ctx(tmp_path, "heuristic_checks:\n  enabled: false\n  files:\n    - {name: f, path: calc.py}\n")
    assert evaluate_heuristic_checks(ctx).status == "skipped"


def test_json_path_get():
    data = {"paths": {"/users": {"get": 1}}, "items": [{"n": None}]}
    assert json_path_get(data, "$.paths./users.get") == 1
    assert json_path_get(data, "$.items[0].n") is None
    assert json_path_get(data, "$.items[3]") is not None and json_path_get(data, "$.missing") is not None


# ---------------------------------------------------------------- dependency targets

DEPS_YAML = """\
constraints:
  blocklist:
    - {name: webpack, reason: pinned}
  namespace_migrations:
    - {from: xterm, to: "@xterm/xterm"}
  companion_versions:
    - main: react
      companions:
        - {name: "@types/react", rule: "major must match"}
    - main: node
      companions:
        - {name: "@types/node", rule: "major must match"}
targets:
  required:
    - {name: typescript, to: ">=5.5 <6"}
    - {name: requests, to: ">=2.31"}
  optional:
    - {name: eslint, to: "^9"}
"""

DEP_FIXTURE = {
    "package.json": json.dumps({
        "engines": {"node": ">=20"},
        "dependencies": {"react": "^18.2.0", "xterm": "^5.0.0"},
        "devDependencies": {"typescript": "^5.2.0", "webpack": "5.88.0", "@types/react": "^18.2.0",
                            "@types/node": "^18.0.0"},
    }),
    "requirements.txt": "requests==2.28.0\n",
}


def test_dependency_targets_on_untouched_fixture(tmp_path):
    ctx = _ctx(tmp_path, DEPS_YAML, fixture=DEP_FIXTURE)
    result = evaluate_dependency_targets(ctx)
    kinds = [(c["kind"], c["passed"]) for c in result.data["checks"]]
    assert kinds == [("target", False), ("target", False), ("blocklist", True), ("namespace_migration", False),
                     ("companion", True), ("companion", False)]
    assert result.score == pytest.approx(2 / 6)


def test_dependency_targets_all_satisfied(tmp_path):
    ctx = _ctx(tmp_path, DEPS_YAML, fixture=DEP_FIXTURE)
    write_tree(ctx.workspace, {
        "package.json": json.dumps({
            "engines": {"node": ">=20"},
            "dependencies": {"react": "^19.0.0", "@xterm/xterm": "^5.5.0"},
            "devDependencies": {"typescript": "^5.6.2", "webpack": "5.88.0", "@types/react": "^19.0.1",
                                "@types/node": "^20.11.0", "eslint": "^9.1.0"},
        }),
        "requirements.txt": "Requests>=2.31.0\n",
    })
    result = evaluate_dependency_targets(ctx)
    assert result.score == 1.0, result.details
    assert result.data["optional"][0]["passed"] is True


def test_bumping_a_blocklisted_package_is_a_violation(tmp_path):
    ctx = _ctx(tmp_path, DEPS_YAML, fixture=DEP_FIXTURE)
    pkg = json.loads(DEP_FIXTURE["package.json"])
    pkg["devDependencies"]["webpack"] = "^6.0.0"
    (ctx.workspace / "package.json").write_text(json.dumps(pkg))
    result = evaluate_dependency_targets(ctx)
    assert [c["passed"] for c in result.data["checks"] if c["kind"] == "blocklist"] == [False]
    assert "webpack: changed to ^6.0.0 (pinned)" in result.details


def test_dependency_targets_absent_config_means_no_result(tmp_path):
    ctx = _ctx(tmp_path, "id: x\n")
    assert evaluate_dependency_targets(ctx) is None


# ---------------------------------------------------------------- pipeline

def test_pipeline_runs_configured_evaluators_in_order(tmp_path):
    yaml_text = """\
validation:
  commands:
    test: {pytest}
heuristic_checks:
  files:
    - {name: has_calc, path: calc.py}
llm_judge:
  enabled: false
"""
    ctx = _ctx(tmp_path, yaml_text, hidden=HIDDEN, solve=True)
    stages = []
    results = run_evaluators(ctx, on_stage=stages.append)
    assert [r.name for r in results] == ["test", "heuristic_checks", "hidden_tests"]
    assert all(r.status == "ok" and r.score == 1.0 for r in results)
    assert stages[0] == "validation"


def test_pipeline_turns_an_evaluator_crash_into_an_error_result(tmp_path, monkeypatch):
    import harness.grading.evaluators.pipeline as pipeline

    def boom(ctx):
        raise RuntimeError("kaput")

    monkeypatch.setattr(pipeline, "_SINGLE_EVALUATORS", (("heuristic_checks", boom),))
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: 'true'\n")
    results = run_evaluators(ctx)
    assert [(r.name, r.status) for r in results] == [("test", "ok"), ("heuristic_checks", "error")]
    assert "kaput" in results[1].details


def test_pipeline_calls_llm_judge_when_enabled(tmp_path, monkeypatch):
    import sys
    import types

    from harness.grading.evaluators.base import EvaluatorResult

    seen = {}
    module = types.ModuleType("harness.grading.evaluators.llm_judge")

    def evaluate_llm_judge(ctx):
        seen["commands"] = dict(ctx.command_results)
        return EvaluatorResult("llm_judge", 0.0, status="skipped", details="no credentials")

    module.evaluate_llm_judge = evaluate_llm_judge
    monkeypatch.setitem(sys.modules, "harness.grading.evaluators.llm_judge", module)
    ctx = _ctx(tmp_path, "validation:\n  commands:\n    test: 'true'\nllm_judge:\n  enabled: true\n")
    results = run_evaluators(ctx)
    assert [(r.name, r.status) for r in results] == [("test", "ok"), ("llm_judge", "skipped")]
    assert "test" in seen["commands"]  # the judge sees the command results


def test_script_in_scenario_directory_wins_over_one_planted_in_the_workspace(tmp_path):
    ctx = _ctx(tmp_path, "heuristic_checks:\n  scripts:\n    - {name: s, script: check.sh}\n",
               extra={"check.sh": "exit 1\n"})
    (ctx.workspace / "check.sh").write_text("exit 0\n")
    assert evaluate_heuristic_checks(ctx).score == 0.0


def test_javascript_named_groups_in_patterns_are_accepted(tmp_path):
    ctx = _ctx(tmp_path, 'heuristic_checks:\n  patterns:\n    - {name: p, file: calc.py, pattern: "return (?<var>x) \\\\+"}\n')
    assert evaluate_heuristic_checks(ctx).score == 1.0


def test_structured_check_reads_toml_files(tmp_path):
    ctx = _ctx(tmp_path, """\
heuristic_checks:
  enabled: true
  structured:
    - {name: floor_raised, file: pyproject.toml, json_path: "$.project.requires-python", equals: ">=3.11"}
    - {name: has_scripts, file: pyproject.toml, json_path: "$.project.scripts.tool"}
""", fixture={"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.8"\n'})
    assert _checks(evaluate_heuristic_checks(ctx)) == {"floor_raised": False, "has_scripts": False}
    (ctx.workspace / "pyproject.toml").write_text(
        '[project]\nname = "x"\nrequires-python = ">=3.11"\n[project.scripts]\ntool = "x:main"\n')
    assert _checks(evaluate_heuristic_checks(ctx)) == {"floor_raised": True, "has_scripts": True}


def test_dependency_targets_ignore_vendored_package_manifests(tmp_path):
    # A vendored package pins an old typescript for itself; the project's own manifest meets
    # the target, and only the project's manifest counts.
    fixture = dict(DEP_FIXTURE)
    project = json.loads(DEP_FIXTURE["package.json"])
    project["devDependencies"]["typescript"] = "^5.6.2"
    fixture["package.json"] = json.dumps(project)
    fixture["vendor/toolkit/package.json"] = json.dumps({"name": "toolkit", "devDependencies": {"typescript": "^4.9.0"}})
    ctx = _ctx(tmp_path, DEPS_YAML, fixture=fixture)
    result = evaluate_dependency_targets(ctx)
    typescript = next(c for c in result.data["checks"] if c["kind"] == "target" and "typescript" in json.dumps(c))
    assert typescript["passed"] is True, typescript
