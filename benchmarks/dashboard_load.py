"""Page-load benchmark of the web dashboard over a large store (100,000 runs by default).

1. Fill a SQLite store in bulk through the worker's own storage layer (every run validated
   with worker/schema.py's RUN_FIELDS, stored with worker/store/runs.py's ``run_statements``, many
   runs per SQLite transaction): about 1,000 batches of scenario, dataset and fleet runs,
   several agents, models, suites and tiers, 2-4 evaluations and telemetry per run, created
   over 60 days. One more batch holds two runs with a transcript of about 10 MB: one stored
   directly as it is (the worst case, larger than the worker's cap), one posted through
   ``POST /api/results`` (the request body cap raised for it; the worker keeps at most its
   transcript cap of it, as it does for any client).
2. Start ``worker dev`` on the store and measure, over ``--repeats`` requests each (after one
   warm-up), the latency of the API routes the dashboard's first pages use: median and p95.
3. With Playwright and the system's Chromium, load ``/`` and ``/batches`` ``--loads`` times each
   in a new browser context (empty cache) and measure, inside the page, the time from the start
   of navigation to ``#app[data-state=ready]`` (the page's first content is in).
4. Open the transcript tab of each 10 MB-transcript run: the time to the first transcript entry
   on screen, and the main thread's long tasks (PerformanceObserver ``longtask``) from
   navigation until a second after it: the longest, and the total blocking time (the sum of
   each long task's time over 50 ms).

Usage:
  .venv/bin/python benchmarks/dashboard_load.py                   # 100,000 runs, 20 repeats, 5 loads
  .venv/bin/python benchmarks/dashboard_load.py --quick           # 5,000 runs, 5 repeats, 2 loads
  .venv/bin/python benchmarks/dashboard_load.py --db /tmp/dash100k.db   # keep the store; reuse it next time
  .venv/bin/python benchmarks/dashboard_load.py --no-browser      # API latencies only

Prints a table, then the figures as JSON. Not a test: nothing here asserts timing; the exit
status is 1 when a measured route or page failed (a status of 400 or more, a page that never
became ready, a console error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
for entry in (str(REPO), str(REPO / "tests")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from worker import store  # noqa: E402
from worker.config import DEV_API_KEY  # noqa: E402
from worker.migrate import apply_migrations  # noqa: E402
from worker.schema import BATCH_FIELDS, RUN_FIELDS, validate_object  # noqa: E402
from worker.sqlite_backend import SQLiteStorage  # noqa: E402
from worker.storage import Statement  # noqa: E402
from worker.transcripts import split_chunks  # noqa: E402

DAY_MS = 86_400_000
SPAN_DAYS = 60
TRANSCRIPT_BATCH = "load-transcripts"
TRANSCRIPT_DIRECT = "run_load_transcript_direct"
TRANSCRIPT_POSTED = "run_load_transcript_posted"
FIRST_MARK = "LOADMARK-FIRST-ENTRY"
SEARCH_WORD = "nightly"

SUITES = {
    "py-bugs": ["csv-quoted-fields", "date-range-merge", "lru-ttl-cache", "pagination-off-by-one", "unicode-slugify"],
    "node-features": ["deep-merge-config", "event-emitter-once", "query-string-parse", "retry-backoff"],
    "update-deps": ["nx-pnpm-monorepo", "pyproject-markdown-security", "python-vendored-upgrade"],
}
TIERS = ["L0", "L1", "L2", "L3"]
#: (agent, model, success rate, USD per million input / output tokens, turns)
AGENTS = [
    ("oracle", None, 0.97, None, 0),
    ("echo", None, 0.03, None, 0),
    ("anthropic", "claude-sonnet-4-6", 0.74, (3.0, 15.0), 14),
    ("anthropic", "claude-haiku-4-5", 0.52, (1.0, 5.0), 12),
    ("openai", "gpt-4.1", 0.66, (2.0, 8.0), 13),
    ("openai", "gpt-4.1-mini", 0.47, (0.4, 1.6), 11),
    ("openrouter", "qwen/qwen3-coder", 0.44, (0.3, 1.2), 15),
    ("claude-code", "claude-sonnet-4-6", 0.81, (3.0, 15.0), 22),
    ("local", "smollm2-135m", 0.04, (0.0, 0.0), 6),
]
DATASETS = {"reasoning": 40, "coding": 60, "qa-mini": 25}
DATASET_TARGETS = [("openai", "gpt-4o-mini", 0.72), ("anthropic", "claude-haiku-4-5", 0.76), ("groq", "llama-3.3-70b", 0.61),
                   ("ollama", "qwen2.5", 0.43)]
EVALUATORS = ["validation", "heuristic_checks", "llm_judge", "hidden_tests"]


# --------------------------------------------------------------------------- filling the store


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def batch_sizes(runs: int, batches: int, rng: random.Random) -> list[int]:
    """``batches`` sizes summing to ``runs``: mostly small batches, a few large ones."""
    weights = [rng.lognormvariate(0, 1.0) for _ in range(batches)]
    total = sum(weights)
    sizes = [max(1, int(runs * w / total)) for w in weights]
    i = 0
    while sum(sizes) != runs:
        step = 1 if sum(sizes) < runs else -1
        if sizes[i % batches] + step >= 1:
            sizes[i % batches] += step
        i += 1
    return sizes


def _evaluations(success: bool, rng: random.Random, judge: bool) -> list[dict[str, Any]]:
    names = EVALUATORS if judge else [e for e in EVALUATORS if e != "llm_judge"]
    if rng.random() < 0.3:
        names = names[:2]
    out = []
    for name in names:
        score = 1.0 if success and rng.random() < 0.9 else round(rng.random(), 2)
        details = (f"{name}: {'passed' if score >= 1 else 'failed'}\n$ python3 -m pytest -q\n"
                   f"{rng.randint(1, 40)} passed, {0 if score >= 1 else rng.randint(1, 5)} failed")
        out.append({"evaluatorName": name, "score": score, "maxScore": 1.0, "status": "ok", "details": details})
    return out


def _telemetry(turns: int, prices: tuple[float, float] | None, rng: random.Random) -> dict[str, Any]:
    if not turns:
        return {"toolCalls": 0, "tokensIn": 0, "tokensOut": 0, "costUsd": 0.0 if prices is None else None,
                "turns": 0, "durationMs": round(rng.uniform(800, 4000), 1), "latenciesMs": []}
    n = max(1, int(rng.gauss(turns, turns / 3)))
    tokens_in = int(n * rng.uniform(3000, 9000))
    tokens_out = int(n * rng.uniform(150, 900))
    cost = None if prices is None else round((tokens_in * prices[0] + tokens_out * prices[1]) / 1e6, 6)
    latencies = [round(rng.uniform(400, 9000), 1) for _ in range(min(n, 30))]
    return {"toolCalls": max(0, n - 1), "tokensIn": tokens_in, "tokensOut": tokens_out,
            "cacheReadTokens": int(tokens_in * rng.uniform(0, 0.6)), "costUsd": cost, "turns": n,
            "durationMs": round(sum(latencies) + rng.uniform(2000, 60000), 1), "latenciesMs": latencies}


def _status(success: bool, rng: random.Random) -> tuple[str, str | None]:
    if success:
        return "completed", None
    roll = rng.random()
    if roll < 0.08:
        return "error", rng.choice(["infra", "harness"])
    if roll < 0.14:
        return "timeout", "agent"
    if roll < 0.17:
        return "budget_exceeded", "agent"
    return "failed", rng.choice(["validation", "validation", "agent", "judge"])


def scenario_batch(batch_id: str, size: int, created: int, rng: random.Random, day: float):
    """A ``bench run`` batch: runs and the batch record."""
    suite = rng.choice(list(SUITES))
    scenarios = rng.sample(SUITES[suite], rng.randint(1, len(SUITES[suite])))
    tiers = rng.sample(TIERS, rng.randint(1, 2))
    agents = rng.sample(AGENTS, rng.randint(1, 3))
    judge = rng.random() < 0.5
    runs, t = [], created
    cells = [(s, tier, a) for s in scenarios for tier in tiers for a in agents]
    for i in range(size):
        scenario, tier, (agent, model, rate, prices, turns) = cells[i % len(cells)]
        drift = 0.1 * math.sin(day / 9 + zlib.crc32(scenario.encode()) % 7)  # success drifts over the 60 days
        success = rng.random() < min(0.99, max(0.01, rate + drift - 0.05 * TIERS.index(tier)))
        status, failure = _status(success, rng)
        tel = _telemetry(turns, prices, rng)
        started = t
        t += int(tel["durationMs"])
        evaluations = _evaluations(success, rng, judge)
        score = round(sum(e["score"] for e in evaluations) / len(evaluations), 3)
        runs.append({
            "runId": f"run_{batch_id}_{i:05d}", "batchId": batch_id, "suite": suite, "scenario": scenario,
            "tier": tier, "agent": agent, "model": model, "status": status, "failureClass": failure,
            "startedAt": _iso(started), "completedAt": _iso(t), "totalScore": score if status != "error" else 0.0,
            "weightedScore": score if status != "error" else 0.0, "isSuccessful": success, "successMetric": score,
            "configHash": f"{zlib.crc32(repr((suite, scenario, tier, agent, model)).encode()):08x}",
            "metadata": {"agentStatus": "completed" if success else "failed", "cached": False,
                         "cellKey": f"{suite}/{scenario}/{tier}/{agent}/{model or '-'}/-#{i // len(cells)}",
                         "sandbox": "bwrap"},
            "evaluations": evaluations, "telemetry": tel,
        })
    batch = {"batchId": batch_id, "createdAt": created, "completedAt": t,
             "metadata": {"suite": suite, "scenario": scenarios[0] if len(scenarios) == 1 else scenarios,
                          "tier": tiers[0] if len(tiers) == 1 else tiers,
                          "agent": [a[0] for a in agents] if len(agents) > 1 else agents[0][0],
                          "model": [a[1] for a in agents] if len(agents) > 1 else agents[0][1],
                          "judge": "anthropic:claude-sonnet-4-6" if judge else "none", "sandbox": "bwrap",
                          "plannedCells": size, "harnessVersion": "0.1.0"}}
    return runs, batch


def dataset_batch(batch_id: str, size: int, created: int, rng: random.Random, fleet: str | None = None):
    """A ``bench dataset`` batch, or with ``fleet`` the runs of a fleet run (2-6 repositories)."""
    name = rng.choice(list(DATASETS))
    targets = rng.sample(DATASET_TARGETS, rng.randint(1, len(DATASET_TARGETS)))
    repos = [f"repo-{k:02d}" for k in range(rng.randint(2, 6))] if fleet else [None]
    runs, t = [], created
    for i in range(size):
        provider, model, rate = targets[i % len(targets)]
        case = (i // len(targets)) % DATASETS[name]
        repo = repos[(i // (len(targets) * DATASETS[name])) % len(repos)]
        success = rng.random() < rate
        latency = round(rng.uniform(300, 4000), 1)
        started = t
        t += int(latency / 4)
        meta: dict[str, Any] = {"attempts": 1, "case": {"category": ("math", "logic", "code")[case % 3], "repeat": 0},
                                "dataset": {"name": name, "version": "1"}, "target": f"{provider}:{model}"}
        if fleet:
            meta["fleet"] = {"fleetId": fleet, "profile": name, "repoId": repo, "runId": batch_id}
        runs.append({
            "runId": f"run_{batch_id}_{i:05d}", "batchId": batch_id, "suite": name, "scenario": f"case-{case:03d}",
            "tier": "dataset", "agent": provider, "model": model, "status": "completed" if rng.random() > 0.02 else "error",
            "failureClass": None, "startedAt": _iso(started), "completedAt": _iso(started + int(latency)),
            "totalScore": 1.0 if success else 0.0, "weightedScore": 1.0 if success else 0.0, "isSuccessful": success,
            "successMetric": 1.0 if success else 0.0, "metadata": meta,
            "evaluations": [{"evaluatorName": "assertions", "score": 1.0 if success else 0.0, "maxScore": 1.0,
                             "status": "ok", "details": "contains: ok" if success else "contains: not found"}],
            "telemetry": {"tokensIn": rng.randint(20, 400), "tokensOut": rng.randint(5, 600), "turns": 1,
                          "costUsd": round(rng.uniform(0, 0.002), 6), "durationMs": latency, "latenciesMs": [latency]},
        })
    for run in runs:
        if run["status"] == "error":
            run.update(failureClass="infra", isSuccessful=False, totalScore=0.0, weightedScore=0.0, successMetric=0.0)
    if fleet:
        metadata = {"kind": "fleet", "fleetId": fleet, "description": f"{fleet} fleet", "runId": batch_id,
                    "repositories": repos, "providers": [f"{p}:{m}" for p, m, _ in targets], "profiles": [name],
                    "state": "completed"}
    else:
        metadata = {"kind": "dataset", "dataset": {"name": name, "version": "1"},
                    "targets": [f"{p}:{m}" for p, m, _ in targets], "planned": size, "interrupted": False}
    return runs, {"batchId": batch_id, "createdAt": created, "completedAt": t, "metadata": metadata}


def big_transcript(target_bytes: int, rng: random.Random) -> list[dict[str, Any]]:
    """An agent transcript of about ``target_bytes`` of JSON: the task, then turns of tool calls
    (read_file, run_command, write_file) and their results."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"{FIRST_MARK} You are an experienced software engineer."},
        {"role": "user", "content": "Fix the pagination bugs so that the behaviour matches the docstrings."},
    ]
    size, turn = 400, 0
    line = "def page_items(items, page, size):  # returns the items of one page of results\n"
    while size < target_bytes:
        name = ("read_file", "run_command", "write_file")[turn % 3]
        arguments = {"path": f"pkg/module_{turn % 40}.py"} if name != "run_command" else {"command": "python3 -m pytest -q"}
        if name == "write_file":
            arguments["content"] = line * rng.randint(10, 40)
        call_id = f"call_{turn:05d}"
        assistant = {"role": "assistant", "content": f"Turn {turn}: checking {arguments.get('path', 'the tests')}.",
                     "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}], "stop_reason": "tool_use",
                     "usage": {"input": 4000 + turn, "output": 120}, "latency_ms": 850.0, "cached": False}
        output = line * rng.randint(20, 120) if name != "write_file" else "wrote the file"
        tool = {"role": "tool", "tool_call_id": call_id, "name": name, "content": output,
                "is_error": name == "run_command" and turn % 7 == 0}
        messages += [assistant, tool]
        size += len(json.dumps(assistant)) + len(json.dumps(tool))
        turn += 1
    messages.append({"role": "assistant", "content": "Done: the three bugs are fixed and the tests pass.", "tool_calls": []})
    return messages


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def fill_store(db: Path, runs: int, batches: int, seed: int = 7, log=print) -> dict[str, Any]:
    """Fill ``db`` (a new file) with ``runs`` runs in ``batches`` batches; returns what was made."""
    rng = random.Random(seed)
    storage = SQLiteStorage(str(db))
    apply_migrations(storage)
    with storage.locked():
        storage.raw_connection().execute("PRAGMA synchronous = OFF")  # a benchmark store: speed over durability
    now = int(time.time() * 1000)
    sizes = batch_sizes(runs, batches, rng)
    starts = sorted(now - int(rng.uniform(0, SPAN_DAYS) * DAY_MS) for _ in range(batches))
    started = time.perf_counter()
    kinds = {"scenario": 0, "dataset": 0, "fleet": 0}
    largest = ("", 0)
    pending: list[Statement] = []

    async def flush() -> None:
        if pending:
            await storage.batch(pending)
            pending.clear()

    async def fill() -> None:
        nonlocal largest
        for k, (size, created) in enumerate(zip(sizes, starts)):
            roll = rng.random()
            day = (created - starts[0]) / DAY_MS
            if roll < 0.72:
                tag = SEARCH_WORD if k % 5 == 0 else rng.choice(["ci", "pr", "sweep", "adhoc"])
                batch_id = f"{tag}-{k:04d}"
                made, batch = scenario_batch(batch_id, size, created, rng, day)
                kinds["scenario"] += 1
            elif roll < 0.92:
                batch_id = f"dataset-{k:04d}"
                made, batch = dataset_batch(batch_id, size, created, rng)
                kinds["dataset"] += 1
            else:
                batch_id = f"fleet-{k:04d}"
                made, batch = dataset_batch(batch_id, size, created, rng, fleet=rng.choice(["web", "infra", "ml"]))
                kinds["fleet"] += 1
            if size > largest[1]:
                largest = (batch_id, size)
            for i, run in enumerate(made):
                valid = validate_object(RUN_FIELDS, run)
                pending.extend(store.run_statements(valid, store.content_hash(valid), created + i))
            if len(pending) > 4000:
                await flush()
            await flush()
            await store.upsert_batch(storage, validate_object(BATCH_FIELDS, batch), batch["completedAt"])
            if (k + 1) % 100 == 0:
                log(f"  {k + 1}/{batches} batches, {time.perf_counter() - started:.0f} s")
        await flush()

    try:
        asyncio.run(fill())
        transcript = big_transcript(10 * 1024 * 1024, rng)
        stored_bytes = store_direct_transcript(storage, transcript, now)
    finally:
        storage.close()
    return {"runs": runs, "batches": batches, "kinds": kinds, "largestBatch": largest[0], "largestRuns": largest[1],
            "fillSeconds": round(time.perf_counter() - started, 1), "directTranscriptBytes": stored_bytes,
            "dbBytes": db.stat().st_size}


def _transcript_run(run_id: str, created: int) -> dict[str, Any]:
    return {"runId": run_id, "batchId": TRANSCRIPT_BATCH, "suite": "py-bugs", "scenario": "pagination-off-by-one",
            "tier": "L1", "agent": "anthropic", "model": "claude-sonnet-4-6", "status": "completed",
            "startedAt": _iso(created - 600_000), "completedAt": _iso(created), "totalScore": 1.0,
            "weightedScore": 1.0, "isSuccessful": True, "successMetric": 1.0, "metadata": {"sandbox": "bwrap"},
            "evaluations": [{"evaluatorName": "validation", "score": 1.0}],
            "telemetry": {"tokensIn": 9_000_000, "tokensOut": 240_000, "turns": 1900, "costUsd": 30.6,
                          "durationMs": 3_600_000.0}}


def store_direct_transcript(storage: SQLiteStorage, messages: list[dict[str, Any]], now: int) -> int:
    """Store a run whose transcript rows hold all of ``messages`` (no cap): the worst case."""
    run = validate_object(RUN_FIELDS, _transcript_run(TRANSCRIPT_DIRECT, now))
    text = _dumps(messages)
    statements = store.run_statements(run, store.content_hash(run), now)
    statements += [Statement("INSERT INTO transcripts (run_id, chunk_index, content, truncated) VALUES (?, ?, ?, 0)",
                             (TRANSCRIPT_DIRECT, i, chunk)) for i, chunk in enumerate(split_chunks(text))]
    asyncio.run(storage.batch(statements))
    asyncio.run(store.upsert_batch(storage, validate_object(BATCH_FIELDS, {
        "batchId": TRANSCRIPT_BATCH, "createdAt": now - 600_000, "completedAt": now,
        "metadata": {"suite": "py-bugs", "agent": "anthropic", "note": "runs with a 10 MB transcript"}}), now))
    return len(text.encode("utf-8"))


def post_transcript_run(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Post a run with ``messages`` as its transcript through the API (stored capped)."""
    run = _transcript_run(TRANSCRIPT_POSTED, int(time.time() * 1000))
    run["transcript"] = messages
    body = json.dumps(run).encode()
    answer = httpx.post(f"{url}/api/results", content=body, timeout=120,
                        headers={"authorization": f"Bearer {DEV_API_KEY}", "content-type": "application/json"})
    if answer.status_code not in (200, 201):
        raise RuntimeError(f"POST /api/results: {answer.status_code} {answer.text[:300]}")
    return {"postedBytes": len(body)}


# --------------------------------------------------------------------------- measuring


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def measure_api(url: str, routes: list[tuple[str, str, dict[str, str]]], repeats: int) -> list[dict[str, Any]]:
    """Median and p95 milliseconds of each route, with its status and body size."""
    out = []
    with httpx.Client(base_url=url, timeout=120) as client:
        for label, path, params in routes:
            answer = client.get(path, params=params)  # warm-up (and the status to report)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                answer = client.get(path, params=params)
                answer.read()
                times.append((time.perf_counter() - t0) * 1000)
            out.append({"route": label, "path": path, "params": params, "status": answer.status_code,
                        "bytes": len(answer.content), "total": answer.headers.get("x-total-count"),
                        "medianMs": round(statistics.median(times), 2), "p95Ms": round(percentile(times, 0.95), 2),
                        "repeats": repeats})
    return out


#: Runs in every page before its own scripts: when #app becomes ready, when the first
#: transcript entry (the text FIRST_MARK) is on screen, and every long task.
INIT_SCRIPT = """
(() => {
  const b = window.__bench = {ready: null, firstEntry: null, longTasks: []};
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) b.longTasks.push({start: e.startTime, duration: e.duration});
    }).observe({type: 'longtask', buffered: true});
  } catch (e) { b.longTaskError = String(e); }
  const mark = '%MARK%';
  const check = (records) => {
    if (b.ready === null) {
      const app = document.getElementById('app');
      if (app && app.getAttribute('data-state') === 'ready') b.ready = performance.now();
    }
    if (b.firstEntry === null && records) {
      for (const r of records) for (const n of r.addedNodes || []) {
        if (n.textContent && n.textContent.indexOf(mark) !== -1) { b.firstEntry = performance.now(); return; }
      }
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true,
                                                 attributeFilter: ['data-state']});
})();
""".replace("%MARK%", FIRST_MARK)


def _page_errors(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console error: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}: {r.failure}"))
    page.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    return errors


def measure_pages(browser: Any, url: str, paths: list[str], loads: int) -> list[dict[str, Any]]:
    """Navigation start -> #app ready, in a new context (empty cache) per load."""
    out = []
    for path in paths:
        times, long_max, errors = [], [], []
        for _ in range(loads):
            context = browser.new_context(base_url=url, viewport={"width": 1366, "height": 900})
            context.add_init_script(INIT_SCRIPT)
            page = context.new_page()
            page_errors = _page_errors(page)
            try:
                page.goto(path)
                page.wait_for_selector("#app[data-state=ready]", timeout=60_000)
                page.wait_for_timeout(300)
                bench = page.evaluate("() => window.__bench")
                times.append(bench["ready"])
                long_max.append(max((t["duration"] for t in bench["longTasks"]), default=0.0))
            except Exception as exc:  # noqa: BLE001 - reported
                page_errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                context.close()
            errors += page_errors
        out.append({"page": path, "loads": len(times), "medianReadyMs": round(statistics.median(times), 1) if times else None,
                    "maxReadyMs": round(max(times), 1) if times else None,
                    "longestTaskMs": round(max(long_max), 1) if long_max else None, "errors": errors[:10]})
    return out


def measure_transcript(browser: Any, url: str, run_id: str, loads: int, entry_timeout_ms: int = 120_000) -> dict[str, Any]:
    """Open /runs/RUN?tab=transcript: time to the first entry on screen and the long tasks."""
    firsts, ready, longest, blocking, errors = [], [], [], [], []
    for _ in range(loads):
        context = browser.new_context(base_url=url, viewport={"width": 1366, "height": 900})
        context.add_init_script(INIT_SCRIPT)
        page = context.new_page()
        page_errors = _page_errors(page)
        try:
            page.goto(f"/runs/{run_id}?tab=transcript")
            page.wait_for_function("() => window.__bench && window.__bench.firstEntry !== null",
                                   timeout=entry_timeout_ms, polling=100)
            page.wait_for_timeout(1000)  # long tasks that follow the first entries
            # The main thread answers: a task posted now runs at once when nothing blocks it.
            lag = page.evaluate("() => new Promise(r => { const t = performance.now(); setTimeout(() => r(performance.now() - t), 0); })")
            bench = page.evaluate("() => window.__bench")
            firsts.append(bench["firstEntry"])
            if bench["ready"] is not None:
                ready.append(bench["ready"])
            tasks = [t["duration"] for t in bench["longTasks"]]
            longest.append(max(tasks, default=0.0))
            blocking.append(sum(max(0.0, d - 50) for d in tasks))
            if lag > 100:
                page_errors.append(f"a task waited {lag:.0f} ms after the first entries")
        except Exception as exc:  # noqa: BLE001 - reported
            page_errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        finally:
            context.close()
        errors += page_errors
    med = lambda xs: round(statistics.median(xs), 1) if xs else None  # noqa: E731
    return {"runId": run_id, "loads": len(firsts), "medianReadyMs": med(ready), "medianFirstEntryMs": med(firsts),
            "longestTaskMs": round(max(longest), 1) if longest else None, "medianBlockingMs": med(blocking),
            "maxBlockingMs": round(max(blocking), 1) if blocking else None,
            "errors": errors[:10]}


# --------------------------------------------------------------------------- main


def _table(rows: list[list[str]], head: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000, help="runs in the store (default 100,000)")
    parser.add_argument("--batches", type=int, default=None, help="batches (default: runs / 100)")
    parser.add_argument("--repeats", type=int, default=20, help="requests per API route (default 20)")
    parser.add_argument("--loads", type=int, default=5, help="loads of each page (default 5)")
    parser.add_argument("--quick", action="store_true", help="5,000 runs, 5 repeats, 2 loads")
    parser.add_argument("--db", type=Path, default=None,
                        help="store file: filled when it does not exist, reused (not refilled) when it does")
    parser.add_argument("--no-browser", action="store_true", help="measure the API only")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.repeats, args.loads = min(args.runs, 5_000), min(args.repeats, 5), min(args.loads, 2)
    batches = args.batches or max(1, args.runs // 100)
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    tmp = Path(tempfile.mkdtemp(prefix="zebench-dashboard-load-"))
    try:
        return _measure(args, batches, tmp, args.db or tmp / "bench.db", log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the store too, unless --db named one elsewhere


def _measure(args: argparse.Namespace, batches: int, tmp: Path, db: Path, log) -> int:
    from support.dashboard_fixture import browser_problem, launch_chromium, start_worker, worker_env

    if db.exists():
        with sqlite3.connect(db) as conn:
            count = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        filled = {"runs": count, "reused": str(db)}
        log(f"reusing {db}: {count} runs")
    else:
        log(f"filling {db} with {args.runs} runs in {batches} batches")
        filled = fill_store(db, args.runs, batches, args.seed, log)
        log(f"filled in {filled['fillSeconds']} s ({filled['dbBytes'] / 1e6:.0f} MB)")

    worker = start_worker(db, tmp, timeout=120, env=worker_env({"MAX_BODY_BYTES": str(64 * 1024 * 1024)}))
    result: dict[str, Any] = {"store": filled}
    failed = False
    try:
        with sqlite3.connect(db) as conn:
            if not conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (TRANSCRIPT_POSTED,)).fetchone():
                result["postedTranscript"] = post_transcript_run(worker.url, big_transcript(10 * 1024 * 1024, random.Random(1)))
            largest = conn.execute("SELECT batch_id, COUNT(*) n FROM runs GROUP BY batch_id ORDER BY n DESC LIMIT 1").fetchone()
            total_runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        result["store"]["totalRuns"] = total_runs
        big = largest[0]
        routes = [
            ("overview", "/api/overview", {}),
            ("batches (default)", "/api/batches", {}),
            ("batches sort=passRate", "/api/batches", {"sort": "passRate", "order": "desc"}),
            (f"batches q={SEARCH_WORD}", "/api/batches", {"q": SEARCH_WORD}),
            (f"batch ?runs=0 ({largest[1]} runs)", f"/api/batches/{big}", {"runs": "0"}),
            ("runs ?batchId (first page)", "/api/runs", {"batchId": big}),
            ("transcript page (10 MB, direct)", f"/api/runs/{TRANSCRIPT_DIRECT}/transcript", {"offset": "0", "limit": "50"}),
        ]
        log(f"API: {len(routes)} routes x {args.repeats} requests")
        result["api"] = measure_api(worker.url, routes, args.repeats)
        failed |= any(r["status"] >= 400 for r in result["api"])
        problem = None if not args.no_browser else "--no-browser"
        problem = problem or browser_problem()
        if problem is None:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                try:
                    log(f"pages: / and /batches, {args.loads} loads each")
                    result["pages"] = measure_pages(browser, worker.url, ["/", "/batches"], args.loads)
                    log("transcript tab of the 10 MB-transcript runs")
                    result["transcripts"] = [measure_transcript(browser, worker.url, run_id, max(1, min(args.loads, 3)))
                                             for run_id in (TRANSCRIPT_DIRECT, TRANSCRIPT_POSTED)]
                finally:
                    browser.close()
            failed |= any(p["errors"] or p["medianReadyMs"] is None for p in result["pages"])
            failed |= any(t["errors"] or t["medianFirstEntryMs"] is None for t in result["transcripts"])
        else:
            result["browser"] = f"not measured: {problem}"
    finally:
        worker.stop()

    print(f"store: {result['store'].get('totalRuns')} runs, {batches if 'reused' not in filled else '?'} batches")
    print(_table([[r["route"], r["status"], f"{r['bytes']:,}", r["medianMs"], r["p95Ms"]] for r in result["api"]],
                 ["API route", "status", "bytes", "median ms", "p95 ms"]))
    if "pages" in result:
        print()
        print(_table([[p["page"], p["loads"], p["medianReadyMs"], p["maxReadyMs"], p["longestTaskMs"],
                       "; ".join(p["errors"][:2])] for p in result["pages"]],
                     ["page", "loads", "median ready ms", "max ready ms", "longest task ms", "errors"]))
        print()
        print(_table([[t["runId"], t["loads"], t["medianFirstEntryMs"], t["longestTaskMs"], t["medianBlockingMs"],
                       t["maxBlockingMs"], "; ".join(t["errors"][:2])] for t in result["transcripts"]],
                     ["transcript tab", "loads", "median first entry ms", "longest task ms", "median blocking ms",
                      "max blocking ms", "errors"]))
    else:
        print(result.get("browser", ""))
    print()
    print(json.dumps(result, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
