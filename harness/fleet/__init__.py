"""Fleet benchmarks: one manifest runs repositories × providers × scenario profiles.

The Python API (importable without the CLI)::

    from harness import fleet

    handle = fleet.start("fleet.yaml")          # returns at once; the fleet runs in its own process
    print(handle.run_id, handle.run_dir)
    fleet.status(handle.run_id)                 # {"state": "running", "cells_done": 3, ...}
    results = fleet.wait(handle.run_id)         # the fleet-results.json dict, when it has ended
    for current in fleet.follow(handle.run_id): # its status each time it changes, until it ends
        print(current["state"], current["tests_done"])

:func:`run` runs a fleet in the calling process instead (what ``bench fleet --wait`` does),
and :func:`resume` completes a run that was stopped or killed. docs/fleets.md is the guide.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._util.clock import now_iso
from harness._util.files import write_json_atomic
from harness.events import OnEvent
from harness.fleet.execute import DEFAULT_CONCURRENCY, DEFAULT_PARALLEL_CELLS, FleetExecution
from harness.fleet.planning import FleetPlan, FleetPlanner, plan_fleet
from harness.fleet.run_files import (MANIFEST_FILE, RESULTS_FILE, STATUS_FILE, TERMINAL_STATES, load_run_manifest,
                                     write_status)
from harness.fleet.manifest import Manifest, ManifestError, load_manifest, run_id_for
from harness._util.gc_tuning import fewer_collections

__all__ = ["FleetError", "FleetHandle", "ManifestError", "Manifest", "load_manifest", "plan_fleet", "start", "run",
           "resume", "status", "wait", "follow", "list_runs", "find_run", "create_run"]


class FleetError(RuntimeError):
    """A fleet that cannot start, or a run id that names no run."""


@dataclass(frozen=True)
class FleetHandle:
    """What :func:`start` returns at once: the run id, its artifact directory, the process."""

    run_id: str
    run_dir: Path
    pid: int | None = None


# --------------------------------------------------------------------------- the run index


def _index_dir() -> Path:
    from harness._util.places import default_cache_dir

    return default_cache_dir() / "fleet-runs"


def _remember(run_id: str, run_dir: Path) -> None:
    directory = _index_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_json_atomic(directory / f"{run_id}.json", {"run_id": run_id, "run_dir": str(run_dir)})
    except OSError:
        pass  # the index only finds runs by id; a run directory works without it


def find_run(run_id: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory of run ``run_id``: a run directory given as a path, ``base_dir/run_id``,
    or the one the index of started runs remembers. FleetError when there is none."""
    text = os.fspath(run_id)
    direct = Path(text)
    if (direct / MANIFEST_FILE).is_file():
        return direct.resolve()
    if base_dir is not None and (Path(base_dir) / text / MANIFEST_FILE).is_file():
        return (Path(base_dir) / text).resolve()
    entry = _index_dir() / f"{text}.json"
    try:
        run_dir = Path(json.loads(entry.read_text(encoding="utf-8"))["run_dir"])
    except (OSError, ValueError, KeyError):
        run_dir = None
    if run_dir is not None and (run_dir / MANIFEST_FILE).is_file():
        return run_dir
    where = f" or in {base_dir}" if base_dir is not None else ""
    raise FleetError(f"no fleet run {text!r} (not a run directory, not among the runs started here{where}; "
                     "bench fleet list shows them)")


def list_runs(base_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Every run the index remembers (and every run directory in ``base_dir``), newest first,
    each with its status."""
    dirs: dict[str, Path] = {}
    index = _index_dir()
    if index.is_dir():
        for entry in index.glob("*.json"):
            try:
                path = Path(json.loads(entry.read_text(encoding="utf-8"))["run_dir"])
            except (OSError, ValueError, KeyError):
                continue
            if (path / MANIFEST_FILE).is_file():
                dirs[str(path.resolve())] = path
    if base_dir is not None and Path(base_dir).is_dir():
        for path in Path(base_dir).iterdir():
            if (path / MANIFEST_FILE).is_file():
                dirs[str(path.resolve())] = path
    out = [status(path) for path in dirs.values()]
    return sorted(out, key=lambda s: (s.get("started_at") or "", s.get("run_id") or ""), reverse=True)


# --------------------------------------------------------------------------- creating and running


def _manifest_of(manifest: Manifest | str | os.PathLike[str], base_url: str | None = None) -> Manifest:
    return manifest if isinstance(manifest, Manifest) else load_manifest(manifest, base_url=base_url)


def create_run(manifest: Manifest, *, output: str | os.PathLike[str] | None = None,
               worker_url: str | None = None, db_path: str | None = None, store: bool = True,
               concurrency: int = DEFAULT_CONCURRENCY, parallel_cells: int = DEFAULT_PARALLEL_CELLS) -> tuple[str, Path]:
    """Make the run directory (``<base_dir>/<run_id>``, ``output`` replacing the manifest's
    base_dir) with its manifest.json and status.json; (run id, directory)."""
    base = Path(output).resolve() if output is not None else manifest.base_dir
    base.mkdir(parents=True, exist_ok=True)
    while True:
        run_id = run_id_for(manifest, _dt.datetime.now(_dt.timezone.utc))
        run_dir = base / run_id
        try:
            run_dir.mkdir()
            break
        except FileExistsError:  # the same manifest started twice in one second
            time.sleep(0.2)
    saved = {"run_id": run_id, "manifest": manifest.normalized, "manifest_hash": manifest.hash,
             "source": manifest.source, "root": str(manifest.root), "created_at": now_iso(),
             "execution": {"concurrency": concurrency, "parallel_cells": parallel_cells, "store": store,
                           "worker_url": worker_url,
                           "db_path": os.path.abspath(db_path) if db_path else None}}
    write_json_atomic(run_dir / MANIFEST_FILE, saved)
    write_status(run_dir, run_id=run_id, fleet_id=manifest.fleet_id, state="queued", run_dir=str(run_dir),
                 created_at=saved["created_at"], started_at=None, cells_done=0, tests_done=0)
    _remember(run_id, run_dir)
    return run_id, run_dir


def execute_run_dir(run_dir: Path, *, client: Any = None, control: Any = None,
                    on_event: OnEvent | None = None,
                    plan: FleetPlan | None = None) -> dict[str, Any]:
    """Run (or complete) the fleet of ``run_dir`` in this process; its results."""
    manifest, saved = load_run_manifest(run_dir)
    execution = saved.get("execution") or {}
    write_status(run_dir, state="running", pid=os.getpid(), started_at=_status_of(run_dir).get("started_at") or now_iso(),
                 stopped_reason=None, error=None)
    try:
        with fewer_collections():
            # Without a plan, the run plans as it goes: the first cells start at once.
            planner = FleetPlanner(manifest) if plan is None else None
            runner = FleetExecution(run_dir, plan or planner.plan, saved["run_id"], client=client, control=control,
                                    concurrency=int(execution.get("concurrency") or DEFAULT_CONCURRENCY),
                                    parallel_cells=int(execution.get("parallel_cells") or DEFAULT_PARALLEL_CELLS),
                                    on_event=on_event, planner=planner)
            import asyncio

            return asyncio.run(runner.run())
    except BaseException as exc:
        if _status_of(run_dir).get("state") == "running":
            write_status(run_dir, state="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                         error=f"{type(exc).__name__}: {exc}", pid=None)
        raise


def open_run_client(run_dir: Path) -> Any:
    """The results client a run was started with (None when it was started without a store)."""
    _, saved = load_run_manifest(run_dir)
    execution = saved.get("execution") or {}
    if not execution.get("store", True):
        return None
    from harness.results import open_client

    return open_client(worker_url=execution.get("worker_url"), db_path=execution.get("db_path"))


def run(manifest: Manifest | str | os.PathLike[str], *, output: str | os.PathLike[str] | None = None,
        client: Any = None, control: Any = None, on_event: OnEvent | None = None,
        concurrency: int = DEFAULT_CONCURRENCY, parallel_cells: int = DEFAULT_PARALLEL_CELLS,
        base_url: str | None = None) -> dict[str, Any]:
    """Run a fleet in this process and return its results (``fleet-results.json``). Runs are
    stored through ``client`` (none when it is None)."""
    manifest = _manifest_of(manifest, base_url)
    _, run_dir = create_run(manifest, output=output, store=client is not None, concurrency=concurrency,
                            parallel_cells=parallel_cells)
    return execute_run_dir(run_dir, client=client, control=control, on_event=on_event)


def start(manifest: Manifest | str | os.PathLike[str], *, output: str | os.PathLike[str] | None = None,
          worker_url: str | None = None, db_path: str | None = None, store: bool = True,
          concurrency: int = DEFAULT_CONCURRENCY, parallel_cells: int = DEFAULT_PARALLEL_CELLS,
          base_url: str | None = None) -> FleetHandle:
    """Start a fleet in a detached process and return at once with its run id and directory.
    The manifest is checked first (ManifestError); the fleet's progress is in ``status``."""
    from harness.fleet.processes import spawn_detached

    manifest = _manifest_of(manifest, base_url)
    run_id, run_dir = create_run(manifest, output=output, worker_url=worker_url, db_path=db_path, store=store,
                                 concurrency=concurrency, parallel_cells=parallel_cells)
    pid = spawn_detached(run_dir)
    write_status(run_dir, pid=pid)
    return FleetHandle(run_id, run_dir, pid)


def resume(run_id: str | os.PathLike[str], *, base_dir: str | os.PathLike[str] | None = None, client: Any = None,
           control: Any = None, on_event: OnEvent | None = None,
           detach: bool = False) -> dict[str, Any] | FleetHandle:
    """Complete run ``run_id``: completed cells are skipped, the others finish from what their
    results.jsonl holds. In this process (its results), or detached (a handle)."""
    run_dir = find_run(run_id, base_dir)
    current = status(run_dir)
    if current.get("state") in ("running", "queued") and current.get("alive"):
        raise FleetError(f"fleet run {current.get('run_id')} is still running (pid {current.get('pid')})")
    if detach:
        from harness.fleet.processes import spawn_detached

        write_status(run_dir, state="queued")
        pid = spawn_detached(run_dir)
        write_status(run_dir, pid=pid)
        return FleetHandle(current.get("run_id") or run_dir.name, run_dir, pid)
    return execute_run_dir(run_dir, client=client, control=control, on_event=on_event)


# --------------------------------------------------------------------------- status and waiting


def _status_of(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _alive(pid: Any) -> bool:
    from harness._util.ownership import pid_alive

    if not isinstance(pid, int) or pid <= 0 or not pid_alive(pid):
        return False
    try:  # a child that has exited but not been reaped is not running
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def status(run_id: str | os.PathLike[str], *, base_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Where run ``run_id`` is: its ``status.json``, with ``alive`` (its process is running). A
    run whose process is gone before it ended reads ``interrupted`` (resume completes it)."""
    run_dir = find_run(run_id, base_dir)
    current = _status_of(run_dir)
    current.setdefault("run_id", run_dir.name)
    current["run_dir"] = str(run_dir)
    alive = _alive(current.get("pid"))
    current["alive"] = alive
    if current.get("state") in ("running", "queued") and not alive:
        created = current.get("created_at")
        just_started = current.get("state") == "queued" and created and _age_s(created) < 10
        if not just_started:
            current["state"] = "interrupted"
            current["stopped_reason"] = current.get("stopped_reason") or "its process is gone; resume completes it"
    return current


def _age_s(iso: str) -> float:
    then = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (_dt.datetime.now(_dt.timezone.utc) - then).total_seconds()


#: How long a run that says it ended may keep its process before :func:`follow` stops anyway.
SETTLE_S = 10.0


def follow(run_id: str | os.PathLike[str], *, poll_s: float = 2.0,
           base_dir: str | os.PathLike[str] | None = None) -> Iterator[dict[str, Any]]:
    """Run ``run_id``'s :func:`status` now, then each time it changes (read every ``poll_s``
    seconds), until the run has ended: its state is completed, failed or interrupted (a run
    whose process is gone reads interrupted) and its process has exited, or has said so for
    :data:`SETTLE_S`. Following changes nothing in the run."""
    run_dir = find_run(run_id, base_dir)
    shown: dict[str, Any] | None = None
    ended_at: float | None = None
    while True:
        current = status(run_dir)
        seen = {k: v for k, v in current.items() if k != "updated_at"}
        if seen != shown:
            shown = seen
            yield current
        if current.get("state") in TERMINAL_STATES:
            ended_at = ended_at if ended_at is not None else time.monotonic()
            if not current.get("alive") or time.monotonic() - ended_at >= SETTLE_S:
                return
        time.sleep(poll_s)


def wait(run_id: str | os.PathLike[str], *, timeout_s: float | None = None, poll_s: float = 0.5,
         base_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Wait for run ``run_id`` to end and return its results (``fleet-results.json``).
    TimeoutError after ``timeout_s``; FleetError when it ended without results (its process
    died: ``status`` says how far it got)."""
    run_dir = find_run(run_id, base_dir)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        current = status(run_dir)
        if current.get("state") in TERMINAL_STATES:
            path = run_dir / RESULTS_FILE
            if path.is_file() and not current.get("alive"):
                return json.loads(path.read_text(encoding="utf-8"))
            if not current.get("alive"):
                raise FleetError(f"fleet run {current['run_id']} ended without results "
                                 f"({current.get('stopped_reason') or current.get('error') or current['state']})")
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"fleet run {current['run_id']} is still {current.get('state')} "
                               f"after {timeout_s:g} s")
        time.sleep(poll_s)
