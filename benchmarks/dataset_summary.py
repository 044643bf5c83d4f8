"""How long the dataset summary (the figures of summary.json and of the terminal table) takes
over the results lines of a large run, here or in another tree (``--tree``, for a before/after).

10,000 lines of ``results.jsonl`` (4 targets, 7 categories, the four statuses, errors of kind
``timeout``), summarised with :func:`harness.datasets.summary.summarize` as a finished run does;
the median of ``--repeats`` timings in one process, after one warm-up call.

    .venv/bin/python benchmarks/dataset_summary.py [--lines 10000] [--repeats 15] [--tree DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path


def lines_of(count: int) -> list[dict]:
    rng = random.Random(1)
    return [{"test_id": f"q{i % 500}", "category": f"c{i % 7}", "target": f"openai:m{i % 4}", "provider": "openai",
             "model": f"m{i % 4}", "repeat": i // 2000, "status": rng.choice(["passed", "failed", "error", "ungraded"]),
             "score": 0.5, "duration_ms": rng.random() * 1000, "ttft_ms": 12.0, "tokens_in": 10, "tokens_out": 20,
             "cost_usd": 0.001, "error": None, "error_kind": "timeout"} for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the source tree whose harness is timed (default: this one)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    from harness.datasets.summary import summarize

    lines = lines_of(args.lines)
    targets = [f"openai:m{i}" for i in range(4)]
    summarize(lines, targets=targets)
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        summarize(lines, targets=targets)
        times.append(time.perf_counter() - started)
    source = Path(sys.modules[summarize.__module__].__file__ or "?")
    print(f"summary of {args.lines:,} lines ({source}): median {statistics.median(times) * 1000:.1f} ms "
          f"over {args.repeats}")


if __name__ == "__main__":
    main()
