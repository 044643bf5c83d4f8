"""A built plan of ``bench``, fitted to its batch (:func:`harness.scenarios.runner.prepare_plan`: resume,
retry, shard, continued numbering) and then either listed with its cost range
(:func:`list_plan`, ``--dry-run``: nothing runs) or run (:func:`execute_plan`): a progress
display, Ctrl-C handling, the report, where every run was stored (:func:`report_storage`),
``--mint-template`` (:func:`mint_batch`) and the documented exit status.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import fail


def plan_status(exc: Exception) -> int:
    """2 for a plan that cannot be made as asked; 1 for a batch the store does not hold (as
    every command says of a name the store does not know)."""
    from harness.scenarios.plan import BatchNotFound

    return 1 if isinstance(exc, BatchNotFound) else 2


def open_for_reading(worker_url: str | None, db_path: str | None) -> Any:
    """The store for a dry run's history and batch, or None when opening it would create it
    (an embedded store that does not exist yet)."""
    import os

    from harness.cli.store_options import open_store
    from harness.results.location import default_db_path

    if not worker_url and not os.path.exists(db_path or default_db_path()):
        return None
    return open_store(worker_url, db_path, sync_spool=False)


def list_plan(plan: Any, options: Any, worker_url: str | None, db_path: str | None, as_json: bool,
              given_batch: bool, fit: dict[str, Any]) -> None:
    """List the cells (after resume/retry/shard against the stored batch) and the cost range."""
    from rich.console import Console

    from harness.cli.plan_view import dry_run_table, money
    from harness.scenarios.estimate import estimate_plan
    from harness.scenarios.plan import PlanError
    from harness.scenarios.runner import prepare_plan

    client = open_for_reading(worker_url, db_path)
    try:
        try:
            prepare_plan(plan, options, client, existing_batch=given_batch, **fit)
        except PlanError as exc:
            fail(str(exc), plan_status(exc))
        estimate = estimate_plan(plan, options.budgets, options.agent_options, client)
    finally:
        if client is not None:
            client.close()
    if as_json:
        click.echo(json.dumps({
            "batchId": plan.batch_id, "plannedCells": plan.planned, "cells": [c.key for c in plan.cells],
            "shard": f"{plan.shard[0]}/{plan.shard[1]}" if plan.shard else None, "notes": plan.notes,
            "groups": [{"cellGroup": g.group.key, "configHash": g.group.config_hash, "iterations": g.group.iterations,
                        "costPerRunUsd": {"low": g.low, "high": g.high}, "basis": g.basis, "detail": g.detail}
                       for g in estimate.groups],
            "costUsd": {"low": estimate.low, "high": estimate.high},
        }, indent=2))
        return
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    console = Console()
    table, basis_notes = dry_run_table(plan, estimate)
    console.print(table)
    for line in basis_notes:
        console.print(line, highlight=False)
    shard = f" (shard {plan.shard[0]}/{plan.shard[1]} of {plan.planned})" if plan.shard else (
        f" of {plan.planned} planned" if estimate.runs != plan.planned else "")
    low, high = money(estimate.low), money(estimate.high)
    console.print(f"{estimate.runs} run(s){shard}; estimated cost {low if low == high else f'{low} to {high}'}"
                  + (" (? where no price or budget bounds it)" if estimate.high is None else ""), highlight=False)
    console.print("Nothing was run. Drop --dry-run to run the plan.", highlight=False)


def execute_plan(plan: Any, options: Any, worker_url: str | None, db_path: str | None, as_json: bool, *,
                 verbose: bool = False, given_batch: bool = False, resume: bool = False,
                 retry_errors: bool = False, force: bool = False, shard: tuple[int, int] | None = None,
                 mint: tuple[Any, Path] | None = None) -> None:
    """Fit the plan to its batch, run it with a progress display, print the report, exit with the
    documented status."""
    from rich.console import Console

    from harness.cli.live import Progress
    from harness.cli.plan_view import PLAN_VIEW, summary_table
    from harness.cli.render import batch_json, batch_summary_table, make_console, render_run, run_json
    from harness.cli.store_options import open_store
    from harness.control import BatchControl, handle_sigint
    from harness.grading.evaluators.llm_judge import resolve_judge
    from harness.scenarios.plan import PlanError
    from harness.scenarios.runner import group_judge, prepare_plan, run_plan

    err_console = Console(stderr=True)
    client = open_store(worker_url, db_path)
    try:
        try:
            prepare_plan(plan, options, client, existing_batch=given_batch, resume=resume, retry_errors=retry_errors,
                         force=force, shard=shard)
        except PlanError as exc:
            fail(str(exc), plan_status(exc))
        for note in plan.notes:
            click.echo(f"note: {note}", err=True)
        cells = len(plan.cells)
        if not cells:
            what = f"shard {shard[0]}/{shard[1]} of " if shard else ""
            if retry_errors and not resume and shard is None:
                click.echo(f"Nothing to run: no run of the plan in batch {plan.batch_id} is stored as an "
                           "error of class infra or harness.", err=True)
            else:
                click.echo(f"Nothing to run: every cell of {what}the plan ({plan.planned}) has a run in batch "
                           f"{plan.batch_id}.", err=True)
            return
        judges = {resolve_judge(g.scenario.llm_judge, group_judge(options, g.agent)).describe()
                  for g in plan.groups if g.iterations and g.scenario.llm_judge.enabled}
        for line in sorted(judges):  # said before the runs, so a judge that will not run is no surprise
            click.echo(line, err=True)
        control = options.control = BatchControl()

        def first_interrupt() -> None:
            err_console.print(f"interrupting: no new runs start; running agents stop at their next turn, and their "
                              f"commands are killed in {control.grace_s:g} s (Ctrl-C again to kill them now)")

        def second_interrupt() -> None:
            err_console.print("killing every running command now")

        with handle_sigint(control, first_interrupt, second_interrupt), \
                Progress(PLAN_VIEW, console=err_console, total=cells, quiet=as_json) as progress:
            outcome = run_plan(plan, options, client, progress=progress)
        stored_batch = None
        if outcome.batch_post in ("stored", "duplicate"):
            try:
                stored_batch = client.get_batch(outcome.batch_id)
            except Exception:  # noqa: BLE001 - the posted figures are shown instead
                stored_batch = None
        where = client.transport.description
        spool_dir = client.spool.pending_dir if client.spool else None
    finally:
        client.close()

    records = [r.record for r in outcome.runs]
    if outcome.preflight_error:
        click.echo(f"error: {outcome.preflight_error}", err=True)
    if as_json:
        batch = batch_json(stored_batch) if stored_batch is not None else outcome.batch.to_wire()
        batch.pop("runs", None)
        click.echo(json.dumps({"batch": batch, "runs": [run_json(r) for r in records]}, indent=2, default=str))
    else:
        console = make_console()
        one_group = sum(1 for g in plan.groups if g.iterations) == 1
        if one_group or verbose:
            for i, record in enumerate(records):
                if len(records) > 1:
                    console.rule(f"{record.suite}/{record.scenario} {record.agent} iteration "
                                 f"{record.metadata.get('iteration')} ({i + 1}/{len(records)})")
                render_run(console, record, verbose=verbose)
                kept = outcome.runs[i].workspace
                if kept:
                    console.print(f"  Kept workspace: {kept}")
        elif any(r.workspace for r in outcome.runs):
            for r in outcome.runs:
                if r.workspace:
                    console.print(f"Kept workspace of {r.record.run_id}: {r.workspace}")
        if outcome.warmup is not None and not outcome.warmup.ok:
            console.print(f"[red]Warmup failed: {outcome.warmup.error}[/red]")
        if len(records) > 1:
            console.print()
            if not one_group:
                console.print(summary_table(records, f"Batch {outcome.batch_id}: successes/runs, mean score"))
            console.print(batch_summary_table(stored_batch or outcome.batch))
    all_stored = report_storage(outcome, where, spool_dir, quiet=as_json)
    if outcome.interrupted:
        from harness.models.local_model import stop_shared_server

        stop_shared_server(timeout_s=1.0)  # a model server mid-answer must not hold the exit
        cut = sum(1 for r in records if r.metadata.get("interrupted"))
        click.echo(f"interrupted: {len(records) - cut} run(s) finished, {cut} cut short (stored as "
                   f"error/harness \"interrupted\"), {outcome.not_started} not started; batch {outcome.batch_id} "
                   f"is marked interrupted. To run the missing cells, run the same command with "
                   f"--resume {outcome.batch_id} (add --retry-errors to redo the runs cut short).", err=True)
        sys.exit(130)
    if mint is not None and not mint_batch(mint[0], outcome.batch_id, mint[1], worker_url, db_path, as_json):
        sys.exit(1)
    harness_failed = any(r.status == "error" and r.failure_class in ("harness", "infra") for r in records)
    if not all_stored or harness_failed:
        sys.exit(1)


def report_storage(outcome: Any, where: str, spool_dir: str | None, quiet: bool) -> bool:
    """Say where every run is: stored (only what the store confirmed), kept in the spool (with
    why and how to deliver it), or lost with the error. True when everything was stored."""
    runs = outcome.runs
    stored = [r for r in runs if r.post_outcome in ("stored", "duplicate")]
    spooled = [r for r in runs if r.post_outcome == "spooled"]
    failed = [r for r in runs if r.post_outcome not in ("stored", "duplicate", "spooled")]
    batch_ok = outcome.batch_post in ("stored", "duplicate")
    if stored and not spooled and not failed and batch_ok:
        if not quiet:
            click.echo(f"\nStored in batch {outcome.batch_id} ({where}). "
                       f"Show it again with: bench batch {outcome.batch_id}")
        return True
    if stored:
        click.echo(f"{len(stored)} of {len(runs)} run(s) stored in batch {outcome.batch_id} ({where}).", err=True)
    if spooled:
        reasons = sorted({r.post_error for r in spooled if r.post_error})
        click.echo(f"{len(spooled)} run(s) NOT stored: kept in {spool_dir} for {where}"
                   f"{' (' + '; '.join(reasons) + ')' if reasons else ''}. Deliver them with `bench sync` "
                   "once the store is reachable and the key is right.", err=True)
    for r in failed:
        click.echo(f"error: run {r.record.run_id} was not stored: {r.post_error or 'unknown error'}", err=True)
    if not batch_ok:
        state = "kept in the spool" if outcome.batch_post == "spooled" else "not stored"
        click.echo(f"batch {outcome.batch_id} record {state}: {outcome.post_error or 'see above'}", err=True)
    return False


def mint_batch(specialist: Any, batch_id: str, output: Path, worker_url: str | None, db_path: str | None,
              as_json: bool) -> bool:
    """``--mint-template``: mint a snapshot from the batch just run; False when it failed."""
    from harness.cli.mint import comparison_lines
    from harness.cli.store_options import open_store
    from harness.mint import MintError, mint_snapshot
    from harness.results import ResultsError

    try:
        with open_store(worker_url, db_path) as client:
            result = mint_snapshot(specialist, batch_id, output, client)
    except (MintError, ResultsError) as exc:
        click.echo(f"error: mint failed: {exc}", err=True)
        return False
    for where in result.left_out:
        click.echo(f"warning: {specialist.source}: {where}: unknown key, left out of the snapshot", err=True)
    if as_json:  # stdout carries the batch JSON; the snapshot path goes to stderr
        click.echo(f"Snapshot minted: {result.path}", err=True)
        return True
    click.echo(f"Snapshot minted: {result.path} (id {result.snapshot_id})")
    for line in comparison_lines(result.snapshot["benchmarks"]["comparison"]):
        click.echo(f"  {line}")
    return True
