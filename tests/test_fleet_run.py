"""Running fleets against the loopback mock model server (harness.testing.mock_model): the artifact
tree and its CSV headers, the metrics, the executive report, the effect of every manifest
field, failure handling, resume after SIGKILL, the start/status/wait API, and a mixed fleet
with a dataset profile and a scenario-suite profile."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from harness import fleet
from harness.fleet.metrics import SUMMARY_METRICS
from support.scenario_builders import git_repository, make_scenario
from support.datasets import env, mock_server
from support.fleets import dataset, make_repos, manifest_doc, mock, run_fleet

__all__ = ["env", "mock_server", "mock"]  # fixtures of support.datasets and support.fleets

BENCH = os.path.join(os.path.dirname(sys.executable), "bench")


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


# --------------------------------------------------------------------------- artifacts and metrics


def test_artifacts_metrics_report_and_store(tmp_path, mock):
    from harness.results import open_client

    server = mock()
    make_repos(tmp_path)
    client = open_client(db_path=str(tmp_path / "bench.db"))
    with client:
        results, run_dir = run_fleet(tmp_path, manifest_doc(server.base_url), client=client)
        stored = client.list_runs(limit=100, batch_id=results["run_id"])
        batch = client.get_batch(results["run_id"])
    assert results["state"] == "completed" and run_dir.parent == tmp_path / "out"
    assert results["run_id"].startswith("t-") and results["run_id"].endswith(results["manifest_hash"][:8])
    names = {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()}
    for expected in ("fleet-results.json", "fleet-results.yaml", "csv/fleet-summary.csv", "csv/repositories.csv",
                     "csv/providers.csv", "csv/categories.csv", "executive-report.html", "manifest.json",
                     "status.json", "cells.jsonl"):
        assert expected in names
    for repo in ("a", "b"):
        for model in ("m1", "m2"):
            cell = f"{repo}/openai-compatible_{model}/qa"
            for part in ("results.json", "results.csv", "results.jsonl", "responses/q0.r0.json"):
                assert f"{cell}/{part}" in names
    with open(run_dir / "csv" / "fleet-summary.csv", newline="") as f:
        head, row = list(csv.reader(f))
    assert head[:3] == ["fleet_id", "run_id", "state"] and head[3:22] == list(SUMMARY_METRICS)
    assert len(SUMMARY_METRICS) == 19
    for name, first in (("repositories", "repo_id"), ("providers", "provider"), ("categories", "category")):
        with open(run_dir / "csv" / f"{name}.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert list(rows[0])[0] == first
    # the metrics, from every test: q1..q3 pass (the mock knows their answer), q0 fails
    s = results["summary"]
    assert (s["total_tests"], s["total_succeeded"], s["total_failed"]) == (16, 12, 4)
    assert s["success_rate"] == 0.75 and s["success_rate_low"] < 0.75 < s["success_rate_high"]
    assert s["total_repositories"] == 2 and s["avg_tests_per_repository"] == 8
    durations = sorted(line["duration_ms"] for p in run_dir.rglob("results.jsonl") for line in lines_of(p))
    assert len(durations) == 16
    assert s["min_duration_ms"] == pytest.approx(durations[0], abs=0.01)
    assert s["max_duration_ms"] == pytest.approx(durations[-1], abs=0.01)
    assert s["avg_duration_ms"] == pytest.approx(sum(durations) / 16, abs=0.01)
    assert s["total_cost"] is None and s["cost_unknown_tests"] == 16  # no price for mock models
    assert [p["provider"] for p in results["providers"]] == ["openai-compatible:m1", "openai-compatible:m2"]
    assert all(p["repository_count"] == 2 and p["total_tests"] == 8 for p in results["providers"])
    assert {c["category"]: c["total_tests"] for c in results["categories"]} == {"even": 8, "odd": 8}
    assert [r["repo_id"] for r in results["repositories"]] == ["a", "b"]
    # deterministic key order
    text = (run_dir / "fleet-results.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # the executive report opens offline: parsed, charts present, the run named
    page = (run_dir / "executive-report.html").read_text()
    parser = _Tags()
    parser.feed(page)
    assert parser.tags.count("svg") >= 4 and "script" not in parser.tags
    assert results["run_id"] in "".join(parser.text)
    assert "src=\"http" not in page and "href=\"http" not in page
    # every cell stored with the fleet run id as batch id; the fleet's metadata on the batch
    assert len(stored) == 16 and {r.batch_id for r in stored} == {results["run_id"]}
    assert all(r.tier == "dataset" and r.suite == "qa" for r in stored)
    first = next(r for r in stored if r.metadata["fleet"]["repoId"] == "a")
    assert first.metadata["fleet"]["repoMetadata"] == {"team": "x"}
    assert first.metadata["fleet"]["custom"] == {"ticket": "T-1"}
    assert batch.metadata["kind"] == "fleet" and batch.metadata["description"] == "test fleet"


def test_formats_and_generate_reports(tmp_path, mock):
    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       output={"formats": ["csv"]})
    _, run_dir = run_fleet(tmp_path, doc)
    assert (run_dir / "csv" / "providers.csv").exists() and (run_dir / "fleet-results.json").exists()
    assert not (run_dir / "executive-report.html").exists() and not (run_dir / "fleet-results.yaml").exists()
    doc["output"]["generate_reports"] = False
    doc["output"]["formats"] = ["csv", "html", "yaml"]
    _, run_dir = run_fleet(tmp_path, doc)
    assert (run_dir / "fleet-results.json").exists()
    assert not (run_dir / "csv").exists() and not (run_dir / "executive-report.html").exists()


def test_save_responses_false_keeps_no_answers(tmp_path, mock):
    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       output={"save_responses": False})
    _, run_dir = run_fleet(tmp_path, doc)
    cell = run_dir / "a" / "openai-compatible_m1" / "qa"
    assert not (cell / "responses").exists()
    assert all(line["response"] is None for line in lines_of(cell / "results.jsonl"))


# --------------------------------------------------------------------------- each field's effect


def test_settings_concurrency_and_seeded_sample_reach_the_requests(tmp_path, mock):
    server = mock(delay_ms=30)
    server.server.keep_bodies = True
    make_repos(tmp_path, names=("a",), data=dataset(10))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       providers=[{"provider": "openai-compatible:m1", "base_url": server.base_url}],
                       scenario_profiles={"qa": {"dataset": "qa", "concurrency": 3, "num_examples": 6,
                                                 "settings": {"temperature": 0.7, "max_tokens": 33, "top_p": 0.9,
                                                              "stop": "END"}}},
                       global_settings={"random_seed": 5})
    results, run_dir = run_fleet(tmp_path, doc)
    bodies = server.server.bodies
    assert len(bodies) == 6
    assert {b["temperature"] for b in bodies} == {0.7} and {b["top_p"] for b in bodies} == {0.9}
    assert {b.get("max_tokens") or b.get("max_completion_tokens") for b in bodies} == {33}
    assert all(b["stop"] in ("END", ["END"]) for b in bodies)
    assert 1 < server.server.max_in_flight <= 3
    first = sorted(line["test_id"] for line in lines_of(run_dir / "a" / "openai-compatible_m1" / "qa" /
                                                         "results.jsonl"))
    _, again = run_fleet(tmp_path, doc)
    second = sorted(line["test_id"] for line in lines_of(again / "a" / "openai-compatible_m1" / "qa" /
                                                          "results.jsonl"))
    assert first == second and len(first) == 6  # the same seed draws the same cases


def test_request_delay_paces_requests(tmp_path, mock):
    server = mock(delay_ms=5)
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       providers=[{"provider": "openai-compatible:m1", "base_url": server.base_url}],
                       scenario_profiles={"qa": {"dataset": "qa", "concurrency": 4, "request_delay_ms": 250}})
    run_fleet(tmp_path, doc)
    assert server.server.requests == 4 and server.server.max_in_flight == 1  # one at a time, 250 ms apart
    paced = mock(delay_ms=150)
    doc["providers"] = [{"provider": "openai-compatible:m1", "base_url": paced.base_url}]
    doc["scenario_profiles"]["qa"]["request_delay_ms"] = 0
    run_fleet(tmp_path, doc)
    assert paced.server.max_in_flight > 1  # the same profile without a delay overlaps them


def test_pacer_spaces_starts():
    import asyncio

    from harness.models.engine import _Pacer

    clock = [100.0]
    slept: list[float] = []

    async def fake_sleep(seconds):
        slept.append(seconds)
        clock[0] += seconds

    async def go():
        pacer = _Pacer(0.5)
        starts = []
        for _ in range(4):
            await pacer.turn()
            starts.append(clock[0])
        return starts

    import harness.models.engine as engine_module

    original_sleep, original_monotonic = asyncio.sleep, engine_module.time.monotonic
    engine_module.asyncio.sleep = fake_sleep
    engine_module.time.monotonic = lambda: clock[0]
    try:
        starts = asyncio.run(go())
    finally:
        engine_module.asyncio.sleep = original_sleep
        engine_module.time.monotonic = original_monotonic
    assert starts == [100.0, 100.5, 101.0, 101.5]


def test_timeout_and_retries(tmp_path, mock):
    server = mock(fail_first=1)  # the first request is answered 429
    make_repos(tmp_path, names=("a",), data=dataset(2, extra=[{"id": "hang", "prompt": "HANG please",
                                                               "assert": [{"type": "contains", "value": "x"}]}]))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       providers=[{"provider": "openai-compatible:m1", "base_url": server.base_url}],
                       scenario_profiles={"qa": {"dataset": "qa", "concurrency": 1}},
                       global_settings={"test_timeout_seconds": 0.5, "max_retries": 0})
    results, run_dir = run_fleet(tmp_path, doc)
    lines = {line["test_id"]: line for line in lines_of(run_dir / "a" / "openai-compatible_m1" / "qa" /
                                                         "results.jsonl")}
    assert lines["q0"]["status"] == "error" and lines["q0"]["attempts"] == 1  # max_retries 0: no retry
    assert lines["hang"]["error_kind"] == "timeout"
    assert results["summary"]["total_timeout"] == 1
    assert results["state"] == "failed" and results["cells"][0]["state"] == "failed"
    server2 = mock(fail_first=1)
    doc["providers"] = [{"provider": "openai-compatible:m1", "base_url": server2.base_url}]
    doc["global_settings"]["max_retries"] = 2
    _, run_dir = run_fleet(tmp_path, doc)
    lines = {line["test_id"]: line for line in lines_of(run_dir / "a" / "openai-compatible_m1" / "qa" /
                                                         "results.jsonl")}
    assert lines["q0"]["status"] == "failed" and lines["q0"]["attempts"] == 2  # retried, then answered



def test_a_run_without_a_plan_starts_before_the_plan_is_whole(tmp_path, mock, monkeypatch):
    """``fleet.run`` plans one repository at a time while the first cells run: the first cell
    starts before the later repositories are planned; the results, the status and the
    ``start`` event (once the plan is whole) count every cell."""
    from harness.fleet import execute

    server = mock()
    names = ("a", "b", "c")
    make_repos(tmp_path, names=names)
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": n, "path": n} for n in names])
    order: list[str] = []
    planned = execute.FleetPlanner.step

    def step(self):
        cells = planned(self)
        order.append(f"planned {cells[0].repo.repo_id}" if cells else "planned none")
        return cells

    def on_event(event):
        if event.kind == "start":
            order.append(f"cell-start {event.cell.key}")
        elif event.kind == "plan":
            order.append(f"start {event.total - event.done}/{event.total}")

    monkeypatch.setattr(execute.FleetPlanner, "step", step)
    results, run_dir = run_fleet(tmp_path, doc, on_event=on_event, parallel_cells=1)
    assert order[0] == "planned a" and order[1] == "cell-start a|openai-compatible:m1|qa"
    assert order.index("planned c") < order.index("start 6/6") < order.index("cell-start c|openai-compatible:m1|qa")
    assert [c["repo_id"] for c in results["cells"]] == ["a", "a", "b", "b", "c", "c"]
    assert results["state"] == "completed" and results["summary"]["total_tests"] == 24
    status = json.loads((run_dir / "status.json").read_text())
    assert (status["cells_total"], status["tests_total"], status["cells_done"]) == (6, 24, 6)


def test_a_repository_to_clone_is_planned_off_the_event_loop(tmp_path, mock, monkeypatch):
    server = mock()
    make_repos(tmp_path, names=("a",))
    source = tmp_path / "origin"
    (source / "datasets").mkdir(parents=True)
    (source / "datasets" / "qa.yaml").write_text(yaml.safe_dump(dataset()))
    git_repository(source)
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"},
                                                      {"repo_id": "remote", "git_url": source.as_uri()}])
    from harness.fleet import execute

    threads: dict[str, str] = {}
    planned = execute.FleetPlanner.step

    def step(self):
        cells = planned(self)
        threads[cells[0].repo.repo_id] = threading.current_thread().name
        return cells

    monkeypatch.setattr(execute.FleetPlanner, "step", step)
    results, _ = run_fleet(tmp_path, doc)
    assert threads["a"] == threading.main_thread().name != threads["remote"]
    assert results["state"] == "completed" and {c["repo_id"] for c in results["cells"]} == {"a", "remote"}


def test_the_next_cell_is_opened_off_the_event_loop_while_the_one_before_sends(tmp_path, mock, monkeypatch):
    """Its directory, run.json, results log and requests are made in a worker thread while the
    cell before it still sends: a free slot sends the next first request at once."""
    from harness.fleet import execute

    server = mock()
    make_repos(tmp_path, names=("a", "b"))
    order: list[str] = []
    on_main: dict[str, bool] = {}
    real = execute.FleetExecution._open_dataset_cell

    def opening(self, cell):
        on_main[cell.key] = threading.current_thread() is threading.main_thread()
        order.append(f"open {cell.key}")
        return real(self, cell)

    def on_event(event):
        if event.kind == "done":
            order.append(f"done {event.result.cell.key}")

    monkeypatch.setattr(execute.FleetExecution, "_open_dataset_cell", opening)
    results, _ = run_fleet(tmp_path, manifest_doc(server.base_url), on_event=on_event, parallel_cells=1)
    keys = [f"{c['repo_id']}|{c['provider']}|{c['profile']}" for c in results["cells"]]
    assert on_main == {keys[0]: True, **{k: False for k in keys[1:]}}  # the very first opened in place
    assert order.index(f"open {keys[1]}") < order.index(f"done {keys[0]}")
    assert results["state"] == "completed" and results["summary"]["total_succeeded"] == 12


def test_a_cell_opened_ahead_of_a_stop_is_completed_by_resume(tmp_path, mock):
    from harness.control import BatchControl

    server = mock(delay_ms=100)  # a cell sends for 0.2 s: its predecessor is recorded meanwhile
    make_repos(tmp_path, names=("a", "b"))
    control = BatchControl()

    def on_event(event):
        if event.kind == "done":
            control.interrupt()  # the second cell is sending, the third opened ahead

    results, run_dir = run_fleet(tmp_path, manifest_doc(server.base_url), on_event=on_event, control=control,
                                 parallel_cells=1)
    keys = [c["results_dir"] for c in results["cells"]]
    assert results["state"] == "interrupted" and results["cells"][0]["state"] == "completed"
    assert (run_dir / keys[2] / "run.json").is_file()  # opened, never sent
    assert [c["state"] for c in results["cells"][2:]] == ["pending", "pending"]
    done = fleet.resume(results["run_id"], base_dir=run_dir.parent)
    assert done["state"] == "completed" and [c["state"] for c in done["cells"]] == ["completed"] * 4
    tests = [(str(p.parent), line["test_id"]) for p in run_dir.rglob("results.jsonl") for line in lines_of(p)]
    assert len(tests) == len(set(tests)) == 16  # each test once: nothing redone, nothing lost


def test_continue_on_failure(tmp_path, mock):
    server = mock()
    make_repos(tmp_path, names=("a", "b"))
    bad = {"provider": "openai-compatible:down", "base_url": "http://127.0.0.1:9/v1"}
    good = {"provider": "openai-compatible:m1", "base_url": server.base_url}
    doc = manifest_doc(server.base_url, providers=[bad, good],
                       global_settings={"continue_on_failure": False, "max_retries": 0})
    results, _ = run_fleet(tmp_path, doc, parallel_cells=1)
    states = [(c["repo_id"], c["provider"], c["state"]) for c in results["cells"]]
    assert states[0] == ("a", "openai-compatible:down", "failed")
    assert {s for _, _, s in states[1:]} == {"skipped"}
    assert results["state"] == "failed" and "continue_on_failure is false" in results["stopped_reason"]
    assert results["summary"]["total_skipped"] == 12
    doc["global_settings"]["continue_on_failure"] = True
    results, _ = run_fleet(tmp_path, doc, parallel_cells=1)
    assert [c["state"] for c in results["cells"]] == ["failed", "completed", "failed", "completed"]
    assert results["state"] == "failed" and "the others ran" in results["stopped_reason"]
    assert results["summary"]["total_succeeded"] == 6


# --------------------------------------------------------------------------- resume, API, mixed


def _wait_for(predicate, timeout_s=60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_resume_after_sigkill_completes_every_test_once(tmp_path, mock):
    from harness.results import open_client

    # Slow enough answers that the status file (written at most once a second) shows the run
    # part-way through well before its 12 tests are done.
    server = mock(delay_ms=300)
    make_repos(tmp_path, names=("a",), data=dataset(6))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}],
                       scenario_profiles={"qa": {"dataset": "qa", "concurrency": 1}})
    (tmp_path / "m.json").write_text(json.dumps(doc))
    process = subprocess.Popen([BENCH, "fleet", "m.json", "--parallel-cells", "1", "--format", "quiet"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        status_file = _wait_for(lambda: next((tmp_path / "out").glob("*/status.json"), None))
        _wait_for(lambda: json.loads(status_file.read_text() or "{}").get("tests_done", 0) >= 3
                  if status_file.stat().st_size else False)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(30)
    run_id = status_file.parent.name
    assert fleet.status(run_id)["state"] == "interrupted"  # its process is gone
    before = sum(len(lines_of(p)) for p in status_file.parent.rglob("results.jsonl"))
    assert 3 <= before < 12
    done = subprocess.run([BENCH, "fleet", "resume", run_id, "--format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results["state"] == "completed" and results["summary"]["total_tests"] == 12
    lines = [line for p in status_file.parent.rglob("results.jsonl") for line in lines_of(p)]
    keys = [(line["target"], line["test_id"]) for line in lines]
    assert len(keys) == 12 and len(set(keys)) == 12  # nothing finished was redone, nothing lost
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        assert len(client.list_runs(limit=100, batch_id=run_id)) == 12


def test_api_start_status_wait(tmp_path, mock):
    server = mock(delay_ms=20)
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}])
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(doc))
    handle = fleet.start(tmp_path / "m.yaml")
    assert handle.run_dir == tmp_path / "out" / handle.run_id and handle.pid
    first = fleet.status(handle.run_id)
    assert first["state"] in ("queued", "running", "completed") and first["run_id"] == handle.run_id
    results = fleet.wait(handle.run_id, timeout_s=120)
    assert results["state"] == "completed" and results["summary"]["total_tests"] == 8
    final = fleet.status(handle.run_id)
    assert final["state"] == "completed" and final["tests_done"] == 8 and final["cells_done"] == 2
    assert handle.run_id in {r["run_id"] for r in fleet.list_runs()}
    with pytest.raises(fleet.FleetError, match="no fleet run"):
        fleet.status("t-nothing")
    done = subprocess.run([BENCH, "fleet", "status", handle.run_id], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and f"{handle.run_id}  completed  cells 2/2  tests 8/8" in done.stdout


def test_no_wait_cli_prints_the_run_id_at_once(tmp_path, mock):
    server = mock(delay_ms=20)
    make_repos(tmp_path, names=("a",))
    (tmp_path / "m.json").write_text(json.dumps(manifest_doc(server.base_url,
                                                             repositories=[{"repo_id": "a", "path": "a"}])))
    done = subprocess.run([BENCH, "fleet", "m.json", "--no-wait", "--format", "quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    assert run_id.startswith("t-")
    assert fleet.wait(run_id, timeout_s=120)["state"] == "completed"


def test_mixed_fleet_dataset_and_suite_profiles(tmp_path, mock):
    from harness.results import open_client

    server = mock()
    make_repos(tmp_path, names=("a",))
    make_scenario(tmp_path / "a" / "suites", suite="demo")
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a", "scenarios": ["qa", "fix"]}],
                       providers=[{"provider": "openai-compatible:m1", "base_url": server.base_url}],
                       scenario_profiles={"qa": {"dataset": "qa"},
                                          "fix": {"suite": "demo", "iterations": 2, "settings": {"temperature": 0.2}}})
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        results, run_dir = run_fleet(tmp_path, doc, client=client)
        stored = client.list_runs(limit=100, batch_id=results["run_id"])
    kinds = {c["profile"]: (c["kind"], c["state"], c["total_tests"]) for c in results["cells"]}
    assert kinds == {"qa": ("dataset", "completed", 4), "fix": ("suite", "completed", 2)}
    suite_dir = run_dir / "a" / "openai-compatible_m1" / "fix"
    lines = lines_of(suite_dir / "results.jsonl")
    assert [(line["scenario"], line["iteration"], line["agent"], line["model"]) for line in lines] == [
        ("add-one", 0, "openai", "m1"), ("add-one", 1, "openai", "m1")]
    assert all(line["status"] == "failed" for line in lines)  # the mock's answer fixes nothing
    with open(suite_dir / "results.csv", newline="") as f:
        assert next(csv.reader(f))[:4] == ["scenario", "suite", "tier", "iteration"]
    assert (suite_dir / "responses" / "add-one.L1.i0.json").exists()
    assert results["summary"]["total_tests"] == 6
    assert {c["category"] for c in results["categories"]} == {"even", "odd", "demo"}
    tiers = sorted(r.tier for r in stored)
    assert tiers.count("dataset") == 4 and len(stored) == 6
    scenario_run = next(r for r in stored if r.tier != "dataset")
    assert scenario_run.agent == "openai" and scenario_run.metadata["fleet"]["profile"] == "fix"


def test_runs_that_cannot_be_stored_fail_their_cell(tmp_path, mock):
    class Refusing:
        batches: list = []

        def post_run(self, record):
            raise ConnectionError("store down")

        def post_batch(self, batch):
            self.batches.append(batch)

    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}])
    results, run_dir = run_fleet(tmp_path, doc, client=Refusing())
    assert [c["state"] for c in results["cells"]] == ["failed", "failed"]
    assert all("not stored: " in c["error"] and "store down" in c["error"] for c in results["cells"])
    assert results["summary"]["total_tests"] == 8  # the answers themselves are kept
    assert sum(len(lines_of(p)) for p in run_dir.rglob("results.jsonl")) == 8



def test_a_batch_that_cannot_be_stored_is_said_in_the_results(tmp_path, mock):
    """The fleet's batch is stored while the artifacts are written; its failure reaches the
    results, and the runs stored before it stay stored."""
    from harness.results import open_client

    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}])
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        def refuse(batch):
            raise ConnectionError("batch store down")

        client.post_batch = refuse
        results, run_dir = run_fleet(tmp_path, doc, client=client)
        stored = client.list_runs(limit=100, batch_id=results["run_id"])
    assert results["state"] == "completed" and len(stored) == 8
    assert results["store_errors"] == [f"batch {results['run_id']}: ConnectionError: batch store down"]
    assert (run_dir / "fleet-results.json").is_file() and (run_dir / "executive-report.html").is_file()


def test_a_response_file_holds_one_key_per_line(tmp_path, mock):
    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}])
    _, run_dir = run_fleet(tmp_path, doc)
    cell = run_dir / "a" / "openai-compatible_m1" / "qa"
    lines = {line["test_id"]: line for line in lines_of(cell / "results.jsonl")}
    text = (cell / "responses" / "q1.r0.json").read_text(encoding="utf-8")
    saved = json.loads(text)
    keys = ["assertions", "category", "duration_ms", "error", "repeat", "response", "run_id", "score", "status",
            "target", "test_id"]
    assert list(saved) == keys and saved == {k: lines["q1"].get(k) for k in keys}
    assert text.splitlines()[0] == "{" and len(text.splitlines()) == len(keys) + 2 and text.endswith("}\n")


class _SlowStore:
    """A results client whose posts are slow and which notes, for every run it stores, the cells
    cells.jsonl already called completed at that moment."""

    def __init__(self, client, run_dirs: Path) -> None:
        self.client, self.run_dirs, self.seen = client, run_dirs, []

    def post_run(self, record):
        time.sleep(0.05)
        logs = list(self.run_dirs.glob("*/cells.jsonl"))
        completed = {line["key"] for p in logs for line in lines_of(p) if line["state"] == "completed"}
        fleet_meta = record.metadata["fleet"]
        key = f"{fleet_meta['repoId']}|{record.agent}:{record.model}|{fleet_meta['profile']}"
        self.seen.append((key, key in completed))
        return self.client.post_run(record)

    def post_runs(self, records):
        return [self.post_run(record) for record in records]

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_cell_is_recorded_completed_only_once_its_runs_are_stored(tmp_path, mock):
    """A process killed between a cell's last answer and the end of its storing must leave the
    cell to resume: cells.jsonl may call it completed only after its runs are in the store."""
    from harness.results import open_client

    server = mock()
    make_repos(tmp_path, names=("a",))
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a"}])
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        slow = _SlowStore(client, tmp_path / "out")
        results, run_dir = run_fleet(tmp_path, doc, client=slow)
        assert results["state"] == "completed"
        assert len(slow.seen) == 8 and not [key for key, early in slow.seen if early]
        assert len(client.list_runs(limit=100, batch_id=results["run_id"])) == 8
    assert [line["state"] for line in lines_of(run_dir / "cells.jsonl")] == ["completed", "completed"]


def test_item1_a_fleet_names_its_judge_and_never_calls_one_for_a_provider_at_its_own_base_url(tmp_path, mock, monkeypatch):
    """First hour, item 1, for fleets: global_settings.judge (bench fleet --judge) names the
    judge of suite profiles; without one, a provider at a base URL of its own gets none, even
    with a provider key in the environment."""
    from harness.fleet import ManifestError, load_manifest
    from harness.results import open_client

    monkeypatch.setenv("OPENAI_API_KEY", "sk-user-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-user-key")
    server = mock()
    make_repos(tmp_path, names=("a",))
    make_scenario(tmp_path / "a" / "suites", suite="demo")
    scenario_yaml = tmp_path / "a" / "suites" / "demo" / "scenarios" / "add-one" / "scenario.yaml"
    scenario_yaml.write_text(scenario_yaml.read_text() + "\nllm_judge:\n  enabled: true\n")
    doc = manifest_doc(server.base_url, repositories=[{"repo_id": "a", "path": "a", "scenarios": ["fix"]}],
                       providers=[{"provider": "openai-compatible:m1", "base_url": server.base_url}],
                       scenario_profiles={"fix": {"suite": "demo"}})
    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        results, _ = run_fleet(tmp_path, doc, client=client)
        run = client.list_runs(limit=10, batch_id=results["run_id"])[0]
    judge = next(e for e in client_evaluations(tmp_path, run.run_id) if e.evaluator_name == "llm_judge")
    assert judge.status == "skipped" and "no judge was named" in judge.details
    (tmp_path / "m.json").write_text(json.dumps({**doc, "global_settings": {"judge": "none"}}))
    assert load_manifest(tmp_path / "m.json").judge == "none"
    assert load_manifest(tmp_path / "m.json", judge="anthropic:claude-haiku-4-5").judge == "anthropic:claude-haiku-4-5"
    (tmp_path / "bad.json").write_text(json.dumps({**doc, "global_settings": {"judge": "nosuch-model"}}))
    with pytest.raises(ManifestError, match="global_settings.judge"):
        load_manifest(tmp_path / "bad.json")


def client_evaluations(tmp_path, run_id):
    from harness.results import open_client

    with open_client(db_path=str(tmp_path / "bench.db")) as client:
        return client.get_run(run_id).evaluations
