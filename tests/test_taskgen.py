"""`bench tasks generate`: bug-fix tasks made from a project's own code and pytest tests by
mutation, each kept only when its tests catch it with assertion failures (not an import error)
and `bench check`'s checks prove it; the generated directory is an ordinary suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.cli.bench import main
from harness.sandbox import resolve_mode
from harness.taskgen import KINDS, all_mutants, in_order
from harness.taskgen.generate import screen
from harness.taskgen.testrun import Runner, find_modules, find_tests
from support.scenario_builders import use_local_store

CORE = '''\
"""Small helpers."""


def add(a, b):
    """The sum."""
    return a + b


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def first(items, n):
    return items[:n]


def untested(x):
    return x * 2 + 1
'''

TABLE = '''\
def build_table():
    table = {}
    for i in range(3):
        table[i] = i * 10
    if len(table) != 3:
        raise RuntimeError("incomplete table")
    return table


TABLE = build_table()
'''

TEST_CORE = '''\
from minicalc.core import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, 1) == -1


def test_clamp_inside():
    assert clamp(2, 0, 3) == 2


def test_clamp_low():
    assert clamp(-1, 0, 3) == 0


def test_clamp_high():
    assert clamp(7, 0, 3) == 3


def test_clamp_edges():
    assert clamp(0, 0, 3) == 0
    assert clamp(3, 0, 3) == 3
'''

TEST_FIRST = '''\
from minicalc.core import first
from minicalc.table import TABLE


def test_first_two():
    assert first([1, 2, 3], 2) == [1, 2]


def test_table():
    assert TABLE[2] == 20
'''


def make_project(root: Path, broken_test: bool = False, tests: bool = True) -> Path:
    (root / "minicalc").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "minicalc"\nversion = "0.3.1"\n')
    (root / "minicalc" / "__init__.py").write_text("")
    (root / "minicalc" / "core.py").write_text(CORE)
    (root / "minicalc" / "table.py").write_text(TABLE)
    if tests:
        (root / "tests").mkdir()
        (root / "tests" / "test_core.py").write_text(TEST_CORE)
        (root / "tests" / "test_first.py").write_text(TEST_FIRST)
    if broken_test:
        (root / "tests" / "test_broken.py").write_text("def test_wrong():\n    assert 1 == 2\n")
    return root


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path / "minicalc-src")


@pytest.fixture
def lab(tmp_path, monkeypatch):
    use_local_store(monkeypatch, tmp_path)
    return tmp_path


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _mutant(mutants, path, function, kind, original=None):
    return next(m for m in mutants if m.path == path and m.function == function and m.kind == kind
                and (original is None or m.original == original))


# --------------------------------------------------------------------------- mutants


def test_every_mutation_kind_is_found_and_each_edits_only_its_expression(project):
    mutants = all_mutants(project, find_modules(project))
    assert {m.kind for m in mutants} >= {"arith", "compare", "constant", "negate", "range", "slice"}
    assert set(KINDS) >= {m.kind for m in mutants}
    source = (project / "minicalc/core.py").read_text()
    plus = _mutant(mutants, "minicalc/core.py", "add", "arith")
    assert (plus.original, plus.replacement, plus.line) == ("a + b", "a - b", 6)
    lt = _mutant(mutants, "minicalc/core.py", "clamp", "compare", "value < low")
    assert lt.replacement == "value <= low"
    mutated = lt.apply(source)
    assert mutated.replace("value <= low", "value < low", 1) == source  # the rest byte for byte
    sliced = _mutant(mutants, "minicalc/core.py", "first", "slice")
    assert sliced.replacement == "n + 1"
    ranged = _mutant(mutants, "minicalc/table.py", "build_table", "range")
    assert ranged.apply((project / "minicalc/table.py").read_text()).count("range(3 + 1)") == 1
    negated = next(m for m in mutants if m.kind == "negate" and m.function == "clamp")
    assert negated.replacement.startswith("not ")
    # Docstrings, module-level code and the tests are never mutated.
    assert not [m for m in mutants if m.function == "" or m.path.startswith("tests/")]
    assert all("sum" not in m.original for m in mutants)


def test_the_order_of_candidates_is_fixed_by_the_seed(project):
    mutants = all_mutants(project, find_modules(project))
    again = all_mutants(project, find_modules(project))
    assert [m.key for m in in_order(mutants, 7)] == [m.key for m in in_order(again, 7)]
    assert [m.key for m in in_order(mutants, 7)] != [m.key for m in in_order(mutants, 8)]
    assert sorted(m.key for m in in_order(mutants, 7)) == sorted(m.key for m in mutants)


# --------------------------------------------------------------------------- screening


@pytest.mark.integration
def test_a_caught_mutant_is_kept_and_uncaught_or_import_breaking_ones_are_rejected(project, tmp_path):
    import shutil

    work = tmp_path / "work"
    shutil.copytree(project, work)
    runner = Runner(work, resolve_mode("auto").kind, timeout_s=60)
    tests = find_tests(work)
    assert tests == ["tests/test_core.py", "tests/test_first.py"]
    mutants = all_mutants(project, find_modules(project))

    run, reason = screen(runner, _mutant(mutants, "minicalc/core.py", "first", "slice"), tests, None, max_failing=5)
    assert reason is None
    assert [(f.file, f.test, f.kind) for f in run.failures] == [("tests/test_first.py", "test_first_two",
                                                                  "AssertionError")]
    # value < low -> value <= low changes nothing the tests see (clamp(0, 0, 3) is 0 either way).
    _, reason = screen(runner, _mutant(mutants, "minicalc/core.py", "clamp", "compare", "value < low"), tests, None, 5)
    assert reason == "not caught by the tests"
    run, reason = screen(runner, _mutant(mutants, "minicalc/core.py", "untested", "arith"), tests, None, 5)
    assert reason == "not caught by the tests" and not run.failures and run.passed == 8
    # range(3) -> range(3 + 1) breaks the module at import: a collection error, not a task.
    run, reason = screen(runner, _mutant(mutants, "minicalc/table.py", "build_table", "range"), tests, None, 5)
    assert reason == "import or collection error" and run.collection_errors == ["tests/test_first.py"]
    # Too broad a mutant for the cap.
    _, reason = screen(runner, _mutant(mutants, "minicalc/core.py", "add", "arith"), tests, None, max_failing=1)
    assert reason == "more than 1 tests fail"
    assert (work / "minicalc/core.py").read_text() == CORE  # every mutant undone


# --------------------------------------------------------------------------- the whole command


@pytest.mark.integration
def test_generated_tasks_are_verified_scenarios_the_oracle_passes_and_echo_fails(project, lab):
    out = lab / "mini-bugs"
    made = bench("tasks", "generate", str(project), "-o", str(out), "--count", "2", "--seed", "3",
                 "--kinds", "negate,slice", "--json")
    assert made.exit_code == 0, made.output
    summary = json.loads(made.stdout)
    assert len(summary["kept"]) == 2 and summary["tried"] >= 2
    assert summary["source"]["name"] == "minicalc" and summary["source"]["version"] == "0.3.1"
    assert json.loads((out / "taskgen.json").read_text())["kept"] == summary["kept"]
    names = sorted(p.name for p in (out / "scenarios").iterdir())
    assert names == ["minicalc-001", "minicalc-002"]
    for name in names:
        scen = out / "scenarios" / name
        task = json.loads((scen / "task.json").read_text())
        assert task["mutation"]["kind"] in ("negate", "slice") and task["version"] == "0.3.1"
        assert {"file", "function", "line"} <= set(task["mutation"])
        rel = task["mutation"]["file"]
        assert (scen / "solution" / rel).read_text() == (project / rel).read_text()
        assert (scen / "repo-fixture" / rel).read_text() != (project / rel).read_text()
        for hidden in task["hiddenTests"]:
            assert (scen / "hidden-tests" / hidden).is_file() and not (scen / "repo-fixture" / hidden).exists()
        prompt = (out / "prompts" / name / "L1-basic.md").read_text()
        assert task["failingTests"][0]["test"] in prompt
        assert rel not in prompt and task["mutation"]["replacement"] not in prompt  # never where the bug is
        assert yaml.safe_load((scen / "scenario.yaml").read_text())["success_threshold"] == 1.0

    # Second run with the same seed: the same tasks; an existing directory needs --force.
    refused = bench("tasks", "generate", str(project), "-o", str(out), "--count", "2")
    assert refused.exit_code == 2 and "--force" in refused.output
    again = bench("tasks", "generate", str(project), "-o", str(out), "--count", "2", "--seed", "3",
                  "--kinds", "negate,slice", "--force", "--json")
    assert again.exit_code == 0, again.output
    assert [k["function"] for k in json.loads(again.stdout)["kept"]] == [k["function"] for k in summary["kept"]]

    for agent, success in (("oracle", True), ("echo", False)):
        ran = bench(str(out), "--agent", agent, "--json")
        assert ran.exit_code == 0, ran.output
        runs = json.loads(ran.stdout)["runs"]
        assert sorted(r["scenario"] for r in runs) == names
        assert [r["isSuccessful"] for r in runs] == [success, success], [(r["status"], r["totalScore"]) for r in runs]


def test_bad_inputs_are_refused_in_one_line(tmp_path, lab):
    missing = bench("tasks", "generate", str(tmp_path / "nowhere/"), "-o", str(tmp_path / "o1"))
    assert missing.exit_code == 2 and "directory not found" in missing.output
    bad_name = bench("tasks", "generate", "not a package!", "-o", str(tmp_path / "o2"))
    assert bad_name.exit_code == 2 and "neither a directory nor a package name" in bad_name.output
    no_tests = make_project(tmp_path / "no-tests", tests=False)
    refused = bench("tasks", "generate", str(no_tests), "-o", str(tmp_path / "o3"))
    assert refused.exit_code == 2 and "no pytest tests found" in refused.output
    assert not (tmp_path / "o3").exists()
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    occupied = bench("tasks", "generate", str(no_tests), "-o", str(full))
    assert occupied.exit_code == 2 and "not empty" in occupied.output and (full / "keep.txt").exists()
    reserved = bench("tasks", "generate", str(no_tests), "-o", str(tmp_path / "tasks"))
    assert reserved.exit_code == 2 and "name of a bench command" in reserved.output
    kinds = bench("tasks", "generate", str(no_tests), "-o", str(tmp_path / "o4"), "--kinds", "swap")
    assert kinds.exit_code == 2 and "unknown kind" in kinds.output
    model = bench("tasks", "generate", str(no_tests), "-o", str(tmp_path / "o5"), "--model", "nomodel")
    assert model.exit_code == 2 and "--model" in model.output and "PROVIDER:MODEL" in model.output
    assert not any((tmp_path / name).exists() for name in ("o1", "o2", "o4", "o5"))


@pytest.mark.integration
def test_a_baseline_that_fails_everywhere_is_refused(tmp_path, lab):
    project = tmp_path / "only-broken"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("def one():\n    return 1\n")
    (project / "test_pkg.py").write_text("from pkg import one\n\n\ndef test_one():\n    assert one() == 2\n")
    refused = bench("tasks", "generate", str(project), "-o", str(tmp_path / "out"))
    assert refused.exit_code == 2 and "the baseline fails" in refused.output


@pytest.mark.integration
def test_a_failing_test_file_is_dropped_from_the_baseline(tmp_path, lab):
    project = make_project(tmp_path / "with-broken", broken_test=True)
    # No and/or in the project: no candidate, so only the baseline runs.
    made = bench("tasks", "generate", str(project), "-o", str(tmp_path / "o"), "--count", "1", "--kinds", "boolean")
    assert made.exit_code == 1  # fewer tasks than asked for
    assert "tests/test_broken.py" in made.output and "dropped" in made.output
    summary = json.loads((tmp_path / "o" / "taskgen.json").read_text())
    assert summary["baseline"]["droppedTestFiles"] == ["tests/test_broken.py"]
    assert summary["baseline"]["keptTestFiles"] == 2 and summary["tried"] == 0 and summary["kept"] == []


@pytest.mark.integration
def test_a_real_package_sdist_is_fetched_and_gives_verified_tasks(lab):
    """Downloads the toolz 1.2.0 source distribution (the package index is needed)."""
    out = lab / "toolz-bugs"
    made = bench("tasks", "generate", "toolz==1.2.0", "-o", str(out), "--count", "1", "--json")
    assert made.exit_code == 0, made.output
    summary = json.loads(made.stdout)
    source = summary["source"]
    assert (source["kind"], source["name"], source["version"], source["archive"]) == (
        "sdist", "toolz", "1.2.0", "toolz-1.2.0.tar.gz")
    assert len(source["sha256"]) == 64
    assert len(summary["kept"]) == 1
    for kept in summary["kept"]:
        task = json.loads((out / "scenarios" / kept["name"] / "task.json").read_text())
        assert task["sha256"] == source["sha256"] and task["mutation"]["file"].startswith("toolz/")


@pytest.mark.integration
def test_a_model_writes_the_prompt_from_the_failing_tests_through_the_provider_layer(project, lab, monkeypatch):
    from harness.scripted import ScriptedServer, parse_script

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    # The model answers only when the request carries the failing test's name.
    script = parse_script({"if_sent": "test_first_two", "steps": [{"say": "MODEL-WRITTEN: head() returns too much."}],
                           "otherwise": [{"say": "no failing test was given"}]})
    with ScriptedServer(script) as server:
        out = lab / "model-bugs"
        made = bench("tasks", "generate", str(project), "-o", str(out), "--count", "1", "--kinds", "slice",
                     "--model", "openai-compatible:scripted", "--base-url", server.base_url("openai"))
    assert made.exit_code == 0, made.output
    prompt = (out / "prompts" / "minicalc-001" / "L1-basic.md").read_text()
    assert prompt.startswith("MODEL-WRITTEN")
    task = json.loads((out / "scenarios" / "minicalc-001" / "task.json").read_text())
    assert task["promptWrittenBy"] == "openai-compatible:scripted"
    assert "test_first_two" in (out / "prompts" / "minicalc-001" / "L0-minimal.md").read_text()
