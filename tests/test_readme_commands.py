"""README's commands run as written from a directory outside the checkout (first hour: "every
README command from any directory").

Every command line of README.md's bash blocks has a decision below: run it (with its
placeholders filled from what earlier commands stored), or skip it with the reason (a model
API key, a server that runs until stopped, the network). A README command with no decision
fails the test, so a new one is considered when it is written. File paths of the checkout
(examples/, templates/) are the only thing rewritten: they become absolute.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# Lines (prefix match, after joining continuations) that are not run, and why.
SKIPPED = {
    "bash scripts/": "sets up the environment; CI runs scripts/test.sh itself",
    "pip install": "installs packages",
    "bench py-bugs --agent oracle --agent echo --resume BATCH_ID": "needs a batch cut short (tests/test_plans.py)",
    "bench stress": "load-tests a model endpoint (tests/test_stress.py)",
    "bench mock-model": "serves until stopped (tests/test_scripted_model.py)",
    "bench py-bugs pagination-off-by-one --agent anthropic": "needs ANTHROPIC_API_KEY",
    "bench py-bugs pagination-off-by-one --tier L1 --agent anthropic": "needs ANTHROPIC_API_KEY",
    "bench py-bugs pagination-off-by-one --agent local": "runs the local model (tests/test_local_model_e2e.py)",
    "bench agents install": "installs an agent CLI from the package registry (tests/test_installed_agents.py)",
    "bench py-bugs pagination-off-by-one --agent claude-code": "needs a key or the scripted model's server",
    "bench py-bugs --agent codex": "needs the installed agent CLIs and a model server",
    "bench dataset reasoning --providers local": "runs the local model (tests/test_dataset_local_model.py)",
    "bench dataset coding": "needs OPENAI_API_KEY and GROQ_API_KEY",
    "bench dataset my-cases.yaml": "needs a model server at --base-url",
    "bench dataset --resume": "needs a stopped dataset run (tests/test_dataset_cli.py)",
    "bench fleet examples/fleet.yaml --no-wait": "needs OPENAI_API_KEY and ANTHROPIC_API_KEY",
    "bench fleet examples/fleet.yaml --dry-run": None,  # runs: nothing is sent
    "bench fleet examples/fleet.yaml": "needs OPENAI_API_KEY and ANTHROPIC_API_KEY",
    "bench fleet status": "needs a fleet run (tests/test_fleet_run.py, tests/test_live_progress.py)",
    "bench fleet resume": "needs a stopped fleet run (tests/test_fleet_run.py)",
    "bench report --fleet": "needs a fleet run (tests/test_html_reports.py)",
    "worker dev": "serves until stopped (tests/test_worker_devserver.py)",
    "ZE_BENCHMARKS_WORKER_URL=": "needs a running worker (tests/test_results_path.py)",
    "curl ": "needs a running worker",
    "bench view": "serves until stopped (tests/test_view_cmd.py)",
    "bench tasks generate toolz": "downloads a package and verifies tasks for minutes (tests/test_taskgen.py)",
    "bench ./toolz-bugs": "needs the suite the skipped `bench tasks generate` line writes (tests/test_taskgen.py)",
    "mint enrich": "needs a model API key (tests/test_enrich.py)",
    "bench py-bugs pagination-off-by-one --tier L1 --specialist python-bugfixer --iterations 3 --mint-template":
        "runs the specialist's model (needs ANTHROPIC_API_KEY)",
    "bench py-bugs pagination-off-by-one --tier L1 --specialist python-bugfixer --batch-id":
        "runs the specialist's model (needs ANTHROPIC_API_KEY)",
    "mint snapshot python-bugfixer --batch-id comparison_batch": "needs the batches of the skipped model runs",
    "mint snapshot python-bugfixer --batch-id my_custom_batch": "needs the batches of the skipped model runs",
    "bench batch my_custom_batch": "needs the batch of the skipped model runs",
    "bench check my-suite/first-bug --careless": "needs a patch file of the reader's (tests/test_scaffold.py)",
}


def readme_commands() -> list[str]:
    """The command lines of README.md's bash blocks, continuations joined, comments dropped."""
    lines, block, pending = [], False, ""
    for raw in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if raw.startswith("```"):
            block = raw.strip() == "```bash" and not block
            continue
        if not block:
            continue
        text = pending + raw.strip()
        if text.endswith("\\"):
            pending = text[:-1].strip() + " "
            continue
        pending = ""
        command = re.split(r"\s+#\s", text, maxsplit=1)[0].strip().rstrip("&").strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


def decision(command: str) -> str | None:
    """None to run it, else why it is skipped; KeyError when the test has no decision."""
    for prefix in sorted(SKIPPED, key=len, reverse=True):
        if command.startswith(prefix):
            return SKIPPED[prefix]
    if command.split()[0] in ("bench", "mint"):
        return None
    raise KeyError(command)


def test_every_readme_command_has_a_decision():
    for command in readme_commands():
        try:
            decision(command)
        except KeyError:
            pytest.fail(f"README command with no decision in {__file__}: {command}")


@pytest.mark.integration
def test_item2_readme_commands_run_as_written_from_outside_the_checkout(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in (
        "ZE_BENCHMARKS_DB", "ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_SPOOL_DIR", "ZE_BENCHMARKS_SUITES_DIR")}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), ZE_BENCHMARKS_WORKSPACES_DIR=str(tmp_path / "ws"),
               PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="200")
    (elsewhere / "suites").mkdir()  # `bench check my-suite --suites-dir ./suites` after `bench new`
    filled: dict[str, str] = {}

    def run(command: str) -> subprocess.CompletedProcess:
        text = command
        for name, value in filled.items():
            text = re.sub(rf"\b{name}\b", value, text)
        for rel in ("examples/", "templates/"):
            text = text.replace(f" {rel}", f" {ROOT}/{rel}")
        if text.startswith("bench new "):
            text += " --suites-dir ./suites"
        return subprocess.run(shlex.split(text), cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=600)

    # The batches the placeholders name: demo-1 (README's own), demo-2 and one run of it.
    for setup in ("bench py-bugs pagination-off-by-one --agent oracle --agent echo -n 2 --batch-id demo-1",
                  "bench py-bugs pagination-off-by-one --agent oracle --batch-id demo-2"):
        done = run(setup)
        assert done.returncode == 0, done.stderr
    runs = json.loads(run("bench history --batch-id demo-1 --json").stdout)
    filled.update(BATCH_ID="demo-1", BATCH_A="demo-1", BATCH_B="demo-2", B1="demo-1", B2="demo-2",
                  RUN_ID=runs[0]["runId"])
    ran, failures = [], []
    for command in readme_commands():
        if decision(command) is not None:
            continue
        done = run(command)
        ran.append(command)
        # A run stored with a failing agent exits 0; a comparison or check that finds a
        # difference may exit 1 by design: those are named here.
        allowed = {0}
        if command.startswith(("bench regressions", "bench check")):
            allowed = {0, 1}
        if done.returncode not in allowed or "Traceback" in done.stdout + done.stderr:
            failures.append(f"{command}\n  exit {done.returncode}: {(done.stderr or done.stdout)[-600:]}")
    assert not failures, "\n".join(failures)
    assert len(ran) >= 25
    assert not (elsewhere / "results").exists(), "a store was created in the current directory"
    assert (tmp_path / "xdg" / "zebench" / "bench.db").is_file()
