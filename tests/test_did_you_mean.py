"""Item 6: a misspelled name or key is refused with the known one it resembles.

An unknown key in scenario.yaml is an error at every level (top level included), naming the
file and the key; a misspelled scenario, suite, tier or agent on the command line is told the
close name when there is one, and nothing else when there is none.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.scenarios.loading import load_scenario
from harness.scenarios.model import ScenarioError
from harness._util.suggest import did_you_mean
from support.scenario_builders import make_scenario, use_local_store

TOP_LEVEL_TYPO = """\
id: add-one
validaton:
  commands:
    test: "{pytest}"
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    make_scenario(suites)
    use_local_store(monkeypatch, tmp_path, suites)
    return tmp_path


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def _stored_runs() -> list:
    return json.loads(bench("history", "--json").stdout)


# --------------------------------------------------------------------------- scenario.yaml keys


def test_item6_an_unknown_top_level_key_fails_with_the_suggestion_and_exit_2(env):
    file = env / "suites/demo/scenarios/add-one/scenario.yaml"
    file.write_text(TOP_LEVEL_TYPO.replace("{pytest}", "true"))
    err = _one_line_error(bench("demo", "add-one", "--agent", "oracle"))
    assert f"{file}: validaton: unknown key (did you mean 'validation'?)" in err
    assert _stored_runs() == []  # refused before anything ran


def test_item6_an_unknown_top_level_key_is_a_scenario_error_in_the_library(tmp_path):
    make_scenario(tmp_path, yaml_text=TOP_LEVEL_TYPO)
    with pytest.raises(ScenarioError, match=r"scenario\.yaml: validaton: unknown key \(did you mean 'validation'\?\)"):
        load_scenario("demo", "add-one", tmp_path)


@pytest.mark.parametrize(("yaml_text", "field", "suggestion"), [
    ("titel: x\n", "titel", "title"),
    ("validation:\n  comands:\n    test: 'true'\n", "validation.comands", "commands"),
    ("validation:\n  commands:\n    tset: 'true'\n", "validation.commands.tset", "test"),
    ("heuristic_checks:\n  files:\n    - {name: f, path: calc.py, wieght: 2}\n",
     "heuristic_checks.files[0].wieght", "weight"),
    ("llm_judge:\n  enabeld: true\n", "llm_judge.enabeld", "enabled"),
    ("llm_judge:\n  categories:\n    - {name: Quality, wieght: 2}\n", "llm_judge.categories[0].wieght", "weight"),
    ("targets:\n  required:\n    - {name: x, to: '1', too: '2'}\n", "targets.required[0].too", "to"),
    ("workspace:\n  exlude: ['*.log']\n", "workspace.exlude", "exclude"),
    ("tools:\n  fetch_ulr: true\n", "tools.fetch_ulr", "fetch_url"),
    ("sandbox:\n  netwrok: true\n", "sandbox.netwrok", "network"),
])
def test_item6_every_level_refuses_an_unknown_key_the_same_way(tmp_path, yaml_text, field, suggestion):
    make_scenario(tmp_path, yaml_text=yaml_text)
    with pytest.raises(ScenarioError) as err:
        load_scenario("demo", "add-one", tmp_path)
    message = str(err.value)
    assert message.endswith(f"scenario.yaml: {field}: unknown key (did you mean {suggestion!r}?)"), message
    assert "\n" not in message


def test_item6_an_unknown_key_with_nothing_close_lists_the_allowed_keys_instead(tmp_path):
    make_scenario(tmp_path, yaml_text="warmup:\n  commands:\n    - {cmd: 'true', zzqqxx: 5}\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario("demo", "add-one", tmp_path)
    assert str(err.value).endswith("warmup.commands[0].zzqqxx: unknown key (allowed: cmd)")
    assert "did you mean" not in str(err.value)


def test_item6_every_unknown_key_of_a_file_is_named(tmp_path):
    make_scenario(tmp_path, yaml_text="titel: x\nvalidation:\n  comands: {}\nqqzzxx: 1\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario("demo", "add-one", tmp_path)
    assert "titel: unknown key (did you mean 'title'?); also unknown: validation.comands, qqzzxx" in str(err.value)


def test_item6_a_valid_scenario_still_loads_and_free_form_blocks_take_any_key(tmp_path):
    make_scenario(tmp_path, yaml_text="""\
id: add-one
title: Make add_one add one
validation:
  commands:
    test: "{pytest}"
baseline:
  run: [{cmd: "pip install ."}]
fixtures:
  figma_file: ./repo-fixture/x.json
artifact:
  type: figma
  figma_file_id: abc
""")
    scenario = load_scenario("demo", "add-one", tmp_path)
    assert scenario.title == "Make add_one add one" and list(scenario.validation_commands) == ["test"]
    assert scenario.artifact == {"type": "figma", "figma_file_id": "abc"}
    assert scenario.raw["fixtures"] == {"figma_file": "./repo-fixture/x.json"}
    assert scenario.warnings == []


def test_item6_a_valid_scenario_still_runs(env):
    result = bench("demo", "add-one", "--agent", "oracle")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr


# --------------------------------------------------------------------------- names on the command line


def test_item6_a_misspelled_scenario_gets_its_suggestion(env):
    err = _one_line_error(bench("demo", "add-on", "--agent", "oracle"))
    assert "unknown scenario 'add-on' in suite 'demo' (did you mean 'add-one'?)" in err
    assert "available: add-one" in err


def test_item6_a_misspelled_suite_gets_its_suggestion(env):
    err = _one_line_error(bench("dmeo", "add-one", "--agent", "oracle"))
    assert "'dmeo' is neither a command nor a suite; did you mean `bench demo` (a suite)?" in err


def test_item6_a_misspelled_agent_gets_its_suggestion_and_nothing_is_stored(env):
    err = _one_line_error(bench("demo", "add-one", "--agent", "oracel"))
    assert "unknown agent 'oracel' (did you mean 'oracle'?); available: " in err
    assert _stored_runs() == []


def test_item6_a_misspelled_tier_gets_its_suggestion(env):
    err = _one_line_error(bench("demo", "add-one", "--tier", "L1-basik", "--agent", "oracle"))
    assert "no prompt for tier 'L1-basik' (did you mean 'L1-basic'?); available: L0-minimal, L1-basic" in err


@pytest.mark.parametrize(("args", "fragment"), [
    (("demo", "qqzzxx"), "unknown scenario 'qqzzxx' in suite 'demo': no "),
    (("qqzzxx", "add-one"), "'qqzzxx' is neither a command nor a suite."),
    (("demo", "add-one", "--agent", "qqzzxx"), "unknown agent 'qqzzxx'; available: "),
    (("demo", "add-one", "--tier", "L9"), "no prompt for tier 'L9'; available: "),
])
def test_item6_no_suggestion_appears_when_nothing_is_close(env, args, fragment):
    err = _one_line_error(bench(*args))
    assert fragment in err and "did you mean" not in err, err


def test_item6_the_helper_suggests_only_a_close_word():
    assert did_you_mean("validaton", ["id", "validation", "tools"]) == " (did you mean 'validation'?)"
    assert did_you_mean("qqzzxx", ["id", "validation", "tools"]) == ""
    assert did_you_mean("nope", ["openai", "oracle"]) == ""  # alike in three letters is not close
    assert did_you_mean("anything", []) == ""


def test_item6_a_dry_run_refuses_an_agent_that_does_not_exist(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.cli.bench import main
    from support.scenario_builders import make_scenario

    make_scenario(tmp_path / "suites")
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    result = CliRunner().invoke(main, ["demo", "--agent", "oracel", "--dry-run"])
    assert result.exit_code == 2 and "did you mean 'oracle'" in result.output
