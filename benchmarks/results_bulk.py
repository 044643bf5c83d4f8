"""CPU per stored run: one ``POST /api/results`` per run against ``POST /api/results/bulk``.

Each mode runs in a fresh child process that posts the same number of dataset-like runs (two
evaluations, telemetry, no transcript: what a dataset or fleet cell stores) to a new SQLite
store through the in-process client, one by one (``post_run``) or in bulk (``post_runs``, 20
runs a call, as a fleet cell of 20 tests does). It prints user + system CPU per run and the
wall time, medians over ``--repeats``::

    python benchmarks/results_bulk.py                  # 2,400 runs, 3 repeats
    python benchmarks/results_bulk.py --runs 500 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(mode: str, runs: int, directory: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from harness.results import open_client
    from harness.results.records import EvaluationRecord, RunRecord, Telemetry, new_run_id

    records = [RunRecord(
        run_id=new_run_id(), batch_id="batch_bulk_bench", suite="qa", scenario=f"case-{i}", tier="dataset",
        agent="openai-compatible", model="m1", status="completed", total_score=1.0, weighted_score=1.0,
        is_successful=True, success_metric=1.0, config_hash="cfg", metadata={"case": {"category": "c"}},
        evaluations=[EvaluationRecord("assert.icontains", 1.0, details="found"),
                     EvaluationRecord("assert.max-words", 1.0, details="12 words")],
        telemetry=Telemetry(tokens_in=12, tokens_out=8, cost_usd=None, turns=1, duration_ms=51.0,
                            latencies_ms=[51.0]),
    ) for i in range(runs)]
    client = open_client(db_path=str(Path(directory) / "bench.db"), spool_dir=str(Path(directory) / "spool"))
    client.verify()
    t0, c0 = time.perf_counter(), _cpu()
    if mode == "one":
        outcomes = [client.post_run(r) for r in records]
    else:
        outcomes = []
        for start in range(0, runs, 20):
            outcomes += client.post_runs(records[start:start + 20])
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    assert outcomes == ["stored"] * runs, outcomes[:3]
    return {"cpu_ms_per_run": cpu / runs * 1000, "wall_s": wall}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, runs, directory = args.child
        print(json.dumps(child(mode, int(runs), directory)))
        return
    print(f"command: python benchmarks/results_bulk.py --runs {args.runs} --repeats {args.repeats}")
    for mode, label in (("one", "POST /api/results, one run each"), ("bulk", "POST /api/results/bulk, 20 a call")):
        samples = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                done = subprocess.run([sys.executable, __file__, "--child", mode, str(args.runs), tmp],
                                      capture_output=True, text=True, check=True, cwd=ROOT)
                samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
        cpu = statistics.median(s["cpu_ms_per_run"] for s in samples)
        wall = statistics.median(s["wall_s"] for s in samples)
        print(f"{label:<36} CPU per run {cpu:5.2f} ms   wall {wall:5.2f} s for {args.runs} runs (medians of {args.repeats})")


if __name__ == "__main__":
    main()
