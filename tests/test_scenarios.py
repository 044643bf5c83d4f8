"""Scenario discovery, loading, schema errors and tier resolution."""

from __future__ import annotations

import re

import pytest

from harness.scenarios.loading import (
    available_tiers,
    discover_suites,
    load_scenario,
    parse_judge_category,
    resolve_prompt,
)
from harness.scenarios.model import ScenarioError
from support.scenario_builders import PYTEST, make_scenario

ORIGINAL_STYLE_YAML = """\
id: nx-pnpm-monorepo
suite: update-deps
title: "Monorepo with PNPM + Nx"
description: |
  Update workspace dependencies.
timeout_minutes: 40
workspace:
  node: "18.20.x"
  manager: auto
  managers_allowed: [pnpm]
  workspaces: pnpm
baseline:
  run:
    - cmd: "pnpm install"
constraints:
  blocklist:
    - name: "webpack"
      reason: "Pinned by Nx preset"
  namespace_migrations:
    - from: "xterm"
      to: "@xterm/xterm"
  companion_versions:
    - main: "react"
      companions:
        - name: "@types/react"
          rule: "major must match"
targets:
  required:
    - name: "typescript"
      to: ">=5.5 <6"
  optional:
    - name: "eslint"
      to: "^9"
validation:
  commands:
    install: "pnpm install"
    test: "pnpm -w -r test --if-present"
    lint: "pnpm -w -r lint --if-present"
oracle:
  answers_file: "./oracle-answers.json"
heuristic_checks:
  enabled: true
  commands:
    - name: "install_succeeds"
      command: "pnpm install"
      weight: 2.0
      description: "Dependencies install successfully"
  patterns:
    - name: "no_client_hooks_in_server"
      file: "app/**/page.tsx"
      pattern: "useState|useEffect"
      weight: 2.0
  structured:
    - name: "has_paths"
      file: "openapi.json"
      json_path: "$.paths"
  scripts:
    - name: "validate"
      script: "scripts/check.sh"
      args: ["${scenario.id}"]
llm_judge:
  enabled: true
  model: "meta-llama/llama-3.1-8b-instruct"
  temperature: 0.1
  max_tokens: 2000
  categories:
    - "Dependency Update Correctness (30%): Accurately updates. Score 1-5"
    - "Server Component Implementation (Weight: 35%): Correct async component"
rubric_overrides:
  weights:
    install_success: 1.0
    llm_judge: 1.0
fixtures:
  figma_file: "./repo-fixture/x.json"
"""


def test_discover_suites_lists_suites_and_scenarios_sorted(tmp_path):
    make_scenario(tmp_path, suite="b", name="two")
    make_scenario(tmp_path, suite="b", name="one")
    make_scenario(tmp_path, suite="a", name="x")
    (tmp_path / "b" / "scenarios" / "not-a-scenario").mkdir()
    suites = discover_suites(tmp_path)
    assert [(s.name, s.scenarios) for s in suites] == [("a", ["x"]), ("b", ["one", "two"])]


def test_load_scenario_reads_defaults_and_fixture(tmp_path):
    scen_dir = make_scenario(tmp_path)
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert scenario.name == "add-one" and scenario.id == "add-one"
    assert scenario.fixture_dir == scen_dir / "repo-fixture"
    assert scenario.success_threshold == 0.7
    assert scenario.timeout_minutes == 5
    assert scenario.validation_commands == {"test": PYTEST}
    assert scenario.solution_dir == scen_dir / "solution"
    assert scenario.hidden_tests_dir is None
    assert scenario.warnings == []


def test_suites_dir_comes_from_environment(tmp_path, monkeypatch):
    make_scenario(tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path))
    assert load_scenario("demo", "add-one").suite_path == tmp_path / "demo"


def test_repo_dir_is_preferred_over_repo_fixture(tmp_path):
    scen_dir = make_scenario(tmp_path, fixture_dir="repo-fixture")
    (scen_dir / "repo").mkdir()
    (scen_dir / "repo" / "a.txt").write_text("a")
    assert load_scenario("demo", "add-one", tmp_path).fixture_dir == scen_dir / "repo"


def test_original_typescript_suite_loads_unchanged(tmp_path):
    make_scenario(tmp_path, suite="update-deps", name="nx-pnpm-monorepo", yaml_text=ORIGINAL_STYLE_YAML,
                  extra={"oracle-answers.json": '{"Should I bump webpack?": "No", "count": 3}'})
    scenario = load_scenario("update-deps", "nx-pnpm-monorepo", tmp_path)
    assert scenario.id == "nx-pnpm-monorepo"
    assert scenario.timeout_minutes == 40
    assert list(scenario.validation_commands) == ["install", "lint", "test"]
    assert scenario.oracle_answers == {"Should I bump webpack?": "No", "count": "3"}
    assert scenario.targets["required"][0] == {"name": "typescript", "to": ">=5.5 <6"}
    assert scenario.constraints["blocklist"][0]["name"] == "webpack"
    assert scenario.llm_judge.enabled and scenario.llm_judge.model == "meta-llama/llama-3.1-8b-instruct"
    assert scenario.llm_judge.temperature == 0.1 and scenario.llm_judge.max_tokens == 2000
    slugs = [(slug, weight) for slug, weight, _ in scenario.llm_judge.categories]
    assert slugs == [("dependency_update_correctness", 30.0), ("server_component_implementation", 35.0)]
    assert scenario.rubric_weights == {"install_success": 1.0, "llm_judge": 1.0}
    assert scenario.raw["fixtures"]["figma_file"] == "./repo-fixture/x.json"  # unknown key kept
    # "no_*" pattern from the original is negated, with a warning saying so.
    assert scenario.heuristic_checks["patterns"][0]["negate"] is True
    assert any("no_client_hooks_in_server" in w for w in scenario.warnings)


def test_judge_category_without_percentage_has_weight_one():
    assert parse_judge_category("Category 1: Describe it") == ("category_1", 1.0, "Category 1: Describe it")
    assert parse_judge_category({"name": "Code Quality", "weight": 20})[:2] == ("code_quality", 20.0)


def test_a_misspelled_key_at_any_level_is_an_error(tmp_path):
    make_scenario(tmp_path, yaml_text="""\
validation:
  commands:
    test: "true"
heuristic_checks:
  enabled: true
  files:
    - name: f
      path: calc.py
      wieght: 2
future_block: {anything: 1}
""")
    with pytest.raises(ScenarioError, match=r"heuristic_checks\.files\[0\]\.wieght: unknown key "
                                            r"\(did you mean 'weight'\?\); also unknown: future_block"):
        load_scenario("demo", "add-one", tmp_path)


@pytest.mark.parametrize(("block", "fragment"), [
    ("validation:\n  comands:\n    test: 'true'\n", "validation.comands"),
    ("validation:\n  commands:\n    tset: 'true'\n", "validation.commands.tset"),
    ("hidden_tests:\n  comand: x\n", "hidden_tests.comand"),
    ("sandbox:\n  netwrok: true\n", "sandbox.netwrok"),
    ("grading:\n  protetc: ['x']\n", "grading.protetc"),
])
def test_a_misspelled_key_in_a_gating_block_is_an_error(tmp_path, block, fragment):
    make_scenario(tmp_path, yaml_text=block)
    with pytest.raises(ScenarioError, match=re.escape(fragment)) as err:
        load_scenario("demo", "add-one", tmp_path)
    assert "did you mean" in str(err.value)


def test_an_invalid_regex_is_refused_when_the_scenario_loads(tmp_path):
    make_scenario(tmp_path, yaml_text="heuristic_checks:\n  patterns:\n    - {name: p, file: '*.py', pattern: '(oops'}\n")
    with pytest.raises(ScenarioError, match=r"heuristic_checks\.patterns\[0\]\.pattern: invalid regular expression"):
        load_scenario("demo", "add-one", tmp_path)


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("timeout_minutes: soon\n", "timeout_minutes: 'soon' is not of type 'number'"),
        ("validation:\n  commands:\n    test: [1]\n", "validation.commands.test"),
        ("heuristic_checks:\n  patterns:\n    - name: p\n      file: a.py\n", "heuristic_checks.patterns[0]: 'pattern' is a required property"),
        ("success_threshold: 1.5\n", "success_threshold"),
        ("targets:\n  required:\n    - name: x\n", "targets.required[0]: 'to' is a required property"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_schema_errors_name_file_and_field(tmp_path, yaml_text, expected):
    make_scenario(tmp_path, yaml_text=yaml_text)
    with pytest.raises(ScenarioError) as err:
        load_scenario("demo", "add-one", tmp_path)
    message = str(err.value)
    assert "scenario.yaml" in message and expected in message
    assert "\n" not in message


def test_broken_yaml_reports_line(tmp_path):
    make_scenario(tmp_path, yaml_text="id: x\nvalidation: [unclosed\n")
    with pytest.raises(ScenarioError, match=r"scenario.yaml: line \d+, column \d+: invalid YAML"):
        load_scenario("demo", "add-one", tmp_path)


def test_missing_fixture_is_an_error(tmp_path):
    scen_dir = make_scenario(tmp_path)
    import shutil

    shutil.rmtree(scen_dir / "repo-fixture")
    with pytest.raises(ScenarioError, match="missing fixture: neither repo/ nor repo-fixture/"):
        load_scenario("demo", "add-one", tmp_path)


def test_artifact_scenario_needs_no_fixture(tmp_path):
    scen_dir = make_scenario(tmp_path, yaml_text="artifact:\n  type: figma\n  figma_file_id: abc\n")
    import shutil

    shutil.rmtree(scen_dir / "repo-fixture")
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert scenario.fixture_dir is None and not scenario.workspace_required
    assert scenario.artifact == {"type": "figma", "figma_file_id": "abc"}


def test_unknown_suite_and_scenario_list_what_exists(tmp_path):
    make_scenario(tmp_path)
    with pytest.raises(ScenarioError, match="unknown suite 'nope'.*available: demo"):
        load_scenario("nope", "add-one", tmp_path)
    with pytest.raises(ScenarioError, match="unknown scenario 'nope'.*available: add-one"):
        load_scenario("demo", "nope", tmp_path)


def test_missing_oracle_answers_file_is_an_error(tmp_path):
    make_scenario(tmp_path, yaml_text="oracle:\n  answers_file: ./answers.json\n")
    with pytest.raises(ScenarioError, match="oracle.answers_file: file not found"):
        load_scenario("demo", "add-one", tmp_path)


def test_tier_resolves_by_tier_or_full_label(tmp_path):
    make_scenario(tmp_path)
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert resolve_prompt(scenario, "L1").label == "L1-basic"
    assert resolve_prompt(scenario, "L1-basic").text == "add_one(1) should be 2; fix calc.py."
    assert resolve_prompt(scenario, "l2").tier == "L2"
    assert available_tiers(scenario) == ["L0-minimal", "L1-basic", "L2-directed"]


def test_tier_choice_is_deterministic_when_several_files_share_a_tier(tmp_path):
    make_scenario(tmp_path, prompts={"L1-zeta.md": "z", "L1-alpha.md": "a", "Lx-adversarial.md": "x", "notes.md": "n"})
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert resolve_prompt(scenario, "L1").label == "L1-alpha"
    assert resolve_prompt(scenario, "Lx").text == "x"
    assert available_tiers(scenario) == ["L1-alpha", "L1-zeta", "Lx-adversarial"]


def test_missing_tier_lists_available_tiers(tmp_path):
    make_scenario(tmp_path)
    scenario = load_scenario("demo", "add-one", tmp_path)
    with pytest.raises(ScenarioError, match="no prompt for tier 'L3'; available: L0-minimal, L1-basic, L2-directed"):
        resolve_prompt(scenario, "L3")


def test_prompts_inside_scenario_directory_are_found(tmp_path):
    scen_dir = make_scenario(tmp_path, prompts={})
    (scen_dir / "prompts").mkdir()
    (scen_dir / "prompts" / "L0-minimal.md").write_text("inner")
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert resolve_prompt(scenario, "L0").text == "inner"
