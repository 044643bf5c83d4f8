"""Where the time of one scenario run goes: the medians of its phases (``metadata.phases``).

One ``echo`` run of a shipped scenario with ``--sandbox none`` is the whole pipeline without a
model; its record carries the milliseconds of each phase (workspace, agent, diff, grading copy,
each evaluator, cleanup). This runs it N times in-process (after one warm-up run) and prints
the median wall time and the median of each phase as one JSON line.

``--tree DIR`` imports the harness from another checkout (a ``git worktree`` of an older commit),
so that two trees can be compared in alternating processes; a tree from before the package
layout (``harness/runner.py``) is read too.

Usage:
  .venv/bin/python benchmarks/run_phases.py --runs 5
  .venv/bin/python benchmarks/run_phases.py --runs 5 --tree ../before
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="py-bugs/pagination-off-by-one")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent),
                        help="the checkout to import the harness from (default: this one)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    sys.path.insert(0, str(Path(args.tree).resolve()))
    try:
        from harness.grading.evaluators.llm_judge import JudgeChoice
        from harness.scenarios.loading import load_scenario, resolve_prompt
        from harness.scenarios.runner import RunOptions, run_batch
    except ImportError:  # a tree from before the package layout
        from harness.evaluators.llm_judge import JudgeChoice  # type: ignore[no-redef]
        from harness.runner import RunOptions, run_batch  # type: ignore[no-redef]
        from harness.scenarios import load_scenario, resolve_prompt  # type: ignore[no-redef]
    from harness.results import open_client

    suite, name = args.scenario.split("/", 1)
    scenario = load_scenario(suite, name)
    prompt = resolve_prompt(scenario, "L1")
    walls: list[float] = []
    phases: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        client = open_client(db_path=str(tmp / "bench.db"), spool_dir=str(tmp / "spool"))
        for i in range(args.runs + 1):
            options = RunOptions(agent="echo", sandbox="none", workspaces_root=tmp / "ws",
                                 judge=JudgeChoice("none"), skip_warmup=True)
            start = time.perf_counter()
            outcome = run_batch(scenario, prompt, options, client)
            elapsed = (time.perf_counter() - start) * 1000.0
            if i == 0:
                continue  # warm-up: imports, page cache
            walls.append(elapsed)
            for key, value in (outcome.runs[0].record.metadata.get("phases") or {}).items():
                if isinstance(value, (int, float)):
                    phases.setdefault(key, []).append(float(value))
    print(json.dumps({"runs": args.runs, "wall_ms": round(statistics.median(walls), 1),
                      **{k: round(statistics.median(v), 1) for k, v in phases.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
