"""Your own agent: a command (``--agent 'cmd:...'``) and a package's ``zebench.agents`` entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = str(Path(sys.executable).parent / "bench")

pytestmark = pytest.mark.integration

FIXIT = textwrap.dedent("""\
    #!/bin/sh
    # A tiny agent: lays the fix it was given over the workspace, and logs a transcript.
    task="$1"; log="$2"; fix="$3"
    test -s "$task" || { echo "no task" >&2; exit 3; }
    cp "$fix" pagekit/paginator.py || exit 4
    echo '{"role": "assistant", "tool_call": {"id": "1", "name": "copy", "arguments": {}}, "usage": {"input_tokens": 100, "output_tokens": 7}}' >> "$log"
    echo '{"role": "tool", "tool_call_id": "1", "content": "copied"}' >> "$log"
    echo '{"role": "assistant", "content": "Copied the fix.", "final": true, "usage": {"input_tokens": 120, "output_tokens": 5}, "cost_usd": 0.002, "model": "mini-model"}' >> "$log"
""")


@pytest.fixture
def env(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    fixit = tools / "fixit"
    fixit.write_text(FIXIT)
    fixit.chmod(0o755)
    fix = tools / "fixed.py"
    fix.write_text((REPO / "suites/py-bugs/scenarios/pagination-off-by-one/solution/pagekit/paginator.py").read_text())
    for path in (tmp_path, tools):
        path.chmod(0o755)
    fix.chmod(0o644)
    variables = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "ZE_BENCHMARKS_DB": str(tmp_path / "b.db"),
                 "ZE_BENCHMARKS_WORKSPACES_DIR": str(tmp_path / "ws"), "ZE_BENCHMARKS_SPOOL_DIR": str(tmp_path / "spool")}
    return tmp_path, variables, fix


def bench(env_vars, *args):
    return subprocess.run([BENCH, *args], env=env_vars, capture_output=True, text=True, timeout=300)


def test_a_command_agent_runs_a_scenario_with_its_transcript_and_telemetry(env):
    root, variables, fix = env
    done = bench(variables, "py-bugs", "pagination-off-by-one", "--agent",
                 f"cmd:fixit {{prompt_file}} {{transcript_file}} {fix}", "--judge", "none", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert run["status"] == "completed" and run["agent"].startswith("cmd:fixit")
    assert run["telemetry"]["tokensIn"] == 220 and run["telemetry"]["costUsd"] == pytest.approx(0.002)
    assert run["metadata"]["finalAnswer"] == "Copied the fix." and run["model"] == "mini-model"
    assert run["metadata"]["configParts"]["agent"] == run["agent"]


def test_a_command_agent_with_an_unknown_placeholder_or_program_is_refused(env):
    _, variables, _ = env
    bad = bench(variables, "py-bugs", "pagination-off-by-one", "--agent", "cmd:fixit {nope}")
    assert bad.returncode == 2 and "unknown placeholder {nope}" in bad.stderr
    missing = bench(variables, "py-bugs", "pagination-off-by-one", "--agent", "cmd:no-such-tool {prompt_file}")
    assert missing.returncode == 2 and "'no-such-tool' is not found" in missing.stderr


def test_an_agent_from_a_packages_entry_point_runs_a_scenario(env):
    root, variables, _ = env
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), str(REPO / "tests/data/agent_plugin")],
                   check=True, capture_output=True)
    variables = {**variables, "PYTHONPATH": str(target)}
    listed = json.loads(bench(variables, "agents", "--json").stdout)
    assert "demo-notes" in [a["agent"] for a in listed["agents"]]
    assert any(p.startswith("demo-broken") for p in listed["pluginErrors"])  # reported, not fatal
    done = bench(variables, "py-bugs", "pagination-off-by-one", "--agent", "demo-notes", "--judge", "none", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert run["agent"] == "demo-notes" and run["status"] == "failed"  # it ran; a note fixes nothing
    assert "NOTES.md" in run["metadata"]["diff"]["changedFiles"]
