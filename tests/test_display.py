"""The one progress display (harness/cli/live.py, ``Progress``) shows each engine's events
through that engine's view: a plan's runs, a dataset's targets, a fleet's cells and tests, a load
test's steps. Plain-line mode on a console that is not a terminal (a log, CI), and the rows of
the panel a terminal would show. The dataset and load-test displays are driven by the real
engines, against loopback model servers.
"""

from __future__ import annotations

import asyncio
import io
import re
import threading
from types import SimpleNamespace

from rich.console import Console

from harness.cli.live import Progress, duration_text
from harness.events import Event
from support.datasets import EXPECTED, env, mock_server, options, targets_of, write_dataset

__all__ = ["env", "mock_server"]  # fixtures of support.datasets


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=300), out


def panel_text(progress: Progress) -> str:
    """The rows the panel would draw, as text."""
    console, out = plain_console()
    for row in progress.view.rows(progress):
        console.print(row)
    return out.getvalue()


def test_the_eta_is_the_time_left_at_the_pace_so_far():
    progress = Progress(_idle_view())
    progress.started -= 100.0  # 100 s in
    assert progress.eta(0, 10) is None and progress.eta(10, 10) is None
    assert progress.eta(4, 10) == "2m30s"  # 25 s a cell, 6 left
    assert (duration_text(59.4), duration_text(61), duration_text(3 * 3600 + 5 * 60)) == ("59s", "1m01s", "3h05m")


def _idle_view():
    from harness.cli.live import View

    return View(rows=lambda progress: [])


# --------------------------------------------------------------------------- a plan


def run_record(run_id: str, status: str, score: float | None, ok: bool, failure: str | None = None, **meta):
    from harness.results.records import RunRecord

    return RunRecord(run_id=run_id, suite="demo", scenario="add-one", tier="L1", agent="oracle", status=status,
                     failure_class=failure, total_score=score, is_successful=ok, metadata=meta)


def test_a_plan_prints_a_line_per_finished_run_with_cells_passes_and_eta():
    from harness.cli.plan_view import PLAN_VIEW
    from harness.scenarios.plan import Cell

    console, out = plain_console()
    cells = [Cell("demo", "add-one", "L1", "oracle", None, None, i) for i in range(3)]
    progress = Progress(PLAN_VIEW, console=console, total=3)
    with progress:
        assert progress.live is None  # not a terminal: lines only
        progress(Event("stage", key="r0", cell=cells[0], stage="workspace", iteration=0))
        progress(Event("stage", key="r1", cell=cells[1], stage="agent", iteration=1))
        assert out.getvalue() == ""  # stages show on a terminal only
        assert re.search(r"demo/add-one L1 oracle #1: agent  \d+s", panel_text(progress))
        progress(Event("done", key="r0", cell=cells[0], result=run_record("r0", "completed", 1.0, True,
                                                                          cached=True, cachedCalls=2, modelCalls=3)))
        progress(Event("done", key="r1", cell=cells[1], result=run_record("r1", "error", None, False, "infra")))
        progress(Event("stage", key="r2", cell=None, stage="agent", iteration=2))
        progress(Event("done", key="r2", cell=None, result=run_record("r2", "failed", 0.25, False), iteration=2))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert re.fullmatch(r"\[1/3\] demo/add-one L1 oracle #0: completed cached 2/3 score 1\.00 \(r0\); "
                        r"cells 1/3, 1 passed, ETA \d+s", lines[0])
    assert re.fullmatch(r"\[2/3\] demo/add-one L1 oracle #1: error/infra score - \(r1\); "
                        r"cells 2/3, 1 passed, ETA \d+s", lines[1])
    assert lines[2] == "[3/3] run 3: failed score 0.25 (r2); cells 3/3, 1 passed"  # no ETA at the end
    assert (progress.all.done, progress.all.passed, progress.all.failed, progress.all.errors) == (3, 1, 1, 1)
    assert progress.running == {}


def test_a_quiet_display_prints_nothing():
    from harness.cli.plan_view import PLAN_VIEW

    console, out = plain_console()
    with Progress(PLAN_VIEW, console=console, total=1, quiet=True) as progress:
        progress(Event("done", key="r0", result=run_record("r0", "completed", 1.0, True), iteration=0))
        progress.note("stopping")
    assert out.getvalue() == "" and progress.all.done == 1 and progress.notes == ["stopping"]


def test_events_from_many_threads_are_each_counted_once():
    from harness.cli.plan_view import PLAN_VIEW

    console, out = plain_console()
    progress = Progress(PLAN_VIEW, console=console, total=400)

    def worker(first: int) -> None:
        for i in range(first, first + 100):
            progress(Event("stage", key=f"r{i}", stage="agent", iteration=i))
            progress(Event("done", key=f"r{i}", result=run_record(f"r{i}", "completed", 1.0, i % 2 == 0),
                           iteration=i))

    with progress:
        threads = [threading.Thread(target=worker, args=(n * 100,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    counters = sorted(int(re.match(r"\[(\d+)/400\]", line).group(1)) for line in out.getvalue().splitlines())
    assert counters == list(range(1, 401))  # every run got its own number
    assert (progress.all.done, progress.all.passed, progress.running) == (400, 200, {})


# --------------------------------------------------------------------------- a dataset run


def test_a_dataset_run_counts_per_target_and_prints_only_its_notes(tmp_path, mock_server):
    from harness.cli.dataset_view import progress_view
    from harness.datasets.planning import prepare
    from harness.datasets.run import execute
    from support.datasets import ANSWERS

    mock = mock_server(answers=ANSWERS)
    run = prepare(options(write_dataset(tmp_path / "d.json"), tmp_path / "out", targets_of(mock, "m1", "m2")))
    console, out = plain_console()
    progress = Progress(progress_view(run), console=console)
    with progress:
        result = asyncio.run(execute(run, on_event=progress))
        assert out.getvalue() == ""  # no line per cell
        progress.note("stopping: nothing new is sent")
    assert out.getvalue() == "stopping: nothing new is sent\n"
    passed = sum(1 for outcome in EXPECTED.values() if outcome == "passed")
    for spec in ("openai-compatible:m1", "openai-compatible:m2"):
        tally = progress.groups[spec]
        assert (tally.done, tally.passed, tally.errors) == (len(EXPECTED), passed, 0), spec
        assert sum(1 for c in result.cells if c["target"] == spec and c["status"] == "passed") == passed
        assert re.search(rf"{re.escape(spec)}\s+5/5\s+[\d.]+\s+{passed}\s+0\s+done", panel_text(progress))
    assert progress.all.done == 2 * len(EXPECTED)


def test_a_dataset_target_not_done_shows_its_eta():
    from harness.cli.dataset_view import progress_view
    from harness.datasets.lines import dataset_cell

    target = SimpleNamespace(spec="openai:m")
    run = SimpleNamespace(cells=[SimpleNamespace(target=target)] * 4)
    progress = Progress(progress_view(run), console=plain_console()[0])
    assert re.search(r"openai:m\s+0/4\s+0\.0\s+0\s+0\s+\?", panel_text(progress))  # nothing done: no pace yet
    progress.started -= 30.0
    line = {"test_id": "q1", "target": "openai:m", "repeat": 0, "status": "error"}
    progress(Event("done", key="c1", result=dataset_cell(line)))
    assert re.search(r"openai:m\s+1/4\s+0\.0\s+0\s+1\s+1m30s", panel_text(progress))


# --------------------------------------------------------------------------- a fleet


def cell_result(key: str, state: str, error: str | None = None):
    from harness.fleet.execute import CellResult

    return CellResult(cell=SimpleNamespace(key=key), state=state, error=error)


def test_a_fleet_prints_failed_cells_and_counts_cells_and_tests():
    from harness.cli.fleet_cmd import fleet_view
    from harness.scenarios.lines import scenario_cell

    console, out = plain_console()
    progress = Progress(fleet_view(6), console=console, total=4)
    with progress:
        progress(Event("plan", total=4, done=1))  # one cell completed by an earlier invocation
        for key in ("a", "b", "c"):
            progress(Event("start", key=key, cell=SimpleNamespace(key=key)))
        for _ in range(3):
            progress(Event("sample", key="a", result=scenario_cell(
                {"scenario": "s", "tier_asked": "L1", "iteration": 0, "status": "completed", "is_successful": True})))
        assert re.search(r"cells 1/4   tests 3/6   [\d.]+/s   failed cells 0   ETA \d+s", panel_text(progress))
        assert "  running a\n  running b\n  running c\n" in panel_text(progress)
        progress(Event("done", key="a", result=cell_result("a", "completed")))
        progress(Event("done", key="b", result=cell_result("b", "failed", "clone failed: no such repository")))
        progress(Event("done", key="c", result=cell_result("c", "interrupted")))
        text = panel_text(progress)
    assert out.getvalue() == "cell failed: b: clone failed: no such repository\n"
    assert "cells 3/4   tests 3/6" in text and "failed cells 1" in text  # the interrupted cell is not done
    assert "running" not in text


# --------------------------------------------------------------------------- a load test


def test_a_load_test_prints_a_line_per_step_and_shows_the_step_in_progress():
    from harness.cli.stress_view import stress_headline, stress_view
    from harness.stress import StressOptions, prepare
    from support.stub_model import make_stub

    server, url, _ = make_stub(service_s=0.01)
    try:
        test = prepare(StressOptions(provider="openai", model="stub", base_url=url, profile="ramp",
                                     max_concurrency=2, step_requests=4, stream=False))
        console, out = plain_console()
        progress = Progress(stress_view(test), console=console)
        during: list[str] = []

        def watch(event: Event) -> None:
            progress(event)
            if event.kind == "sample" and event.key == "c=1" and progress.running.get("c=1") and \
                    progress.running["c=1"].ok == 2:
                during.append(panel_text(progress))

        test.on_event = watch
        assert stress_headline(test).startswith("Stress test openai-compatible:stub, profile ramp: 2 step(s) "
                                                "(c=1 … c=2), 4 requests each, not streamed")
        assert panel_text(progress) == ""  # before the first step
        with progress:
            result = asyncio.run(test.run())
    finally:
        server.shutdown()
        server.server_close()
    assert result.record.status == "completed"
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    for number, line in enumerate(lines, 1):
        assert re.fullmatch(rf"step {number}/2 c={number}: 4 sent, 4 ok, [\d.,]+ ok/s, p50 [\d,]+ ms, "
                            r"p95 [\d,]+ ms, errors -", line), line
    (panel,) = during
    assert re.search(r"step 1/2 c=1 .*\d/4 sent; 2 ok, 0 failed, \d in flight, p50 [\d,]+ ms", panel), panel
    assert progress.samples == 8 and progress.all.done == 2 and progress.total == 2
    assert panel_text(progress) == ""  # every step done


# --------------------------------------------------------------------------- on a terminal


def test_on_a_terminal_the_panel_is_drawn_and_the_lines_go_above_it():
    from harness.cli.fleet_cmd import fleet_view

    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True)
    progress = Progress(fleet_view(2), console=console, total=2)
    with progress:
        assert progress.live is not None
        progress(Event("start", key="repo/openai:m/qa", cell=None))
        progress.live.refresh()
        progress(Event("done", key="repo/openai:m/qa", result=cell_result("repo/openai:m/qa", "failed", "boom")))
        progress.note("stopping: nothing new starts")
    assert progress.live is None
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # the terminal's control sequences
    assert "running repo/openai:m/qa" in text and "cells 0/2   tests 0/2" in text
    assert "cell failed: repo/openai:m/qa: boom" in text and "stopping: nothing new starts" in text
