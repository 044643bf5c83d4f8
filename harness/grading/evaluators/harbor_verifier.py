"""The ``harbor_verifier`` evaluator: a Harbor task's own verifier, ``tests/test.sh``.

The task's ``tests/`` is never in the agent's workspace. At grading time it is copied to a fresh
directory seen as ``/tests`` by a sandbox opened on the grading copy (protected files restored
first, as before every test command), with an empty ``/logs/verifier`` and ``/logs/agent`` of
its own, and ``bash /tests/test.sh`` runs there with the task's ``[verifier]`` environment,
network and timeout. The verdict, as Harbor reads it:

1. ``/logs/verifier/reward.json``: an object of reward names to numbers; the score is its
   ``reward`` (or its one value);
2. else ``/logs/verifier/reward.txt``: one number;
3. else the exit status: 0 scores 1, anything else 0 (Harbor itself wants a reward file).

A reward is clamped to [0, 1] (the details say so); a reward file that cannot be read fails
the run as the agent's (its code ran inside the verifier), and a verifier that timed out scores
0. The directory of the reward files is the harness's, bound as a mount point: nothing the
agent left can plant a reward there before the verifier runs, nor lead it elsewhere after. As
with hidden tests, the details keep the verdict and never the verifier's output (the code under
test can print the tests into it). The sandbox closes with the grading sandbox (the grading
watchdog, an interrupt).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.grading.evaluators.base import BLAME, BLAME_INFRA, BLAME_WORKSPACE, EvaluationContext, EvaluatorResult
from harness._util.ownership import owned
from harness.sandbox import CommandResult, Mount, Sandbox, SandboxClosed, SandboxSpec, open_sandbox
from harness.tasks.harbor import (
    AGENT_LOGS_INNER,
    TEST_SCRIPT,
    TESTS_INNER,
    VERIFIER_LOGS_INNER,
    host_runtime_problem,
    task_settings,
)
from harness._util.trees import read_regular, remove_tree
from harness.scenarios.workspace import copy_tree

NAME = "harbor_verifier"
REWARD_JSON = "reward.json"
REWARD_TXT = "reward.txt"
REWARD_CAP = 64 * 1024  # bytes of a reward file read
_BASH_MISSING = re.compile(r"(?:^|: )bash: (?:command )?not found", re.MULTILINE)


class RewardError(ValueError):
    """A reward file that cannot be read as one."""


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RewardError(f"{where}: expected a number, got {value!r}")
    return float(value)


def read_rewards(verifier_dir: Path) -> tuple[str, dict[str, float]] | None:
    """(file name, rewards) of what the verifier wrote in ``verifier_dir``: ``reward.json``
    before ``reward.txt``; None when it wrote neither. :class:`RewardError` for a file that is
    not a regular file, too large, or not a reward."""
    for name in (REWARD_JSON, REWARD_TXT):
        path = verifier_dir / name
        if not os.path.lexists(path):
            continue
        data = read_regular(path, REWARD_CAP + 1)
        if data is None:
            raise RewardError(f"{name} is not a regular file")
        if len(data) > REWARD_CAP:
            raise RewardError(f"{name} is larger than {REWARD_CAP} bytes")
        text = data.decode("utf-8", errors="replace").strip()
        if name == REWARD_TXT:
            try:
                return name, {"reward": _number(float(text), name)}
            except ValueError:
                raise RewardError(f"{name}: expected a number, got {text[:80]!r}") from None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise RewardError(f"{name} is not JSON: {exc}") from None
        if not isinstance(value, dict) or not value:
            raise RewardError(f"{name}: expected an object of reward names to numbers")
        return name, {str(k): _number(v, f"{name}: {k}") for k, v in value.items()}
    return None


def main_reward(rewards: dict[str, float]) -> float:
    """The reward that scores: ``reward``, or the only one."""
    if "reward" in rewards:
        return rewards["reward"]
    if len(rewards) == 1:
        return next(iter(rewards.values()))
    raise RewardError(f"{REWARD_JSON} names several rewards ({', '.join(sorted(rewards))}) and none is 'reward'")


@contextmanager
def _closes_with(outer: Sandbox, inner: Sandbox) -> Iterator[None]:
    """Close ``inner`` as soon as ``outer`` is closed (the grading watchdog, an interrupt)."""
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            if outer.closed:
                inner.close(grace_s=0)
                return

    watcher = threading.Thread(target=watch, name="harbor-verifier-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


def _run_verifier(ctx: EvaluationContext, tests: Path, verifier_logs: Path, agent_logs: Path,
                  timeout_s: float, env: dict[str, str]) -> CommandResult:
    scenario = ctx.scenario
    spec = SandboxSpec(kind=ctx.sandbox.kind, network=scenario.sandbox_network, limits=scenario.limits(),
                       mounts=(Mount(tests, TESTS_INNER, writable=True),
                               Mount(verifier_logs, VERIFIER_LOGS_INNER, writable=True),
                               Mount(agent_logs, AGENT_LOGS_INNER, writable=True)))
    # A container backend starts the grading sandbox's image again (the task's own); the host backends take none.
    image = getattr(ctx.sandbox, "image", None)
    box = open_sandbox(ctx.workspace, spec, image) if image is not None else open_sandbox(ctx.workspace, spec)
    with box, _closes_with(ctx.sandbox, box):
        for path in (tests, verifier_logs, agent_logs):
            box.adopt(path)
        return box.run(f"bash {TESTS_INNER}/{TEST_SCRIPT}", timeout_s=timeout_s, env=env)


def evaluate_harbor_verifier(ctx: EvaluationContext) -> EvaluatorResult | None:
    """Run a Harbor task's ``tests/test.sh`` and score its reward; None for other scenarios."""
    settings = task_settings(ctx.scenario)
    if settings is None:
        return None
    if ctx.sandbox is None:
        raise RuntimeError("the Harbor verifier needs the grading sandbox")
    problem = host_runtime_problem([ctx.scenario], ctx.sandbox.kind)
    if problem is not None:
        # Not the agent's failure: the machine cannot run this verifier (the runner stores error/infra).
        return EvaluatorResult(NAME, 0.0, status="error", details=problem,
                               data={BLAME: BLAME_INFRA, "missing_tool": "the bwrap sandbox (Harbor tasks' /tests)"})
    verifier = settings.get("verifier") or {}
    timeout_s = float(verifier.get("timeoutSec") or 600.0)
    env = {str(k): str(v) for k, v in (verifier.get("env") or {}).items()}
    if ctx.grading is not None:
        ctx.grading.protect()  # as before every test command: what an earlier command planted goes
    scratch = Path(tempfile.mkdtemp(prefix=owned("zebench-harbor-")))
    try:
        tests, verifier_logs, agent_logs = scratch / "tests", scratch / "verifier", scratch / "agent"
        copy_tree(ctx.scenario.hidden_tests_dir, tests)
        verifier_logs.mkdir()
        agent_logs.mkdir()
        os.chmod(tests / TEST_SCRIPT, 0o755)
        result = _run_verifier(ctx, tests, verifier_logs, agent_logs, timeout_s, env)
        if ctx.grading is not None:
            ctx.grading.sanitize()  # the verifier ran the agent's code: links out and FIFOs it left go
        if result.killed_by == "closed":
            raise SandboxClosed("the grading sandbox was closed while the verifier ran")
        return _verdict(result, verifier_logs, timeout_s)
    finally:
        remove_tree(scratch)


def _verdict(result: CommandResult, verifier_logs: Path, timeout_s: float) -> EvaluatorResult:
    data: dict[str, object] = {"command": result.command, "exit_code": result.exit_code,
                               "timed_out": result.timed_out, "killed_by": result.killed_by, "timeout_s": timeout_s}
    # Never the verifier's output: the code under test could print the tests into it.
    ran = f"$ {result.command}\n{result.outcome()} in {result.duration_ms / 1000:.1f}s (output not kept: hidden tests)"
    if result.exit_code == 127 and _BASH_MISSING.search(result.stderr or ""):
        data["missing_tool"] = "program bash"
        return EvaluatorResult(NAME, 0.0, details=f"bash is not installed, so the verifier could not run\n{ran}",
                               data=data)
    if result.timed_out:
        data["verdict"] = "timeout"
        return EvaluatorResult(NAME, 0.0, details=f"0: the verifier did not finish within {timeout_s:g} s\n{ran}",
                               data=data)
    try:
        found = read_rewards(verifier_logs)
        value = None if found is None else main_reward(found[1])
    except RewardError as exc:
        data["verdict"] = "unreadable reward"
        return EvaluatorResult(NAME, 0.0, status="error", data={**data, BLAME: BLAME_WORKSPACE},
                               details=f"the verifier's reward cannot be read: {exc}\n{ran}")
    if found is None:
        data["verdict"] = "exit status"
        score = 1.0 if result.ok else 0.0
        return EvaluatorResult(NAME, score, data=data,
                               details=f"{score:g}: no reward file was written; scored by the verifier's exit "
                                       f"status ({result.outcome()})\n{ran}")
    name, rewards = found
    data.update(verdict=name, rewards=rewards)
    score = min(1.0, max(0.0, value))
    clamped = f" (the verifier gave {value:g}; scores are clamped to 0..1)" if score != value else ""
    others = ", ".join(f"{k}={v:g}" for k, v in rewards.items()) if len(rewards) > 1 else ""
    return EvaluatorResult(NAME, score, data=data,
                           details=f"{score:g}: reward from {VERIFIER_LOGS_INNER}/{name}{clamped}"
                                   + (f" (rewards: {others})" if others else "") + f"\n{ran}")
