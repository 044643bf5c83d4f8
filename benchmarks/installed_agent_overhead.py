"""What the installed-agent seam adds to a run, beyond the agent CLI's own process and grading.

An installed agent's run, as the runner makes it: ``sandbox_needs`` (the agent's private home,
the egress relay under bwrap), the sandbox opened with what it asks for, ``run`` (configuration
and instruction files written, the forwarder started in front of the agent's command, the
command run, the instruction files taken out, the output parsed), the sandbox closed and
``release``. The agent here is a command agent (``cmd:``) whose program does nothing but write
one transcript line, so what is measured is the seam: compared, in the same process and
alternating, with the same program run in a plain sandbox of the same kind (the run's sandbox
would be opened and its command started anyway).

Usage:
  .venv/bin/python benchmarks/installed_agent_overhead.py                 # bwrap, 21 runs each
  .venv/bin/python benchmarks/installed_agent_overhead.py --sandbox none --runs 31

Prints the medians and the difference, then the figures as JSON. Not a test: nothing here
asserts timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.agents import create_agent  # noqa: E402
from harness.agents.base import AgentContext  # noqa: E402
from harness.sandbox import SandboxSpec, open_sandbox, resolve_mode  # noqa: E402

PROGRAM = """#!/bin/sh
echo '{"role": "assistant", "content": "done", "usage": {"input_tokens": 1, "output_tokens": 1}}' > "$1"
"""


def seam_run(kind: str, workspace: Path, program: Path) -> float:
    started = time.perf_counter()
    agent = create_agent(f"cmd:{program} {{transcript_file}}")
    needs = agent.sandbox_needs(kind)
    box = open_sandbox(workspace, SandboxSpec(kind=kind, network=needs.network, env=needs.env, mounts=needs.mounts))
    try:
        result = agent.run(AgentContext(prompt="Do nothing.", sandbox=box, system_prompt="Be brief."))
    finally:
        box.close()
        agent.release()
    if result.status != "completed" or result.tokens_in != 1:
        raise RuntimeError(f"the seam's run failed: {result.status} {result.error}")
    return (time.perf_counter() - started) * 1000.0


def plain_run(kind: str, workspace: Path) -> float:
    started = time.perf_counter()
    box = open_sandbox(workspace, SandboxSpec(kind=kind))
    try:
        outcome = box.run("sh -c 'echo done > /tmp/transcript.jsonl'")
    finally:
        box.close()
    if not outcome.ok:
        raise RuntimeError(f"the plain run failed: {outcome.outcome()}")
    return (time.perf_counter() - started) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--sandbox", default="bwrap")
    args = parser.parse_args()
    kind = resolve_mode(args.sandbox).kind
    seam, plain = [], []
    with tempfile.TemporaryDirectory(prefix="zebench-seam-bench-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        tools = Path(tmp) / "tools"
        tools.mkdir()
        program = tools / "fake-agent"
        program.write_text(PROGRAM)
        for path, mode in ((Path(tmp), 0o755), (tools, 0o755), (program, 0o755)):
            path.chmod(mode)
        seam_run(kind, workspace, program), plain_run(kind, workspace)  # warm-up
        for i in range(args.runs):
            for which in (("seam", "plain") if i % 2 == 0 else ("plain", "seam")):
                (seam if which == "seam" else plain).append(
                    seam_run(kind, workspace, program) if which == "seam" else plain_run(kind, workspace))
    figures = {"sandbox": kind, "runs": args.runs, "seamMs": round(statistics.median(seam), 1),
               "plainMs": round(statistics.median(plain), 1)}
    figures["seamAddsMs"] = round(figures["seamMs"] - figures["plainMs"], 1)
    print(f"{kind}: the seam's run {figures['seamMs']} ms, the same program in a plain sandbox "
          f"{figures['plainMs']} ms: the seam adds {figures['seamAddsMs']} ms (medians of {args.runs})")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
