"""Client overhead and throughput of ``bench dataset`` against a model that answers in 50 ms.

A dataset of N generated cases (each graded by two assertions) runs through the library path
of ``bench dataset`` (:func:`harness.datasets.planning.prepare` and :func:`execute`: the engine,
the SDK's async client, grading, results.jsonl, then the exports) against
``benchmarks/mock_llm.py`` in its own process, at several concurrencies; in the same run a raw
aiohttp client sends the same requests as the reference. Each measurement runs in a fresh
child process, which reports:

- client CPU per request (user + system of the child while the requests are sent, divided by
  the requests; the SDK's import, with the aiohttp transport its first client loads, a
  one-off start-up cost of about 0.4 s, and the exports are measured apart);
- throughput as a fraction of the limit ``concurrency / delay`` (wall time of the send phase);
- peak RSS of the child.

It also times the CSV export of 10,000 results. Usage:

    python benchmarks/dataset_throughput.py                       # 1,000 cases, c = 4, 32, 128, 256
    python benchmarks/dataset_throughput.py --cases 10000 --concurrency 128 --no-raw   # memory
    python benchmarks/dataset_throughput.py --repeats 3           # medians of 3

Figures and the command that produced them are in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_mock(delay_ms: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "mock_llm.py"), "--delay-ms", str(delay_ms)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, int(line.split()[1])


def write_dataset(path: Path, cases: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(cases):
            f.write(json.dumps({"id": f"case-{i}", "category": f"cat-{i % 5}", "prompt": f"Say hello to number {i}.",
                                "assert": [{"type": "icontains", "value": f"number {i}"},
                                           {"type": "max-words", "value": 50}]}) + "\n")


# ----------------------------------------------------------------------------- child processes


def _usage() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_dataset(port: int, dataset: str, concurrency: int, out: str) -> dict:
    import asyncio

    sys.path.insert(0, str(ROOT))
    from harness.datasets.planning import DatasetRunOptions, prepare
    from harness.datasets.run import execute
    from harness.models.providers.registry import parse_targets

    c_import = _usage()
    import openai  # noqa: F401 - the SDK's import is a start-up cost, reported apart
    from harness.models.providers.http import make_sdk_async_http_client  # noqa: F401
    # and so is what its first aiohttp client imports (the transport, and httpcore2 for TLS)
    import aiohttp  # noqa: F401
    import httpcore2  # noqa: F401
    startup_cpu = _usage() - c_import
    options = DatasetRunOptions(dataset=dataset, output_dir=Path(out), concurrency=concurrency, timeout_s=60.0,
                                targets=parse_targets("openai-compatible:mock", base_url=f"http://127.0.0.1:{port}/v1"))
    run = prepare(options)
    timings: dict = {}

    async def main() -> None:
        from harness.datasets import run as run_module

        original = run_module.finish

        def timed_finish(*args, **kwargs):
            timings["send_wall"] = time.perf_counter() - timings["t0"]
            timings["send_cpu"] = _usage() - timings["c0"]
            t1, c1 = time.perf_counter(), _usage()
            result = original(*args, **kwargs)
            timings["export_wall"] = time.perf_counter() - t1
            timings["export_cpu"] = _usage() - c1
            return result

        run_module.finish = timed_finish
        timings["t0"], timings["c0"] = time.perf_counter(), _usage()
        result = await execute(run)
        timings["cells"] = len(result.cells)
        timings["passed"] = sum(1 for c in result.cells if c["status"] == "passed")
        timings["errors"] = sum(1 for c in result.cells if c["status"] == "error")

    asyncio.run(main())
    timings.pop("t0"), timings.pop("c0")
    timings["startup_cpu"] = startup_cpu
    timings["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return timings


def child_raw(port: int, cases: int, concurrency: int) -> dict:
    import asyncio

    import aiohttp

    async def main() -> dict:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            numbers = iter(range(cases))

            async def worker() -> None:
                for i in numbers:
                    body = {"model": "mock", "messages": [{"role": "user", "content": f"Say hello to number {i}."}],
                            "max_tokens": 1024}
                    async with session.post(url, json=body) as response:
                        json.loads(await response.read())

            t0, c0 = time.perf_counter(), _usage()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return {"send_wall": time.perf_counter() - t0, "send_cpu": _usage() - c0, "cells": cases}

    out = asyncio.run(main())
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_child(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "ZE_BENCHMARKS_HTTP_TRANSPORT": "aiohttp"})
    if done.returncode != 0:
        raise SystemExit(f"child failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def csv_export_seconds(rows: int) -> float:
    sys.path.insert(0, str(ROOT))
    from harness.datasets.exports import write_csv

    cells = [{"test_id": f"case-{i}", "category": "c", "status": "passed", "duration_ms": 51.2, "tokens_in": 12,
              "tokens_out": 30, "cost_usd": 0.0001, "model": "m", "error": None, "provider": "openai",
              "target": "openai:m", "repeat": 0, "score": 1.0, "threshold": None, "ttft_ms": None,
              "error_kind": None, "attempts": 1, "run_id": f"run_{i}", "finished_at": "2026-11-23T00:00:00Z"}
             for i in range(rows)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        write_csv(Path(tmp) / "results.csv", cells)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", default="4,32,128,256")
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-raw", action="store_true", help="skip the raw aiohttp reference")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        kind, port, *rest = args.child
        if kind == "dataset":
            print(json.dumps(child_dataset(int(port), rest[0], int(rest[1]), rest[2])))
        else:
            print(json.dumps(child_raw(int(port), int(rest[0]), int(rest[1]))))
        return

    mock, port = start_mock(args.delay_ms)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dataset = Path(tmp) / "generated.jsonl"
            write_dataset(dataset, args.cases)
            for conc in [int(c) for c in args.concurrency.split(",")]:
                limit = conc / (args.delay_ms / 1000.0)
                for client in (["bench dataset"] + ([] if args.no_raw else ["raw aiohttp"])):
                    samples = []
                    for r in range(args.repeats):
                        if client == "bench dataset":
                            out = run_child(["dataset", str(port), str(dataset), str(conc),
                                             str(Path(tmp) / f"out-{conc}-{r}")])
                        else:
                            out = run_child(["raw", str(port), str(args.cases), str(conc)])
                        samples.append(out)
                    cpu = statistics.median(s["send_cpu"] / s["cells"] * 1000 for s in samples)
                    frac = statistics.median(s["cells"] / s["send_wall"] / limit for s in samples)
                    rss = statistics.median(s["rss_mb"] for s in samples)
                    extra = ""
                    if client == "bench dataset":
                        exp = statistics.median(s["export_wall"] for s in samples)
                        errors = max(s["errors"] for s in samples)
                        start = statistics.median(s["startup_cpu"] for s in samples)
                        extra = f"  exports {exp:.2f}s  start-up CPU {start:.2f}s  errors {errors}"
                    rows.append((conc, client, cpu, frac, rss))
                    print(f"c={conc:<4} {client:<14} cpu/request {cpu:5.2f} ms  throughput {frac:4.2f} of the limit "
                          f"({limit:,.0f}/s)  peak RSS {rss:5.0f} MB{extra}", flush=True)
    finally:
        mock.kill()
    print(f"CSV export of 10,000 results: {csv_export_seconds(10_000):.3f} s")


if __name__ == "__main__":
    main()
