"""``bench fleet``: run a fleet manifest (repositories × providers × profiles), check one, and
follow, list and resume runs. The work is done by :mod:`harness.fleet`; this module parses
options, shows progress, prints summaries and chooses the exit status (docs/fleets.md).

``bench fleet MANIFEST`` is ``bench fleet run MANIFEST``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, fail
from harness.cli.live import Progress, View
from harness.cli.store_options import open_store, store_options
from harness.events import Event

_CONTEXT = {"help_option_names": ["-h", "--help"]}
_EXIT_OF_STATE = {"completed": 0, "failed": EXIT_FAILED, "interrupted": EXIT_INTERRUPTED}



def _console():
    from harness.cli.render import make_console

    return make_console()


class _FleetGroup(click.Group):
    """A group whose first argument, when it is not a command, is the manifest of ``run``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("fleet", cls=_FleetGroup, context_settings=_CONTEXT, invoke_without_command=False)
def fleet() -> None:
    """Benchmark a fleet: every repository × provider × scenario profile of a manifest.

    \b
      bench fleet MANIFEST                 run it here, with progress, then the summary
      bench fleet MANIFEST --no-wait       start it in the background; print the run id
      bench fleet MANIFEST --dry-run       the matrix, the requests and an estimated cost
      bench fleet validate MANIFEST        check it and resolve every dataset it names
      bench fleet status RUN_ID            where a run is
      bench fleet status RUN_ID --follow   the same, refreshed until the run ends
      bench fleet list                     the runs started here
      bench fleet resume RUN_ID            complete a stopped or killed run

    A run writes <base_dir>/<run_id>/: fleet-results.json, csv/, executive-report.html and
    <repo_id>/<provider>_<model>/<profile>/ per cell. The manifest format: docs/fleets.md.
    """


def _load(manifest_path: str, base_url: str | None, judge: str | None = None) -> Any:
    from harness.fleet import ManifestError, load_manifest

    try:
        return load_manifest(manifest_path, base_url=base_url, judge=judge)
    except ManifestError as exc:
        fail(str(exc))


def _plan(manifest: Any) -> Any:
    from harness.fleet import plan_fleet

    return plan_fleet(manifest)


def _print_problems(plan: Any) -> None:
    click.echo(f"error: {plan.manifest.source}: {len(plan.problems)} problem(s):", err=True)
    for problem in plan.problems:
        click.echo(f"  - {problem}", err=True)


def _matrix_rows(plan: Any) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in plan.cells:
        row = rows.setdefault((cell.profile.name, cell.target.spec), {
            "profile": cell.profile.name, "kind": cell.kind, "provider": cell.target.spec,
            "repositories": 0, "tests": 0})
        row["repositories"] += 1
        row["tests"] += len(cell.planned)
    return list(rows.values())


# --------------------------------------------------------------------------- validate


@fleet.command("validate", context_settings=_CONTEXT)
@click.argument("manifest_path", metavar="MANIFEST")
@click.option("--base-url", default=None, metavar="URL", help="Base URL of openai-compatible:MODEL providers.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def validate_cmd(manifest_path: str, base_url: str | None, as_json: bool) -> None:
    """Check MANIFEST: its fields, every repository, and every dataset and suite its profiles
    name (for each repository, in the documented lookup order). Exit 2 on any problem, naming
    each dataset not found with the places looked."""
    from harness.fleet.planning import credential_notes

    manifest = _load(manifest_path, base_url)
    plan = _plan(manifest)
    keys = credential_notes(manifest)
    resolved: dict[str, dict[str, str]] = {}
    for cell in plan.cells:
        if cell.kind == "dataset" and cell.lookup is not None and cell.lookup.ref is not None:
            resolved.setdefault(cell.profile.name, {})[cell.repo.repo_id] = cell.source
    if as_json:
        click.echo(json.dumps({"valid": not plan.problems, "problems": plan.problems, "missingKeys": keys,
                               "manifestHash": manifest.hash, "cells": len(plan.cells),
                               "tests": plan.planned_tests, "datasets": resolved}, indent=2))
        sys.exit(EXIT_BAD_INPUT if plan.problems else 0)
    if plan.problems:
        _print_problems(plan)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(f"{manifest.source}: valid ({len(manifest.repositories)} repositories × {len(manifest.targets)} "
               f"providers; {len(plan.cells)} cells, {plan.planned_tests} tests; hash {manifest.hash[:8]})")
    for name, where in sorted(resolved.items()):
        sources = sorted(set(where.values()))
        shown = sources[0] if len(sources) == 1 else f"{len(sources)} files (one per repository)"
        click.echo(f"  profile {name}: {shown}")
    for note in keys:
        click.echo(f"  note: {note} to run", err=True)


# --------------------------------------------------------------------------- run


def _fleet_outcome(result: Any) -> str | None:
    if result.state == "interrupted":
        return None  # not done: resume runs it
    return "failed" if result.state == "failed" else "passed"


def _fleet_line(progress: Progress, event: Event) -> str | None:
    result = event.result
    return f"cell failed: {result.cell.key}: {result.error}" if result.state == "failed" else None


def fleet_view(total_tests: int) -> View:
    """A fleet's progress: cells and tests done (its ``sample`` events), tests per second, failed
    cells and the ETA by tests; a line per failed cell; on a terminal, the cells running."""

    def rows(progress: Progress) -> list[Any]:
        from rich.text import Text

        tests = progress.samples
        left = max(0, total_tests - tests)
        eta = "-" if not left else (progress.eta(tests, total_tests) or "?")
        return [f"cells {progress.all.done}/{progress.total}   tests {tests}/{total_tests}   "
                f"{tests / progress.elapsed():.1f}/s   failed cells {progress.all.failed}   ETA {eta}",
                *(Text(f"  running {key}", style="dim") for key in list(progress.running)[:6])]

    return View(rows=rows, line=_fleet_line, outcome=_fleet_outcome)


def _dry_run(plan: Any, as_json: bool) -> None:
    from harness.fleet.planning import credential_notes, estimate

    figures = estimate(plan)
    rows = _matrix_rows(plan)
    keys = credential_notes(plan.manifest)
    if as_json:
        click.echo(json.dumps({"fleetId": plan.manifest.fleet_id, "manifestHash": plan.manifest.hash,
                               "matrix": rows, "estimate": figures, "missingKeys": keys,
                               "problems": plan.problems}, indent=2))
    else:
        from rich.table import Table

        console = _console()
        m = plan.manifest
        console.print(f"fleet {m.fleet_id}: {len(m.repositories)} repositories × {len(m.targets)} providers × "
                      f"{len(m.profiles)} profiles = {len(plan.cells)} cells (hash {m.hash[:8]})", highlight=False)
        table = Table(box=None, pad_edge=False)
        for name, justify in (("profile", "left"), ("kind", "left"), ("provider", "left"),
                              ("repositories", "right"), ("tests", "right")):
            table.add_column(name, justify=justify)
        for row in rows:
            table.add_row(row["profile"], row["kind"], row["provider"], str(row["repositories"]), str(row["tests"]))
        console.print(table)
        cost = figures["maxCostUsd"]
        console.print(f"{figures['requests']} request(s), {figures['scenarioRuns']} scenario run(s); estimated cost "
                      f"at most {'unknown (a price is missing)' if cost is None else f'${cost:.4f}'} for the requests"
                      + ("; scenario runs are not estimated" if figures["scenarioRuns"] else ""), highlight=False)
        for note in keys:
            click.echo(f"note: {note} to run (not needed for --dry-run)", err=True)
        if plan.problems:
            _print_problems(plan)
    sys.exit(EXIT_BAD_INPUT if plan.problems else 0)


def _render_summary(results: dict[str, Any], run_dir: Path) -> None:
    from rich.table import Table

    console = _console()
    s = results["summary"]

    def pct(rate: Any, low: Any = None, high: Any = None) -> str:
        if rate is None:
            return "-"
        return f"{rate:.1%}" + (f" ({low:.1%}–{high:.1%})" if low is not None and high is not None else "")

    def ms(value: Any) -> str:
        return "-" if value is None else f"{value:,.0f} ms"

    def usd(value: Any) -> str:
        return "unknown" if value is None else f"${value:.4f}"

    console.print(f"fleet {results['fleet_id']}  run {results['run_id']}: {results['state']}", highlight=False)
    if results.get("stopped_reason"):
        console.print(results["stopped_reason"], highlight=False)
    console.print(f"tests {s['total_tests']}: {s['total_succeeded']} succeeded, {s['total_failed']} failed, "
                  f"{s['total_timeout']} timed out, {s['total_skipped']} skipped; success "
                  f"{pct(s['success_rate'], s['success_rate_low'], s['success_rate_high'])}; latency p50 "
                  f"{ms(s['p50_duration_ms'])} p95 {ms(s['p95_duration_ms'])} p99 {ms(s['p99_duration_ms'])}; "
                  f"tokens {s['total_tokens']:,}; cost {usd(s['total_cost'])}", highlight=False)
    table = Table(box=None, pad_edge=False, title="providers", title_justify="left")
    for name, justify in (("provider", "left"), ("repos", "right"), ("tests", "right"), ("success", "right"),
                          ("p50", "right"), ("p95", "right"), ("tokens", "right"), ("cost", "right")):
        table.add_column(name, justify=justify)
    for p in results["providers"]:
        table.add_row(p["provider"], str(p["repository_count"]), str(p["total_tests"]),
                      pct(p["success_rate"], p["success_rate_low"], p["success_rate_high"]),
                      ms(p["p50_duration_ms"]), ms(p["p95_duration_ms"]), f"{p['total_tokens']:,}",
                      usd(p["total_cost"]))
    console.print(table)
    failed = [c for c in results["cells"] if c["state"] in ("failed", "interrupted", "skipped", "pending")]
    for cell in failed[:10]:
        console.print(f"  {cell['state']}: {cell['repo_id']} / {cell['provider']} / {cell['profile']}"
                      + (f": {cell['error']}" if cell.get("error") else ""), highlight=False)
    if len(failed) > 10:
        console.print(f"  ... and {len(failed) - 10} more (fleet-results.json, cells)", highlight=False)
    console.print(f"artifacts: {run_dir}", highlight=False)


def _foreground(run_dir: Path, client: Any, output_format: str, plan: Any = None) -> None:
    """Run ``run_dir`` here with progress and Ctrl-C handling; print; exit with its state."""
    from harness.control import BatchControl, handle_sigint
    from harness.fleet import execute_run_dir
    from harness.fleet.run_files import load_run_manifest, read_cells_log

    if plan is None:
        from harness.fleet import plan_fleet

        plan = plan_fleet(load_run_manifest(run_dir)[0])
    done = read_cells_log(run_dir)
    todo = [c for c in plan.cells if done.get(c.key, {}).get("state") != "completed"]
    quiet = output_format != "summary"
    progress = Progress(fleet_view(sum(len(c.planned) for c in todo)), total=len(plan.cells), quiet=quiet)
    control = BatchControl()
    if not quiet:
        click.echo(f"run {run_dir.name}: {len(todo)} of {len(plan.cells)} cell(s) to run -> {run_dir}", err=True)

    def first() -> None:
        click.echo("stopping: nothing new starts; the work in flight finishes (Ctrl-C again to cancel it)", err=True)

    try:
        with handle_sigint(control, on_first=first), progress:
            results = execute_run_dir(run_dir, client=client, control=control, on_event=progress, plan=plan)
    finally:
        if client is not None:
            client.close()
    if output_format == "json":
        click.echo(json.dumps(results, indent=2, sort_keys=True))
    elif output_format == "quiet":
        click.echo(f"{results['run_id']} {results['state']}")
    else:
        _render_summary(results, run_dir)
    if results["state"] == "interrupted":
        click.echo(f"interrupted; complete it with: bench fleet resume {run_dir}", err=True)
    sys.exit(_EXIT_OF_STATE.get(results["state"], EXIT_FAILED))


_FORMAT = click.option("--format", "output_format", type=click.Choice(["summary", "json", "quiet"]),
                       default="summary", show_default=True,
                       help="summary: progress and tables; json: the fleet results; quiet: the run id and state.")
_WAIT = click.option("--wait/--no-wait", default=True, show_default=True,
                     help="Run here until the end, or start in the background and print the run id at once "
                          "(bench fleet status RUN_ID follows it).")


@fleet.command("run", context_settings=_CONTEXT)
@click.argument("manifest_path", metavar="MANIFEST")
@click.option("--output", "-o", "output", default=None, metavar="DIR",
              help="Base directory of the run (replaces the manifest's output.base_dir).")
@_WAIT
@_FORMAT
@click.option("--dry-run", is_flag=True, help="Print the matrix, the requests and runs, and an estimated cost; "
                                              "send nothing.")
@click.option("--concurrency", default=32, show_default=True, type=click.IntRange(1, 4096),
              help="Requests in flight at most, all cells together (each profile keeps its own concurrency).")
@click.option("--parallel-cells", default=4, show_default=True, type=click.IntRange(1, 256),
              help="Cells (repository × provider × profile) running at once.")
@click.option("--base-url", default=None, metavar="URL", help="Base URL of openai-compatible:MODEL providers.")
@click.option("--judge", default=None, metavar="none|PROVIDER:MODEL",
              help="The LLM judge of suite profiles (replaces global_settings.judge). Default: the scenario's "
                   "judge, never one for a provider at a base URL of its own.")
@click.option("--no-store", is_flag=True, help="Do not store the runs in the results store.")
@store_options
def run_cmd(manifest_path: str, output: str | None, wait: bool, output_format: str, dry_run: bool, concurrency: int,
            parallel_cells: int, base_url: str | None, judge: str | None, no_store: bool, worker_url: str | None,
            db_path: str | None) -> None:
    """Run the fleet of MANIFEST (also: bench fleet MANIFEST).

    Exit status: 0 every cell completed; 1 a cell failed (with continue_on_failure false the
    fleet stopped there); 2 bad input (the manifest, a dataset not found, a missing key); 130
    interrupted (bench fleet resume completes it)."""
    from harness.fleet import create_run, start
    from harness.fleet.planning import credential_notes

    manifest = _load(manifest_path, base_url, judge)
    plan = _plan(manifest)
    if dry_run:
        _dry_run(plan, output_format == "json")
    if plan.problems:
        _print_problems(plan)
        sys.exit(EXIT_BAD_INPUT)
    keys = credential_notes(manifest)
    if keys:
        fail(f"missing API keys: {'; '.join(keys)} (set the variable, or drop the provider)")
    if not wait:
        handle = start(manifest, output=output, worker_url=worker_url, db_path=db_path, store=not no_store,
                       concurrency=concurrency, parallel_cells=parallel_cells)
        if output_format == "json":
            click.echo(json.dumps({"run_id": handle.run_id, "run_dir": str(handle.run_dir), "pid": handle.pid}))
        elif output_format == "quiet":
            click.echo(handle.run_id)
        else:
            click.echo(f"started fleet run {handle.run_id} (pid {handle.pid})\nartifacts: {handle.run_dir}\n"
                       f"follow it: bench fleet status {handle.run_id}")
        return
    client = None if no_store else open_store(worker_url, db_path)
    _, run_dir = create_run(manifest, output=output, worker_url=worker_url, db_path=db_path, store=not no_store,
                            concurrency=concurrency, parallel_cells=parallel_cells)
    _foreground(run_dir, client, output_format, plan)


# --------------------------------------------------------------------------- status, list, resume


def _find(run_id: str, output: str | None) -> Path:
    from harness.fleet import FleetError, find_run

    try:
        return find_run(run_id, output)
    except FleetError as exc:
        fail(str(exc))
        raise AssertionError("unreachable")


def _status_line(s: dict[str, Any]) -> str:
    cells = f"{s.get('cells_done', 0)}/{s.get('cells_total', '?')}"
    tests = f"{s.get('tests_done', 0)}/{s.get('tests_total', '?')}"
    return f"{s.get('run_id')}  {s.get('state')}  cells {cells}  tests {tests}"


def _follow(run_dir: Path, as_json: bool, interval: float) -> None:
    """Print the status each time it changes until the run ends; exit with its state. Ctrl-C
    stops the following only: the run goes on in its own process."""
    from harness.fleet import follow

    current: dict[str, Any] = {}
    shown = None
    try:
        for current in follow(run_dir, poll_s=interval):
            if as_json:
                click.echo(json.dumps(current, sort_keys=True))
            elif _status_line(current) != shown:  # not for a change the line does not show
                shown = _status_line(current)
                click.echo(f"{time.strftime('%H:%M:%S')}  {shown}")
    except KeyboardInterrupt:
        click.echo(f"stopped following; fleet run {current.get('run_id') or run_dir.name} goes on "
                   f"(bench fleet status {current.get('run_id') or run_dir} shows it)", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if not as_json:
        _status_details(current)
    sys.exit(_EXIT_OF_STATE.get(current.get("state"), EXIT_FAILED))


def _status_details(current: dict[str, Any]) -> None:
    if current.get("stopped_reason"):
        click.echo(f"  {current['stopped_reason']}")
    if current.get("error"):
        click.echo(f"  error: {current['error']}")
    click.echo(f"  artifacts: {current.get('run_dir')}")
    if current.get("state") == "interrupted":
        click.echo(f"  complete it with: bench fleet resume {current.get('run_id')}")


@fleet.command("status", context_settings=_CONTEXT)
@click.argument("run_id", metavar="RUN_ID")
@click.option("--output", "-o", default=None, metavar="DIR", help="Base directory the run was written to.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (with --follow: one line each).")
@click.option("--follow", "-f", is_flag=True,
              help="Print the status again each time it changes, until the run ends; exit with its end "
                   "(0 completed, 1 failed, 130 interrupted). Ctrl-C stops following, not the run.")
@click.option("--interval", default=None, type=click.FloatRange(0.1, 3600), metavar="SECONDS",
              help="With --follow: how often the status is read (default 2).")
def status_cmd(run_id: str, output: str | None, as_json: bool, follow: bool, interval: float | None) -> None:
    """Where a fleet run is: state, cells and tests done, its process, its artifacts. RUN_ID is
    a run id or a run directory.

    \b
    Examples:
      bench fleet status nightly-20250101T120000Z-1a2b3c4d
      bench fleet status nightly-20250101T120000Z-1a2b3c4d --follow
      bench fleet status out/nightly-20250101T120000Z-1a2b3c4d --json
    """
    from harness.fleet import status

    if interval is not None and not follow:
        raise click.UsageError("--interval goes with --follow")
    run_dir = _find(run_id, output)
    if follow:
        _follow(run_dir, as_json, 2.0 if interval is None else interval)
    current = status(run_dir)
    if as_json:
        click.echo(json.dumps(current, indent=2, sort_keys=True))
        return
    click.echo(_status_line(current))
    _status_details(current)


@fleet.command("list", context_settings=_CONTEXT)
@click.option("--output", "-o", default=None, metavar="DIR", help="Also list the runs in this base directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def list_cmd(output: str | None, as_json: bool) -> None:
    """The fleet runs started on this machine (newest first), with their state."""
    from harness.fleet import list_runs

    runs = list_runs(output)
    if as_json:
        click.echo(json.dumps(runs, indent=2, sort_keys=True))
        return
    if not runs:
        click.echo("no fleet runs yet (bench fleet MANIFEST starts one)")
        return
    for current in runs:
        click.echo(f"{_status_line(current)}  {current.get('run_dir')}")


@fleet.command("resume", context_settings=_CONTEXT)
@click.argument("run_id", metavar="RUN_ID")
@click.option("--output", "-o", default=None, metavar="DIR", help="Base directory the run was written to.")
@_WAIT
@_FORMAT
def resume_cmd(run_id: str, output: str | None, wait: bool, output_format: str) -> None:
    """Complete a stopped, failed or killed fleet run: completed cells are skipped; the others
    go on from the answers their results.jsonl already holds (errored ones are retried)."""
    from harness.fleet import FleetError, open_run_client, resume, status

    run_dir = _find(run_id, output)
    current = status(run_dir)
    if current.get("alive") and current.get("state") in ("running", "queued"):
        fail(f"fleet run {current.get('run_id')} is still running (pid {current.get('pid')})")
    if not wait:
        try:
            handle = resume(run_dir, detach=True)
        except FleetError as exc:
            fail(str(exc))
        click.echo(handle.run_id if output_format == "quiet" else f"resumed fleet run {handle.run_id} "
                   f"(pid {handle.pid}); follow it: bench fleet status {handle.run_id}")
        return
    try:
        client = open_run_client(run_dir)
    except Exception as exc:  # noqa: BLE001 - one line
        fail(f"cannot open the results store of that run: {exc}", EXIT_FAILED)
    _foreground(run_dir, client, output_format)
