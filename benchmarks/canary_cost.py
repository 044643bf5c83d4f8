"""What canary tests cost: the hidden-test run of each shipped scenario, with and without them.

For every shipped scenario that has hidden tests, the reference solution is laid over a fresh
workspace, a grading session is opened on it (the real grading copy and sandbox), the hidden
tests are laid over, and the scenario's hidden-test command is run through the evaluators'
own ``run_graded`` (after the scenario's validation commands, which may install what the
tests need): once with canaries planted (as every run does), once without, in alternating order, ``--repeats`` times each. The figure is the command's wall time (the
test process: collection, the tests, the report), not the copy around it.

Usage:
  .venv/bin/python benchmarks/canary_cost.py                 # 7 repeats, every scenario with hidden tests
  .venv/bin/python benchmarks/canary_cost.py --repeats 15 --sandbox none
  .venv/bin/python benchmarks/canary_cost.py --suite py-bugs

Prints a table (median ms without and with canaries, the ratio), then the figures as JSON.
Not a test: nothing here asserts timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.grading.evaluators.canaries import plant  # noqa: E402
from harness.grading.evaluators.test_reports import detect_runner  # noqa: E402
from harness.grading.evaluators.validation import command_timeout, evaluate_validation, run_graded  # noqa: E402
from harness.grading.copy import GradingSession  # noqa: E402
from harness.sandbox import resolve_mode  # noqa: E402
from harness.scenarios.loading import discover_suites, load_scenario  # noqa: E402
from harness.scenarios.workspace import create_workspace, overlay  # noqa: E402


def hidden_run_ms(scenario, kind: str, root: Path, canaries: bool) -> tuple[float, int]:
    """(the hidden-test command's wall time in ms, the canaries planted) on the solved scenario."""
    workspace = create_workspace(scenario, root)
    try:
        overlay(scenario.solution_dir, workspace.path)
        command = (scenario.raw.get("hidden_tests") or {}).get("command") or scenario.validation_commands["test"]
        with GradingSession(scenario, workspace.path, kind, root) as session:
            ctx = session.context
            evaluate_validation(ctx)  # install and build steps the hidden tests may need
            ctx.grading.lay_over(scenario.hidden_tests_dir)
            planted = []

            def before() -> None:
                planted.append(plant(ctx.workspace, scenario.hidden_tests_dir, detect_runner(command), command))

            graded = run_graded(ctx, command, "hidden_tests", test=True, timeout_s=command_timeout(scenario),
                                before=before if canaries else None)
            if not graded.result.ok and not canaries:
                raise RuntimeError(f"{scenario.key}: the solved scenario's hidden tests failed: {graded.result.outcome()}")
            count = len(planted[0].canaries) if planted and planted[0] else 0
            return graded.result.duration_ms, count
    finally:
        workspace.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--suite", action="append", help="only these suites (repeatable)")
    args = parser.parse_args()
    kind = resolve_mode(args.sandbox).kind
    suites_dir = REPO / "suites"
    rows = []
    with tempfile.TemporaryDirectory(prefix="zebench-canary-bench-") as tmp:
        root = Path(tmp)
        for suite in discover_suites(suites_dir):
            if args.suite and suite.name not in args.suite:
                continue
            for name in suite.scenarios:
                scenario = load_scenario(suite.name, name, suites_dir)
                if scenario.hidden_tests_dir is None:
                    continue
                plain, planted, count = [], [], 0
                for i in range(args.repeats):
                    for with_canaries in ((False, True) if i % 2 == 0 else (True, False)):
                        ms, n = hidden_run_ms(scenario, kind, root, with_canaries)
                        (planted if with_canaries else plain).append(ms)
                        count = max(count, n)
                row = {"scenario": scenario.key, "canaries": count, "withoutMs": statistics.median(plain),
                       "withMs": statistics.median(planted)}
                row["ratio"] = row["withMs"] / row["withoutMs"]
                rows.append(row)
                print(f"{row['scenario']:45} {count:3d} canaries  {row['withoutMs']:8.0f} ms  "
                      f"{row['withMs']:8.0f} ms  x{row['ratio']:.3f}", flush=True)
    ratios = [r["ratio"] for r in rows]
    summary = {"sandbox": kind, "repeats": args.repeats, "scenarios": rows,
               "medianRatio": statistics.median(ratios) if ratios else None}
    print(f"median ratio (with / without canaries): {summary['medianRatio']:.3f}" if ratios else "no scenario")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
