"""``bench batches``, ``bench batch ID``, ``bench history``: stored results."""

from __future__ import annotations

import json

import click

from harness.cli.store_options import open_store, store_options


@click.command("batches")
@click.option("--limit", type=click.IntRange(min=1, max=500), default=20, show_default=True)
@click.option("--kind", type=click.Choice(["scenario", "dataset", "all"]), default="all", show_default=True,
              help="Only batches of scenario runs (agents on fixtures) or of dataset requests (`bench dataset`).")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def batches(limit: int, kind: str, worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """List recent batches with their run counts and mean scores.

    A batch of dataset requests shows its dataset and the providers' models where a scenario
    batch shows its scenarios and agents; the kind column says which.

    \b
    Examples:
      bench batches
      bench batches --kind dataset --limit 5 --json
    """
    from harness.cli.render import batches_table

    with open_store(worker_url, db_path) as client:
        found = client.list_batches(limit=limit, kind=None if kind == "all" else kind)
        where = client.destination
    if as_json:
        click.echo(json.dumps([{**b.to_wire(), "kind": b.kind} for b in found], indent=2))
        return
    from harness.cli.render import make_console

    console = make_console()
    if not found:
        console.print(f"No batches stored yet in {where}. Run one: bench SUITE SCENARIO --agent oracle",
                      markup=False, highlight=False)
        return
    console.print(batches_table(found))


@click.command("batch")
@click.argument("batch_id")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON (aggregates, breakdowns and runs).")
def batch(batch_id: str, worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """Show one batch: aggregates computed by the store, breakdowns, and its runs.

    \b
    Examples:
      bench batch batch_1732270000000_a1b2c3
      bench batch my-baseline --json
    """
    from harness.cli.render import batch_json, batch_summary_table, breakdown_tables, runs_table

    with open_store(worker_url, db_path) as client:
        found = client.get_batch(batch_id)
    if found is None:
        raise click.ClickException(f"batch {batch_id!r} not found")
    if as_json:
        click.echo(json.dumps(batch_json(found), indent=2))
        return
    from harness.cli.render import make_console

    console = make_console()
    console.print(batch_summary_table(found))
    for table in breakdown_tables(found):
        console.print(table)
    console.print(runs_table(found.runs, title="Runs"))


def _option_error(message: str) -> click.ClickException:
    error = click.ClickException(message)
    error.exit_code = 2
    return error


def specialist_filter(value: str) -> str:
    """The ``specialist`` filter for ``--specialist VALUE``, which takes what ``bench
    --specialist`` takes: a bare name (the store matches it under any scope), an
    ``@scope/name`` (matched exactly) or a template file (its ``name`` field)."""
    value = value.strip()
    if value.endswith(".json5") or ("/" in value and not value.startswith("@")):
        from pathlib import Path

        from harness.specialists import TemplateError, read_json5

        try:
            doc = read_json5(Path(value))
        except TemplateError as exc:
            raise _option_error(f"--specialist: {exc}") from None
        name = doc.get("name") if isinstance(doc, dict) else None
        if not isinstance(name, str) or not name:
            raise _option_error(f"--specialist: {value}: the template has no name field")
        return name
    at = value.find("@", 1)
    if at > 0:  # name@version, as `bench show` and batch summaries print it
        raise _option_error(f"--specialist: {value!r} includes a version; give the name alone "
                            f"({value[:at]!r}): versions are not a filter")
    if not value:
        raise _option_error("--specialist: empty name")
    return value


def _specialist_hint(client, specialist: str) -> list[str]:
    """Why ``--specialist`` matched nothing, and the specialists stored runs did use."""
    how = ("matched exactly" if specialist.startswith("@")
           else f"matched bare or under any scope (@scope/{specialist})")
    lines = [f"--specialist {specialist}: {how}."]
    used = sorted({r.specialist_name for r in client.list_runs(limit=500, specialistEnabled=True)
                   if r.specialist_name})
    lines.append(f"Specialists of stored runs: {', '.join(used)}" if used
                 else "No stored run used a specialist.")
    return lines


@click.command("history")
@click.option("--suite", default=None)
@click.option("--scenario", default=None)
@click.option("--agent", default=None)
@click.option("--model", default=None)
@click.option("--tier", default=None)
@click.option("--status", type=click.Choice(["completed", "failed", "timeout", "budget_exceeded", "error"]),
              default=None)
@click.option("--batch-id", default=None)
@click.option("--specialist", default=None, metavar="NAME",
              help="Runs with this specialist: a name (any scope), @scope/name, or a template file.")
@click.option("--limit", type=click.IntRange(min=1, max=500), default=20, show_default=True)
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def history(suite: str | None, scenario: str | None, agent: str | None, model: str | None, tier: str | None,
            status: str | None, batch_id: str | None, specialist: str | None, limit: int,
            worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """Recent runs, newest first, optionally filtered.

    \b
    Examples:
      bench history
      bench history --suite py-bugs --agent oracle --limit 50
      bench history --status failed --json
      bench history --specialist python-bugfixer
    """
    from harness.cli.render import run_json, runs_table

    if specialist is not None:
        specialist = specialist_filter(specialist)
    filters = {"suite": suite, "scenario": scenario, "agent": agent, "model": model, "tier": tier,
               "status": status, "batchId": batch_id, "specialist": specialist}
    filters = {k: v for k, v in filters.items() if v is not None}
    hint: list[str] = []
    with open_store(worker_url, db_path) as client:
        runs = client.list_runs(limit=limit, **filters)
        where = client.destination
        if not runs and specialist is not None and not as_json:
            hint = _specialist_hint(client, specialist)
    if as_json:
        click.echo(json.dumps([run_json(r) for r in runs], indent=2))
        return
    from harness.cli.render import make_console

    console = make_console()
    if not runs:
        console.print(f"No runs match in {where}." if filters else f"No runs stored yet in {where}.",
                      markup=False, highlight=False)
        for line in hint:
            console.print(line, markup=False, highlight=False)
        return
    console.print(runs_table(runs, title="Runs (newest first)", show_started=True))


@click.command("show")
@click.argument("run_id")
@click.option("--transcript", is_flag=True, help="Also print the agent's transcript.")
@click.option("-v", "--verbose", is_flag=True, help="Show each evaluation's details.")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the stored run record as JSON.")
def show(run_id: str, transcript: bool, verbose: bool, worker_url: str | None, db_path: str | None,
         as_json: bool) -> None:
    """Show one stored run: the same report `bench SUITE SCENARIO` printed when it ran.

    \b
    Examples:
      bench show run_1732270000000_a1b2c3d4 -v
      bench show run_1732270000000_a1b2c3d4 --transcript
      bench show run_1732270000000_a1b2c3d4 --json
    """
    from harness.cli.render import make_console, render_run, render_transcript, run_json

    with open_store(worker_url, db_path) as client:
        found = client.get_run(run_id)
        messages = client.get_transcript(run_id) if found is not None and transcript else None
    if found is None:
        raise click.ClickException(f"run {run_id!r} not found")
    if as_json:
        data = run_json(found)
        if transcript:
            data["transcript"] = messages or []
        click.echo(json.dumps(data, indent=2))
        return
    console = make_console()
    render_run(console, found, verbose=verbose)
    if transcript:
        console.print()
        console.print("[bold]Transcript:[/bold]")
        if not messages:
            console.print("  (none stored)")
        render_transcript(console, messages or [])
