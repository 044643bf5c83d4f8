"""SWE-bench instance files run as suites (docs/swe-tasks.md).

Loading maps an instance onto a scenario (the repository's tree at base_commit from a local
clone or bundle, the problem statement as the prompt, the gold patch as the oracle's solution)
and refuses, naming file:line and the field, what it cannot use; grading lays the test patch's
files over the grading copy, runs FAIL_TO_PASS and PASS_TO_PASS and reports both; the shipped
example is solved by `oracle` and not by `echo`; an agent cannot forge a pass by pre-writing the
hidden tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness.agents as agents
from harness.agents.base import AgentResult
from harness.cli.bench import main
from harness.grading.evaluators.swe_tests import build_test_command, junit_key, outcomes_from_summary
from harness.scenarios.runner import RunOptions, run_batch
from harness.scenarios.loading import discover_suites, load_scenario, resolve_prompt
from harness.scenarios.model import ScenarioError
from harness.tasks import locate_suite
from harness.tasks.swe import using_repos_dir
from harness.testing.results import MemoryResults

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "examples" / "swe-tasks"
FILE = SHIPPED / "instances.jsonl"
REPOS = SHIPPED / "repos"
IDS = ["textkit-slug-separators", "textkit-truncate-width", "textkit-duration-seconds"]
BASE = "42f0a21267150cef1e37db69dd954adb60ea4381"
SLUG = "textkit-slug-separators"


def shipped_lines() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text().splitlines()]


def write_instances(folder: Path, items: list, name: str = "mine.jsonl") -> Path:
    """An instance file in ``folder`` with the shipped repository beside it in ``repos/``."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "repos").exists():
        shutil.copytree(REPOS, folder / "repos")
    file = folder / name
    file.write_text("".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items))
    return file


def load(file: Path, name: str):
    return load_scenario(file.stem, name, file.parent)


def bwrap_or_skip() -> None:
    from harness.sandbox.bwrap import probe

    problem = probe()
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must run the bwrap sandbox: {problem}")
        pytest.skip(problem)


@pytest.fixture
def bench_env(tmp_path, monkeypatch):
    """A private results store and spool; no worker URL."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.delenv("ZE_BENCHMARKS_REPOS_DIR", raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    return tmp_path


def bench(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


# --------------------------------------------------------------------------- loading


def test_a_shipped_instance_loads_as_the_tree_at_base_commit_with_its_prompt_and_solution():
    scenario = load(FILE, SLUG)
    line = shipped_lines()[0]
    assert (scenario.suite, scenario.name, scenario.warnings) == ("instances", SLUG, [])
    assert scenario.success_threshold == 1.0 and scenario.validation_commands == {}
    files = sorted(p.relative_to(scenario.fixture_dir).as_posix() for p in scenario.fixture_dir.rglob("*")
                   if p.is_file())
    source = SHIPPED / "source"
    assert files == sorted(p.relative_to(source).as_posix() for p in source.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts)
    assert (scenario.fixture_dir / "textkit" / "slug.py").read_text() == (source / "textkit" / "slug.py").read_text()
    assert not (scenario.fixture_dir / ".git").exists()
    prompt = resolve_prompt(scenario, "L1")
    assert (prompt.label, prompt.text) == ("L1-problem", line["problem_statement"])
    assert (scenario.solution_dir / "gold.patch").read_text() == line["patch"]
    assert (scenario.solution_dir / "solve.sh").is_file()
    # The hidden tests are the test patch's files as it leaves them; never in the fixture.
    hidden = (scenario.hidden_tests_dir / "tests" / "test_slug.py").read_text()
    assert "def test_no_separator_at_either_end" in hidden
    assert "test_no_separator_at_either_end" not in (scenario.fixture_dir / "tests" / "test_slug.py").read_text()
    settings = scenario.raw["swe"]
    assert settings["baseCommit"] == BASE and settings["repo"] == "zebench-examples/textkit"
    assert settings["failToPass"] == line["FAIL_TO_PASS"] and settings["passToPass"] == line["PASS_TO_PASS"]
    assert settings["testCommand"] == "python -m pytest -rA -p no:cacheprovider"


def test_test_ids_are_read_from_lists_and_from_json_text_as_swe_bench_stores_them():
    line = shipped_lines()[1]
    assert isinstance(line["FAIL_TO_PASS"], str)  # the shipped file has both spellings
    settings = load(FILE, "textkit-truncate-width").raw["swe"]
    assert settings["failToPass"] == json.loads(line["FAIL_TO_PASS"])
    assert settings["passToPass"] == json.loads(line["PASS_TO_PASS"])


def test_the_shipped_bundle_holds_the_commit_make_repo_builds():
    if shutil.which("git") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must have git: the shipped bundle is checked with it")
        pytest.skip("git is not installed")
    done = subprocess.run([sys.executable, str(SHIPPED / "make_repo.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"built {BASE}, shipped {BASE}"


def test_a_path_to_an_instance_file_is_a_suite_named_after_its_stem(tmp_path):
    where = locate_suite(FILE)
    assert (where.root, where.suite, where.scenario) == (SHIPPED, "instances", None)
    suites = discover_suites(SHIPPED)
    assert [(s.name, s.scenarios) for s in suites] == [("instances", IDS)]
    array = tmp_path / "arr"
    write_instances(array, [], name="unused.jsonl").unlink()
    (array / "as-array.json").write_text(json.dumps(shipped_lines()[:2]))
    assert [(s.name, s.scenarios) for s in discover_suites(array)] == [("as-array", IDS[:2])]
    assert load_scenario("as-array", IDS[1], array).raw["swe"]["baseCommit"] == BASE


def _bad(field: str, value) -> dict:
    item = dict(shipped_lines()[0])
    if value is None:
        del item[field]
    else:
        item[field] = value
    return item


LOAD_ERRORS = [
    # (label, the second line of the file, the name loaded, words of the error)
    ("bad-json", '{"instance_id": "x", oops}', "line-2", "mine.jsonl:2: invalid JSON"),
    ("not-an-object", "[1, 2]", "line-2", "mine.jsonl:2: expected an object"),
    ("missing-field", _bad("patch", None), SLUG, "mine.jsonl:2: patch: missing"),
    ("unsafe-id", _bad("instance_id", "../escape"), "line-2",
     "mine.jsonl:2: instance_id: '../escape' is not a safe name"),
    ("repo-form", _bad("repo", "textkit"), SLUG, "mine.jsonl:2: repo: expected owner/name, got 'textkit'"),
    ("commit-form", _bad("base_commit", "main"), SLUG, "mine.jsonl:2: base_commit: expected a commit hash"),
    ("ids-type", _bad("FAIL_TO_PASS", 3), SLUG, "mine.jsonl:2: FAIL_TO_PASS: expected a list of test ids"),
    ("ids-text", _bad("PASS_TO_PASS", "[not json"), SLUG, "mine.jsonl:2: PASS_TO_PASS: expected a list of test ids"),
    ("no-f2p", _bad("FAIL_TO_PASS", []), SLUG, "mine.jsonl:2: FAIL_TO_PASS: empty"),
    ("install-type", _bad("install", "  "), SLUG, "mine.jsonl:2: install: expected a list of commands"),
    ("image-dir", _bad("image", "no-such-dir"), SLUG, "mine.jsonl:2: image: directory not found"),
]


@pytest.mark.parametrize(("label", "line", "name", "words"), LOAD_ERRORS, ids=[e[0] for e in LOAD_ERRORS])
def test_a_bad_line_is_an_error_naming_file_line_and_field_and_spares_the_others(tmp_path, label, line, name, words):
    good = dict(shipped_lines()[1])
    file = write_instances(tmp_path / "suite", [good, line])
    with pytest.raises(ScenarioError, match=".*") as caught:
        load(file, name)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)
    assert load(file, good["instance_id"]).name == good["instance_id"]


def test_a_duplicate_instance_id_is_refused_naming_the_first(tmp_path):
    line = shipped_lines()[0]
    file = write_instances(tmp_path / "suite", [line, line])
    assert discover_suites(file.parent)[0].scenarios == [SLUG, f"{SLUG}@line-2"]
    with pytest.raises(ScenarioError, match=r"mine.jsonl:2: instance_id: .* already the id of .*mine.jsonl:1"):
        load(file, f"{SLUG}@line-2")


def test_a_missing_clone_names_the_instance_the_repo_and_where_it_looked(tmp_path):
    line = dict(shipped_lines()[0], repo="someone/elsewhere")
    file = write_instances(tmp_path / "suite", [line])
    with pytest.raises(ScenarioError) as caught:
        load(file, SLUG)
    message = str(caught.value)
    assert "mine.jsonl:1: repo: instance textkit-slug-separators: no clone of someone/elsewhere" in message
    for looked in ("someone__elsewhere", "repos/elsewhere,", "someone__elsewhere.bundle", "elsewhere.bundle"):
        assert looked in message


def test_an_unknown_commit_is_an_error_naming_the_instance_and_the_clone(tmp_path):
    file = write_instances(tmp_path / "suite", [dict(shipped_lines()[0], base_commit="0" * 40)])
    with pytest.raises(ScenarioError, match=r"mine.jsonl:1: base_commit: instance textkit-slug-separators of "
                                            r"zebench-examples/textkit: commit 0{40} is not in .*\.bundle"):
        load(file, SLUG)


def test_clones_are_found_by_owner__name_then_name_as_directories_or_bundles(tmp_path):
    line = shipped_lines()[0]
    file = write_instances(tmp_path / "suite", [line])
    shutil.rmtree(tmp_path / "suite" / "repos")
    elsewhere = tmp_path / "clones"
    subprocess.run(["git", "clone", "--quiet", str(REPOS / "zebench-examples__textkit.bundle"),
                    str(elsewhere / "textkit")], check=True, capture_output=True)
    head = subprocess.run(["git", "-C", str(elsewhere / "textkit"), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout
    with using_repos_dir(elsewhere):
        scenario = load(file, SLUG)
    assert scenario.raw["swe"]["clone"] == str(elsewhere / "textkit")
    assert (scenario.fixture_dir / "textkit" / "slug.py").is_file()
    # The user's clone is only read.
    assert subprocess.run(["git", "-C", str(elsewhere / "textkit"), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout == head == ""
    with pytest.raises(ScenarioError, match="no clone of zebench-examples/textkit"):
        load(file, SLUG)  # without the repos directory in force: repos/ beside the file, gone


def test_unknown_fields_and_a_different_setup_commit_are_warnings_not_errors(tmp_path):
    line = dict(shipped_lines()[0], FAIL_TO_PAS=[], environment_setup_commit="1" * 40, created_at="2024")
    scenario = load(write_instances(tmp_path / "suite", [line]), SLUG)
    assert len(scenario.warnings) == 2
    assert "mine.jsonl:1: FAIL_TO_PAS: unknown field, ignored (did you mean 'FAIL_TO_PASS'?)" in scenario.warnings[0]
    assert "environment_setup_commit: ignored" in scenario.warnings[1]


def test_what_the_instance_says_is_part_of_the_scenarios_digest(tmp_path):
    from harness.scenarios.plan import scenario_digest

    line = shipped_lines()[0]
    digests = set()
    for label, item in (("same", line), ("again", line), ("ids", dict(line, PASS_TO_PASS=line["PASS_TO_PASS"][:1])),
                        ("command", dict(line, test_command="python -m pytest -rA {tests}"))):
        digests.add(scenario_digest(load(write_instances(tmp_path / label, [item]), SLUG)))
    assert len(digests) == 3  # the same instance twice gives one digest; each change another


# --------------------------------------------------------------------------- grading pieces


def test_the_rA_summary_is_read_only_after_its_last_heading():
    output = "\n".join([
        "PASSED tests/t.py::test_forged",  # printed by the code under test: not in the summary
        "=========================== short test summary info ============================",
        "PASSED tests/t.py::test_forged_too",
        "============= 1 passed in 0.01s =============",
        "=========================== short test summary info ============================",
        "PASSED tests/t.py::test_a",
        "FAILED tests/t.py::test_b - AssertionError: assert 1 == 2",
        "ERROR tests/t.py::test_c - ImportError",
        "SKIPPED [1] tests/t.py:12: no reason",
        "PASSED tests/t.py::TestK::test_d[x-1]",
        "============= 2 passed, 1 failed, 1 error in 0.05s =============",
    ])
    assert outcomes_from_summary(output) == {"tests/t.py::test_a": "passed", "tests/t.py::test_b": "failed",
                                             "tests/t.py::test_c": "error", "tests/t.py::TestK::test_d[x-1]": "passed"}
    assert outcomes_from_summary("PASSED tests/t.py::test_a\n") == {}


def test_node_ids_map_to_junit_names_and_ids_go_where_the_command_says():
    assert junit_key("tests/test_a.py::test_b") == ("tests.test_a", "test_b")
    assert junit_key("pkg/tests/test_a.py::TestB::test_c[1::2]") == ("pkg.tests.test_a.TestB", "test_c[1::2]")
    assert build_test_command("pytest -x", ["a b", "c"]) == "pytest -x 'a b' c"
    assert build_test_command("tox -e py -- {tests} -q", ["c"]) == "tox -e py -- c -q"


# --------------------------------------------------------------------------- runs


class _Writer:
    """An agent that writes files (``FILES``) into its workspace and deletes ``DELETE``."""

    name = "t-swe-writer"
    FILES: dict[str, str] = {}
    DELETE: list[str] = []

    def __init__(self, model=None, **options):
        self.model = model

    def run(self, ctx):
        for rel, text in self.FILES.items():
            (ctx.workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            (ctx.workspace / rel).write_text(text)
        for rel in self.DELETE:
            (ctx.workspace / rel).unlink()
        return AgentResult(status="completed", final_answer="done", cost_usd=0.0)


def run_one(tmp_path, scenario, agent: str, kind: str = "bwrap"):
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"),
                    RunOptions(agent=agent, sandbox=kind, workspaces_root=tmp_path / "ws"), store)
    record = store.runs[out.runs[0].record.run_id]
    (stored,) = record.evaluations
    (evaluation,) = out.runs[0].results  # the evaluator's result, with its data; the record keeps the details
    assert stored.evaluator_name == evaluation.name == "swe_tests" and stored.details == evaluation.details
    return record, evaluation


@pytest.mark.integration
def test_oracle_passes_and_echo_fails_every_shipped_instance_with_both_lists_reported(bench_env):
    bwrap_or_skip()
    result = bench(str(FILE), "--agent", "oracle", "--agent", "echo", "--repos-dir", str(REPOS), "--batch-id",
                   "swe-shipped", "--sandbox", "bwrap", "--json")
    runs = json.loads(result.stdout)["runs"]
    by_cell = {(r["scenario"], r["agent"]): r for r in runs}
    assert set(by_cell) == {(i, a) for i in IDS for a in ("oracle", "echo")}
    for line in shipped_lines():
        ident = line["instance_id"]
        f2p, p2p = (v if isinstance(v, list) else json.loads(v) for v in (line["FAIL_TO_PASS"], line["PASS_TO_PASS"]))
        oracle, echo = by_cell[(ident, "oracle")], by_cell[(ident, "echo")]
        assert (oracle["status"], oracle["isSuccessful"], oracle["totalScore"]) == ("completed", True, 1.0), ident
        assert oracle["suite"] == "instances" and oracle["tier"] == "L1"
        assert oracle["metadata"]["finalAnswer"].startswith("$ bash ")
        (evaluation,) = oracle["evaluations"]
        assert evaluation["evaluatorName"] == "swe_tests"
        assert f"FAIL_TO_PASS {len(f2p)}/{len(f2p)}, PASS_TO_PASS {len(p2p)}/{len(p2p)}" in evaluation["details"]
        assert (echo["status"], echo["failureClass"], echo["isSuccessful"]) == ("failed", "agent", False), ident
        (evaluation,) = echo["evaluations"]
        assert f"FAIL_TO_PASS 0/{len(f2p)}, PASS_TO_PASS {len(p2p)}/{len(p2p)}" in evaluation["details"]
        assert echo["totalScore"] == pytest.approx(len(p2p) / (len(f2p) + len(p2p)))
        assert all(f"✗ {i} (failed)" in evaluation["details"] for i in f2p)
    # One instance by name, and the repos directory beside the file by default.
    one = json.loads(bench(str(FILE), IDS[1], "--agent", "oracle", "--sandbox", "bwrap", "--json").stdout)["runs"]
    assert [(r["scenario"], r["isSuccessful"]) for r in one] == [(IDS[1], True)]


@pytest.mark.integration
def test_under_podman_the_host_runtime_image_runs_the_tests(bench_env):
    import os

    from harness.sandbox import container

    problem = container.probe("podman")
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must run the podman sandbox: {problem}")
        pytest.skip(problem)
    result = bench(str(FILE), IDS[0], IDS[2], "--agent", "oracle", "--agent", "echo", "--sandbox", "podman", "--json")
    runs = json.loads(result.stdout)["runs"]
    outcome = {(r["scenario"], r["agent"]): (r["status"], r["isSuccessful"]) for r in runs}
    assert outcome == {(i, "oracle"): ("completed", True) for i in (IDS[0], IDS[2])} | \
        {(i, "echo"): ("failed", False) for i in (IDS[0], IDS[2])}
    assert {r["metadata"]["sandbox"]["kind"] for r in runs} == {"podman"}


@pytest.mark.integration
def test_a_partial_fix_passes_part_of_fail_to_pass(tmp_path, monkeypatch):
    bwrap_or_skip()
    monkeypatch.setitem(agents._REGISTRY, _Writer.name, _Writer)
    fixed = load(FILE, SLUG).fixture_dir / "textkit" / "slug.py"
    # Runs collapse, but separators at the ends stay.
    partial = fixed.read_text().replace('r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    monkeypatch.setattr(_Writer, "FILES", {"textkit/slug.py": partial})
    record, evaluation = run_one(tmp_path, load(FILE, SLUG), _Writer.name)
    assert (record.status, record.failure_class, record.is_successful) == ("failed", "agent", False)
    assert evaluation.data["fail_to_pass"] == {"passed": 1, "total": 2,
                                               "failing": ["tests/test_slug.py::test_no_separator_at_either_end"]}
    assert evaluation.data["pass_to_pass"] == {"passed": 3, "total": 3, "failing": []}
    assert record.total_score == pytest.approx(4 / 5)


FORGED = """\
def test_seconds_after_minutes():
    pass


def test_seconds_alone():
    pass


def test_format_keeps_seconds():
    pass
"""


@pytest.mark.integration
def test_an_agent_cannot_forge_a_pass_by_writing_the_hidden_tests(tmp_path, monkeypatch):
    bwrap_or_skip()
    monkeypatch.setitem(agents._REGISTRY, _Writer.name, _Writer)
    # The new test file pre-written with passing bodies, a P2P file deleted, an existing one gutted.
    monkeypatch.setattr(_Writer, "FILES", {"tests/test_duration_seconds.py": FORGED,
                                           "tests/test_wrap.py": "def test_word_count():\n    pass\n"})
    monkeypatch.setattr(_Writer, "DELETE", ["tests/test_durations.py"])
    record, evaluation = run_one(tmp_path, load(FILE, "textkit-duration-seconds"), _Writer.name)
    assert (record.status, record.is_successful) == ("failed", False)
    assert evaluation.data["fail_to_pass"]["passed"] == 0
    assert evaluation.data["pass_to_pass"] == {"passed": 4, "total": 4, "failing": []}  # restored from the fixture


@pytest.mark.integration
def test_a_test_command_without_a_report_is_read_from_the_rA_summary(tmp_path, monkeypatch):
    bwrap_or_skip()
    # A runner the harness does not recognise as pytest, with the report it asks every pytest for turned off.
    command = ("PYTEST_ADDOPTS= python -c \"import sys; sys.exit(__import__('pytest').main(['-rA', '-p', "
               "'no:cacheprovider', *sys.argv[1:]]))\" {tests}")
    file = write_instances(tmp_path / "suite", [dict(shipped_lines()[0], test_command=command)])
    record, evaluation = run_one(tmp_path, load(file, SLUG), "echo")
    assert evaluation.data["outcomes_from"] == "-rA summary"
    assert evaluation.data["fail_to_pass"]["passed"] == 0 and evaluation.data["pass_to_pass"]["passed"] == 3
    monkeypatch.setitem(agents._REGISTRY, _Writer.name, _Writer)
    gold = (load(file, SLUG).fixture_dir / "textkit" / "slug.py").read_text().replace(
        'r"[^a-z0-9]", separator, ascii_text.lower())',
        'r"[^a-z0-9]+", separator, ascii_text.lower()).strip(separator)')
    monkeypatch.setattr(_Writer, "FILES", {"textkit/slug.py": gold})
    record, evaluation = run_one(tmp_path, load(file, SLUG), _Writer.name)
    assert (record.status, record.total_score) == ("completed", 1.0), evaluation.details


def test_a_test_patch_that_does_not_apply_is_a_grading_error_with_the_reason(tmp_path):
    broken = shipped_lines()[0]["test_patch"].replace("def test_drops_accents():", "def test_renamed_meanwhile():")
    file = write_instances(tmp_path / "suite", [dict(shipped_lines()[0], test_patch=broken)])
    scenario = load(file, SLUG)
    assert len(scenario.warnings) == 1 and "test_patch: does not apply" in scenario.warnings[0]
    record, evaluation = run_one(tmp_path, scenario, "echo", kind="none")
    assert (record.status, record.failure_class) == ("error", "harness")
    assert evaluation.status == "error"
    assert "the instance's test_patch does not apply to zebench-examples/textkit at 42f0a2126715" in evaluation.details
    assert "tests/test_slug.py" in evaluation.details


# --------------------------------------------------------------------------- the command line


def test_bench_list_shows_an_instance_file_and_its_broken_lines(bench_env, tmp_path):
    listed = json.loads(bench("list", str(FILE), "--json").stdout)
    rows = {r["scenario"]: r for r in listed["scenarios"]}
    assert list(rows) == IDS and {r["suite"] for r in rows.values()} == {"instances"}
    assert rows[SLUG]["tiers"] == ["L1-problem"] and rows[SLUG]["hasSolution"] and rows[SLUG]["hasHiddenTests"]
    assert rows[SLUG]["title"] == "slugify leaves runs of separators and separators at the ends"
    file = write_instances(tmp_path / "suite", [shipped_lines()[0], "{nope"])
    result = CliRunner().invoke(main, ["list", str(file), "--json"])
    assert result.exit_code == 1
    broken = {r["scenario"]: r for r in json.loads(result.stdout)["scenarios"]}
    assert "mine.jsonl:2: invalid JSON" in broken["line-2"]["error"] and "error" not in broken[SLUG]


def test_bench_takes_repos_dir_and_says_what_is_wrong(bench_env, tmp_path):
    file = write_instances(tmp_path / "suite", [shipped_lines()[0]])
    shutil.move(tmp_path / "suite" / "repos", tmp_path / "clones")
    plan = json.loads(bench(str(file), "--repos-dir", str(tmp_path / "clones"), "--dry-run", "--json").stdout)
    assert plan["cells"] == [f"mine/{SLUG}/L1-problem/echo/-/-#0"]
    listed = json.loads(bench("list", str(file), "--repos-dir", str(tmp_path / "clones"), "--json").stdout)
    assert [r["scenario"] for r in listed["scenarios"]] == [SLUG]
    missing = bench(str(file), "--dry-run", code=2)
    assert "error: " in missing.stderr and "mine.jsonl:1: repo: instance textkit-slug-separators: no clone" in \
        missing.stderr
    assert "--repos-dir: directory not found" in bench(str(file), "--repos-dir", str(tmp_path / "nope"),
                                                       "--dry-run", code=2).stderr
    assert "no such file" in bench(str(tmp_path / "absent.jsonl"), "--dry-run", code=2).stderr
    unknown = bench(str(FILE), "textkit-slug-separator", "--dry-run", code=2).stderr
    assert "unknown instance 'textkit-slug-separator'" in unknown
    assert "did you mean 'textkit-slug-separators'" in unknown


@pytest.mark.integration
def test_install_commands_run_before_the_agent_and_again_before_the_tests(tmp_path):
    bwrap_or_skip()
    marker = "python -c \"import pathlib; pathlib.Path('installed.txt').write_text('yes')\""
    check = ("PYTEST_ADDOPTS= python -c \"import pathlib, sys; "
             "sys.exit(pathlib.Path('installed.txt').read_text() != 'yes')\"")
    file = write_instances(tmp_path / "suite", [dict(shipped_lines()[0], install=[marker],
                                                     test_command=f"{check} && python -m pytest -rA {{tests}}")])
    scenario = load(file, SLUG)
    assert scenario.warmup == {"commands": [marker]}
    record, evaluation = run_one(tmp_path, scenario, "oracle")
    assert (record.status, record.total_score) == ("completed", 1.0), evaluation.details
    assert record.metadata["warmup"]["ok"] is True
    failing = write_instances(tmp_path / "other", [dict(shipped_lines()[0], install=["exit 3"])])
    store = MemoryResults()
    scenario = load(failing, SLUG)
    out = run_batch(scenario, resolve_prompt(scenario, "L1"),
                    RunOptions(agent="oracle", sandbox="bwrap", workspaces_root=tmp_path / "ws"), store)
    record = store.runs[out.runs[0].record.run_id]
    assert (record.status, record.failure_class) == ("error", "infra")
    assert "warmup command failed" in record.metadata["error"] and "exit 3" in record.metadata["error"]


@pytest.mark.integration
def test_files_the_test_patch_deletes_are_deleted_from_the_grading_copy_and_stay_deleted(tmp_path):
    bwrap_or_skip()
    lines = (SHIPPED / "source" / "tests" / "test_wrap.py").read_text().splitlines()
    deletion = ("diff --git a/tests/test_wrap.py b/tests/test_wrap.py\ndeleted file mode 100644\n"
                "--- a/tests/test_wrap.py\n+++ /dev/null\n"
                f"@@ -1,{len(lines)} +0,0 @@\n" + "".join(f"-{line}\n" for line in lines))
    line = shipped_lines()[0]
    command = "test ! -e tests/test_wrap.py && python -m pytest -rA -p no:cacheprovider {tests}"
    file = write_instances(tmp_path / "suite", [dict(line, test_patch=line["test_patch"] + deletion,
                                                     test_command=command)])
    scenario = load(file, SLUG)
    assert scenario.warnings == [] and scenario.raw["swe"]["deleted"] == ["tests/test_wrap.py"]
    record, evaluation = run_one(tmp_path, scenario, "oracle")
    assert (record.status, record.total_score) == ("completed", 1.0), evaluation.details


# --------------------------------------------------------------------------- an instance with its own image

GREET = '#!/bin/sh\n# greet NAME [--shout]\nif [ "$2" = "--shout" ]; then echo "HELLO, $1"; else echo "Hello, $1!"; fi\n'
GREET_FIXED = ('#!/bin/sh\n# greet NAME [--shout]\nif [ "$2" = "--shout" ]; then echo "HELLO, $1!" | tr a-z A-Z; '
               'else echo "Hello, $1!"; fi\n')
CASES = 'greets_by_name() { zb-check "Hello, Ada!" "$(sh ./greet.sh Ada)"; }\n'
CASES_NEW = CASES + 'shouts() { zb-check "HELLO, ADA!" "$(sh ./greet.sh Ada --shout)"; }\n'
# The instance's test runner: runs the named cases, then prints pytest's -rA summary lines.
RUNNER = """#!/bin/sh
. ./tests/cases.sh
summary=""
for id in "$@"; do
    if ( "${id##*::}" ); then summary="$summary PASSED:$id"; else summary="$summary FAILED:$id"; fi
done
echo "=========================== short test summary info ============================"
for line in $summary; do echo "${line%%:*} ${line#*:}"; done
"""
# A program only the instance's image has: the tests cannot pass in the host's runtime.
ZB_CHECK = '#!/bin/sh\n# zb-check EXPECTED ACTUAL: whether they are equal\n[ "$1" = "$2" ]\n'
IMAGE_F2P, IMAGE_P2P = ["tests/cases.sh::shouts"], ["tests/cases.sh::greets_by_name"]


def _git(*args: str, cwd: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def image_instance(folder: Path) -> Path:
    """An instance file in ``folder``: a tiny shell repository (its clone in ``repos/``), its
    tests run by a shell runner printing ``PASSED``/``FAILED`` summary lines, in an image built
    offline FROM scratch with the host's static busybox and a program only the image has."""
    import os

    repo = folder / "repos" / "zebench-tests__greet"
    (repo / "tests").mkdir(parents=True)
    (repo / "greet.sh").write_text(GREET)
    (repo / "tests" / "cases.sh").write_text(CASES)
    (repo / "tests" / "run.sh").write_text(RUNNER)
    _git("init", "--quiet", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "--quiet", "-m", "base", cwd=repo)
    base = _git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / "greet.sh").write_text(GREET_FIXED)
    patch = _git("diff", cwd=repo)
    _git("checkout", "--quiet", "--", ".", cwd=repo)
    (repo / "tests" / "cases.sh").write_text(CASES_NEW)
    test_patch = _git("diff", cwd=repo)
    _git("checkout", "--quiet", "--", ".", cwd=repo)
    context = folder / "greet-image"
    context.mkdir()
    (context / "zb-check").write_text(ZB_CHECK)
    os.chmod(context / "zb-check", 0o755)
    (context / "zebench-host-files").write_text("# the host's static busybox (Debian: busybox-static)\n"
                                                "/bin/busybox busybox\n")
    (context / "Containerfile").write_text(
        "FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
        "RUN printf '#!/bin/sh\\nexec /bin/sh \"$@\"\\n' > /bin/bash && chmod 755 /bin/bash\n"
        "COPY zb-check /usr/local/bin/zb-check\nENV PATH=/usr/local/bin:/bin\nWORKDIR /testbed\n")
    instance = {"instance_id": "greet-shout", "repo": "zebench-tests/greet", "base_commit": base, "patch": patch,
                "test_patch": test_patch, "FAIL_TO_PASS": IMAGE_F2P, "PASS_TO_PASS": IMAGE_P2P,
                "problem_statement": "greet.sh --shout should shout the name too, and end with '!'.",
                "image": "greet-image", "test_command": "sh tests/run.sh {tests}"}
    file = folder / "greet.jsonl"
    file.write_text(json.dumps(instance) + "\n")
    return file


def _podman_with_busybox_or_skip() -> None:
    import os

    from harness.sandbox import container

    from support.containers import static_busybox

    problem = container.probe("podman")
    if problem is None and (static_busybox() is None or os.path.realpath(static_busybox()) !=
                            os.path.realpath("/bin/busybox")):
        problem = "no statically linked /bin/busybox to build the instance's image from (apt-get install busybox-static)"
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must run the podman sandbox: {problem}")
        pytest.skip(problem)


@pytest.mark.integration
def test_an_instance_with_its_own_image_is_solved_in_it_and_cannot_pass_without_it(bench_env, tmp_path, monkeypatch):
    _podman_with_busybox_or_skip()
    monkeypatch.setenv("ZE_BENCHMARKS_WORKSPACES_DIR", str(tmp_path / "ws"))
    file = image_instance(tmp_path / "suite")
    scenario = load(file, "greet-shout")
    assert scenario.warnings == [] and scenario.environment == (tmp_path / "suite" / "greet-image").resolve()
    assert "shouts" not in (scenario.fixture_dir / "tests" / "cases.sh").read_text()
    record, evaluation = run_one(tmp_path, scenario, "oracle", kind="podman")
    assert (record.status, record.is_successful, record.total_score) == ("completed", True, 1.0), \
        (evaluation.details, record.metadata.get("finalAnswer"))
    sandbox = record.metadata["sandbox"]
    assert sandbox["kind"] == "podman" and sandbox["image"]["runtime"] == "image"
    assert sandbox["workspace"] == "/testbed"  # the image's WORKDIR
    assert evaluation.data["outcomes_from"] == "-rA summary"
    assert evaluation.data["fail_to_pass"] == {"passed": 1, "total": 1, "failing": []}
    assert evaluation.data["pass_to_pass"] == {"passed": 1, "total": 1, "failing": []}
    # echo from the command line, the backend left to `auto`: the declared image picks podman.
    (echo,) = json.loads(bench(str(file), "--agent", "echo", "--sandbox", "auto", "--json").stdout)["runs"]
    assert (echo["status"], echo["failureClass"], echo["isSuccessful"]) == ("failed", "agent", False)
    assert echo["metadata"]["sandbox"]["kind"] == "podman" and echo["totalScore"] == pytest.approx(0.5)
    (evaluation,) = echo["evaluations"]
    assert "FAIL_TO_PASS 0/1, PASS_TO_PASS 1/1" in evaluation["details"]
    assert "✗ tests/cases.sh::shouts (failed)" in evaluation["details"]
    # In the host's runtime the gold patch applies, but the image's program is missing: nothing passes.
    bwrap_or_skip()
    record, evaluation = run_one(tmp_path, scenario, "oracle", kind="bwrap")
    assert (record.status, record.is_successful, record.total_score) == ("failed", False, 0.0)
    assert record.metadata["sandbox"]["kind"] == "bwrap" and record.metadata["sandbox"]["image"]["used"] is False
    assert evaluation.data["fail_to_pass"]["passed"] == evaluation.data["pass_to_pass"]["passed"] == 0
