"""Run a dataset against several models at once (``bench dataset``), with results that survive.

A run is a list of cells: (test case, target, repeat), planned by
:func:`harness.datasets.planning.prepare` (the options, the cells, ``--resume``, the estimate). The
cells go through the async request engine (:mod:`harness.models.engine`); each answer is graded by the
case's assertions and appended at once, as one JSON line, to ``results.jsonl`` in the output
directory (:mod:`harness.datasets.recording`, :mod:`harness.results_log`; each line is
flushed as it is written, so a killed process loses at most the requests in flight).
``run.json`` beside it records what was asked, so ``--resume DIR`` runs exactly the cells with
no line yet, and ``--retry-errors`` redoes those whose last line is an error.

At the end (:func:`finish`) ``results.json``, ``results.csv`` and ``summary.json`` are written
from the last line of every cell (JUnit XML when asked), and
:func:`harness.datasets.storing.store` stores every cell in the results store as a run of one batch
(the run's batch id), so ``bench batch``, ``bench compare``, leaderboards and the dashboard read
it like any other batch. This module sends and finishes a run; the names of the modules above
are imported from those modules.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from harness._util.clock import now_iso
from harness._util.files import write_text_atomic
from harness.datasets.exports import summary_text, write_csv, write_json
from harness.datasets.summary import summarize
from harness.datasets.assertions import needs_judge
from harness.datasets.planning import META_FILE, DatasetResult, DatasetRun, build_request
from harness.datasets.recording import CellRecorder
from harness.datasets.lines import latest_by_key
from harness.results_log import RESULTS_FILE, ResultsLog, read_results, sync_file
from harness.datasets.rubric_judge import make_judge
from harness.models.engine import Engine, EngineOptions, Job
from harness.events import OnEvent


def resolve_rubric_judge(run: DatasetRun) -> tuple[Any, str, str]:
    """(judge callable or None, the reason it is skipped, identity for config_hash)."""
    if not any(needs_judge(p.case) for p in run.cells):
        return None, "no llm-rubric assertion", "none"
    from types import SimpleNamespace

    from harness.grading.evaluators.llm_judge import JudgeChoice, resolve_judge

    choice = run.options.judge or JudgeChoice()
    resolved = resolve_judge(SimpleNamespace(enabled=True, model=None, provider=None), choice)
    run.judge_note = resolved.describe()
    if resolved.skip_reason is not None:
        return None, f"judge skipped: {resolved.skip_reason}", "none"
    from harness.datasets.assertion_types import JudgeError

    try:
        return make_judge(resolved, use_cache=run.options.cache == "replay"), "", resolved.identity
    except JudgeError as exc:
        run.judge_note = f"judge skipped: {exc}"
        return None, f"judge skipped: {exc}", "none"


@dataclass
class Sent:
    """What :func:`send` did: the requests sent, whether it was stopped, and this send's errors."""

    sent: int
    elapsed_s: float
    interrupted: bool
    errors: int = 0
    first_error: str | None = None  # "<test id>: <error>" of the first cell that ended in error


async def execute(run: DatasetRun, *, on_event: OnEvent | None = None,
                  engine: Engine | None = None, control: Any = None) -> DatasetResult:
    """:func:`send`, then :func:`finish` (in a worker thread, so an event loop shared with
    other runs goes on with their requests)."""
    done = await send(run, on_event=on_event, engine=engine, control=control)
    return await asyncio.to_thread(finish, run, interrupted=done.interrupted, sent=done.sent,
                                   elapsed_s=done.elapsed_s)


@dataclass
class Opening:
    """What :func:`send` sets up before its first request (see :func:`open_send`)."""

    log: ResultsLog
    judge: Any
    judge_skip: str
    jobs: list[Job]

    def close(self) -> None:
        """Close the results log of an opening that is not sent after all."""
        self.log.close(sync=False)


def open_send(run: DatasetRun) -> Opening:
    """The part of :func:`send` before its first request: the output directory and run.json,
    the judge, the results log (what results.jsonl holds already is kept) and the jobs. Safe in
    a worker thread: a fleet opens a cell while the cells before it still send."""
    run.output_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run.output_dir / META_FILE, json.dumps(run.meta, indent=2, sort_keys=True) + "\n")
    judge, judge_skip, _ = resolve_rubric_judge(run)
    _, keep = read_results(run.output_dir / RESULTS_FILE)
    log = ResultsLog(run.output_dir / RESULTS_FILE, keep)
    timeout_s = run.options.timeout_s
    jobs = [Job(p.target, build_request(p.case, p.target, timeout_s), p.repeat, p) for p in run.cells]
    return Opening(log, judge, judge_skip, jobs)


async def send(run: DatasetRun, *, on_event: OnEvent | None = None,
               engine: Engine | None = None, control: Any = None, opening: Opening | None = None) -> Sent:
    """Send the run's cells and append each finished one to results.jsonl (each line flushed
    as it is written; :func:`finish` syncs the file). ``control`` (an object with
    ``stopping``/``aborting`` flags, e.g. :class:`harness.control.BatchControl`) is polled to
    stop early; the cells finished so far are kept. A given ``engine`` (a fleet's, shared by
    several runs) is left open, and this run keeps to its own ``concurrency`` and ``pace_s``
    within it. ``opening``: the run's :func:`open_send`, when done beforehand. ``on_event`` is
    told each cell once it is on disk (a ``done`` :class:`~harness.events.Event`, ``result`` the
    line of results.jsonl)."""
    if opening is None:
        opening = open_send(run)
    log, jobs = opening.log, opening.jobs
    recorder = CellRecorder(run, log, opening.judge, opening.judge_skip, on_event)
    opts = run.options
    owned = engine is None
    engine = engine or Engine(EngineOptions(concurrency=opts.concurrency, provider_limits=opts.provider_limits,
                                            max_attempts=opts.max_attempts, timeout_s=opts.timeout_s,
                                            stream=opts.stream, use_cache=opts.cache == "replay",
                                            record=opts.cache == "replay"))
    started = time.monotonic()
    watcher = None
    if control is not None:
        async def watch() -> None:
            while True:
                await asyncio.sleep(0.1)
                if getattr(control, "aborted", False):
                    engine.abort()
                    return
                if getattr(control, "stopping", False) and not engine.stopping:
                    engine.stop()
        watcher = asyncio.ensure_future(watch())
    interrupted = False
    try:
        try:
            await engine.run(jobs, recorder, concurrency=None if owned else opts.concurrency, pace_s=opts.pace_s)
        except asyncio.CancelledError:
            interrupted = True
        interrupted = interrupted or engine.stopping
    finally:
        if watcher is not None:
            watcher.cancel()
        try:
            recorder.drain()
        finally:
            log.close(sync=False)
        if owned:
            await engine.aclose()
    return Sent(len(jobs), time.monotonic() - started, interrupted, recorder.errors, recorder.first_error)


def finish(run: DatasetRun, *, interrupted: bool = False, sent: int = 0, elapsed_s: float = 0.0) -> DatasetResult:
    """Sync results.jsonl, then write results.json, results.csv and summary.json from it (the
    last line of every cell of this run)."""
    sync_file(run.output_dir / RESULTS_FILE)
    cells_all, _ = read_results(run.output_dir / RESULTS_FILE)
    latest = latest_by_key(cells_all)
    targets = [t.spec for t in run.targets]
    cells = [c for c in latest.values() if c["target"] in targets]
    summary = summarize(cells, targets=targets)
    meta = dict(run.meta)
    meta.update({"interrupted": interrupted, "finishedAt": now_iso(), "cells": len(cells), "planned": run.planned})
    text = summary_text(summary)  # dumped once, for both files
    write_json(run.output_dir / "results.json", cells, text, meta)
    write_csv(run.output_dir / "results.csv", cells)
    write_text_atomic(run.output_dir / "summary.json", text + "\n")
    return DatasetResult(run, cells, summary, interrupted=interrupted, sent=sent, elapsed_s=elapsed_s)
