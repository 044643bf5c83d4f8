"""Load benchmark of the results worker: 1,000 runs from 8 concurrent clients to ``worker dev``.

Each repeat starts a fresh server process on a free loopback port and a fresh database,
posts every run through the harness's own results client (HTTP transport, one client per
thread), reads every run back, re-posts a tenth of them (which must come back as
duplicates), then checks the database itself: every run stored exactly once, with its
evaluations and telemetry. The same runs are then posted through the in-process transport,
so the HTTP/in-process ratio is measured on the same machine in the same invocation.

Usage:
  .venv/bin/python benchmarks/worker_load.py                      # `worker dev`, 3 repeats
  .venv/bin/python benchmarks/worker_load.py --server threaded    # stdlib ThreadingHTTPServer
  .venv/bin/python benchmarks/worker_load.py --server uvicorn     # needs `pip install -e .[bench]`
  .venv/bin/python benchmarks/worker_load.py --runs 1000 --clients 8 --repeats 3 --json

Not a test: it asserts correctness (exit status 1 if any run is missing or stored twice)
but never timing. Figures go to docs/PERFORMANCE.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.results import (  # noqa: E402
    BatchRecord,
    EvaluationRecord,
    RunRecord,
    Telemetry,
    open_client,
)

KEY = "load-benchmark-key"


def make_runs(n: int, batch_id: str) -> list[RunRecord]:
    """Runs shaped like real ones: 3 evaluations, telemetry, a short transcript."""
    runs = []
    for i in range(n):
        runs.append(RunRecord(
            run_id=f"run_load_{i:05d}_{os.getpid()}", suite="py-bugs", scenario=f"scenario-{i % 10}",
            tier=("L0", "L1", "L2")[i % 3], agent=("echo", "oracle", "openai")[i % 3],
            batch_id=batch_id, model=f"model-{i % 4}", status="completed",
            total_score=(i % 5) / 4 if i % 5 < 5 else 1.0, weighted_score=(i % 5) / 4,
            is_successful=i % 2 == 0, config_hash=f"cfg{i % 7}",
            evaluations=[EvaluationRecord("validation", 1.0, details="exit 0"),
                         EvaluationRecord("heuristic_checks", 0.5, details="2 of 4 checks"),
                         EvaluationRecord("llm_judge", 0.0, status="skipped", details="no credentials")],
            telemetry=Telemetry(tool_calls=5, tokens_in=1200, tokens_out=300, turns=4,
                                latencies_ms=[120.0, 95.5, 210.0, 80.0], duration_ms=2500.0),
            transcript=[{"role": "user", "content": "Fix the failing test."},
                        {"role": "assistant", "content": "Done: the slug keeps unicode letters."}],
        ))
    return runs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(kind: str, db: Path, port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, API_SECRET_KEY=KEY, ZE_BENCH_WORKER_DB=str(db),
               PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'benchmarks'}")
    if kind == "worker-dev":
        cmd = [sys.executable, "-m", "worker.cli", "dev", "--port", str(port), "--db", str(db)]
    elif kind == "threaded":
        cmd = [sys.executable, str(REPO / "benchmarks" / "worker_threaded.py"), str(port), str(db)]
    else:
        cmd = [sys.executable, "-m", "uvicorn", "worker_asgi:app", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning", "--no-access-log"]
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    stop_server(proc)
    raise SystemExit(f"{kind} server did not start:\n{log.read_text()}")


def stop_server(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User+system CPU time of a process so far (Linux /proc), to cost the server per request."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_threads(clients: int, work: list[Any], fn) -> tuple[float, list[float], list[Any]]:  # type: ignore[no-untyped-def]
    """Split ``work`` over ``clients`` threads; return wall seconds, per-call latencies, results."""
    latencies: list[float] = []
    results: list[Any] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        state = {}
        mine_lat, mine_res = [], []
        try:
            for item in work[index::clients]:
                t0 = time.perf_counter()
                mine_res.append(fn(state, item))
                mine_lat.append(time.perf_counter() - t0)
        except BaseException as exc:  # reported after join
            errors.append(exc)
        finally:
            if "client" in state:
                state["client"].close()
            with lock:
                latencies.extend(mine_lat)
                results.extend(mine_res)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        raise errors[0]
    return wall, latencies, results


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def verify_db(db: Path, runs: list[RunRecord]) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        total, distinct = conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM runs").fetchone()
        evals = conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
        tel = conn.execute("SELECT COUNT(*) FROM telemetry").fetchone()[0]
        stored = {r[0] for r in conn.execute("SELECT run_id FROM runs")}
    finally:
        conn.close()
    missing = len({r.run_id for r in runs} - stored)
    return {"rows": total, "distinct": distinct, "evaluations": evals, "telemetry": tel,
            "missing": missing}


def one_repeat(kind: str, n_runs: int, clients: int, tmp: Path) -> dict[str, Any]:
    db = tmp / "bench.db"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    batch_id = f"batch_load_{os.getpid()}_{int(time.time() * 1000)}"
    runs = make_runs(n_runs, batch_id)
    spool = str(tmp / "spool")
    proc = start_server(kind, db, port, tmp / "server.log")
    try:
        def post(state: dict, run: RunRecord) -> str:
            if "client" not in state:
                state["client"] = open_client(worker_url=url, api_key=KEY, spool_dir=spool,
                                              sync_spool=False)
            return state["client"].post_run(run)

        def get(state: dict, run: RunRecord) -> bool:
            if "client" not in state:
                state["client"] = open_client(worker_url=url, api_key=KEY, spool_dir=spool,
                                              sync_spool=False)
            return state["client"].get_run(run.run_id) is not None

        cpu0 = cpu_seconds(proc.pid)
        post_wall, post_lat, outcomes = run_threads(clients, runs, post)
        cpu1 = cpu_seconds(proc.pid)
        get_wall, get_lat, found = run_threads(clients, runs, get)
        cpu2 = cpu_seconds(proc.pid)
        _, _, dup_outcomes = run_threads(clients, runs[: n_runs // 10], post)
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool, sync_spool=False) as c:
            c.post_batch(BatchRecord(batch_id, completed_at=int(time.time() * 1000)))
            batch = c.get_batch(batch_id)
    finally:
        stop_server(proc)
    check = verify_db(db, runs)

    # The same runs through the in-process transport, for the HTTP/in-process ratio.
    inproc_db = tmp / "inproc.db"

    def post_inproc(state: dict, run: RunRecord) -> str:
        if "client" not in state:
            state["client"] = open_client(db_path=str(inproc_db), spool_dir=spool, sync_spool=False)
        return state["client"].post_run(run)

    inproc_wall, inproc_lat, inproc_outcomes = run_threads(clients, runs, post_inproc)
    inproc_check = verify_db(inproc_db, runs)

    ok = (outcomes.count("stored") == n_runs and all(found)
          and dup_outcomes.count("duplicate") == len(dup_outcomes)
          and check["rows"] == check["distinct"] == n_runs and check["missing"] == 0
          and check["evaluations"] == 3 * n_runs and check["telemetry"] == n_runs
          and batch is not None and batch.total_runs == n_runs
          and inproc_outcomes.count("stored") == n_runs and inproc_check["rows"] == n_runs
          and not os.path.isdir(os.path.join(spool, "pending")))
    return {
        "ok": ok,
        "check": check,
        "post_runs_per_s": n_runs / post_wall,
        "post_p50_ms": 1000 * statistics.median(post_lat),
        "post_p95_ms": 1000 * pct(post_lat, 0.95),
        "server_cpu_ms_per_post": 1000 * (cpu1 - cpu0) / n_runs,
        "get_per_s": n_runs / get_wall,
        "server_cpu_ms_per_get": 1000 * (cpu2 - cpu1) / n_runs,
        "get_p50_ms": 1000 * statistics.median(get_lat),
        "inproc_runs_per_s": n_runs / inproc_wall,
        "inproc_p50_ms": 1000 * statistics.median(inproc_lat),
        "http_over_inproc": (n_runs / post_wall) / (n_runs / inproc_wall),
        "duplicates_on_resend": dup_outcomes.count("duplicate"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--server", choices=("worker-dev", "threaded", "uvicorn"), default="worker-dev",
                        help="worker-dev: `worker dev` (asyncio, stdlib); threaded: stdlib "
                             "ThreadingHTTPServer; uvicorn: the core as an ASGI app")
    parser.add_argument("--json", action="store_true", help="print all figures as JSON")
    args = parser.parse_args()
    if args.server == "uvicorn":
        try:
            import uvicorn  # noqa: F401
        except ImportError:
            print("uvicorn is not installed: pip install -e '.[bench]'", file=sys.stderr)
            return 2

    results = []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="worker-load-") as tmp:
            r = one_repeat(args.server, args.runs, args.clients, Path(tmp))
        results.append(r)
        print(f"repeat {i + 1}: {'ok' if r['ok'] else 'FAILED'} "
              f"POST {r['post_runs_per_s']:.0f} runs/s (p50 {r['post_p50_ms']:.1f} ms, "
              f"p95 {r['post_p95_ms']:.1f} ms, server CPU {r['server_cpu_ms_per_post']:.2f} ms), "
              f"GET {r['get_per_s']:.0f}/s (server CPU {r['server_cpu_ms_per_get']:.2f} ms), "
              f"in-process {r['inproc_runs_per_s']:.0f} runs/s", file=sys.stderr)
    keys = [k for k in results[0] if isinstance(results[0][k], float)]
    medians = {k: statistics.median(r[k] for r in results) for k in keys}
    all_ok = all(r["ok"] for r in results)
    summary = {"server": args.server, "runs": args.runs, "clients": args.clients,
               "repeats": args.repeats, "all_stored_exactly_once": all_ok, "medians": medians,
               "checks": [r["check"] for r in results]}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"server={args.server} runs={args.runs} clients={args.clients} repeats={args.repeats} "
              f"every run stored exactly once: {all_ok}")
        for k in keys:
            print(f"  median {k}: {medians[k]:.2f}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
