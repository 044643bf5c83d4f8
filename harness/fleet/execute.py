"""The one fleet executor: run a prepared fleet run directory's cells, keep its status file and
cells log, and write the artifacts.

The run directory and its files are those of :mod:`harness.fleet.run_files`; the cells come
from :mod:`harness.fleet.planning`. Dataset cells send their requests through one shared
:class:`~harness.models.engine.Engine` (one event loop, one client per provider, one AIMD limit per
provider); suite cells run the scenario runner in a worker thread. Up to ``parallel_cells``
cells run at once; without a plan given, the run plans the repositories one at a time
(:class:`~harness.fleet.planning.FleetPlanner`) while the first cells already run, and writes
the totals into ``status.json`` once the plan is whole. A cell is recorded in ``cells.jsonl``
only once its files are written and its runs stored. Killing the process loses at most the
answers in flight: ``resume`` re-plans the same cells, skips the completed ones, and completes
the others from their ``results.jsonl``; which cells and which runs of a suite cell run again
is the one resume rule of :mod:`harness.cells` (:func:`recorded_entry` for a fleet's cells; each
line of a suite cell's results log read by :func:`harness.scenarios.lines.scenario_cell`). Every
test a cell finishes is reported as a ``sample`` :class:`~harness.events.Event` whose ``result``
is its :class:`~harness.cells.CellRecord`.

"""

from __future__ import annotations

import collections
import json
import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._util.clock import now_iso
from harness.cells import CellRecord, Recorded, decide, latest
from harness.events import Event, OnEvent
from harness.fleet.cells import CELL_RESULTS, FleetCell, cell_tests
from harness.fleet.manifest import DEFAULT_TIMEOUT_S, agent_for, suites_dir_for
from harness.fleet.planning import FleetPlan, FleetPlanner
from harness.fleet.run_files import CELLS_FILE, STATUS_FILE, read_cells_log, write_status, write_suite_outputs
from harness.results_log import ResultsLog, read_results
from harness.scenarios.lines import scenario_cell, scenario_line
# Called through this module's name, which benchmarks/fleet_overhead.py wraps to time it.
from harness.fleet.run_files import write_dataset_responses as _write_dataset_responses

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # asyncio is imported by a running fleet only: a plan or a check needs none
    import asyncio


DEFAULT_CONCURRENCY = 32
DEFAULT_PARALLEL_CELLS = 4


def recorded_entry(entry: dict[str, Any]) -> Recorded:
    """What a ``cells.jsonl`` entry says of its fleet cell for the resume rule
    (:mod:`harness.cells`): any state but ``completed`` is retried."""
    state = entry.get("state")
    return Recorded(entry["key"], state, state != "completed")


@dataclass
class CellResult:
    cell: FleetCell
    state: str  # completed | failed | interrupted
    error: str | None = None
    tests: int = 0
    errors: int = 0
    # The cell's runs being stored in the background: the cell is recorded in cells.jsonl only
    # once they are, so a process killed before that leaves the cell to be redone by resume.
    storing: "asyncio.Future[Any] | None" = None


class FleetExecution:
    """Runs a prepared fleet directory; see the module docstring."""

    def __init__(self, run_dir: Path, plan: FleetPlan, run_id: str, *, client: Any = None,
                 control: Any = None, concurrency: int = DEFAULT_CONCURRENCY,
                 parallel_cells: int = DEFAULT_PARALLEL_CELLS,
                 on_event: OnEvent | None = None,
                 planner: FleetPlanner | None = None) -> None:
        """``plan``: every cell, or, with ``planner``, ``planner.plan`` as planned so far: the
        run then plans the remaining repositories while the first cells run, and its
        ``start`` event (with the totals) comes once the plan is whole."""
        from harness.control import BatchControl

        self.run_dir = run_dir
        self.plan = plan
        self.planner = planner
        self.manifest = plan.manifest
        self.run_id = run_id
        self.client = client
        self.control = control or BatchControl()
        self.concurrency = concurrency
        self.parallel_cells = max(1, parallel_cells)
        self.on_event = on_event
        self.done_log = read_cells_log(run_dir)
        self.failed: CellResult | None = None
        self.tests_done = 0
        self.cells_done = 0
        self._last_status = 0.0
        self._recording: list[asyncio.Task[None]] = []
        self.tests_of: dict[str, list[dict[str, Any]]] = {}  # cell key -> its tests, once finished here
        self.started = time.monotonic()

    # -- events and status --------------------------------------------------------------------
    def _event(self, event: Event) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # noqa: BLE001 - a display's bug never stops the fleet
                log.exception("fleet: the %s event handler failed", event.kind)

    def _status(self, force: bool = False, **fields: Any) -> None:
        now = time.monotonic()
        if not force and now - self._last_status < 1.0:
            return
        self._last_status = now
        write_status(self.run_dir, cells_done=self.cells_done, tests_done=self.tests_done, **fields)

    def _test_done(self, cell: FleetCell, test: CellRecord) -> None:
        self.tests_done += 1
        self._event(Event("sample", key=cell.key, cell=cell, result=test))
        self._status()

    def _watch(self, cell: FleetCell) -> OnEvent:
        """The watcher of the engine that runs ``cell``: each of its finished cells is a test."""

        def on_event(event: Event) -> None:
            if event.kind == "done":
                self._test_done(cell, event.result)

        return on_event

    def _metadata(self, cell: FleetCell) -> dict[str, Any]:
        meta: dict[str, Any] = {"fleet": {"runId": self.run_id, "fleetId": self.manifest.fleet_id,
                                          "repoId": cell.repo.repo_id, "profile": cell.profile.name,
                                          "adapter": cell.repo.adapter}}
        if cell.repo.metadata:
            meta["fleet"]["repoMetadata"] = cell.repo.metadata
        if self.manifest.custom:
            meta["fleet"]["custom"] = self.manifest.custom
        return meta

    # -- one cell ---------------------------------------------------------------------------------
    def _open_dataset_cell(self, cell: FleetCell) -> tuple[Any, Any]:
        """A dataset cell's run, prepared, and its sending opened (directory, run.json, results
        log, requests): what comes before its first request. Safe in a worker thread."""
        from harness.datasets.planning import DatasetRunOptions, prepare
        from harness.datasets.run import open_send

        directory = self.run_dir / cell.relative_dir
        profile = cell.profile
        resuming = (directory / "run.json").is_file()
        options = DatasetRunOptions(
            dataset=cell.lookup.ref if cell.lookup else None, targets=[cell.target], output_dir=directory,
            concurrency=profile.concurrency,
            timeout_s=self.manifest.test_timeout_s or DEFAULT_TIMEOUT_S,
            max_attempts=self.manifest.max_attempts, save_responses=self.manifest.save_responses,
            resume=resuming, retry_errors=resuming, batch_id=self.run_id,
            sample=profile.num_examples, seed=self.manifest.random_seed, settings=profile.settings,
            pace_s=profile.request_delay_ms / 1000.0, metadata=self._metadata(cell),
            loaded=self.plan.datasets.get(cell.lookup.ref) if self.plan.datasets and cell.lookup else None)
        run = prepare(options)
        return run, open_send(run)

    async def _dataset_cell(self, cell: FleetCell, engine: Any, opened: Any = None) -> CellResult:
        import asyncio
        from harness.datasets.run import finish, send
        from harness.datasets.storing import store

        directory = self.run_dir / cell.relative_dir
        run, opening = await opened if opened is not None else self._open_dataset_cell(cell)
        sent = await send(run, on_event=self._watch(cell), engine=engine, control=self.control, opening=opening)
        save, client = self.manifest.save_responses, self.client

        def keep() -> Any:
            result = finish(run, interrupted=sent.interrupted, sent=sent.sent, elapsed_s=sent.elapsed_s)
            self.tests_of[cell.key] = cell_tests(cell, self.run_dir, result.cells)  # for the fleet's results
            if save:
                _write_dataset_responses(directory, result.cells)
            if client is not None:
                store(result, client, "none", None, post_batch=False)
            return result

        # The cell's files are written and its runs stored in a worker thread while the slot
        # goes on to its next cell; the cell is recorded in cells.jsonl only once that is done.
        if sent.interrupted:
            outcome = CellResult(cell, "interrupted")
        elif sent.errors:
            outcome = CellResult(cell, "failed", f"{sent.errors} request(s) failed; first: {sent.first_error}")
        else:
            outcome = CellResult(cell, "completed")
        outcome.storing = asyncio.ensure_future(asyncio.to_thread(keep))
        return outcome

    @staticmethod
    def _dataset_outcome(cell: FleetCell, result: Any) -> CellResult:
        """A dataset cell's state from all its results (those of an earlier attempt too)."""
        errors = [c for c in result.cells if c.get("status") == "error"]
        if result.interrupted:
            return CellResult(cell, "interrupted", tests=len(result.cells), errors=len(errors))
        if errors:
            first = errors[0]
            return CellResult(cell, "failed", f"{len(errors)} request(s) failed; first: {first.get('test_id')}: "
                                              f"{first.get('error')}", len(result.cells), len(errors))
        return CellResult(cell, "completed", tests=len(result.cells))

    def _suite_cell(self, cell: FleetCell) -> CellResult:
        """Run a suite cell with the scenario runner (called in a worker thread)."""
        from harness.scenarios.plan import AgentChoice, build_plan, select_scenarios
        from harness.scenarios.runner import RunOptions, prepare_plan, run_plan

        directory = self.run_dir / cell.relative_dir
        directory.mkdir(parents=True, exist_ok=True)
        log_path = directory / CELL_RESULTS
        previous, keep = read_results(log_path)
        stored = latest(scenario_cell(p).recorded() for p in previous)
        profile = cell.profile
        scenarios = select_scenarios(suites_dir_for(cell.repo), [profile.suite or ""], list(profile.scenarios))
        agent, agent_options = agent_for(cell.target)
        if "temperature" in profile.settings:
            agent_options["temperature"] = profile.settings["temperature"]
        plan = build_plan(scenarios, [profile.tier], [AgentChoice(agent, cell.target.model)], profile.iterations,
                          self.run_id)
        slots = [(group, i) for group in plan.groups for i in group.iterations]
        to_run = decide(slots, lambda slot: (slot[0].scenario.name, profile.tier, slot[1]), stored, retry=True).run
        for group in plan.groups:
            group.iterations = [i for g, i in to_run if g is group]
        timeout_minutes = self.manifest.test_timeout_s / 60.0 if self.manifest.test_timeout_s else None
        from harness.grading.evaluators.llm_judge import JudgeChoice

        options = RunOptions(agent=agent, model=cell.target.model, metadata=self._metadata(cell),
                             agent_options=agent_options, timeout_minutes=timeout_minutes, control=self.control,
                             judge=JudgeChoice.parse(self.manifest.judge))
        kind = prepare_plan(plan, options, None)
        log = ResultsLog(log_path, keep)

        def progress(event: Event) -> None:
            if event.kind != "done" or event.result is None:
                return
            assert event.iteration is not None  # a finished run names its iteration
            done = scenario_cell(scenario_line(event.result, iteration=event.iteration, tier_asked=profile.tier,
                                               save_responses=self.manifest.save_responses))
            log.append(done)
            self._test_done(cell, done)

        try:
            outcome = run_plan(plan, replace(options, sandbox=kind), self.client, progress)
        finally:
            log.close()
        lines, _ = read_results(log_path)
        write_suite_outputs(directory, lines, self.manifest.save_responses)
        tests = cell_tests(cell, self.run_dir)
        errors = sum(1 for t in tests if t["error"])
        if outcome.interrupted:
            return CellResult(cell, "interrupted", tests=len(tests), errors=errors)
        if outcome.preflight_error:
            return CellResult(cell, "failed", outcome.preflight_error, len(tests), errors)
        if errors:
            return CellResult(cell, "failed", f"{errors} scenario run(s) ended in error", len(tests), errors)
        return CellResult(cell, "completed", tests=len(tests))

    async def _run_cell(self, cell: FleetCell, engine: Any, opened: Any = None) -> CellResult:
        """Run ``cell`` (``opened``: a future of its :meth:`_open_dataset_cell`, when opened ahead)."""
        import asyncio

        self._event(Event("start", key=cell.key, cell=cell))
        if cell.problem:
            return CellResult(cell, "failed", cell.problem)
        try:
            if cell.kind == "suite":
                return await asyncio.to_thread(self._suite_cell, cell)
            return await self._dataset_cell(cell, engine, opened)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded as the cell's failure
            return CellResult(cell, "failed", f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _entry(result: CellResult) -> dict[str, Any]:
        """The line of ``cells.jsonl`` that records a cell's end."""
        return {"key": result.cell.key, "state": result.state, "error": result.error, "tests": result.tests,
                "errors": result.errors, "finished_at": now_iso()}

    def _append_entry(self, entry: dict[str, Any]) -> None:
        """Append ``entry`` to ``cells.jsonl`` and sync it (safe from a worker thread: one write)."""
        with open(self.run_dir / CELLS_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    # -- the fleet --------------------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        """Run every cell not completed yet, then write the artifacts; the fleet results."""
        import asyncio
        from harness.models.engine import Engine, EngineOptions

        queue: collections.deque[FleetCell] = collections.deque()
        todo = 0

        def add(cells: list[FleetCell]) -> None:
            nonlocal todo
            stored = {c.key: recorded_entry(self.done_log[c.key]) for c in cells if c.key in self.done_log}
            decision = decide(cells, lambda c: c.key, stored, retry=True)
            self.cells_done += decision.done
            queue.extend(decision.run)
            todo += len(decision.run)

        def started() -> None:
            self._status(True, state="running", pid=os.getpid(), cells_total=len(self.plan.cells),
                         tests_total=self.plan.planned_tests)
            self._event(Event("plan", total=len(self.plan.cells), done=len(self.plan.cells) - todo))

        add(self.plan.cells)
        planning: asyncio.Future[None] | None = None
        more = asyncio.Event()  # set when the planner has added cells, or has ended
        if self.planner is not None and not self.planner.done:
            planner = self.planner

            async def plan_the_rest() -> None:
                # One repository at a time, the loop sending and receiving in between; a clone
                # (a subprocess to wait for) in a worker thread.
                try:
                    while True:
                        add(await asyncio.to_thread(planner.step) if planner.next_clones else planner.step())
                        more.set()
                        if planner.done:
                            break
                        await asyncio.sleep(0)
                    started()
                finally:
                    more.set()

            planning = asyncio.ensure_future(plan_the_rest())
        else:
            started()
        engine = Engine(EngineOptions(concurrency=self.concurrency, max_attempts=self.manifest.max_attempts,
                                      timeout_s=self.manifest.test_timeout_s or DEFAULT_TIMEOUT_S))

        slots = self.parallel_cells if planning is not None else min(self.parallel_cells, todo) or 1
        # Up to one dataset cell per slot is opened ahead, in a worker thread, while the cells
        # before it send: when a slot is free, its next cell's first request goes out at once.
        ready: collections.deque[tuple[FleetCell, Any]] = collections.deque()

        def open_ahead() -> None:
            while len(ready) < slots and queue and queue[0].kind == "dataset" and not queue[0].problem:
                cell = queue.popleft()
                ready.append((cell, asyncio.ensure_future(asyncio.to_thread(self._open_dataset_cell, cell))))

        async def worker() -> None:
            while not self.control.stopping:
                opened = None
                if ready:
                    cell, opened = ready.popleft()
                elif queue:
                    cell = queue.popleft()
                else:
                    if planning is None or planning.done():
                        return
                    more.clear()
                    await more.wait()
                    continue
                open_ahead()
                result = await self._run_cell(cell, engine, opened)
                self._stop_if_failed(result, engine)  # at once, not when its runs are stored
                if result.storing is not None:
                    self._recording.append(asyncio.ensure_future(self._record_when_stored(result, engine)))
                else:
                    self._cell_ended(result, engine)

        try:
            await asyncio.gather(*(worker() for _ in range(slots)))
        finally:
            # Cells opened ahead but not run (the fleet stopped): their results logs are closed;
            # resume runs them. The clients close while the last cells are stored and recorded.
            await asyncio.gather(engine.aclose(), *self._recording, *(self._close_opened(f) for _, f in ready),
                                 return_exceptions=True)
            if planning is not None:
                await planning  # the whole plan, for the results (a stopped fleet's cells are skipped)
        state = "completed"
        reason = None
        if self.failed is not None:
            state = "failed"
            reason = (f"stopped at the first failed cell ({self.failed.cell.key}: {self.failed.error}); "
                      "continue_on_failure is false")
        elif self.control.stopping:
            state = "interrupted"
            reason = "interrupted; bench fleet resume RUN_ID completes it"
        elif any(self.done_log.get(c.key, {}).get("state") == "failed" for c in self.plan.cells):
            state = "failed"
            failed = sum(1 for c in self.plan.cells if self.done_log.get(c.key, {}).get("state") == "failed")
            reason = f"{failed} cell(s) failed (continue_on_failure is true: the others ran)"
        # The fleet's batch is stored in a worker thread while the artifacts are written here.
        posting = (asyncio.get_running_loop().run_in_executor(None, self._post_batch, state)
                   if self.client is not None else None)
        results = self.finish(state, reason)
        if posting is not None and (problem := await posting):
            results.setdefault("store_errors", []).append(problem)
        self._status(True, state=state, stopped_reason=reason, completed_at=results.get("completed_at"))
        self._event(Event("end", result={"state": state, "reason": reason, "results": results}))
        return results

    @staticmethod
    async def _close_opened(opened: Any) -> None:
        _, opening = await opened
        opening.close()

    async def _record_when_stored(self, result: CellResult, engine: Any) -> None:
        """Record a cell once its runs are stored. A cell whose runs could not all be stored
        becomes failed (its results.jsonl keeps them; resume stores them again)."""
        import asyncio
        assert result.storing is not None
        try:
            kept = await result.storing
            result = self._dataset_outcome(result.cell, kept)
            problems = list(kept.store_errors)
        except Exception as exc:  # noqa: BLE001 - becomes the cell's failure
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems and result.state == "completed":
            result = CellResult(result.cell, "failed", f"not stored: {problems[0]}", result.tests, result.errors)
        entry = None
        if result.state != "interrupted":  # written off the event loop, which goes on sending
            entry = self._entry(result)
            await asyncio.to_thread(self._append_entry, entry)
        self._cell_ended(result, engine, entry)

    def _cell_ended(self, result: CellResult, engine: Any, entry: dict[str, Any] | None = None) -> None:
        """Bookkeeping of a cell's end; ``entry`` is its cells.jsonl line when already written."""
        if result.state != "interrupted":
            if entry is None:
                entry = self._entry(result)
                self._append_entry(entry)
            self.done_log[result.cell.key] = entry
            self.cells_done += 1
        self._event(Event("done", key=result.cell.key, cell=result.cell, result=result))
        self._status()  # at most once a second; the fleet's end writes the final one
        self._stop_if_failed(result, engine)

    def _stop_if_failed(self, result: CellResult, engine: Any) -> None:
        """Stop the fleet at the first failed cell unless continue_on_failure."""
        if result.state == "failed" and not self.manifest.continue_on_failure and self.failed is None:
            self.failed = result
            self.control.interrupt()
            engine.stop()

    def finish(self, state: str, reason: str | None) -> dict[str, Any]:
        from harness.fleet.artifacts import build_results, write_artifacts

        status = json.loads((self.run_dir / STATUS_FILE).read_text(encoding="utf-8"))
        results = build_results(self.plan, self.run_dir, self.run_id, self.done_log, state=state, reason=reason,
                                started_at=status.get("started_at"), completed_at=now_iso(),
                                tests_of=self.tests_of)
        write_artifacts(self.manifest, self.run_dir, results)
        return results

    def _post_batch(self, state: str) -> str | None:
        """Store the fleet's batch; what went wrong, or None."""
        from harness.results.records import batch_record

        meta = {"kind": "fleet", "fleetId": self.manifest.fleet_id, "runId": self.run_id,
                "manifestHash": self.manifest.hash, "description": self.manifest.description,
                "state": state, "outputDir": str(self.run_dir),
                "repositories": [r.repo_id for r in self.manifest.repositories],
                "providers": [t.spec for t in self.manifest.targets],
                "profiles": sorted(self.manifest.profiles)}
        if self.manifest.custom:
            meta["custom"] = self.manifest.custom
        now = int(time.time() * 1000)
        try:
            self.client.post_batch(batch_record(self.run_id, [], now, now, meta))
        except Exception as exc:  # noqa: BLE001 - the runs are stored; said in the results
            return f"batch {self.run_id}: {type(exc).__name__}: {exc}"
        return None
