"""Installed agents: the real agent CLIs, installed by ``bench agents install``, run in the bwrap
sandbox against the scripted model server on a shipped scenario; one of them (:data:`PODMAN_AGENT`)
under podman too, in a container without a network, behind the same egress relay.

The CLIs are installed once per test session into a session tools directory (the package
registries must be reachable, as they are in CI). Each test runs the whole pipeline: the
runner, the sandbox, the egress relay, grading, scoring, the store.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.grading.evaluators.llm_judge import JudgeChoice
from harness.results import open_client
from harness.scenarios.runner import RunOptions, run_batch
from harness.scenarios.loading import load_scenario, resolve_prompt
from harness.scripted import ScriptedServer, parse_script
from support.sockets import accept_in_background

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
BENCH = str(Path(sys.executable).parent / "bench")
API = {"claude-code": "anthropic", "qwen-code": "openai", "gemini-cli": "gemini", "codex": "openai", "opencode": "openai", "aider": "openai", "mini-swe-agent": "openai"}
AGENTS = sorted(API)
SKILLS = ("claude-code", "qwen-code", "codex", "opencode", "gemini-cli")  # agents that also get the specialist as a skill
PODMAN_AGENT = "codex"  # the quickest to start: one agent under podman keeps the CI time down
# (agent, sandbox): every agent under bwrap, one under podman too
CASES = [pytest.param(a, "bwrap", id=a) for a in AGENTS] + [pytest.param(PODMAN_AGENT, "podman", id=f"{PODMAN_AGENT}-podman")]


def require_sandbox(kind: str) -> None:
    """Skip where the ``kind`` backend cannot run here, except in CI, where a container backend
    must (bwrap's failure in CI shows in the run itself)."""
    if kind == "bwrap":
        from harness.sandbox.bwrap import probe

        problem = probe()
    else:
        from harness.sandbox.container import probe

        problem = probe(kind)
    if problem is None:
        return
    if os.environ.get("CI"):
        if kind != "bwrap":
            raise RuntimeError(f"CI must run the {kind} sandbox: {problem}")
        return
    pytest.skip(str(problem))


@pytest.fixture(scope="session")
def tools_dir(tmp_path_factory):
    """A tools directory for the session, with every installed agent installed by the CLI."""
    if shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed")
    root = Path(os.environ.get("ZE_BENCHMARKS_TEST_TOOLS_DIR") or tmp_path_factory.mktemp("agent-tools"))
    for agent in AGENTS:
        done = subprocess.run([BENCH, "agents", "install", agent], env={**os.environ, "ZE_BENCHMARKS_TOOLS_DIR": str(root)},
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def lab(tmp_path, monkeypatch, tools_dir):
    monkeypatch.setenv("ZE_BENCHMARKS_TOOLS_DIR", str(tools_dir))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "ZE_BENCHMARKS_WORKER_URL"):
        monkeypatch.delenv(name, raising=False)
    suites = tmp_path / "suites"
    shutil.copytree(REPO / "suites" / "py-bugs", suites / "py-bugs")
    return tmp_path, suites


def run_agent(lab, agent: str, steps: list, *, specialist: str | None = None, model: str | None = None,
              sandbox: str = "bwrap"):
    """(stored run, its transcript, the scripted server) of one run of ``agent`` on the scenario."""
    require_sandbox(sandbox)
    root, suites = lab
    scenario = load_scenario("py-bugs", "pagination-off-by-one", suites)
    with ScriptedServer(parse_script(steps)) as server:
        options = RunOptions(agent=agent, model=model, sandbox=sandbox, skip_warmup=True,
                             workspaces_root=root / "ws", judge=JudgeChoice("none"),
                             agent_options={"base_url": server.base_url(API[agent])})
        if specialist is not None:
            from dataclasses import replace

            options = replace(options, specialist=_Specialist(specialist))
        client = open_client(db_path=str(root / "bench.db"))
        try:
            outcome = run_batch(scenario, resolve_prompt(scenario, "L1"), options, client)
            run = client.get_run(outcome.runs[0].record.run_id)
            transcript = client.get_transcript(run.run_id) or []
        finally:
            client.close()
    return run, transcript, server


class _Specialist:
    """A stand-in specialist: its system prompt carries a marker."""

    name, version = "marker-specialist", "1.0.0"
    unscoped_name = name

    def __init__(self, text: str) -> None:
        self.text = text

    def system_prompt(self, model):  # noqa: ANN001, ANN201
        return self.text

    def run_metadata(self, model):  # noqa: ANN001, ANN201
        return {}


def fix_steps(suites: Path) -> list:
    fix = (suites / "py-bugs/scenarios/pagination-off-by-one/solution/pagekit/paginator.py").read_text()
    return [{"write": {"path": "pagekit/paginator.py", "content": fix}},
            {"run": "python3 -m pytest -q 2>&1 | tail -3"}, {"say": "Fixed the off-by-one errors."}]


@pytest.mark.parametrize(("agent", "sandbox"), CASES)
def test_the_real_cli_fixes_the_scenario_through_the_scripted_model(lab, agent, sandbox):
    run, transcript, server = run_agent(lab, agent, fix_steps(lab[1]), sandbox=sandbox)
    assert run.status == "completed" and run.total_score == pytest.approx(1.0), run.metadata.get("agentError")
    calls = [e.get("tool_call") or {} for e in transcript]
    assert any("paginator.py" in json.dumps(c) for c in calls)  # the write, as the agent made it
    # Aider edits but runs no command its model asks for; the others do both.
    assert run.telemetry.tool_calls >= (1 if agent == "aider" else 2)
    assert run.telemetry.tokens_in > 0 and run.telemetry.tokens_out > 0
    info = run.metadata["agentInfo"]
    assert info["agent"] == agent and info["version"] == run.metadata["configParts"]["agent"].split("@")[1]
    egress = run.metadata["egress"]
    assert egress["contacted"] and not egress["errors"]
    assert run.metadata["sandbox"]["kind"] == sandbox and run.metadata["sandbox"]["network"] is False


@pytest.mark.parametrize("agent", AGENTS)
def test_the_real_cli_doing_nothing_fails(lab, agent):
    run, _, _ = run_agent(lab, agent, [{"say": "Nothing needs to change."}])
    assert run.status == "failed" and not run.is_successful


@pytest.mark.parametrize("agent", AGENTS)
def test_a_specialist_reaches_the_agents_own_instructions(lab, agent):
    marker = "SPECIALIST-MARKER-5f1e"
    with_it, _, server = run_agent(lab, agent, [{"say": "ok"}], specialist=f"Always cite {marker}.")
    assert marker in server.bodies_text()
    assert with_it.metadata["agentInfo"]["specialistChannel"]
    if agent in SKILLS:  # and as a skill, which the agent announces to its model by name
        assert "marker-specialist" in server.bodies_text()
    _, _, plain = run_agent(lab, agent, [{"say": "ok"}])
    assert marker not in plain.bodies_text()


# Aider runs no command its model asks for in one-shot mode: its model cannot send it anywhere.
@pytest.mark.parametrize(("agent", "sandbox"), [case for case in CASES if case.values[0] != "aider"])
def test_the_agent_reaching_another_port_is_refused_and_recorded(lab, agent, sandbox):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    accepted = accept_in_background(listener)
    # Through the proxy it is given (refused and recorded), then around it (no network to go by).
    probe = (f"python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/steal', timeout=5)\" "
             f"; python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\" ; echo probed")
    try:
        run, _, _ = run_agent(lab, agent, [{"run": probe}, {"say": "done"}], sandbox=sandbox)
    finally:
        listener.close()
    assert not accepted
    assert f"127.0.0.1:{port}" in {r["host"] for r in run.metadata["egress"]["refused"]}


def test_a_batch_of_three_installed_agents_is_read_by_compare_leaderboard_and_the_dashboard(lab, tmp_path):
    """One scripted server speaks all three agents' wire formats at one base URL."""
    require_sandbox("bwrap")
    root, suites = lab
    for agent in ("codex", "claude-code", "gemini-cli"):
        if agent not in API:
            pytest.skip(f"{agent} is not among the tested agents")
    env = {**os.environ, "ZE_BENCHMARKS_SUITES_DIR": str(suites), "ZE_BENCHMARKS_DB": str(root / "batch.db"),
           "ZE_BENCHMARKS_WORKSPACES_DIR": str(root / "ws")}
    with ScriptedServer(parse_script(fix_steps(suites))) as server:
        done = subprocess.run([BENCH, "py-bugs", "pagination-off-by-one", "--agent", "codex", "--agent", "claude-code",
                               "--agent", "gemini-cli", "-n", "2", "--base-url", server.url, "--judge", "none",
                               "--sandbox", "bwrap", "--batch-id", "three-agents", "--json"],
                              env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout)["runs"]
    assert sorted(r["agent"] for r in runs) == ["claude-code", "claude-code", "codex", "codex", "gemini-cli", "gemini-cli"]
    assert all(r["status"] == "completed" for r in runs), [(r["agent"], r["metadata"].get("agentError")) for r in runs]
    compared = subprocess.run([BENCH, "compare", "three-agents,agent=codex", "three-agents,agent=claude-code", "--json"],
                              env=env, capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    result = json.loads(compared.stdout)
    assert "codex" in json.dumps(result) and "claude-code" in json.dumps(result)
    board = subprocess.run([BENCH, "leaderboard", "--batch-id", "three-agents", "--json"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert board.returncode == 0, board.stderr
    assert all(agent in board.stdout for agent in ("codex", "claude-code", "gemini-cli"))
    with open_client(db_path=str(root / "batch.db")) as client:  # the worker's routes, as the dashboard reads them
        batch = client.get_batch("three-agents")
    assert batch.total_runs == 6 and batch.successful_runs == 6


def test_mint_proves_a_specialist_for_an_installed_agent(lab, tmp_path):
    """The scripted model knows the fix only when the specialist's instructions reach it, so
    the snapshot's baseline-vs-specialist comparison is the specialist's doing."""
    import json5

    from support.specialists import copy_shipped_templates

    require_sandbox("bwrap")
    root, suites = lab
    agent = "codex" if "codex" in API else AGENTS[0]
    templates = copy_shipped_templates(tmp_path / "templates")
    env = {**os.environ, "ZE_BENCHMARKS_SUITES_DIR": str(suites), "ZE_BENCHMARKS_DB": str(root / "proof.db"),
           "ZE_BENCHMARKS_WORKSPACES_DIR": str(root / "ws"), "ZE_BENCHMARKS_TEMPLATES_DIR": str(templates)}
    marker = "Reproduce the bug with a failing test before changing code"  # in python-bugfixer's prompt
    script = {"if_sent": marker, "steps": fix_steps(suites), "otherwise": [{"say": "I see nothing to fix."}]}
    with ScriptedServer(parse_script(script)) as server:
        for extra in ([], ["--specialist", "python-bugfixer"]):
            done = subprocess.run([BENCH, "py-bugs", "pagination-off-by-one", "--agent", agent, "-n", "2",
                                   "--base-url", server.base_url(API[agent]), "--judge", "none", "--sandbox", "bwrap",
                                   "--batch-id", "proof", *extra], env=env, capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stderr[-3000:]
    minted = subprocess.run([str(Path(sys.executable).parent / "mint"), "snapshot", "python-bugfixer", "--batch-id",
                             "proof", "--output", str(tmp_path / "snapshots"), "--json"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert minted.returncode == 0, minted.stderr
    comparison = json5.loads(Path(json.loads(minted.stdout)["path"]).read_text())["benchmarks"]["comparison"]
    assert (comparison["baseline_runs"], comparison["specialist_runs"]) == (2, 2)
    assert comparison["configuration"]["differing_parts"] == ["specialist"]
    success = next(m for m in comparison["metrics"] if m["metric"] == "success")
    assert (success["baseline_mean"], success["specialist_mean"]) == (0.0, 1.0)
