"""What a fleet adds to the requests it sends, and how fast a 1,000-repository manifest is checked.

**Orchestration overhead.** A fleet of R repositories (default 20; each a temporary directory
with its own ``datasets/qa.yaml`` and ``datasets/checks.yaml`` of N cases, default 20, each
graded by a real assertion) × 3 providers (``openai-compatible:m1/m2/m3`` at
``benchmarks/mock_llm.py``, which answers after 50 ms) × 2 dataset profiles (concurrency 5
and 10) runs through the real path: :func:`harness.fleet.run` with an in-process results
client on a temporary SQLite database, every answer graded, ``results.jsonl`` and the saved
responses per cell, the json, csv and html artifacts, every run stored. The baseline sends the
*same requests* (the same cells in the same order, each cell's jobs at its profile's
concurrency, ``parallel_cells`` cells at a time, on one engine with the fleet's options)
through a bare :class:`harness.models.engine.Engine` and nothing else: no grading, no files, no
store. Each measurement is a fresh child process (the fleet and the baseline alternate, the
one going first swapping each repeat); the SDK and the harness modules both need are imported
before the clock starts. The fleet's clock covers the whole of ``fleet.run`` (reading the
manifest, planning, the cells, the artifacts, the fleet's batch); the baseline's starts once its
jobs are built. Overhead = (fleet wall - baseline wall) / fleet wall, from the medians; client
CPU is the child's user + system time while it runs, per request; the mean latency of the requests
(``Engine.request``, from its start to its outcome) is noted in both, and so are the time from
the clock's start to the first request and from the last answer to the end. The children send through
the default transport (the SDKs' aiohttp), whatever ``ZE_BENCHMARKS_HTTP_TRANSPORT`` says.
``--phases`` adds one more fleet run, apart from the measured ones, with the wall time (and
thread CPU) of each step of a cell added up.

**Checking a large manifest.** A manifest of 1,000 repositories (each a directory with its own
``datasets/qa.yaml``; nine in ten also have ``datasets/reasoning.yaml``, the others resolve
``reasoning`` to the built-in dataset) × 3 providers × 2 profiles, timed as real processes:
``bench fleet validate M`` cold (each repeat with an empty dataset cache of its own: every file
read and checked) and warm (the cache filled by an earlier check), and ``bench fleet M --dry-run``
warm (wall time with the interpreter's start; the project's modules are compiled to bytecode
first, as in an installed package), and in a child process ``load_manifest`` + ``plan_fleet`` + ``estimate`` (modules
imported first). ``--profile`` prints where the in-process time goes (cProfile).

Usage:

    python benchmarks/fleet_overhead.py                  # 20 repositories, 20 cases, 50 ms, 3 repeats
    python benchmarks/fleet_overhead.py --quick          # a small run, as a smoke check
    python benchmarks/fleet_overhead.py --phases --profile   # and where the time goes

Figures and the command that produced them are in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import importlib
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
BENCH = Path(sys.executable).with_name("bench")
PROVIDERS = ("openai-compatible:m1", "openai-compatible:m2", "openai-compatible:m3")
# name -> concurrency of the overhead fleet's two dataset profiles
PROFILES = {"qa": 5, "checks": 10}


def start_mock(delay_ms: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "mock_llm.py"), "--delay-ms", str(delay_ms)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, int(line.split()[1])


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def write_dataset(path: Path, name: str, repo_id: str, cases: int) -> None:
    """A dataset of ``cases`` prompts; the mock echoes the prompt, so each assertion passes."""
    lines = [f"name: {name}", 'version: "1.0.0"', f"description: {_yaml_string(f'{name} cases of {repo_id}')}",
             "test_cases:"]
    for i in range(cases):
        lines += [f"  - id: {name}-{i}",
                  f"    category: cat-{i % 4}",
                  f"    prompt: {_yaml_string(f'Repeat the tag {repo_id}/{name}/{i} once.')}",
                  "    assert:",
                  "      - type: icontains",
                  f"        value: {_yaml_string(f'{repo_id}/{name}/{i} ')}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_fleet(directory: Path, repos: int, cases: int, base_url: str, *, profiles: dict[str, dict],
                datasets: dict[str, float], base_dir: str = "runs") -> Path:
    """Repositories ``repo-000...`` under ``directory/repos`` and ``directory/fleet.json``.
    ``datasets``: name -> fraction of repositories that have their own file of it (the rest
    resolve the name elsewhere: a built-in dataset)."""
    entries = []
    for r in range(repos):
        repo_id = f"repo-{r:04d}"
        repo = directory / "repos" / repo_id
        (repo / "src").mkdir(parents=True, exist_ok=True)
        for name, share in datasets.items():
            if r < round(share * repos):
                write_dataset(repo / "datasets" / f"{name}.yaml", name, repo_id, cases)
        entries.append({"repo_id": repo_id, "path": f"repos/{repo_id}", "metadata": {"team": f"team-{r % 7}"}})
    manifest = {
        "fleet_id": "overhead",
        "version": "1.0",
        "description": "fleet orchestration overhead against the loopback mock",
        "repositories": entries,
        "providers": [{"provider": p, "base_url": base_url} for p in PROVIDERS],
        "scenario_profiles": profiles,
        "output": {"base_dir": base_dir, "formats": ["json", "csv", "html"]},
        "global_settings": {"continue_on_failure": True, "test_timeout_seconds": 60},
    }
    path = directory / "fleet.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- child processes


def _usage() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _record_latencies() -> tuple[list[float], list[float]]:
    """Wrap ``Engine.request`` to note each request's latency (ms, its attempts and waits for a
    slot included; the first list fills as the requests end) and, in the second list, when the
    first request started and the last one ended (``time.perf_counter``)."""
    from harness.models.engine import Engine

    latencies: list[float] = []
    span: list[float] = []
    original = Engine.request

    async def request(self, job):
        if not span:
            span[:] = [time.perf_counter(), 0.0]
        outcome = await original(self, job)
        latencies.append(outcome.elapsed_ms)
        span[1] = time.perf_counter()
        return outcome

    Engine.request = request
    return latencies, span


def _common_imports() -> None:
    """What both the fleet and the baseline need: imported before the clock starts."""
    sys.path.insert(0, str(ROOT))
    for name in ("openai", "harness.models.providers.http", "harness.models.engine", "harness.datasets.run", "harness.fleet"):
        importlib.import_module(name)  # the SDK's import is a start-up cost of both


# What a fleet does per cell besides sending (timed by ``--phases`` in a run of its own).
PHASES = (("harness.datasets.planning", None, "prepare"), ("harness.models.engine", "Engine", "run"),
          ("harness.datasets.run", None, "finish"), ("harness.fleet.execute", None, "_write_dataset_responses"),
          ("harness.datasets.storing", None, "store"), ("harness.fleet.execute", "FleetExecution", "_append_entry"),
          ("harness.fleet.execute", "FleetExecution", "_dataset_cell"),
          ("harness.fleet.execute", "FleetExecution", "finish"),
          ("harness.fleet.execute", "FleetExecution", "_post_batch"))


def _time_phases() -> dict:
    """Wrap the functions of :data:`PHASES` to add up their wall time (and, for plain
    functions, the CPU time of the thread they run in)."""
    import functools
    import inspect

    totals: dict = {}
    for module_name, class_name, name in PHASES:
        owner = importlib.import_module(module_name)
        owner = getattr(owner, class_name) if class_name else owner
        label = f"{class_name or module_name.rsplit('.', 1)[-1]}.{name}"
        entry = totals[label] = {"calls": 0, "wall": 0.0, "cpu": None}
        original = getattr(owner, name)
        if inspect.iscoroutinefunction(original):
            async def wrapper(*args, __f=original, __e=entry, **kwargs):
                t0 = time.perf_counter()
                try:
                    return await __f(*args, **kwargs)
                finally:
                    __e["calls"] += 1
                    __e["wall"] += time.perf_counter() - t0
        else:
            entry["cpu"] = 0.0

            def wrapper(*args, __f=original, __e=entry, **kwargs):
                t0, c0 = time.perf_counter(), time.thread_time()
                try:
                    return __f(*args, **kwargs)
                finally:
                    __e["calls"] += 1
                    __e["wall"] += time.perf_counter() - t0
                    __e["cpu"] += time.thread_time() - c0
        setattr(owner, name, functools.wraps(original)(wrapper))
    return totals


def child_fleet(manifest_path: str, out: str, parallel_cells: int, phases: bool = False) -> dict:
    _common_imports()
    from harness import fleet
    from harness.results import open_client

    totals = _time_phases() if phases else None
    latencies, span = _record_latencies()
    client = open_client(db_path=str(Path(out) / "bench.db"), spool_dir=str(Path(out) / "spool"))
    t0, c0 = time.perf_counter(), _usage()
    results = fleet.run(manifest_path, client=client, output=str(Path(out) / "runs"), parallel_cells=parallel_cells)
    t1, cpu = time.perf_counter(), _usage() - c0
    wall = t1 - t0
    summary = results["summary"]
    run_dir = Path(out) / "runs" / results["run_id"]
    artifacts = sorted(str(p.relative_to(run_dir)) for p in run_dir.iterdir()
                       if p.is_file() and p.suffix in (".json", ".html")) + sorted(
        f"csv/{p.name}" for p in (run_dir / "csv").glob("*.csv"))
    import sqlite3

    with sqlite3.connect(Path(out) / "bench.db") as db:
        stored = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    return {"wall": wall, "cpu": cpu, "requests": summary["total_tests"], "passed": summary["total_succeeded"],
            "state": results["state"], "cells": len(results.get("cells") or []), "artifacts": artifacts,
            "stored": stored, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "phases": totals, "latency_ms": statistics.mean(latencies), "head": span[0] - t0, "tail": t1 - span[1]}


def child_baseline(manifest_path: str, parallel_cells: int) -> dict:
    _common_imports()
    import asyncio

    from harness.datasets.format import load_dataset
    from harness.datasets.model import apply_settings, sample_cases
    from harness.datasets.planning import build_request
    from harness.models.engine import Engine, EngineOptions, Job
    from harness.fleet import load_manifest, plan_fleet
    from harness.fleet.execute import DEFAULT_CONCURRENCY
    from harness.fleet.manifest import DEFAULT_TIMEOUT_S

    manifest = load_manifest(manifest_path)
    plan = plan_fleet(manifest)
    timeout_s = manifest.test_timeout_s or DEFAULT_TIMEOUT_S
    loaded: dict[str, list] = {}
    cells = []  # (concurrency, jobs) per cell, in the fleet's order
    for cell in plan.cells:
        ref = cell.lookup.ref
        if ref not in loaded:
            loaded[ref] = list(load_dataset(ref).cases)
        cases = apply_settings(sample_cases(loaded[ref], cell.profile.num_examples, manifest.random_seed),
                               cell.profile.settings)
        jobs = [Job(cell.target, build_request(c, cell.target, timeout_s), r) for c in cases for r in range(c.repeat)]
        cells.append((cell.profile.concurrency, jobs))
    answered = 0

    def on_outcome(outcome) -> None:
        nonlocal answered
        answered += outcome.ok

    async def main() -> None:
        engine = Engine(EngineOptions(concurrency=DEFAULT_CONCURRENCY, max_attempts=manifest.max_attempts,
                                      timeout_s=timeout_s))
        queue = list(reversed(cells))

        async def worker() -> None:
            while queue:
                concurrency, jobs = queue.pop()
                await engine.run(jobs, on_outcome, concurrency=concurrency)

        try:
            await asyncio.gather(*(worker() for _ in range(min(parallel_cells, len(cells)))))
        finally:
            await engine.aclose()

    latencies, span = _record_latencies()
    t0, c0 = time.perf_counter(), _usage()
    asyncio.run(main())
    t1, cpu = time.perf_counter(), _usage() - c0
    return {"wall": t1 - t0, "cpu": cpu, "requests": sum(len(j) for _, j in cells), "passed": answered,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "latency_ms": statistics.mean(latencies), "head": span[0] - t0, "tail": t1 - span[1]}


def child_plan(manifest_path: str, profile: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    for name in ("harness.datasets.format", "harness.datasets.run", "harness.models.pricing"):
        importlib.import_module(name)
    from harness.fleet import load_manifest, plan_fleet
    from harness.fleet.planning import estimate

    def work() -> dict:
        t0 = time.perf_counter()
        manifest = load_manifest(manifest_path)
        t1 = time.perf_counter()
        plan = plan_fleet(manifest)
        t2 = time.perf_counter()
        figures = estimate(plan)
        t3 = time.perf_counter()
        return {"load": t1 - t0, "plan": t2 - t1, "estimate": t3 - t2, "total": t3 - t0, "cells": len(plan.cells),
                "tests": plan.planned_tests, "requests": figures["requests"], "problems": len(plan.problems)}

    if not profile:
        return work()
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    out = profiler.runcall(work)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats(25)
    stats.sort_stats("tottime").print_stats(15)
    out["profile"] = text.getvalue()
    return out


def run_child(args: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ZE_BENCHMARKS_HTTP_TRANSPORT"}  # the default transport
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False,
                          env=env)
    if done.returncode != 0:
        raise SystemExit(f"child {args[0]} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _seconds(values) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def time_command(argv: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=ROOT)
    return time.perf_counter() - t0, done.returncode, (done.stdout + done.stderr)


# ----------------------------------------------------------------------------- the parts


def overhead(args: argparse.Namespace, tmp: Path, env_note: list[str]) -> list[tuple[str, str]]:
    mock, port = start_mock(args.delay_ms)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        profiles = {name: {"dataset": name, "concurrency": c} for name, c in PROFILES.items()}
        manifest = write_fleet(tmp / "small", args.repos, args.cases, base_url, profiles=profiles,
                               datasets={name: 1.0 for name in PROFILES})
        fleets, bases = [], []
        for r in range(args.repeats):
            order = ("fleet", "baseline") if r % 2 == 0 else ("baseline", "fleet")
            for kind in order:
                if kind == "fleet":
                    out = tmp / f"fleet-{r}"
                    out.mkdir()
                    s = run_child(["fleet", str(manifest), str(out), str(args.parallel_cells)])
                    fleets.append(s)
                    print(f"  repeat {r + 1}: fleet    {s['wall']:6.2f} s wall  {s['cpu']:6.2f} s CPU  "
                          f"{s['passed']}/{s['requests']} passed  state {s['state']}  stored {s['stored']}",
                          flush=True)
                else:
                    s = run_child(["baseline", str(manifest), str(args.parallel_cells)])
                    bases.append(s)
                    print(f"  repeat {r + 1}: baseline {s['wall']:6.2f} s wall  {s['cpu']:6.2f} s CPU  "
                          f"{s['passed']}/{s['requests']} answered", flush=True)
        if args.phases:
            out = tmp / "fleet-phases"
            out.mkdir()
            s = run_child(["phases", str(manifest), str(out), str(args.parallel_cells)])
            cells = s["cells"]
            print(f"  steps of one more fleet run, timed ({s['wall']:.2f} s wall, {cells} cells; a step's wall "
                  "time includes waiting for the GIL and the event loop):")
            for label, e in s["phases"].items():
                cpu = "" if e["cpu"] is None else f"  thread CPU {e['cpu']:6.3f} s"
                print(f"    {label:<34} {e['calls']:4d} calls  wall {e['wall']:7.3f} s = "
                      f"{e['wall'] / cells * 1000:6.2f} ms/cell{cpu}", flush=True)
    finally:
        mock.kill()
        mock.wait()
    requests = fleets[0]["requests"]
    fleet_wall = statistics.median(s["wall"] for s in fleets)
    base_wall = statistics.median(s["wall"] for s in bases)
    pairs = [(f["wall"] - b["wall"]) / f["wall"] for f, b in zip(fleets, bases)]
    ratio = (fleet_wall - base_wall) / fleet_wall
    floor = args.repos * len(PROVIDERS) * sum(
        -(-args.cases // c) for c in PROFILES.values()) * args.delay_ms / 1000.0 / args.parallel_cells
    cpu_fleet = statistics.median(s["cpu"] / s["requests"] for s in fleets) * 1000
    cpu_base = statistics.median(s["cpu"] / s["requests"] for s in bases) * 1000
    cells = args.repos * len(PROVIDERS) * len(PROFILES)
    ok = all(s["state"] == "completed" and s["passed"] == s["requests"] for s in fleets)
    env_note.append(f"overhead fleet: {args.repos} repositories x {len(PROVIDERS)} providers x {len(PROFILES)} "
                    f"profiles = {cells} cells, {requests} requests, {args.parallel_cells} cells at once, "
                    f"profile concurrency {', '.join(f'{k}={v}' for k, v in PROFILES.items())}; "
                    f"mock delay {args.delay_ms:g} ms; artifacts: {', '.join(fleets[0]['artifacts'])}")
    return [
        ("fleet wall (median)", f"{fleet_wall:.2f} s  (repeats: {_seconds(s['wall'] for s in fleets)})"),
        ("baseline wall (median), same requests on a bare Engine",
         f"{base_wall:.2f} s  (repeats: {_seconds(s['wall'] for s in bases)})"),
        ("ideal wall (waves of the mock delay, no client cost)", f"{floor:.2f} s"),
        ("overhead (fleet - baseline) / fleet, of the medians",
         f"{ratio:.1%}  (per repeat: {', '.join(f'{p:.1%}' for p in pairs)})  target < 2%: "
         f"{'met' if ratio < 0.02 else 'NOT met'}"),
        ("mean request latency, fleet / baseline (medians)",
         f"{statistics.median(s['latency_ms'] for s in fleets):.1f} / "
         f"{statistics.median(s['latency_ms'] for s in bases):.1f} ms  (the mock answers after "
         f"{args.delay_ms:g} ms)"),
        ("start to first request / last answer to end, fleet (medians)",
         f"{statistics.median(s['head'] for s in fleets) * 1000:.0f} / "
         f"{statistics.median(s['tail'] for s in fleets) * 1000:.0f} ms"),
        ("start to first request / last answer to end, baseline (medians)",
         f"{statistics.median(s['head'] for s in bases) * 1000:.0f} / "
         f"{statistics.median(s['tail'] for s in bases) * 1000:.0f} ms"),
        ("fleet client CPU per request (median)", f"{cpu_fleet:.2f} ms"),
        ("baseline client CPU per request (median)", f"{cpu_base:.2f} ms"),
        ("fleet peak RSS (median)", f"{statistics.median(s['rss_mb'] for s in fleets):.0f} MB"),
        ("every request answered and passed, state completed, all stored",
         "yes" if ok and all(s["stored"] == s["requests"] for s in fleets) else "NO"),
    ]


def large_manifest(args: argparse.Namespace, tmp: Path, env_note: list[str]) -> list[tuple[str, str]]:
    profiles = {"qa": {"dataset": "qa", "concurrency": 5}, "reasoning": {"dataset": "reasoning", "concurrency": 5}}
    manifest = write_fleet(tmp / "large", args.big_repos, args.cases, "http://127.0.0.1:9/v1", profiles=profiles,
                           datasets={"qa": 1.0, "reasoning": 0.9})
    env = {k: v for k, v in os.environ.items() if k != "ZE_BENCHMARKS_HTTP_TRANSPORT"}
    env["ZE_BENCHMARKS_CACHE_DIR"] = str(tmp / "cache")
    # The project's modules compiled to bytecode first, as an installed package has them: the
    # figures do not depend on whether an earlier run could write __pycache__.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "harness"), str(ROOT / "worker")],
                   check=True, capture_output=True)
    time_command([str(BENCH), "fleet", "validate", str(manifest)], env)  # fills the cache of the warm figures
    validate = [str(BENCH), "fleet", "validate", str(manifest)]
    # label -> (argv, cold): a cold repeat starts from an empty dataset cache of its own
    commands = {"bench fleet validate M, cold (empty dataset cache)": (validate, True),
                "bench fleet validate M, warm": (validate, False),
                "bench fleet M --dry-run, warm": ([str(BENCH), "fleet", str(manifest), "--dry-run"], False),
                "python -c pass (interpreter start, for reference)": ([sys.executable, "-c", "pass"], False),
                "bench --help (CLI start, for reference)": ([str(BENCH), "--help"], False)}
    rows = []
    for label, (argv, cold) in commands.items():
        walls = []
        for repeat in range(args.repeats):
            if cold:
                env["ZE_BENCHMARKS_CACHE_DIR"] = str(tmp / f"cache-cold-{repeat}")
            wall, code, output = time_command(argv, env)
            env["ZE_BENCHMARKS_CACHE_DIR"] = str(tmp / "cache")
            if code != 0:
                raise SystemExit(f"{' '.join(argv)} exited {code}:\n{output[-3000:]}")
            walls.append(wall)
        target = ""
        if label.startswith("bench fleet"):
            target = f"  target < 1 s: {'met' if statistics.median(walls) < 1.0 else 'NOT met'}"
        rows.append((label, f"{statistics.median(walls):.2f} s  (repeats: {', '.join(f'{w:.2f}' for w in walls)})"
                            f"{target}"))
    samples = [run_child(["plan", str(manifest), "0"]) for _ in range(args.repeats)]
    med = {k: statistics.median(s[k] for s in samples) for k in ("load", "plan", "estimate", "total")}
    s0 = samples[0]
    env_note.append(f"large manifest: {args.big_repos} repositories x {len(PROVIDERS)} providers x 2 profiles = "
                    f"{s0['cells']} cells, {s0['tests']} tests; "
                    f"{args.big_repos + round(0.9 * args.big_repos)} dataset files of {args.cases} cases, "
                    f"{args.big_repos - round(0.9 * args.big_repos)} repositories resolve 'reasoning' to the "
                    f"built-in dataset; problems found: {s0['problems']}")
    rows.append(("in-process load_manifest + plan_fleet + estimate",
                 f"{med['total']:.2f} s  (load {med['load']:.3f} s, plan {med['plan']:.3f} s, estimate "
                 f"{med['estimate']:.3f} s)  target < 1 s: {'met' if med['total'] < 1.0 else 'NOT met'}"))
    if args.profile:
        prof = run_child(["plan", str(manifest), "1"])
        print(prof["profile"])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=20, help="repositories of the overhead fleet")
    parser.add_argument("--cases", type=int, default=20, help="cases of each repository's dataset")
    parser.add_argument("--delay-ms", type=float, default=50.0, help="the mock's answer delay")
    parser.add_argument("--repeats", type=int, default=3, help="medians of this many repeats")
    parser.add_argument("--parallel-cells", type=int, default=4, help="cells at once (the fleet's default)")
    parser.add_argument("--big-repos", type=int, default=1000, help="repositories of the manifest to check")
    parser.add_argument("--quick", action="store_true", help="a small run, as a smoke check")
    parser.add_argument("--profile", action="store_true", help="cProfile the in-process check of the large manifest")
    parser.add_argument("--phases", action="store_true",
                        help="one more fleet run, apart, with the time of each step of a cell added up")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        kind, *rest = args.child
        if kind in ("fleet", "phases"):
            os.environ["ZE_BENCHMARKS_CACHE_DIR"] = str(Path(rest[1]) / "cache")  # the run index, kept apart
            print(json.dumps(child_fleet(rest[0], rest[1], int(rest[2]), phases=kind == "phases")))
        elif kind == "baseline":
            print(json.dumps(child_baseline(rest[0], int(rest[1]))))
        else:
            print(json.dumps(child_plan(rest[0], rest[1] == "1")))
        return

    if args.quick:
        args.repos, args.cases, args.repeats, args.big_repos = 3, 5, 1, 50
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    command = " ".join([python, "benchmarks/fleet_overhead.py", *(sys.argv[1:] if argv is None else argv)])
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fleet-overhead-") as tmp:
        print("orchestration overhead:", flush=True)
        rows = overhead(args, Path(tmp), notes)
        print("checking a large manifest:", flush=True)
        rows += large_manifest(args, Path(tmp), notes)
    print()
    print(f"command: {command.strip()}")
    for note in notes:
        print(f"  {note}")
    width = max(len(label) for label, _ in rows)
    print()
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    main()
