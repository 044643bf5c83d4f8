"""What the podman backend adds to the wall time of a run, against ``--sandbox bwrap``.

One ``echo`` run of a shipped scenario is the whole pipeline without a model: workspace,
agent sandbox, the tools check, grading copy, validation, heuristic commands and hidden tests,
each command in its sandbox, and the stored record (in-process store on a temporary
database). Under ``podman`` the scenario (which declares no image) runs in the host-runtime
image: the grading sandbox's container is started at its first command and every command is
executed into it (the echo agent runs no command, so its sandbox starts no container), with
``runc exec`` where the backend found it can (rootful podman with runc), else ``podman exec``.
Where ``runc exec`` is used, a third backend, ``podman-exec``, is podman with every command a
``podman exec``, for comparison. Runs rotate between the backends in one process (so all see
the same machine load), after one warm-up run of each; the figures are ratios of medians to
bwrap's. It also times, per backend, one bare command (``true``) in an open sandbox, and, for
podman, starting a container (a sandbox's first command) and closing it.

It checks every run was stored with the backend asked for (exit status 1 otherwise), never
timing. Exit status 1 as well where podman or bwrap cannot run here.

Usage:
  .venv/bin/python benchmarks/container_overhead.py
  .venv/bin/python benchmarks/container_overhead.py --scenario node-features/retry-backoff --runs 15 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.grading.evaluators.llm_judge import JudgeChoice  # noqa: E402
from harness.results import open_client  # noqa: E402
from harness.scenarios.runner import RunOptions, run_batch  # noqa: E402
from harness.sandbox import SandboxSpec, open_sandbox  # noqa: E402
from harness.sandbox.bwrap import probe as bwrap_probe  # noqa: E402
from harness.sandbox import container  # noqa: E402
from harness.sandbox.container import detect_runtime, probe as container_probe, wait_for_removals  # noqa: E402
from harness.scenarios.loading import load_scenario, resolve_prompt  # noqa: E402


@contextmanager
def backend(kind: str, runtimes: dict) -> Iterator[str]:
    """The sandbox kind to ask for ``kind``: ``podman-exec`` is podman whose runtime executes
    every command with ``podman exec`` (swapped in for the run, then back)."""
    if kind != "podman-exec":
        yield kind
        return
    with container._detect_lock:
        container._detected["podman"] = runtimes["podman-exec"]
    try:
        yield "podman"
    finally:
        with container._detect_lock:
            container._detected["podman"] = runtimes["podman"]


def one_run(scenario, prompt, kind: str, tmp: Path, client, runtimes: dict) -> tuple[float, str]:
    with backend(kind, runtimes) as asked:
        options = RunOptions(agent="echo", sandbox=asked, workspaces_root=tmp / "ws", judge=JudgeChoice("none"),
                             skip_warmup=True)
        start = time.perf_counter()
        outcome = run_batch(scenario, prompt, options, client)
        elapsed = (time.perf_counter() - start) * 1000.0
    info = outcome.runs[0].record.metadata["sandbox"]
    recorded = info["kind"]
    if recorded == "podman" and info["runtime"].get("exec") == "podman exec" and runtimes["podman"].direct:
        recorded = "podman-exec"
    return elapsed, recorded


def bare_command_ms(kind: str, tmp: Path, repeats: int, runtimes: dict) -> tuple[float, float | None, float | None]:
    """(median `true` ms once started, first command ms (the container's start), close ms)."""
    with backend(kind, runtimes) as asked:
        return _bare(asked, tmp, repeats)


def _bare(kind: str, tmp: Path, repeats: int) -> tuple[float, float | None, float | None]:
    times = []
    box = open_sandbox(tmp, SandboxSpec(kind=kind))
    start = time.perf_counter()
    box.run("true")
    first = (time.perf_counter() - start) * 1000.0
    for _ in range(repeats):
        start = time.perf_counter()
        box.run("true")
        times.append((time.perf_counter() - start) * 1000.0)
    start = time.perf_counter()
    box.close()
    closed = (time.perf_counter() - start) * 1000.0
    return statistics.median(times), first, closed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="py-bugs/pagination-off-by-one")
    parser.add_argument("--runs", type=int, default=11, help="runs per backend (default 11)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for name, problem in (("bwrap", bwrap_probe()), ("podman", container_probe("podman"))):
        if problem is not None:
            print(f"{name} cannot run here: {problem}", file=sys.stderr)
            return 1
    runtime = detect_runtime("podman")
    runtimes = {"podman": runtime, "podman-exec": replace(runtime, direct=())}
    kinds = ("bwrap", "podman", "podman-exec") if runtime.direct else ("bwrap", "podman")
    suite, name = args.scenario.split("/", 1)
    scenario = load_scenario(suite, name)
    prompt = resolve_prompt(scenario, "L1")
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        client = open_client(db_path=str(tmp / "bench.db"), spool_dir=str(tmp / "spool"))
        for kind in kinds:  # warm-up: imports, page cache, the host-runtime image
            one_run(scenario, prompt, kind, tmp, client, runtimes)
        for i in range(args.runs):
            shift = i % len(kinds)  # each backend in each position of the rotation in turn
            for kind in kinds[shift:] + kinds[:shift]:
                elapsed, recorded = one_run(scenario, prompt, kind, tmp, client, runtimes)
                if recorded != kind:
                    print(f"a run asked for {kind} recorded {recorded}", file=sys.stderr)
                    return 1
                times[kind].append(elapsed)
        client.close()
        bare = {kind: bare_command_ms(kind, tmp, 20, runtimes) for kind in kinds}
        wait_for_removals()
    med = {kind: statistics.median(v) for kind, v in times.items()}
    out = {
        "scenario": args.scenario, "runsPerBackend": args.runs,
        "podman": runtime.version, "podmanAdjusted": list(runtime.notes), "podmanExec": runtime.describe()["exec"],
        "bwrapRunMs": round(med["bwrap"], 1), "podmanRunMs": round(med["podman"], 1),
        "ratio": round(med["podman"] / med["bwrap"], 2),
        "bwrapBareCommandMs": round(bare["bwrap"][0], 1), "podmanBareCommandMs": round(bare["podman"][0], 1),
        "podmanFirstCommandMs": round(bare["podman"][1], 1), "podmanCloseMs": round(bare["podman"][2], 1),
    }
    if "podman-exec" in med:
        out.update(podmanExecRunMs=round(med["podman-exec"], 1),
                   podmanExecRatio=round(med["podman-exec"] / med["bwrap"], 2),
                   podmanExecBareCommandMs=round(bare["podman-exec"][0], 1))
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.scenario}, echo agent, median of {args.runs} runs per backend (rotating)")
        print(f"  --sandbox bwrap:  {out['bwrapRunMs']} ms per run")
        print(f"  --sandbox podman: {out['podmanRunMs']} ms per run ({out['ratio']}x; commands by "
              f"{out['podmanExec']})")
        if "podman-exec" in med:
            print(f"  --sandbox podman, every command a podman exec: {out['podmanExecRunMs']} ms per run "
                  f"({out['podmanExecRatio']}x)")
        print(f"  one `true` command: bwrap {out['bwrapBareCommandMs']} ms, podman {out['podmanBareCommandMs']} ms"
              + (f", podman exec {out['podmanExecBareCommandMs']} ms" if "podman-exec" in med else ""))
        print(f"  podman: first command (starts the container) {out['podmanFirstCommandMs']} ms, "
              f"close {out['podmanCloseMs']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
