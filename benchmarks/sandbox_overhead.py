"""What the bwrap sandbox adds to the wall time of a run, against ``--sandbox none``.

One ``echo`` run of a shipped scenario is the whole pipeline without a model: workspace,
agent sandbox, grading copy, the tools check, validation, heuristic commands and hidden
tests, each command in its sandbox, and the stored record (in-process store on a temporary
database). Runs alternate between ``bwrap`` and ``none`` in one process (so both see the same
machine load), after one warm-up run of each; the figure is the ratio of the medians. It
also times one bare command (``true``) in each backend, the per-command cost.

It checks every run was stored with the backend asked for (exit status 1 otherwise), never
timing.

Usage:
  .venv/bin/python benchmarks/sandbox_overhead.py
  .venv/bin/python benchmarks/sandbox_overhead.py --scenario node-features/retry-backoff --runs 15 --json
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

from harness.grading.evaluators.llm_judge import JudgeChoice  # noqa: E402
from harness.results import open_client  # noqa: E402
from harness.scenarios.runner import RunOptions, run_batch  # noqa: E402
from harness.sandbox import SandboxSpec, open_sandbox  # noqa: E402
from harness.sandbox.bwrap import probe  # noqa: E402
from harness.scenarios.loading import load_scenario, resolve_prompt  # noqa: E402


def one_run(scenario, prompt, kind: str, tmp: Path, client) -> tuple[float, str]:
    options = RunOptions(agent="echo", sandbox=kind, workspaces_root=tmp / "ws", judge=JudgeChoice("none"),
                         skip_warmup=True)
    start = time.perf_counter()
    outcome = run_batch(scenario, prompt, options, client)
    elapsed = (time.perf_counter() - start) * 1000.0
    return elapsed, outcome.runs[0].record.metadata["sandbox"]["kind"]


def bare_command_ms(kind: str, tmp: Path, repeats: int) -> float:
    times = []
    with open_sandbox(tmp, SandboxSpec(kind=kind)) as box:
        for _ in range(repeats):
            start = time.perf_counter()
            box.run("true")
            times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="py-bugs/pagination-off-by-one")
    parser.add_argument("--runs", type=int, default=11, help="runs per backend (default 11)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    problem = probe()
    if problem is not None:
        print(f"bwrap cannot run here: {problem}", file=sys.stderr)
        return 1
    suite, name = args.scenario.split("/", 1)
    scenario = load_scenario(suite, name)
    prompt = resolve_prompt(scenario, "L1")
    times: dict[str, list[float]] = {"bwrap": [], "none": []}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        client = open_client(db_path=str(tmp / "bench.db"), spool_dir=str(tmp / "spool"))
        for kind in ("bwrap", "none"):  # warm-up: imports, page cache, first cgroup
            one_run(scenario, prompt, kind, tmp, client)
        for i in range(args.runs * 2):
            kind = ("bwrap", "none")[i % 2] if (i // 2) % 2 == 0 else ("none", "bwrap")[i % 2]
            elapsed, recorded = one_run(scenario, prompt, kind, tmp, client)
            if recorded != kind:
                print(f"a run asked for {kind} recorded {recorded}", file=sys.stderr)
                return 1
            times[kind].append(elapsed)
        client.close()
        bare = {kind: bare_command_ms(kind, tmp, 50) for kind in ("bwrap", "none")}
    med = {kind: statistics.median(v) for kind, v in times.items()}
    out = {
        "scenario": args.scenario, "runsPerBackend": args.runs,
        "bwrapRunMs": round(med["bwrap"], 1), "noneRunMs": round(med["none"], 1),
        "overheadPct": round((med["bwrap"] / med["none"] - 1.0) * 100.0, 2),
        "bwrapBareCommandMs": round(bare["bwrap"], 2), "noneBareCommandMs": round(bare["none"], 2),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.scenario}, echo agent, median of {args.runs} runs per backend (alternating)")
        print(f"  --sandbox bwrap: {out['bwrapRunMs']} ms per run")
        print(f"  --sandbox none:  {out['noneRunMs']} ms per run")
        print(f"  bwrap overhead:  {out['overheadPct']:+.2f}%")
        print(f"  one `true` command: bwrap {out['bwrapBareCommandMs']} ms, none {out['noneBareCommandMs']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
