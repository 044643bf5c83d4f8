"""Drills for the results path: kill the worker mid-batch, kill the harness mid-batch, load.

- ``kill-worker``: ``worker dev`` is SIGKILLed while ``--processes`` runner processes post
  ``--runs`` runs each through the harness's client; the runners spool what they cannot
  deliver; the worker restarts and a sync delivers the spool. Checked in the SQLite file:
  every run stored exactly once (0 lost, 0 duplicated).
- ``kill-harness``: ``bench`` runs a batch with ``-j 4`` against a scripted model that keeps
  its agents busy, and is SIGKILLed; the next command (``bench history``) then runs.
  Checked: the database passes ``PRAGMA integrity_check``, every stored run has its
  evaluations and telemetry (nothing half-stored), and no workspace, temporary directory or
  process of the killed harness is left.
- ``load``: ``--posts`` runs posted by ``--processes`` processes at once to ``worker dev`` (or
  to ``--url``, e.g. a worker under workerd); throughput and latency percentiles, and every
  run stored exactly once.

Each drill prints one JSON object and exits 1 when a check fails.

Usage:
  .venv/bin/python benchmarks/results_drills.py kill-worker --processes 8 --runs 200
  .venv/bin/python benchmarks/results_drills.py kill-harness
  .venv/bin/python benchmarks/results_drills.py load --processes 8 --posts 1000
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the test helpers: scenario builders, HTTP stubs, process probes

KEY = os.environ.get("ZE_BENCHMARKS_API_KEY") or "drill-key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_worker(db: Path, port: int, log: Path) -> subprocess.Popen:
    import httpx

    env = dict(os.environ, API_SECRET_KEY=KEY)
    proc = subprocess.Popen([sys.executable, "-m", "worker.cli", "dev", "--port", str(port), "--db", str(db)],
                            env=env, cwd=ROOT, stdout=open(log, "a"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
        if proc.poll() is not None:
            break
    kill(proc)
    raise RuntimeError("worker dev did not start:\n" + log.read_text())


def kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


# --------------------------------------------------------------------------- runner process

def runner(url: str, spool: str, prefix: str, count: int, batch: str, key: str = KEY) -> dict:
    """Post ``count`` runs (ids ``<prefix>-<i>``); what happened to each, and the latencies."""
    from harness.results import RunRecord, open_client

    outcomes: dict[str, int] = {}
    latencies = []
    with open_client(worker_url=url, api_key=key, spool_dir=spool, retries=1, timeout_s=5,
                     sync_spool=False) as client:
        client.transport.backoff_s = 0.01
        for i in range(count):
            record = RunRecord(f"run_{batch}_{prefix}_{i:05d}"[-120:], "drill", f"sc{i % 5}", "L1", "echo", batch_id=batch,
                               total_score=(i % 4) / 4, transcript=[{"role": "user", "content": "x" * 500}])
            started = time.perf_counter()
            try:
                outcome = client.post_run(record)
            except Exception as exc:  # noqa: BLE001 - counted; the drill fails on any
                outcome = f"error: {type(exc).__name__}"
            latencies.append((time.perf_counter() - started) * 1000.0)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {"outcomes": outcomes, "latencies": latencies}


def _spawn_runners(url: str, spool: str, processes: int, runs: int, batch: str,
                   key: str = KEY) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, __file__, "runner", "--url", url, "--spool", spool, "--key", key,
                              "--prefix", f"p{i}", "--count", str(runs), "--batch", batch],
                             cwd=ROOT, stdout=subprocess.PIPE, text=True) for i in range(processes)]


def _collect(procs: list[subprocess.Popen]) -> list[dict]:
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _stored(db: Path, batch: str) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        rows, distinct = conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM runs WHERE batch_id = ?",
                                      (batch,)).fetchone()
    return rows, distinct


# --------------------------------------------------------------------------- drills

def drill_kill_worker(processes: int, runs: int, tmp: Path) -> dict:
    from harness.results import open_client

    db, spool, log, batch = tmp / "worker.db", str(tmp / "spool"), tmp / "dev.log", "drill-kill-worker"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    worker = start_worker(db, port, log)
    procs = _spawn_runners(url, spool, processes, runs, batch)
    target = processes * runs
    try:
        while _stored(db, batch)[0] < target // 3:  # kill once about a third is stored
            time.sleep(0.02)
        kill(worker)
        results = _collect(procs)
        before_restart = _stored(db, batch)[0]
        worker = start_worker(db, port, log)
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool, sync_spool=False) as client:
            report = client.sync()
        rows, distinct = _stored(db, batch)
    finally:
        kill(worker)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    outcomes: dict[str, int] = {}
    for r in results:
        for k, v in r["outcomes"].items():
            outcomes[k] = outcomes.get(k, 0) + v
    return {"drill": "kill-worker", "processes": processes, "runsPerProcess": runs, "posted": target,
            "outcomes": outcomes, "storedBeforeKillAndRestart": before_restart, "deliveredBySync": report.delivered,
            "duplicatesAnsweredBySync": report.duplicates, "storedRows": rows, "distinctRuns": distinct,
            "lost": target - distinct, "duplicated": rows - distinct, "ok": distinct == target == rows}


def drill_kill_harness(tmp: Path, sandbox: str = "auto") -> dict:
    from support.http_stubs import BusyModel, serve
    from support.processes import alive
    from support.scenario_builders import make_scenario

    make_scenario(tmp / "suites")
    # A second scenario whose runs finish quickly, so some runs are stored before the kill.
    make_scenario(tmp / "suites", name="quick", solution={"calc.py": "def add_one(x):\n    return x + 1\n"})
    server = serve(BusyModel)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_BENCHMARKS_")}
    env.update(ZE_BENCHMARKS_SUITES_DIR=str(tmp / "suites"), ZE_BENCHMARKS_DB=str(tmp / "bench.db"),
               ZE_BENCHMARKS_SPOOL_DIR=str(tmp / "spool"), ZE_BENCHMARKS_WORKSPACES_DIR=str(tmp / "ws"),
               ZE_BENCHMARKS_CACHE_DIR=str(tmp / "cache"), ZE_BENCHMARKS_SANDBOX=sandbox)
    bench = os.path.join(os.path.dirname(sys.executable), "bench")
    quick = subprocess.run([bench, "demo", "quick", "--agent", "oracle", "-n", "4", "-j", "4", "--batch-id", "drill"],
                           env=env, cwd=tmp, capture_output=True, text=True, timeout=300)
    proc = subprocess.Popen([bench, "demo", "add-one", "--agent", "openai", "--base-url",
                             f"http://127.0.0.1:{server.server_address[1]}/v1", "--model", "busy", "-n", "8", "-j", "4",
                             "--batch-id", "drill"], env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(alive(BusyModel.marker)) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    busy_before = len(alive(BusyModel.marker))
    proc.kill()  # SIGKILL: no handler runs, nothing is cleaned up by the harness itself
    proc.wait()
    time.sleep(0.5)
    after_kill = {"workspaces": len(list((tmp / "ws").iterdir())), "processes": len(alive(BusyModel.marker))}
    nxt = subprocess.run([bench, "history", "--json"], env=env, cwd=tmp, capture_output=True, text=True, timeout=120)
    time.sleep(0.3)
    server.shutdown()
    left = {"workspaces": sorted(p.name for p in (tmp / "ws").iterdir()),
            "processes": len(alive(BusyModel.marker)),
            "tempDirs": sorted(p.name for p in Path(tempfile.gettempdir()).iterdir()
                               if p.name.startswith("zebench-") and f"-p{proc.pid}-" in p.name)}
    with sqlite3.connect(tmp / "bench.db") as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        half = conn.execute("SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM telemetry t "
                            "WHERE t.run_id = r.run_id)").fetchone()[0]
    ok = (quick.returncode == 0 and nxt.returncode == 0 and integrity == "ok" and half == 0
          and not left["workspaces"] and not left["processes"] and not left["tempDirs"] and runs >= 4)
    return {"drill": "kill-harness", "sandbox": sandbox, "busyCommandsWhenKilled": busy_before,
            "leftJustAfterKill": after_kill, "leftAfterNextCommand": left, "integrityCheck": integrity,
            "storedRuns": runs, "runsWithoutTelemetry": half, "ok": ok}


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def drill_load(processes: int, posts: int, tmp: Path, url: str | None = None, key: str = KEY) -> dict:
    from harness.results import open_client

    batch = f"drill-load-{os.getpid()}-{int(time.time())}"
    worker = None
    if url is None:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        worker = start_worker(tmp / "load.db", port, tmp / "load.log")
    per = posts // processes
    try:
        started = time.perf_counter()
        results = _collect(_spawn_runners(url, str(tmp / "spool"), processes, per, batch, key))
        elapsed = time.perf_counter() - started
        with open_client(worker_url=url, api_key=key, spool_dir=str(tmp / "spool"), sync_spool=False) as client:
            stored = client.get_batch(batch)
    finally:
        if worker is not None:
            kill(worker)
    latencies = [x for r in results for x in r["latencies"]]
    outcomes: dict[str, int] = {}
    for r in results:
        for k, v in r["outcomes"].items():
            outcomes[k] = outcomes.get(k, 0) + v
    ids = [r.run_id for r in stored.runs] if stored else []
    total = per * processes
    return {"drill": "load", "url": url, "processes": processes, "posts": total, "outcomes": outcomes,
            "seconds": round(elapsed, 2), "postsPerSecond": round(total / elapsed, 1),
            "p50Ms": round(_percentile(latencies, 50), 1), "p95Ms": round(_percentile(latencies, 95), 1),
            "p99Ms": round(_percentile(latencies, 99), 1), "storedRuns": len(ids), "distinctRuns": len(set(ids)),
            "ok": outcomes.get("stored") == total and len(ids) == len(set(ids)) == total}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="drill", required=True)
    kw = sub.add_parser("kill-worker")
    kw.add_argument("--processes", type=int, default=8)
    kw.add_argument("--runs", type=int, default=200)
    kh = sub.add_parser("kill-harness")
    kh.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"])
    ld = sub.add_parser("load")
    ld.add_argument("--processes", type=int, default=8)
    ld.add_argument("--posts", type=int, default=1000)
    ld.add_argument("--url", default=None, help="a running worker (its key: $ZE_BENCHMARKS_API_KEY or drill-key)")
    rn = sub.add_parser("runner")
    for name in ("--url", "--spool", "--prefix", "--batch", "--key"):
        rn.add_argument(name, required=True)
    rn.add_argument("--count", type=int, required=True)
    args = parser.parse_args()
    if args.drill == "runner":
        import logging

        logging.disable(logging.INFO)
        print(json.dumps(runner(args.url, args.spool, args.prefix, args.count, args.batch, args.key)))
        return 0
    with tempfile.TemporaryDirectory(prefix="zebench-drill-") as tmp_dir:
        tmp = Path(tmp_dir)
        if args.drill == "kill-worker":
            out = drill_kill_worker(args.processes, args.runs, tmp)
        elif args.drill == "kill-harness":
            out = drill_kill_harness(tmp, args.sandbox)
        else:
            out = drill_load(args.processes, args.posts, tmp, args.url, KEY)
    print(json.dumps(out))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
