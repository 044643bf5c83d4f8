"""Harbor task suites (issue 28, item 2): directories of Harbor tasks run as suites.

Loading maps task.toml, instruction.md, environment/, tests/ and solution/ onto a scenario,
honours the limits the sandbox has a knob for and refuses, naming the task and the field, what
it cannot give; the shipped example suite is solved by `oracle` (which runs solve.sh) and not
by `echo` under bwrap; the verifier's reward file (or its exit status) is the score; `bench
list` shows a task suite and the analysis commands read its runs like any other.
"""

from __future__ import annotations

import csv
import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness.agents as agents
import harness.tasks.harbor as harbor
from harness.agents.base import AgentResult
from harness.cli.bench import main
from harness.scenarios.runner import RunOptions, run_batch
from harness.sandbox.limits import MiB
from harness.scenarios.loading import discover_suites, load_scenario, resolve_prompt
from harness.scenarios.model import ScenarioError
from harness.tasks import locate_suite
from harness.tasks.harbor_image import read_image
from harness.testing.results import MemoryResults

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHIPPED = EXAMPLES / "harbor-tasks"
SHIPPED_TASKS = ["count-words", "fix-greeting", "sum-orders"]

TOML = """\
version = "1.0"

[metadata]
difficulty = "medium"
tags = ["demo"]

[agent]
timeout_sec = 90.0

[verifier]
timeout_sec = 30.0

[environment]
cpus = 1
memory_mb = 256
allow_internet = false
"""
DOCKERFILE = "FROM scratch\nWORKDIR /app\nCOPY app/ /app/\n"
REWARD_TXT = 'echo "$1" > /logs/verifier/reward.txt\n'


def make_task(root: Path, name: str = "demo-task", *, toml: str = TOML, instruction: str = "# Do the thing\n\nDo it.\n",
              dockerfile: str | None = DOCKERFILE, app: dict[str, str] | None = None,
              test_sh: str | None = "echo 1 > /logs/verifier/reward.txt\n", solve: str | None = None,
              extra: dict[str, str] | None = None) -> Path:
    """A Harbor task ``root/name``; returns its directory."""
    task = root / name
    files: dict[str, str] = {"task.toml": textwrap.dedent(toml), "instruction.md": instruction}
    if dockerfile is not None:
        files["environment/Dockerfile"] = dockerfile
    for rel, text in (app if app is not None else {"data.txt": "seed\n"}).items():
        files[f"environment/app/{rel}"] = text
    if test_sh is not None:
        files["tests/test.sh"] = "#!/bin/sh\n" + test_sh
    if solve is not None:
        files["solution/solve.sh"] = "#!/bin/sh\n" + solve
    files.update(extra or {})
    for rel, text in files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


def load(task: Path):
    return load_scenario(task.parent.name, task.name, task.parent)


def bwrap_or_skip() -> None:
    from harness.sandbox.bwrap import probe

    problem = probe()
    if problem is not None:
        pytest.skip(problem)


# --------------------------------------------------------------------------- loading


def test_item2_a_shipped_task_loads_with_its_fields_mapped():
    scenario = load_scenario("harbor-tasks", "count-words", SHIPPED)
    task = SHIPPED / "count-words"
    assert (scenario.suite, scenario.name, scenario.key) == ("harbor-tasks", "count-words", "harbor-tasks/count-words")
    assert scenario.path == task and scenario.suite_path == SHIPPED
    assert scenario.title == "Count the words of notes.txt"
    assert scenario.difficulty == "easy" and scenario.tags == ["shell", "files"]
    assert scenario.timeout_minutes == 5.0  # [agent] timeout_sec = 300
    assert scenario.success_threshold == 1.0
    # The workspace starts as what the Dockerfile copies into its WORKDIR; the build context is
    # the container backend's.
    assert scenario.fixture_dir == task / "environment" / "app"
    assert scenario.environment == task / "environment"
    assert scenario.solution_dir == task / "solution"
    assert scenario.hidden_tests_dir == task / "tests"
    assert scenario.validation_commands == {} and not scenario.llm_judge.enabled
    assert scenario.sandbox_network is False  # allow_internet = false
    limits = scenario.limits()
    assert limits.memory_bytes == 512 * MiB and limits.workspace_bytes == 256 * MiB  # memory_mb, storage_mb
    settings = harbor.task_settings(scenario)
    assert settings["verifier"] == {"timeoutSec": 60.0, "env": {}} and settings["workdir"] == "/app"
    assert scenario.raw["validation"]["timeout_seconds"] == 60.0  # the grading watchdog allows the verifier's time
    prompt = resolve_prompt(scenario, "L1")
    assert (prompt.tier, prompt.label) == ("L1", "L1-instruction")
    assert prompt.text == (task / "instruction.md").read_text()
    assert scenario.warnings == []


def test_item2_every_shipped_task_loads_without_warnings_and_has_a_script_solution():
    (suite,) = discover_suites(SHIPPED)
    assert (suite.name, suite.scenarios) == ("harbor-tasks", SHIPPED_TASKS)
    for name in SHIPPED_TASKS:
        scenario = load_scenario("harbor-tasks", name, SHIPPED)
        assert scenario.warnings == [], name
        assert (scenario.solution_dir / "solve.sh").is_file()
        assert "/app" not in (scenario.path / "instruction.md").read_text()  # the host runtime's workspace is elsewhere
        # Built offline: FROM scratch, busybox from the build context, a /bin/bash for Harbor's `bash test.sh`.
        lines = (scenario.environment / "Dockerfile").read_text().splitlines()
        assert [line for line in lines if line.startswith("FROM")] == ["FROM scratch"]
        assert "COPY busybox /bin/busybox" in lines and any("/bin/bash" in line for line in lines)


def test_item2_task_suites_are_discovered_by_name_by_path_and_beside_native_suites(tmp_path):
    names = {s.name: s.scenarios for s in discover_suites(EXAMPLES)}
    assert names["harbor-tasks"] == SHIPPED_TASKS
    (own,) = discover_suites(SHIPPED)  # a task suite is its own suites directory
    assert own.path == SHIPPED
    # Beside a suite of this project's format: both are listed, by name.
    from support.scenario_builders import make_scenario

    make_scenario(tmp_path / "suites")
    make_task(tmp_path / "suites" / "tb")
    assert [(s.name, s.scenarios) for s in discover_suites(tmp_path / "suites")] == [("demo", ["add-one"]),
                                                                                     ("tb", ["demo-task"])]
    assert load_scenario("tb", "demo-task", tmp_path / "suites").key == "tb/demo-task"
    # A path given where a suite name goes.
    assert locate_suite(SHIPPED).suite == "harbor-tasks"
    one = locate_suite(SHIPPED / "fix-greeting")
    assert (one.root, one.suite, one.scenario) == (SHIPPED, "harbor-tasks", "fix-greeting")
    assert locate_suite(EXAMPLES) is None
    with pytest.raises(ScenarioError, match=r"unknown task 'count-word' in task suite 'harbor-tasks' \(did you mean "
                                            r"'count-words'\?\)"):
        load_scenario("harbor-tasks", "count-word", SHIPPED)


def test_item2_a_task_suite_found_by_a_command_name_is_refused_as_a_suite_would_be(tmp_path):
    make_task(tmp_path / "suites" / "check")
    with pytest.raises(ScenarioError, match=r"suite 'check' in .* has the name of a bench command"):
        load_scenario("check", "demo-task", tmp_path / "suites")
    # Given by its path, the same directory runs: no command name is in the way.
    assert load_scenario("check", "demo-task", tmp_path / "suites" / "check").key == "check/demo-task"


def test_item2_task_toml_settings_are_honoured(tmp_path):
    toml = """\
    [agent]
    timeout_sec = 90

    [verifier]
    timeout_sec = 12.5
    env = { MODE = "strict" }

    [environment]
    memory = "1G"
    storage = "512M"
    """
    scenario = load(make_task(tmp_path, toml=toml))
    assert scenario.timeout_minutes == 1.5
    assert harbor.task_settings(scenario)["verifier"] == {"timeoutSec": 12.5, "env": {"MODE": "strict"}}
    assert scenario.limits().memory_bytes == 1024 * MiB and scenario.limits().workspace_bytes == 512 * MiB
    assert scenario.sandbox_network is True  # Harbor's default: allow_internet = true
    defaults = load(make_task(tmp_path, "bare", toml="version = '1.0'\n"))
    assert defaults.timeout_minutes == 60.0 and harbor.task_settings(defaults)["verifier"]["timeoutSec"] == 600.0
    assert defaults.sandbox_limits == {} and defaults.sandbox_network is True
    offline = load(make_task(tmp_path, "offline", toml='[environment]\nnetwork_mode = "no-network"\n'))
    assert offline.sandbox_network is False


REFUSED = [
    ("gpus", "[environment]\ngpus = 1\n", None, "environment.gpus: 1 GPU(s) asked for"),
    ("cpus", "[environment]\ncpus = 100000\n", None, "environment.cpus: 100000 CPUs asked for"),
    ("memory", "[environment]\nmemory_mb = 1000000000\n", None, "environment.memory_mb: 1000000000 MiB asked for"),
    ("allowlist", '[environment]\nallowed_hosts = ["pypi.org"]\n', None, "environment.allowed_hosts: a network "
                                                                            "allowlist is not supported"),
    ("phases", '[agent]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"\n', None,
     "verifier.network_mode: the agent's network (no-network) and the verifier's (public) differ"),
    ("user", '[agent]\nuser = "root"\n', None, "agent.user: commands cannot run as a named user"),
    ("image", '[environment]\ndocker_image = "python:3.12"\n', None, "environment.docker_image: a prebuilt image"),
    ("steps", '[[steps]]\nname = "one"\n', None, "steps: multi-step tasks are not supported"),
    ("mcp", '[[environment.mcp_servers]]\nname = "x"\nurl = "http://127.0.0.1:1"\n', None,
     "environment.mcp_servers: MCP servers are not supported"),
    ("host-env", '[verifier]\nenv = { KEY = "${OPENAI_API_KEY}" }\n', None, "verifier.env.KEY: values taken from the "
                                                                          "host's environment"),
    ("compose", TOML, {"environment/docker-compose.yaml": "services: {}\n"},
     "docker-compose.yaml: tasks of several services (docker-compose) are not supported; task tb/refused-compose"),
]


@pytest.mark.parametrize(("label", "toml", "extra", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_item2_what_the_sandbox_or_machine_cannot_give_is_refused_by_name(tmp_path, label, toml, extra, message):
    task = make_task(tmp_path / "tb", f"refused-{label}", toml=toml, extra=extra)
    with pytest.raises(ScenarioError) as caught:
        load(task)
    text = str(caught.value)
    assert message in text
    assert f"refused-{label}" in text  # the task is named (by its path)
    assert "\n" not in text


def test_item2_a_task_without_an_image_a_verifier_or_a_prompt_is_refused(tmp_path):
    for name, kwargs, message in (("no-image", {"dockerfile": None}, "environment/Dockerfile: missing: task "
                                                                    "tb/no-image has no image to run in"),
                                  ("no-tests", {"test_sh": None}, "tests/test.sh: missing: task tb/no-tests has no "
                                                                  "verifier"),
                                  ("no-prompt", {"instruction": "  \n"}, "instruction.md: empty")):
        with pytest.raises(ScenarioError, match=message):
            load(make_task(tmp_path / "tb", name, **kwargs))


def test_item2_a_malformed_task_toml_names_the_file_and_the_field(tmp_path):
    broken = make_task(tmp_path / "tb", "broken", toml="[agent]\ntimeout_sec = \n")
    expected = rf"^{re.escape(str(broken / 'task.toml'))}: line 2, column 15: invalid TOML: Invalid value$"
    with pytest.raises(ScenarioError, match=expected):
        load(broken)
    for name, toml, message in (
            ("typed", '[verifier]\ntimeout_sec = "soon"\n', "verifier.timeout_sec: expected a number, got 'soon'"),
            ("negative", "[agent]\ntimeout_sec = -5\n", "agent.timeout_sec: expected a number above 0, got -5"),
            ("table", "agent = 5\n", "agent: expected a table ([agent]), got a number"),
            ("whole", "[environment]\ncpus = 1.5\n", "environment.cpus: expected a whole number, got 1.5"),
            ("flag", '[environment]\nallow_internet = "yes"\n', "environment.allow_internet: expected true or false"),
            ("mode", '[environment]\nnetwork_mode = "publik"\n', "environment.network_mode: expected one of public, "
                                                                   "no-network, allowlist, got 'publik' (did you mean "
                                                                   "'public'?)"),
            ("size", '[environment]\nmemory = "lots"\n', "environment.memory: expected a size such as '2G'")):
        task = make_task(tmp_path / "tb", name, toml=toml)
        with pytest.raises(ScenarioError) as caught:
            load(task)
        assert str(caught.value).startswith(f"{task / 'task.toml'}: {message}"), str(caught.value)
        assert "\n" not in str(caught.value)


def test_item2_unknown_keys_are_ignored_as_harbor_does_with_a_warning(tmp_path):
    scenario = load(make_task(tmp_path / "tb", toml="[environment]\ncpu = 1\n\n[metadata]\nanything = 'goes'\n"))
    (warning,) = scenario.warnings
    assert warning.endswith("task.toml: environment.cpu: unknown key, ignored (did you mean 'cpus'?)")


def test_item2_the_workspace_starts_as_the_dockerfile_copies_into_its_workdir(tmp_path):
    env = tmp_path / "environment"
    (env / "src").mkdir(parents=True)
    for rel in ("a.txt", "b.txt", "src/main.sh", ".dockerignore", "Dockerfile"):
        (env / rel).write_text("x\n")
    (env / ".dockerignore").write_text("# comment\nb.txt\n!keep\n")
    dockerfile = env / "Dockerfile"

    def view(text: str):
        dockerfile.write_text(text)
        return read_image(env, dockerfile)

    whole = view("FROM busybox AS build\nWORKDIR /build\nFROM scratch\nWORKDIR /srv\nCOPY . .\n")
    assert (whole.workdir, whole.fixture, whole.exclude) == ("/srv", env, ["b.txt"])  # .dockerignore read
    assert whole.notes == [f"{env / '.dockerignore'}: !keep: exceptions are not read by the host runtime"]
    one_dir = view("FROM scratch\nWORKDIR /app\nCOPY --chown=1:1 src /app\nCOPY tool /usr/local/bin/tool\n")
    assert (one_dir.fixture, one_dir.exclude, one_dir.notes) == (env / "src", [], [])
    files = view('FROM scratch\nWORKDIR /app\nCOPY ["a.txt", "b.txt", "./"]\n')
    assert (files.fixture, files.exclude) == (env, [".dockerignore", "Dockerfile", "src"])
    nothing = view("FROM scratch\nWORKDIR /app\nRUN echo hi > note\n")
    assert (nothing.workdir, nothing.fixture) == ("/app", None)
    mixed = view("FROM scratch\nWORKDIR /app\nCOPY src /app\nCOPY a.txt /app/\n")
    assert mixed.fixture is None and "the workspace starts empty" in mixed.notes[0]
    variable = view("FROM scratch\nARG DIR\nWORKDIR $DIR\nCOPY src .\n")
    assert variable.workdir is None and variable.fixture is None and "a variable" in variable.notes[0]
    continued = view("FROM scratch\nWORKDIR \\\n    /app\nCOPY src \\\n  /app/\n")
    assert continued.fixture == env / "src"


def test_item2_files_that_name_the_images_workdir_are_warned_about(tmp_path):
    scenario = load(make_task(tmp_path / "tb", test_sh="cat /app/data.txt\necho 1 > /logs/verifier/reward.txt\n"))
    (warning,) = scenario.warnings
    assert "tests/test.sh: names /app, the image's WORKDIR" in warning


# --------------------------------------------------------------------------- running


@pytest.fixture
def bench_env(tmp_path, monkeypatch):
    """A private results store and spool; no worker URL."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    return tmp_path


def bench(*args: str, code: int = 0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def run_shipped_suite(batch_id: str, kind: str = "bwrap"):
    result = bench(str(SHIPPED), "--agent", "oracle", "--agent", "echo", "--batch-id", batch_id, "--sandbox", kind,
                   "--json")
    return json.loads(result.stdout)["runs"]


def test_item2_oracle_passes_and_echo_fails_on_every_shipped_task(bench_env, sandbox_kind):
    if sandbox_kind == "none":
        # The verifier needs /tests and /logs/verifier: refused before anything runs.
        result = bench(str(SHIPPED), "--agent", "oracle", "--sandbox", "none", code=2)
        assert "a Harbor task's verifier needs /tests and /logs/verifier" in result.stderr
        assert "harbor-tasks/count-words" in result.stderr
        return
    runs = run_shipped_suite("harbor-shipped")
    by_cell = {(r["scenario"], r["agent"]): r for r in runs}
    assert set(by_cell) == {(t, a) for t in SHIPPED_TASKS for a in ("oracle", "echo")}
    for task in SHIPPED_TASKS:
        oracle, echo = by_cell[(task, "oracle")], by_cell[(task, "echo")]
        assert (oracle["status"], oracle["isSuccessful"], oracle["totalScore"]) == ("completed", True, 1.0), task
        assert oracle["suite"] == "harbor-tasks" and oracle["tier"] == "L1"
        assert oracle["metadata"]["finalAnswer"].startswith("$ bash /solution/solve.sh\nexit 0")
        assert [(e["evaluatorName"], e["score"]) for e in oracle["evaluations"]] == [("harbor_verifier", 1.0)]
        assert (echo["status"], echo["failureClass"], echo["isSuccessful"]) == ("failed", "agent", False), task
        assert [(e["evaluatorName"], e["score"]) for e in echo["evaluations"]] == [("harbor_verifier", 0.0)]
        assert oracle["metadata"]["sandbox"]["kind"] == "bwrap"
        assert oracle["metadata"]["sandbox"]["limits"]["memory"]["limit"] == 512 * MiB
    sums = by_cell[("sum-orders", "oracle")]["evaluations"][0]["details"]
    assert sums.startswith("1: reward from /logs/verifier/reward.json (rewards: reward=1, number=1)")
    assert "output not kept" in sums


def test_item2_a_task_suite_runs_from_a_suites_directory_too(bench_env):
    by_name = json.loads(bench("harbor-tasks", "--suites-dir", str(EXAMPLES), "--dry-run", "--json").stdout)
    every = json.loads(bench("--all", "--suites-dir", str(SHIPPED), "--dry-run", "--json").stdout)
    one = json.loads(bench(str(SHIPPED / "sum-orders"), "--dry-run", "--json").stdout)
    expected = [f"harbor-tasks/{t}/L1-instruction/echo/-/-#0" for t in SHIPPED_TASKS]
    assert by_name["cells"] == every["cells"] == expected
    assert one["cells"] == ["harbor-tasks/sum-orders/L1-instruction/echo/-/-#0"]
    refused = bench(str(EXAMPLES), code=2)
    assert "a directory of suites (harbor-tasks)" in refused.stderr


class _Probe:
    """An agent that looks for the task's tests and solution from inside its sandbox."""

    name = "t-harbor-probe"

    def __init__(self, model=None, **options):
        self.model = model

    def run(self, ctx):
        seen = ctx.sandbox.run("ls /tests /solution 2>&1; ls -a; test -e /tests/test.sh || echo no-tests")
        return AgentResult(status="completed", final_answer=seen.stdout, cost_usd=0.0)


VERDICTS = [
    # (label, test.sh body, score, status, failure class, words in the details)
    ("reward-txt", "echo 0.5 > /logs/verifier/reward.txt\n", 0.5, "failed", "agent",
     "reward from /logs/verifier/reward.txt"),
    ("reward-json", 'echo \'{"reward": 1, "style": 0.25}\' > /logs/verifier/reward.json\n'
                    "echo 0 > /logs/verifier/reward.txt\n", 1.0, "completed", None,
     "reward.json (rewards: reward=1, style=0.25)"),
    ("one-json-value", 'echo \'{"passed": 1}\' > /logs/verifier/reward.json\n', 1.0, "completed", None, "reward.json"),
    ("exit-0", "exit 0\n", 1.0, "completed", None, "no reward file was written; scored by the verifier's exit status "
                                                   "(exit 0)"),
    ("exit-3", "exit 3\n", 0.0, "failed", "agent", "scored by the verifier's exit status (exit 3)"),
    ("clamped", "echo 7 > /logs/verifier/reward.txt\n", 1.0, "completed", None,
     "the verifier gave 7; scores are clamped"),
    ("unreadable", "echo lots > /logs/verifier/reward.txt\n", 0.0, "failed", "validation",
     "the verifier's reward cannot be read: reward.txt: expected a number, got 'lots'"),
    ("ambiguous", 'echo \'{"a": 1, "b": 0}\' > /logs/verifier/reward.json\n', 0.0, "failed", "validation",
     "names several rewards (a, b) and none is 'reward'"),
    ("linked", "ln -s /etc/passwd /logs/verifier/reward.txt\n", 0.0, "failed", "validation",
     "reward.txt is not a regular file"),
    ("env", 'echo "$LEVEL" > /logs/verifier/reward.txt\n', 0.75, "failed", "agent", "reward.txt"),
    ("timeout", "sleep 5\necho 1 > /logs/verifier/reward.txt\n", 0.0, "failed", "agent",
     "the verifier did not finish within 1 s"),
    ("planted", "exit 1\n", 0.0, "failed", "agent", "exit 1"),
]


@pytest.mark.parametrize(("label", "test_sh", "score", "status", "failure", "words"), VERDICTS,
                         ids=[v[0] for v in VERDICTS])
def test_item2_the_verifiers_reward_file_or_exit_status_is_the_score(tmp_path, label, test_sh, score, status,
                                                                      failure, words):
    bwrap_or_skip()
    toml = '[verifier]\ntimeout_sec = 1\n\n[environment]\nallow_internet = false\n' if label == "timeout" else \
        '[verifier]\nenv = { LEVEL = "0.75" }\n\n[environment]\nallow_internet = false\n'
    # "planted": a reward file in the workspace is no reward: the verifier's directory is the harness's.
    app = {"data.txt": "seed\n", "logs/verifier/reward.txt": "1\n", "reward.txt": "1\n"} if label == "planted" else None
    scenario = load(make_task(tmp_path / "tb", label, toml=toml, test_sh=test_sh, app=app))
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="echo", sandbox="bwrap",
                                                                          workspaces_root=tmp_path / "ws"), store)
    (run,) = out.runs
    record = store.runs[run.record.run_id]
    (evaluation,) = record.evaluations
    assert evaluation.evaluator_name == "harbor_verifier"
    assert (record.total_score, record.status, record.failure_class) == (score, status, failure), evaluation.details
    assert words in evaluation.details
    assert record.is_successful is (status == "completed")


def test_item2_tests_and_solution_are_out_of_the_agents_reach(tmp_path, monkeypatch):
    bwrap_or_skip()
    monkeypatch.setitem(agents._REGISTRY, _Probe.name, _Probe)
    scenario = load(make_task(tmp_path / "tb", solve="true\n"))
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent=_Probe.name, sandbox="bwrap",
                                                                          workspaces_root=tmp_path / "ws"), store)
    seen = store.runs[out.runs[0].record.run_id].metadata["finalAnswer"]
    assert "no-tests" in seen and "data.txt" in seen and "test.sh" not in seen and "solve.sh" not in seen
    assert store.runs[out.runs[0].record.run_id].status == "completed"  # the verifier still ran: reward 1


def test_item2_the_oracle_runs_solve_sh_with_its_directory_at_slash_solution(tmp_path):
    bwrap_or_skip()
    good = load(make_task(tmp_path / "tb", "good", solve="cp /solution/answer.txt .\n",
                          extra={"solution/answer.txt": "42\n"},
                          test_sh='[ "$(cat answer.txt)" = 42 ] && echo 1 > /logs/verifier/reward.txt\n'))
    bad = load(make_task(tmp_path / "tb", "bad", solve="echo broken >&2\nexit 4\n"))
    store = MemoryResults()
    for scenario in (good, bad):
        run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="oracle", sandbox="bwrap",
                                                                        workspaces_root=tmp_path / "ws"), store)
    records = {r.scenario: r for r in store.runs.values()}
    assert (records["good"].status, records["good"].total_score) == ("completed", 1.0)
    assert records["good"].metadata["diff"]["changedFiles"] == ["answer.txt"]
    assert (records["bad"].status, records["bad"].failure_class) == ("failed", "agent")
    assert records["bad"].metadata["agentError"] == "solution/solve.sh: exit 4"
    assert "broken" in records["bad"].metadata["finalAnswer"]


def test_item2_without_bwrap_the_verifier_is_an_infra_error_not_a_verdict(tmp_path):
    scenario = load_scenario("harbor-tasks", "count-words", SHIPPED)
    store = MemoryResults()
    out = run_batch(scenario, resolve_prompt(scenario, "L1"), RunOptions(agent="oracle", sandbox="none",
                                                                          workspaces_root=tmp_path / "ws"), store)
    record = store.runs[out.runs[0].record.run_id]
    assert (record.status, record.failure_class) == ("error", "infra")
    assert "the bwrap sandbox" in record.metadata["error"]


# --------------------------------------------------------------------------- browsing and analysis


def test_item2_bench_list_shows_a_task_suite(bench_env, tmp_path):
    listed = json.loads(bench("list", str(SHIPPED), "--json").stdout)
    rows = {r["scenario"]: r for r in listed["scenarios"]}
    assert list(rows) == SHIPPED_TASKS and {r["suite"] for r in rows.values()} == {"harbor-tasks"}
    assert rows["count-words"]["tiers"] == ["L1-instruction"]
    assert rows["count-words"]["hasSolution"] and rows["count-words"]["hasHiddenTests"]
    assert rows["sum-orders"]["title"] == "Total the orders of orders.csv"
    beside = json.loads(bench("list", "--suites-dir", str(EXAMPLES), "--json").stdout)
    assert [s["name"] for s in beside["suites"]] == ["harbor-tasks"]
    table = bench("list", str(SHIPPED)).stdout
    assert "fix-greeting" in table and "Fix greet.sh" in table
    # A broken task is listed with its error; the exit status is 1.
    suite = tmp_path / "mine"
    make_task(suite, "fine")
    make_task(suite, "gpu", toml="[environment]\ngpus = 2\n")
    result = CliRunner().invoke(main, ["list", str(suite), "--json"])
    assert result.exit_code == 1
    broken = {r["scenario"]: r for r in json.loads(result.stdout)["scenarios"]}
    assert "environment.gpus" in broken["gpu"]["error"] and "error" not in broken["fine"]


def test_item2_analysis_commands_work_on_task_suite_runs(bench_env):
    bwrap_or_skip()
    runs = run_shipped_suite("harbor-analysis")
    batch = json.loads(bench("batch", "harbor-analysis", "--json").stdout)
    assert batch["totalRuns"] == 6 and batch["successfulRuns"] == 3
    assert "harbor-tasks" in bench("batch", "harbor-analysis").stdout
    compare = json.loads(bench("compare", "harbor-analysis", "--json").stdout)
    assert json.dumps(compare).count("harbor-tasks/") >= 3
    text = bench("compare", "harbor-analysis").stdout
    assert "harbor-tasks/count-words" in text
    board = json.loads(bench("leaderboard", "--suite", "harbor-tasks", "--json").stdout)
    assert {e["entry"]: e["successes"] for e in board["entries"]} == {"oracle": 3, "echo": 0}
    bench("costs", "--suite", "harbor-tasks", "--json")
    bench("profile", "harbor-analysis", "--json")
    history = json.loads(bench("history", "--suite", "harbor-tasks", "--json").stdout)
    assert len(history) == 6 and {r["suite"] for r in history} == {"harbor-tasks"}
    shown = json.loads(bench("show", runs[0]["runId"], "--json").stdout)
    assert json.dumps(shown).count("harbor_verifier") >= 1
    bench("report", "harbor-analysis", "-o", str(bench_env / "report.html"))
    assert "harbor-tasks" in (bench_env / "report.html").read_text()
    bench("export", "--batch-id", "harbor-analysis", "-o", str(bench_env / "runs.csv"))
    with (bench_env / "runs.csv").open(newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert len(exported) == 6 and {r["suite"] for r in exported} == {"harbor-tasks"}
    assert sorted(float(r["eval.harbor_verifier.score"]) for r in exported) == [0.0] * 3 + [1.0] * 3
