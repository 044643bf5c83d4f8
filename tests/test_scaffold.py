"""Writing scenarios (first hour, item 10): `bench new` lays out a scenario that works as it is,
and `bench check` proves scenarios sound (oracle passes, echo fails, the outcome repeats, the
hidden tests fail on the untouched fixture, a careless fix fails), without storing anything."""

from __future__ import annotations

import difflib
import json
import os
import re

import pytest
import yaml
from click.testing import CliRunner

from harness.cli.bench import main
from harness.results.records import EvaluationRecord, RunRecord, Telemetry
from harness.scaffold import (
    HIDDEN_FAIL,
    InvalidName,
    ScenarioExists,
    Target,
    create_scenario,
    find_targets,
    judge_hidden,
    shipped_suites_dir,
    suites_dirs,
)
from harness.scenarios.loading import available_tiers, load_scenario
from harness.scenarios.model import ScenarioError
from support.scenario_builders import BUGGY, FIXED, TEST, make_scenario, use_local_store

SOUND_YAML = """\
id: add-one
timeout_minutes: 5
success_threshold: 0.9
validation:
  commands:
    test: "{pytest}"
hidden_tests:
  command: "{pytest} test_hidden.py"
"""
# Hidden tests the buggy fixture (x + 2) fails and only a whole fix passes.
HIDDEN = {"test_hidden.py": "from calc import add_one\n\n\ndef test_zero():\n    assert add_one(0) == 1\n\n\n"
                            "def test_negative():\n    assert add_one(-5) == -4\n"}
# Passes the visible test (add_one(1) == 2) but not the hidden negative case.
CARELESS = "def add_one(x):\n    return x + 1 if x >= 0 else x + 2\n"


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def rows(output: str) -> dict[tuple[str, str], str]:
    """(scenario, check) -> PASS/FAIL/SKIP, from the verdict rows printed."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"^(PASS|FAIL|SKIP)  (\S+)\s+(.+?)(?:\s{2,}|$)", line)
        if match:
            found[(match.group(2), match.group(3).strip())] = match.group(1)
    return found


def patch_of(rel: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}"))


@pytest.fixture
def lab(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    suites.mkdir()
    use_local_store(monkeypatch, tmp_path, suites)
    return tmp_path


def _nothing_stored(root) -> None:
    assert not (root / "bench.db").exists() and not (root / "spool").exists()
    assert not (root / "workspaces").exists() or not any((root / "workspaces").iterdir())


# --------------------------------------------------------------------------- bench new


def test_item10_new_then_check_passes_on_the_scaffold(lab):
    made = bench("new", "lab/first-bug")
    assert made.exit_code == 0, made.output
    scenario_dir = lab / "suites" / "lab" / "scenarios" / "first-bug"
    for rel in ("scenario.yaml", "repo-fixture/rangekit/clamp.py", "repo-fixture/tests/test_clamp.py",
                "solution/rangekit/clamp.py", "hidden-tests/tests/test_clamp_hidden.py"):
        assert (scenario_dir / rel).is_file(), rel
        assert str(scenario_dir / rel) in made.stdout
    assert "bench check lab/first-bug" in made.stdout
    scenario = load_scenario("lab", "first-bug", lab / "suites")
    assert available_tiers(scenario) == ["L0-minimal", "L1-basic", "L2-directed"]
    assert scenario.solution_dir is not None and scenario.hidden_tests_dir is not None and not scenario.warnings
    # Every block of scenario.yaml comes with a comment saying what it is for.
    text = (scenario_dir / "scenario.yaml").read_text()
    lines = text.splitlines()
    for key in ("id", "description", "timeout_minutes", "success_threshold", "validation", "hidden_tests",
                "heuristic_checks", "llm_judge", "rubric_overrides"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
        assert lines[at - 1].startswith("#"), key
    assert yaml.safe_load(text)["id"] == "lab/first-bug"

    fixture = (scenario_dir / "repo-fixture/rangekit/clamp.py").read_text()
    partial = fixture.replace("    if value > high:\n        return value", "    if value > high:\n        return high")
    assert partial != fixture
    (lab / "partial.patch").write_text(patch_of("rangekit/clamp.py", fixture, partial))

    checked = bench("check", "lab/first-bug", "--careless", "partial.patch")  # the default sandbox
    assert checked.exit_code == 0, checked.output
    got = rows(checked.stdout)
    assert got == {("lab/first-bug", check): "PASS" for check in (
        "scenario loads", "oracle passes", "repeats", "echo fails", "hidden tests fail on the fixture",
        "careless fix fails")}, checked.stdout
    assert "6 check(s) of 1 scenario(s): 6 passed, 0 failed, 0 skipped." in checked.stdout
    assert "hidden_tests 0.75" in checked.stdout  # the careless fix misses the empty range
    assert "nothing stored" in checked.stderr
    _nothing_stored(lab)


def test_item10_new_refuses_bad_names_and_an_existing_scenario(lab):
    suites = lab / "suites"
    for bad, excerpt in (("run/x", "name of a bench command"), ("check/x", "name of a bench command"),
                         ("lab/.hidden", "scenario name '.hidden'"), ("lab/-x", "scenario name '-x'"),
                         ("lab/a b", "scenario name 'a b'"), ("lab", "give SUITE/SCENARIO"),
                         ("lab/a/b", "one '/'"), ("/x", "the suite name is empty"), ("lab/" + "x" * 101, "at most")):
        result = bench("new", bad)
        assert result.exit_code == 2, (bad, result.output)
        assert excerpt in result.stderr and len(result.stderr.strip().splitlines()) == 1, (bad, result.stderr)
    assert not any(suites.iterdir())  # nothing written for a refused name

    assert bench("new", "lab/one").exit_code == 0
    yaml_file = suites / "lab" / "scenarios" / "one" / "scenario.yaml"
    yaml_file.write_text(yaml_file.read_text() + "# my edits\n")
    again = bench("new", "lab/one")
    assert again.exit_code == 1 and "already exists" in again.stderr and str(yaml_file.parent) in again.stderr
    assert yaml_file.read_text().endswith("# my edits\n")  # untouched

    # Prompts of that name without the scenario: refused too, nothing half-made left behind.
    (suites / "lab" / "prompts" / "two").mkdir(parents=True)
    (suites / "lab" / "prompts" / "two" / "L1-basic.md").write_text("mine\n")
    refused = bench("new", "lab/two")
    assert refused.exit_code == 1 and "prompts/two already exists" in refused.stderr
    assert not (suites / "lab" / "scenarios" / "two").exists()
    assert (suites / "lab" / "prompts" / "two" / "L1-basic.md").read_text() == "mine\n"
    assert not [p for p in (suites / "lab").iterdir() if p.name.startswith(".bench-new-")]

    with pytest.raises(InvalidName):
        create_scenario(suites, "list", "x")
    with pytest.raises(ScenarioExists):
        create_scenario(suites, "lab", "one")


# --------------------------------------------------------------------------- bench check


def test_item10_check_catches_an_oracle_that_fails_an_echo_that_passes_and_hidden_tests_that_pass(lab):
    suites = lab / "suites"
    make_scenario(suites, "bad", "sound", yaml_text=SOUND_YAML, hidden=HIDDEN)
    make_scenario(suites, "bad", "oracle-fails", yaml_text=SOUND_YAML, hidden=HIDDEN,
                  solution={"calc.py": "def add_one(x):\n    return x + 3\n"})
    make_scenario(suites, "bad", "echo-passes", fixture={"calc.py": FIXED, "test_calc.py": TEST})
    make_scenario(suites, "bad", "hidden-pass-on-fixture", yaml_text=SOUND_YAML,
                  hidden={"test_hidden.py": "from calc import add_one\n\n\ndef test_callable():\n"
                                            "    assert callable(add_one)\n"})
    make_scenario(suites, "bad", "broken-yaml", yaml_text="id: x\nvalidation: [unclosed\n")

    result = bench("check", "bad", "--suites-dir", str(suites), "--no-shipped", "--sandbox", "none", "-j", "2",
                   "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    got = {(v["scenario"].split("/")[1], v["check"]): v for v in data["verdicts"]}
    status = {k: v["status"] for k, v in got.items()}
    assert data["ok"] is False and data["sandbox"] == "none" and data["suitesDirs"] == [str(suites)]

    assert [status[("sound", c)] for c in ("scenario loads", "oracle passes", "repeats", "echo fails",
                                           HIDDEN_FAIL)] == ["pass"] * 5
    assert status[("oracle-fails", "oracle passes")] == "fail"
    assert "the reference solution does not pass" in got[("oracle-fails", "oracle passes")]["detail"]
    assert status[("oracle-fails", "repeats")] == "pass"  # it fails the same way twice
    assert status[("echo-passes", "echo fails")] == "fail"
    assert "doing nothing passes" in got[("echo-passes", "echo fails")]["detail"]
    assert status[("echo-passes", HIDDEN_FAIL)] == "skip"  # no hidden-tests/
    assert status[("hidden-pass-on-fixture", HIDDEN_FAIL)] == "fail"
    assert "1/1 hidden tests passed" in got[("hidden-pass-on-fixture", HIDDEN_FAIL)]["detail"]
    assert status[("hidden-pass-on-fixture", "echo fails")] == "pass"
    assert status[("broken-yaml", "scenario loads")] == "fail" and "invalid YAML" in got[("broken-yaml",
                                                                                           "scenario loads")]["detail"]
    assert not [k for k in got if k[0] == "broken-yaml" and k[1] != "scenario loads"]  # no runs for it
    assert all(v["status"] in ("pass", "skip") or k[0] != "sound" for k, v in got.items())
    # The rows came on stderr as each check finished, one per check and scenario.
    assert sum(1 for line in result.stderr.splitlines() if re.match(r"^(PASS|FAIL|SKIP)  bad/", line)) == len(got)
    _nothing_stored(lab)


def test_item10_check_fails_a_careless_patch_that_passes(lab):
    suites = lab / "suites"
    make_scenario(suites, "good", "add-one", yaml_text=SOUND_YAML, hidden=HIDDEN)
    (lab / "whole.patch").write_text(patch_of("calc.py", BUGGY, FIXED))
    (lab / "careless.patch").write_text(patch_of("calc.py", BUGGY, CARELESS))

    passes = bench("check", "good/add-one", "--careless", "whole.patch", "--sandbox", "none")
    assert passes.exit_code == 1, passes.output
    got = rows(passes.stdout)
    assert got[("good/add-one", "careless fix fails")] == "FAIL"
    assert "the careless fix passes (completed, score 1.00)" in passes.stdout
    assert [got[("good/add-one", c)] for c in ("oracle passes", "repeats", "echo fails", HIDDEN_FAIL)] == ["PASS"] * 4

    from harness.scaffold import CheckOptions, check_scenario

    target = Target(suites, "good", "add-one")
    careless = check_scenario(target, CheckOptions(sandbox="none", careless=(lab / "careless.patch").read_text()))
    assert careless[-1].check == "careless fix fails" and careless[-1].status == "pass", careless[-1]
    assert "hidden_tests 0.50" in careless[-1].detail
    _nothing_stored(lab)


def test_item10_a_careless_patch_that_does_not_apply_is_the_agent_s_error(tmp_path, make_sandbox):
    from harness.agents.base import AgentContext
    from harness.scaffold import PatchAgent, judge_careless

    (tmp_path / "calc.py").write_text(BUGGY)
    stale = patch_of("calc.py", "def add_one(x):\n    return x - 7\n", FIXED)
    result = PatchAgent(patch=stale, patch_name="stale.patch").run(AgentContext(prompt="p", sandbox=make_sandbox()))
    assert result.status == "error" and "stale.patch does not apply to the fixture (git apply" in result.error
    assert (tmp_path / "calc.py").read_text() == BUGGY
    record = RunRecord(run_id="r", suite="s", scenario="n", tier="L1", agent="careless-patch", status="error",
                       failure_class="agent", metadata={"agentStatus": "error", "agentError": result.error})
    verdict = judge_careless("s/n", record)
    assert verdict.status == "fail" and "does not apply" in verdict.detail

    applied = PatchAgent(patch=patch_of("calc.py", BUGGY, FIXED)).run(AgentContext(prompt="p", sandbox=make_sandbox()))
    assert applied.status == "completed" and (tmp_path / "calc.py").read_text() == FIXED


def test_item10_check_searches_several_suites_dirs_and_the_shipped_ones(lab, tmp_path, monkeypatch):
    first, second = tmp_path / "team-a", tmp_path / "team-b"
    make_scenario(first, "alpha", "add-one")
    make_scenario(second, "beta", "add-one")
    make_scenario(second, "alpha", "only-in-second")  # alpha is taken from the first directory

    joined = f"{first}{os.pathsep}{second}"
    assert suites_dirs([joined], include_shipped=False) == [first, second]
    assert suites_dirs([str(first), str(second)], include_shipped=False) == [first, second]
    with_shipped = suites_dirs([str(first)])
    assert shipped_suites_dir() is not None
    assert with_shipped == [first, shipped_suites_dir()]
    assert [t.key for t in find_targets(["alpha", "beta/add-one"], [first, second])] == ["alpha/add-one",
                                                                                          "beta/add-one"]
    assert find_targets(["py-bugs/pagination-off-by-one"], with_shipped)[0].suites_dir == shipped_suites_dir()
    with pytest.raises(ScenarioError, match="unknown scenario 'only-in-second' in suite 'alpha'"):
        find_targets(["alpha/only-in-second"], [first, second])
    with pytest.raises(ScenarioError, match="suites directory not found"):
        suites_dirs([str(tmp_path / "nowhere")])

    no_shipped = bench("check", "py-bugs", "--suites-dir", str(first), "--no-shipped")
    assert no_shipped.exit_code == 2 and "unknown suite 'py-bugs'" in no_shipped.stderr
    assert "available: alpha" in no_shipped.stderr

    repeated = bench("check", "nosuch", "--suites-dir", str(first), "--suites-dir", str(second), "--no-shipped")
    assert repeated.exit_code == 2 and "available: alpha, beta" in repeated.stderr

    # The environment variable is a list too, and the command checks scenarios from both.
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", joined)
    both = bench("check", "alpha/add-one", "beta", "--sandbox", "none")
    assert both.exit_code == 0, both.output
    got = rows(both.stdout)
    assert got[("alpha/add-one", "oracle passes")] == got[("beta/add-one", "oracle passes")] == "PASS"
    assert got[("alpha/add-one", HIDDEN_FAIL)] == "SKIP"  # no hidden-tests/: does not apply
    assert f"from {first}{os.pathsep}{second}{os.pathsep}{shipped_suites_dir()}" in both.stderr


def test_item10_check_refuses_bad_input_before_running_anything(lab):
    suites = lab / "suites"
    make_scenario(suites, "demo", "add-one")
    make_scenario(suites, "demo", "other")
    (lab / "empty.patch").write_text("")
    (lab / "fix.patch").write_text(patch_of("calc.py", BUGGY, FIXED))
    for args, excerpt in (
        (["demo/nosuch"], "unknown scenario 'nosuch' in suite 'demo'"),
        (["nosuch"], "unknown suite 'nosuch'"),
        (["demo/a/b"], "one '/'"),
        (["demo", "--careless", "fix.patch"], "--careless applies to one scenario; 2 are selected"),
        (["demo/add-one", "--careless", "empty.patch"], "empty.patch is empty"),
        (["demo/add-one", "--careless", "missing.patch"], "'--careless'"),
        (["demo/add-one", "--suites-dir", str(lab / "nowhere")], "suites directory not found"),
    ):
        result = bench("check", *args)
        assert result.exit_code == 2, (args, result.output)
        assert excerpt in result.stderr, (args, result.stderr)
    assert not (lab / "workspaces").exists() or not any((lab / "workspaces").iterdir())


def test_item10_an_untouched_fixture_classed_as_tampered_fails_the_hidden_check():
    evidence = "canary 'a b c' (test/x.test.js) is missing from the report, though tests of its file are there"
    record = RunRecord(run_id="r", suite="s", scenario="n", tier="L1", agent="echo", status="failed",
                       failure_class="tampered", total_score=0.1, metadata={"tampered": [evidence]},
                       evaluations=[EvaluationRecord("test", 0.0), EvaluationRecord(
                           "hidden_tests", 0.0, details="0: the test report was tampered with")],
                       telemetry=Telemetry(duration_ms=1500.0))
    verdict = judge_hidden("s/n", record)
    assert verdict.status == "fail" and "classed as tampered" in verdict.detail and "a b c" in verdict.detail
    assert verdict.seconds == 1.5
    honest = RunRecord(run_id="r", suite="s", scenario="n", tier="L1", agent="echo", status="failed",
                       failure_class="validation", total_score=0.1,
                       evaluations=[EvaluationRecord("hidden_tests", 0.25, details="1/4 hidden tests passed")])
    assert judge_hidden("s/n", honest).status == "pass"


def test_item10_help_teaches_with_examples():
    for command in ("new", "check"):
        shown = bench(command, "--help")
        assert shown.exit_code == 0
        assert "Examples:" in shown.stdout and f"bench {command} " in shown.stdout
    assert "--careless FILE" in bench("check", "--help").stdout
    assert "hidden tests fail on the fixture" in bench("check", "--help").stdout
