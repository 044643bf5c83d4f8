"""The web dashboard in a real browser: a store seeded through the harness, ``worker dev`` over
it, and Chromium driven by Playwright.

Registered in conftest.py as a plugin, so the session seeds one store and starts one worker
however many modules use ``dashboard``, ``page`` or ``phone_page``.

The store is filled the way a user fills it, by ``bench`` commands run as subprocesses:

- two batches of ``bench run py-bugs pagination-off-by-one`` with the ``oracle`` and ``echo``
  agents (the second one also runs the ``openai`` agent against the loopback mock model server
  of harness.testing.mock_model, so one run has a transcript);
- a ``bench dataset`` run of a small dataset against two models of the mock;
- a ``bench fleet`` run of a manifest of 2 repositories x 2 providers against the mock;
- a ``bench stress`` run against the mock.

The seeding functions (:func:`seeded_dashboard`, :func:`seed_store`, :func:`start_worker`) are
plain functions: scripts/dashboard_screenshots.py imports them with ``tests/`` on sys.path.

Browser tests use the ``page`` fixture (1366x900) or ``phone_page`` (390x844, mobile) and
:func:`goto`. Every console error, uncaught page error, failed request and response with a
status of 400 or more is recorded and fails the test at teardown. Without Playwright or
Chromium the browser tests are skipped, except when ``CI`` is set: then they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.testing.mock_model import MockConfig, ThreadedMock

REPO = Path(__file__).resolve().parents[2]

BIN = Path(sys.executable).parent
BENCH = str(BIN / "bench")
WORKER = str(BIN / "worker")

#: The shipped scenario both batches run.
SUITE, SCENARIO = "py-bugs", "pagination-off-by-one"
BATCH_A, BATCH_B = "dash-batch-a", "dash-batch-b"
DATASET_NAME = "dashboard-qa"
FLEET_NAME = "dash-fleet"
MOCK_MODEL = "mock-model"

#: The mock's scripted answers: some dataset and fleet cases pass, the others fail.
ANSWERS = {
    "What is 2+2?": "The answer is 4.",
    "What is the capital of France?": "Paris, of course.",
    "Question 1?": "=1",
    "Question 2?": "=2",
}

DATASET_CASES = [
    {"id": "add", "category": "math", "prompt": "What is 2+2?", "assert": [{"type": "contains", "value": "4"}]},
    {"id": "capital", "category": "geo", "prompt": "What is the capital of France?",
     "assert": [{"type": "regex", "value": "(?i)\\bparis\\b"}]},
    {"id": "color", "category": "misc", "prompt": "Name a color.", "assert": [{"type": "contains", "value": "blue"}]},
    {"id": "count", "category": "math", "prompt": "Count to three.", "assert": [{"type": "regex", "value": "^1, 2, 3$"}]},
]

FLEET_CASES = [{"id": f"q{i}", "category": "odd" if i % 2 else "even", "prompt": f"Question {i}?",
                "assert": [{"type": "contains", "value": f"={i}"}]} for i in range(3)]

#: Browser waits (milliseconds).
READY_TIMEOUT_MS = 15_000
SELECTOR_READY = "#app[data-state=ready]"
VIEWPORT = {"width": 1366, "height": 900}
PHONE_VIEWPORT = {"width": 390, "height": 844}


class SeedError(RuntimeError):
    """A seeding command failed (its output is in the message)."""


@dataclass
class Dashboard:
    """A seeded store and the ``worker dev`` serving it."""

    url: str
    db: Path
    batch_a: str
    batch_b: str
    #: batch id -> [{"runId", "agent", "model", "status"}] (the two ``bench run`` batches)
    runs: dict[str, list[dict[str, Any]]]
    dataset_batch: str
    dataset_name: str
    #: the fleet run id, which is also the batch id of its runs
    fleet_id: str
    fleet_name: str
    stress_id: str
    extra: dict[str, Any] = field(default_factory=dict)

    def run_id(self, batch: str, agent: str) -> str:
        """The id of the first run of ``agent`` in ``batch``."""
        return next(r["runId"] for r in self.runs[batch] if r["agent"] == agent)


@dataclass
class Seed:
    """What :func:`seed_store` put in the store."""

    db: Path
    batch_a: str
    batch_b: str
    dataset_batch: str
    dataset_name: str
    fleet_id: str
    fleet_name: str
    stress_id: str


# --------------------------------------------------------------------------- seeding


def bench_env(root: Path) -> dict[str, str]:
    """The environment of a seeding command: store, spool, workspaces and cache under ``root``,
    no worker URL, suite directory, judge or provider key from the caller's environment."""
    from harness.models.providers.registry import REGISTRY

    drop = {e.env_var for e in REGISTRY.values() if e.env_var} | {e.base_url_env for e in REGISTRY.values()
                                                                  if e.base_url_env}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_BENCHMARKS_") and k not in drop}
    env.update(ZE_BENCHMARKS_DB=str(root / "bench.db"), ZE_BENCHMARKS_SPOOL_DIR=str(root / "spool"),
               ZE_BENCHMARKS_WORKSPACES_DIR=str(root / "workspaces"),
               ZE_BENCHMARKS_CACHE_DIR=str(root / "model-cache"), NO_COLOR="1", PYTHONUNBUFFERED="1")
    return env


def run_bench(root: Path, *args: str, cwd: Path | None = None, timeout: float = 300) -> str:
    """Run ``bench ARGS`` against the store under ``root``; its stdout, or SeedError."""
    done = subprocess.run([BENCH, *args], cwd=cwd or root, env=bench_env(root), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SeedError(f"bench {' '.join(args)} exited {done.returncode}:\n{done.stdout[-4000:]}\n"
                        f"{done.stderr[-4000:]}")
    return done.stdout


def start_mock(delay_ms: float = 5) -> ThreadedMock:
    """The loopback mock model server (harness.testing.mock_model) answering :data:`ANSWERS`."""
    return ThreadedMock(MockConfig(delay_ms=delay_ms, answers=dict(ANSWERS), model=MOCK_MODEL))


def stop_mock(mock: ThreadedMock) -> None:
    """Stop the mock's thread and close its loop."""
    mock.close()
    loop = mock._loop
    if not loop.is_running() and not loop.is_closed():
        loop.run_until_complete(mock.server.aclose())
        loop.close()


def seed_store(root: Path, mock_url: str) -> Seed:
    """Fill ``root/bench.db`` through the harness (see the module docstring); ``mock_url`` is the
    base URL (``.../v1``) of a loopback mock model server."""
    root.mkdir(parents=True, exist_ok=True)
    scenario = [SUITE, SCENARIO, "--judge", "none"]
    run_bench(root, "run", *scenario, "--agent", "oracle", "--agent", "echo", "--batch-id", BATCH_A)
    run_bench(root, "run", *scenario, "--agent", "oracle", "--agent", "echo", "--agent", f"openai:{MOCK_MODEL}",
              "--base-url", mock_url, "--parallel", "3", "--batch-id", BATCH_B)

    data = root / "dataset.json"
    data.write_text(json.dumps({"name": DATASET_NAME, "version": "1", "test_cases": DATASET_CASES}), encoding="utf-8")
    out = root / "dataset-run"
    run_bench(root, "dataset", str(data), "--providers", "openai-compatible:m1,openai-compatible:m2",
              "--base-url", mock_url, "--repeat", "2", "--concurrency", "4", "--output", str(out), "--quiet")
    dataset_batch = json.loads((out / "run.json").read_text(encoding="utf-8"))["batchId"]

    fleet_dir = root / "fleet"
    for repo in ("alpha", "beta"):
        (fleet_dir / repo / "datasets").mkdir(parents=True, exist_ok=True)
        (fleet_dir / repo / "datasets" / "qa.json").write_text(
            json.dumps({"name": "qa", "test_cases": FLEET_CASES}), encoding="utf-8")
    manifest = {
        "fleet_id": FLEET_NAME, "description": "dashboard test fleet",
        "repositories": [{"repo_id": "alpha", "path": "alpha", "metadata": {"team": "web"}},
                         {"repo_id": "beta", "path": "beta"}],
        "providers": [{"provider": "openai-compatible:m1", "base_url": mock_url},
                      {"provider": "openai-compatible:m2", "base_url": mock_url}],
        "scenario_profiles": {"qa": {"dataset": "qa", "concurrency": 2}},
        "output": {"base_dir": "out", "formats": ["json"]},
    }
    (fleet_dir / "fleet.json").write_text(json.dumps(manifest), encoding="utf-8")
    fleet_result = json.loads(run_bench(root, "fleet", "fleet.json", "--format", "json", cwd=fleet_dir))
    if fleet_result.get("state") != "completed":
        raise SeedError(f"the fleet run ended {fleet_result.get('state')!r}")

    stress = json.loads(run_bench(root, "stress", f"openai-compatible:{MOCK_MODEL}", "--base-url", mock_url,
                                  "--max-concurrency", "4", "--step-seconds", "0.3", "--json"))
    if stress.get("stored") != "stored":
        raise SeedError(f"the stress test was not stored: {stress.get('stored')!r}")
    return Seed(db=root / "bench.db", batch_a=BATCH_A, batch_b=BATCH_B, dataset_batch=dataset_batch,
                dataset_name=DATASET_NAME, fleet_id=fleet_result["run_id"], fleet_name=FLEET_NAME,
                stress_id=stress["id"])


# --------------------------------------------------------------------------- worker dev


@dataclass
class WorkerProcess:
    """A ``worker dev`` subprocess; ``stop()`` ends it."""

    proc: subprocess.Popen
    url: str
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment less what would change how ``worker dev`` authenticates."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("API_SECRET_KEY", "ZE_BENCHMARKS_PUBLIC_READS", "ALLOWED_ORIGINS", "MAX_BODY_BYTES")}
    env.update(PYTHONUNBUFFERED="1", **(extra or {}))
    return env


def start_worker(db: Path, log_dir: Path, timeout: float = 30, env: dict[str, str] | None = None) -> WorkerProcess:
    """``worker dev --db DB`` on a free loopback port; returns once ``/health`` answers."""
    out, err = log_dir / "worker-dev.out", log_dir / "worker-dev.log"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen([WORKER, "dev", "--db", str(db), "--host", "127.0.0.1", "--port", "0"],
                                stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=env or worker_env())
    worker = WorkerProcess(proc, "", err)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SeedError(f"worker dev exited {proc.returncode}: {err.read_text(errors='replace')[-2000:]}")
            found = re.search(r"on (http://[0-9.]+:\d+)", out.read_text(errors="replace"))
            if found:
                worker.url = found.group(1)
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(worker.url + "/health", timeout=2).status_code == 200:
                        return worker
            time.sleep(0.05)
        raise SeedError(f"worker dev did not answer /health within {timeout:g} s")
    except BaseException:
        worker.stop()
        raise


def seeded_runs(url: str, batch: str) -> list[dict[str, Any]]:
    """The runs of ``batch`` as the API lists them: runId, agent, model, status."""
    answer = httpx.get(f"{url}/api/runs", params={"batchId": batch, "limit": 100}, timeout=30)
    answer.raise_for_status()
    return [{k: r.get(k) for k in ("runId", "agent", "model", "status")} for r in answer.json()]


@contextlib.contextmanager
def seeded_dashboard(root: Path) -> Iterator[Dashboard]:
    """Seed a store under ``root`` and serve it with ``worker dev`` until the block ends."""
    mock = start_mock()
    try:
        seed = seed_store(root, mock.base_url)
    finally:
        stop_mock(mock)
    worker = start_worker(seed.db, root)
    try:
        runs = {batch: seeded_runs(worker.url, batch) for batch in (seed.batch_a, seed.batch_b)}
        yield Dashboard(url=worker.url, db=seed.db, batch_a=seed.batch_a, batch_b=seed.batch_b, runs=runs,
                        dataset_batch=seed.dataset_batch, dataset_name=seed.dataset_name, fleet_id=seed.fleet_id,
                        fleet_name=seed.fleet_name, stress_id=seed.stress_id)
    finally:
        worker.stop()


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """A store seeded through the harness, served by ``worker dev`` on a free loopback port."""
    with seeded_dashboard(tmp_path_factory.mktemp("dashboard")) as served:
        yield served


# --------------------------------------------------------------------------- the browser


def chromium_path() -> str | None:
    """The system's Chromium (Debian's ``chromium`` package), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def browser_problem() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (bash scripts/setup.sh installs the [test] extra)"
    if chromium_path() is None:
        return "chromium is not installed (bash scripts/setup.sh; or: apt-get install -y chromium)"
    return None


def launch_chromium(playwright: Any) -> Any:
    """The system's Chromium, headless, launched by ``playwright`` (a started sync_playwright())."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"], headless=True)


@pytest.fixture(scope="module")
def chromium(dashboard: Dashboard) -> Iterator[Any]:
    """One headless Chromium per test module (skipped without it; a failure when CI is set).

    Per module, not per session: Playwright's synchronous API keeps its event loop on the main
    thread while it is started, and later tests that call ``asyncio.run`` must not find it there.
    The store is seeded first (``dashboard``) for the same reason: seeding runs event loops."""
    problem = browser_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {problem}", pytrace=False)
        pytest.skip(problem)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


class ProblemLog:
    """What went wrong in a page: console errors, page errors, failed requests, HTTP >= 400."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.allowed: list[re.Pattern[str]] = []

    def attach(self, page: Any) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda request: self.problems.append(
            f"request failed: {request.method} {request.url}: {request.failure}"))
        page.on("response", self._response)

    def allow(self, pattern: str) -> None:
        """Do not count problems matching ``pattern`` (a regular expression) in this test."""
        self.allowed.append(re.compile(pattern))

    def _console(self, message: Any) -> None:
        if message.type == "error":
            where = (message.location or {}).get("url") or ""
            self.problems.append(f"console error: {message.text}" + (f" ({where})" if where else ""))

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(a.search(p) for a in self.allowed)]


def _open_page(chromium: Any, dashboard: Dashboard, **context_options: Any) -> Iterator[Any]:
    context = chromium.new_context(base_url=dashboard.url, **context_options)
    context.set_default_timeout(READY_TIMEOUT_MS)
    page = context.new_page()
    log = ProblemLog()
    log.attach(page)
    page.problems = log  # tests may call page.problems.allow(pattern)
    try:
        yield page
        with contextlib.suppress(Exception):
            page.wait_for_load_state("networkidle", timeout=2_000)
        found = log.unexpected()
    finally:
        context.close()
    if found:
        pytest.fail("the page reported problems:\n  " + "\n  ".join(found), pytrace=False)


@pytest.fixture
def page(chromium: Any, dashboard: Dashboard) -> Iterator[Any]:
    """A fresh page at 1366x900 on the seeded dashboard; fails the test on any page problem."""
    yield from _open_page(chromium, dashboard, viewport=VIEWPORT)


@pytest.fixture
def phone_page(chromium: Any, dashboard: Dashboard) -> Iterator[Any]:
    """The same at 390x844 as a phone (mobile viewport, touch)."""
    yield from _open_page(chromium, dashboard, viewport=PHONE_VIEWPORT, is_mobile=True, has_touch=True,
                          device_scale_factor=2)


def goto(page: Any, path: str, timeout_ms: int = READY_TIMEOUT_MS) -> Any:
    """Open ``path`` (e.g. ``/batches?sort=passRate``) and wait until the page says its first
    content is in (``#app[data-state=ready]``); returns the page."""
    page.goto(path)
    page.wait_for_selector(SELECTOR_READY, timeout=timeout_ms)
    return page


def temporary_root(prefix: str = "zebench-dashboard-") -> Path:
    """A new temporary directory (for scripts outside pytest)."""
    return Path(tempfile.mkdtemp(prefix=prefix))
