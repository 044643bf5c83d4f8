"""Live progress (first hour, item 9): a batch's progress while it runs, in the API, from the
runner, on the dashboard's batch page, and ``bench fleet status --follow``.

- The worker (SQLite and the fake D1 binding): reports of a batch being written, the numbers
  the progress route derives from them and from the stored runs, late and repeated reports,
  a killed invocation shown stale, an invocation whose batch record tells its end.
- The runner: a tiny scenario run with the oracle agent into a temporary store reports its
  start before its end; a store that refuses or fails the reports never fails the run.
- The dashboard in Chromium, over ``worker dev``: the batch page follows a batch being
  written, without reloading.
- ``bench fleet status --follow`` ends with the fleet, and Ctrl-C stops the following only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from harness import fleet
from harness.results import open_client
from harness.results.transport import TransportResponse, TransportUnavailable
from harness.scenarios.runner import RunOptions, run_batch
from harness.scenarios.loading import load_scenario, resolve_prompt
from support.processes import interruptible
from support.scenario_builders import make_scenario, use_local_store
from support.datasets import env, mock_server
from support.fleets import ANSWERS, dataset, make_repos, manifest_doc
from support.worker import CoreApi, FakeD1, run_body, uid
from support.workerd_fixture import KEY
from worker.app import WorkerApp
from worker.config import DEV_API_KEY, WorkerConfig
from worker.d1_backend import D1Storage
from worker.local import LocalWorker
from worker.messages import Request
from worker.migrate import apply_migrations
from worker.progress import STALE_AFTER_MS
from worker.sqlite_backend import SQLiteStorage

__all__ = ["env", "mock_server"]  # fixtures of support.datasets

BENCH = os.path.join(os.path.dirname(sys.executable), "bench")
T0 = 1_760_000_000.0  # the worker's clock in the API tests (seconds)


# --------------------------------------------------------------------------- the worker

class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms / 1000


@pytest.fixture(params=["sqlite", "fake_d1"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[CoreApi, Clock]:
    """The worker core on each backend, with a clock the test moves."""
    clock = Clock()
    config = WorkerConfig(api_key=KEY)
    if request.param == "sqlite":
        storage = SQLiteStorage(str(tmp_path / "bench.db"))
        apply_migrations(storage)
        return CoreApi(WorkerApp(storage, config, clock=clock), request.param), clock
    return CoreApi(WorkerApp(D1Storage(FakeD1()), config, clock=clock), request.param), clock


def report(api: CoreApi, batch: str, sequence: int, state: str = "running", *, invocation: str = "inv-a",
           cells: int = 4, done: int = 0, running: int = 0, elapsed_ms: int = 0, planned: int | None = 4) -> Any:
    r = api.call("POST", f"/api/batches/{batch}/progress", {
        "invocationId": invocation, "state": state, "sequence": sequence, "cells": cells, "done": done,
        "running": running, "elapsedMs": elapsed_ms, "plannedCells": planned, "startedAt": 1_700_000_000_000})
    assert r.status == 200, r.body
    return r.body


def progress(api: CoreApi, batch: str) -> dict[str, Any]:
    r = api.call("GET", f"/api/batches/{batch}/progress")
    assert r.status == 200, r.body
    return r.body


def store_runs(api: CoreApi, batch: str, *cells: str) -> None:
    for cell in cells:
        assert api.call("POST", "/api/results", run_body(batchId=batch, metadata={"cellKey": cell})).status == 201


def matches_openapi(api: CoreApi, path: str, method: str, body: Any) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = api.call("GET", "/openapi.json").body
    schema = doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
    jsonschema.validate(body, {**schema, "components": doc["components"]})


def test_item9_the_api_reports_the_progress_of_a_batch_being_written(live):
    api, clock = live
    batch = uid("batch")
    assert api.call("GET", f"/api/batches/{batch}/progress").status == 404

    # The start: the batch exists at once (listed, readable), nothing done yet.
    answer = report(api, batch, 1)
    assert answer == {"success": True, "batchId": batch, "invocationId": "inv-a", "current": True}
    matches_openapi(api, "/api/batches/{batchId}/progress", "post", answer)
    assert api.call("GET", f"/api/batches/{batch}").body["totalRuns"] == 0
    assert batch in {b["batchId"] for b in api.call("GET", "/api/batches").body}
    p = progress(api, batch)
    assert (p["state"], p["plannedCells"], p["done"], p["runs"], p["running"], p["etaMs"]) == \
        ("running", 4, 0, 0, 0, None)
    matches_openapi(api, "/api/batches/{batchId}/progress", "get", p)

    # Two cells stored, two running, 10 s after the first cell started: 5 s a cell, 2 left.
    store_runs(api, batch, "c0", "c1")
    clock.advance(10_000)
    report(api, batch, 2, done=2, running=2, elapsed_ms=10_000)
    p = progress(api, batch)
    assert (p["state"], p["done"], p["runs"], p["running"], p["etaMs"], p["ageMs"]) == \
        ("running", 2, 2, 2, 10_000, 0)
    (inv,) = p["invocations"]
    assert (inv["invocationId"], inv["state"], inv["cells"], inv["done"], inv["running"]) == \
        ("inv-a", "running", 4, 2, 2)

    # Three seconds later the estimate is three seconds shorter. A late report (lower
    # sequence) and a repeated one change nothing, not even how recent the last report is.
    clock.advance(3_000)
    assert report(api, batch, 1, done=0, running=1)["current"] is False
    assert report(api, batch, 2, done=2, running=2, elapsed_ms=10_000)["current"] is True
    p = progress(api, batch)
    assert (p["running"], p["etaMs"], p["ageMs"], p["invocations"][0]["done"]) == (2, 7_000, 3_000, 2)

    # A retried attempt of a cell adds a run, not a cell.
    runs = api.call("GET", f"/api/runs?batchId={batch}").body
    c1 = next(r["runId"] for r in runs if r["metadata"]["cellKey"] == "c1")
    retry = run_body(batchId=batch, metadata={"cellKey": "c1", "retryOf": c1})
    assert api.call("POST", "/api/results", retry).status == 201
    store_runs(api, batch, "c2", "c3")
    assert (progress(api, batch)["done"], progress(api, batch)["runs"]) == (4, 5)

    # The end: the final report, then the batch record of the same invocation.
    report(api, batch, 3, "finished", done=4, running=0, elapsed_ms=20_000)
    p = progress(api, batch)
    assert (p["state"], p["done"], p["running"], p["etaMs"]) == ("finished", 4, 0, None)
    record = {"batchId": batch, "createdAt": 1, "completedAt": 2,
              "metadata": {"plannedCells": 4, "iterations": 4, "invocationId": "inv-a"}}
    assert api.call("POST", "/api/results/batch", record).status == 200
    meta = api.call("GET", f"/api/batches/{batch}?runs=0").body["metadata"]
    assert meta["invocations"] == 1 and meta["iterations"] == 4  # progress reports are no contributions
    # Once ended, a report saying otherwise is ignored.
    assert report(api, batch, 9, done=1, running=3)["current"] is False
    assert progress(api, batch)["state"] == "finished"


def test_item9_a_killed_run_shows_stale(live):
    api, clock = live
    batch = uid("batch")
    report(api, batch, 1, cells=3, planned=3)
    clock.advance(2_000)
    report(api, batch, 2, cells=3, planned=3, done=1, running=1, elapsed_ms=2_000)
    store_runs(api, batch, "c0")
    clock.advance(STALE_AFTER_MS)
    assert progress(api, batch)["state"] == "running"  # heard from exactly STALE_AFTER_MS ago
    clock.advance(1)  # then nothing more: the process was killed
    p = progress(api, batch)
    assert (p["state"], p["running"], p["etaMs"], p["ageMs"]) == ("stale", 0, None, STALE_AFTER_MS + 1)
    assert p["invocations"][0]["state"] == "stale" and p["done"] == 1
    matches_openapi(api, "/api/batches/{batchId}/progress", "get", p)

    # A resumed invocation of the same batch runs: the batch is running again.
    report(api, batch, 1, invocation="inv-b", cells=2, planned=3)
    p = progress(api, batch)
    assert p["state"] == "running"
    assert [(i["invocationId"], i["state"]) for i in p["invocations"]] == [("inv-a", "stale"), ("inv-b", "running")]
    report(api, batch, 2, "finished", invocation="inv-b", cells=2, done=2, planned=3)
    assert progress(api, batch)["state"] == "finished"  # the invocation heard from last


def test_item9_an_invocation_whose_batch_record_is_stored_has_ended(live):
    """The final report may be lost (the store was unreachable at the end); the batch record,
    spooled and delivered later, names the invocation and tells its end."""
    api, clock = live
    for interrupted, state in ((False, "finished"), (True, "interrupted")):
        batch = uid("batch")
        report(api, batch, 1)
        clock.advance(STALE_AFTER_MS * 3)
        assert progress(api, batch)["state"] == "stale"
        meta = {"invocationId": "inv-a", "plannedCells": 4, **({"interrupted": True} if interrupted else {})}
        api.call("POST", "/api/results/batch", {"batchId": batch, "metadata": meta})
        p = progress(api, batch)
        assert (p["state"], p["invocations"][0]["state"]) == (state, state)


def test_item9_bad_progress_reports_are_refused_naming_the_field(live):
    api, _ = live
    batch = uid("batch")
    r = api.call("POST", f"/api/batches/{batch}/progress", {"invocationId": "i", "state": "done", "sequence": 1,
                                                              "cells": 1})
    assert r.status == 400 and "state" in r.body["error"]
    r = api.call("POST", f"/api/batches/{batch}/progress", {"invocationId": "i", "state": "running", "cells": 1})
    assert r.status == 400 and r.body["error"] == "missing field: sequence"
    assert api.call("POST", f"/api/batches/{batch}/progress", {"invocationId": "i", "state": "running",
                                                               "sequence": 1, "cells": 1}, auth=False).status == 401
    assert api.call("GET", f"/api/batches/{batch}").status == 404  # nothing was created
    assert api.call("GET", f"/api/batches/{batch}/progress?x=1").status == 400


# --------------------------------------------------------------------------- the runner

YAML = """\
id: add-one
timeout_minutes: 5
validation:
  commands:
    test: "{pytest}"
"""


def read_progress(db: Path, batch: str) -> dict[str, Any] | None:
    """The progress route of the store ``db``, read the way ``worker dev`` reads it (its own
    connection); None while the store or the batch does not exist."""
    if not db.exists():
        return None
    reader = LocalWorker(str(db), WorkerConfig(api_key="reader"))
    try:
        r = reader.handle(Request.from_url("GET", f"/api/batches/{batch}/progress",
                                           {"authorization": "Bearer reader"}))
    finally:
        reader.close()
    return r.json() if r.status == 200 else None


def wait_for(probe: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not seen within {timeout:g} s")


@pytest.fixture
def oracle_batch(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    make_scenario(suites, yaml_text=YAML)
    use_local_store(monkeypatch, tmp_path, suites)
    scenario = load_scenario("demo", "add-one", suites)
    return scenario, resolve_prompt(scenario, "L1"), tmp_path


def test_item9_the_runner_reports_its_start_before_its_end(oracle_batch):
    scenario, prompt, root = oracle_batch
    db, batch = root / "bench.db", "live-oracle"
    seen: list[dict[str, Any]] = []

    def hook(event):  # the first cell is under way: the store must already say so
        if event.stage == "workspace" and not seen:
            seen.append(wait_for(lambda: (p := read_progress(db, batch)) and p["state"] == "running"
                                 and p["running"] == 1 and p))

    client = open_client(db_path=str(db), spool_dir=str(root / "spool"))
    try:
        out = run_batch(scenario, prompt, RunOptions(agent="oracle", iterations=2, batch_id=batch,
                                                     workspaces_root=root / "ws"), client, hook)
        stored = client.get_batch(batch)
    finally:
        client.close()
    assert [r.post_outcome for r in out.runs] == ["stored", "stored"]
    assert [r.record.status for r in out.runs] == ["completed", "completed"]
    (during,) = seen
    assert (during["plannedCells"], during["done"], during["running"]) == (2, 0, 1)
    assert during["invocations"][0]["cells"] == 2

    after = read_progress(db, batch)
    assert (after["state"], after["done"], after["runs"], after["running"]) == ("finished", 2, 2, 0)
    (inv,) = after["invocations"]
    assert (inv["state"], inv["done"], inv["cells"]) == ("finished", 2, 2)
    assert inv["invocationId"] == out.batch.metadata["invocationId"]  # the batch record names it too
    assert inv["updatedAt"] >= during["updatedAt"]
    assert stored.metadata["invocations"] == 1 and stored.metadata["plannedCells"] == 2


class RefusingProgress:
    """A transport that answers the progress route with ``answer`` (or raises it); every other
    request goes to ``inner``."""

    def __init__(self, inner: Any, answer: Any) -> None:
        self.inner, self.answer, self.calls = inner, answer, 0
        self.description, self.destination = inner.description, inner.destination

    def request(self, method: str, path: str, **kw: Any) -> TransportResponse:
        if path.endswith("/progress"):
            self.calls += 1
            if isinstance(self.answer, BaseException):
                raise self.answer
            return self.answer
        return self.inner.request(method, path, **kw)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("answer", [
    TransportResponse(404, {"error": "not found", "details": "no route"}),  # a worker from before the route
    TransportResponse(503, {"error": "unavailable"}),
    TransportUnavailable("connection refused"),
    RuntimeError("a bug in the transport"),
], ids=["no-route", "503", "unreachable", "raises"])
def test_item9_progress_that_cannot_be_reported_never_fails_the_run(oracle_batch, answer):
    scenario, prompt, root = oracle_batch
    client = open_client(db_path=str(root / "bench.db"), spool_dir=str(root / "spool"))
    client.transport = RefusingProgress(client.transport, answer)
    try:
        out = run_batch(scenario, prompt, RunOptions(agent="oracle", iterations=2, batch_id="quiet",
                                                     workspaces_root=root / "ws"), client)
    finally:
        client.close()
    assert [r.post_outcome for r in out.runs] == ["stored", "stored"] and out.batch_post == "stored"
    assert out.post_error is None and not list((root / "spool").rglob("*.json"))  # nothing spooled
    # One try: a refusal stops the reports; a failure delays the next past this short batch.
    assert client.transport.calls == 1
    assert read_progress(root / "bench.db", "quiet")["state"] is None


class Recording:
    """A client whose transport records the progress reports and takes them all."""

    def __init__(self) -> None:
        self.reports: list[tuple[float, dict[str, Any]]] = []
        self.transport = self

    def verify(self) -> None:
        pass

    def request(self, method: str, path: str, **kw: Any) -> TransportResponse:
        assert (method, path) == ("POST", "/api/batches/b%2F1/progress")
        self.reports.append((time.monotonic(), kw["body"]))
        return TransportResponse(200, {"success": True})


def test_item9_reports_beat_while_idle_and_a_burst_of_changes_is_one_report():
    from harness.results.progress import ProgressReporter

    client = Recording()
    reporter = ProgressReporter(client, "b/1", "inv", cells=60, planned=60, heartbeat_s=1.5).start()
    wait_for(lambda: client.reports, timeout=5)  # the start, at once
    assert client.reports[0][1]["state"] == "running" and client.reports[0][1]["done"] == 0
    time.sleep(3.2)  # idle: a heartbeat every 1.5 s
    idle = len(client.reports)
    assert 2 <= idle <= 4
    for _ in range(40):  # a burst of cells starting and ending
        reporter.cell_started()
        reporter.cell_ended()
    reporter.cell_started()
    time.sleep(1.3)
    assert len(client.reports) - idle <= 2  # not one report per change
    latest = client.reports[-1][1]
    assert (latest["done"], latest["running"], latest["cells"], latest["plannedCells"]) == (40, 1, 60, 60)
    reporter.cell_ended()
    reporter.finish("interrupted")
    reporter.finish("finished")  # once only
    final = client.reports[-1][1]
    assert (final["state"], final["done"], final["running"]) == ("interrupted", 41, 0)
    assert sum(1 for _, body in client.reports if body["state"] != "running") == 1
    sequences = [body["sequence"] for _, body in client.reports]
    assert sequences == sorted(set(sequences))  # each report newer than the one before
    gaps = [b[0] - a[0] for a, b in zip(client.reports, client.reports[1:-1])]
    assert min(gaps) >= 0.9  # at most one report a second (the final one is sent at once)
    count = len(client.reports)
    time.sleep(1.6)
    assert len(client.reports) == count  # the heartbeat stopped with the end


# --------------------------------------------------------------------------- the dashboard

def test_item9_the_batch_page_follows_a_batch_being_written(tmp_path):
    from support.dashboard_fixture import ProblemLog, browser_problem, goto, launch_chromium, start_worker

    problem = browser_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {problem}", pytrace=False)
        pytest.skip(problem)
    from playwright.sync_api import sync_playwright

    db, batch = tmp_path / "live.db", "live-dashboard"
    LocalWorker(str(db), WorkerConfig(api_key="x")).close()  # a migrated, empty store
    worker = start_worker(db, tmp_path)
    http = httpx.Client(base_url=worker.url, headers={"authorization": f"Bearer {DEV_API_KEY}"}, timeout=30)

    def post(path: str, body: dict[str, Any]) -> None:
        r = http.post(path, json=body)
        assert r.status_code in (200, 201), r.text

    def beat(sequence: int, state: str = "running", **counts: int) -> None:
        post(f"/api/batches/{batch}/progress", {"invocationId": "inv-1", "state": state, "sequence": sequence,
                                                "cells": 3, "plannedCells": 3, **counts})

    def run(cell: str) -> None:
        post("/api/results", run_body(batchId=batch, metadata={"cellKey": cell, "iteration": int(cell[1:])}))

    def figure(page: Any, name: str) -> str:
        return page.inner_text(f".live-progress [data-figure={name}] .card-value")

    def shows(page: Any, name: str, value: str) -> None:
        page.wait_for_function(
            "([name, value]) => { const el = document.querySelector("
            "`.live-progress [data-figure=${name}] .card-value`); return el && el.textContent === value; }",
            arg=[name, value], timeout=15_000)

    try:
        beat(1)
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                context = browser.new_context(base_url=worker.url, viewport={"width": 1366, "height": 900})
                page = context.new_page()
                log = ProblemLog()
                log.attach(page)
                goto(page, f"/batches/{batch}")
                page.wait_for_selector(".live-progress[data-state=running]")
                assert (figure(page, "planned"), figure(page, "done"), figure(page, "running")) == ("3", "0", "0")
                assert figure(page, "eta") == "after the first cell"
                assert page.get_attribute(".live-progress progress", "max") == "3"
                page.evaluate("window.__sameDocument = true")

                run("c0")  # one cell stored, two running, 4 s after the first cell started
                beat(2, done=1, running=2, elapsedMs=4_000)
                shows(page, "done", "1")
                assert figure(page, "running") == "2"
                assert figure(page, "eta") not in ("—", "after the first cell")
                assert page.evaluate("document.querySelector('.live-progress progress').value") == 1

                run("c1")
                run("c2")
                beat(3, "finished", done=3, elapsedMs=9_000)
                # The batch ended: the page draws it again, with its runs, and no live block.
                page.wait_for_function(
                    "() => !document.querySelector('.live-progress') && "
                    "document.querySelectorAll('.runs tbody tr[data-key]').length === 3", timeout=15_000)
                assert page.evaluate("window.__sameDocument") is True  # never reloaded
                assert log.unexpected() == []
                context.close()
            finally:
                browser.close()
    finally:
        http.close()
        worker.stop()


# --------------------------------------------------------------------------- bench fleet status --follow

def start_fleet(root: Path, server: Any, tests: int) -> fleet.FleetHandle:
    make_repos(root, names=("a",), data=dataset(tests))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       scenario_profiles={"qa": {"dataset": "qa", "concurrency": 1}})
    (root / "m.json").write_text(json.dumps(doc))
    return fleet.start(root / "m.json", store=False)


def test_item9_fleet_status_follow_ends_when_the_fleet_ends(env, mock_server):
    server = mock_server(delay_ms=250, answers=ANSWERS)
    handle = start_fleet(env, server, 6)
    done = subprocess.run([BENCH, "fleet", "status", handle.run_id, "--follow", "--interval", "0.2"], cwd=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if re.match(rf"\d\d:\d\d:\d\d  {handle.run_id}  ", line)]
    assert any(f"{handle.run_id}  running  " in line for line in lines), done.stdout
    assert lines[-1].endswith(f"{handle.run_id}  completed  cells 2/2  tests 12/12"), done.stdout
    assert len(lines) == len(set(lines)) >= 2  # a line each time the status changed
    assert f"artifacts: {handle.run_dir}" in done.stdout
    final = fleet.status(handle.run_id)
    assert final["state"] == "completed" and not final["alive"]


def test_item9_ctrl_c_stops_following_not_the_fleet(env, mock_server):
    server = mock_server(delay_ms=500, answers=ANSWERS)
    handle = start_fleet(env, server, 8)  # 8 answers of 0.5 s, one at a time, per provider
    follower = subprocess.Popen([BENCH, "fleet", "status", handle.run_id, "--follow", "--json", "--interval", "0.2"],
                                cwd=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=interruptible)
    try:
        first = json.loads(follower.stdout.readline())
        assert first["run_id"] == handle.run_id and first["state"] in ("queued", "running")
        follower.send_signal(signal.SIGINT)
        out, err = follower.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            follower.kill()
    assert follower.returncode == 130
    assert f"stopped following; fleet run {handle.run_id} goes on" in err
    assert "Traceback" not in err
    results = fleet.wait(handle.run_id, timeout_s=120)  # the fleet went on to its end
    assert results["state"] == "completed" and results["summary"]["total_tests"] == 16


def test_item9_fleet_status_interval_needs_follow(env):
    done = subprocess.run([BENCH, "fleet", "status", "nothing", "--interval", "1"], cwd=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "--interval goes with --follow" in done.stderr
