"""``bench profile BATCH_ID``: where the runs of a batch spent their time, phase by phase.

The figures are computed by :mod:`worker.analysis.profile` (the results worker serves the same
code), from the phases every run records (``metadata.phases``) and the storage times the batch
record keeps.
"""

from __future__ import annotations

import json

import click

from harness.cli.store_options import open_store, store_options


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.1f} ms"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


@click.command("profile")
@click.argument("batch_id")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
def profile(batch_id: str, worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """Where a batch's runs spent their time: per phase (workspace copy, agent model time, agent
    tool time, each validation command, each evaluator, grading copy, diff, storage, the group's
    warmup...), the median and 95th percentile over the runs and the share of the total; the
    phase with the largest share is named as the bottleneck.

    \b
    Examples:
      bench profile batch_1732270000000_a1b2c3
      bench profile nightly --json
    """
    from worker.analysis.profile import batch_profile

    from harness.cli.render import run_json

    with open_store(worker_url, db_path) as client:
        found = client.get_batch(batch_id)
    if found is None:
        raise click.ClickException(f"batch {batch_id!r} not found")
    result = batch_profile({"batchId": found.batch_id, "metadata": found.metadata,
                            "runs": [run_json(r) for r in found.runs or []]})
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from rich.table import Table

    from harness.cli.render import make_console

    console = make_console()
    if not result["profiledRuns"]:
        console.print(f"Batch {batch_id}: {result['summary']}.", highlight=False)
        return
    table = Table(title=f"Batch {batch_id}: time per phase over {result['profiledRuns']} run(s)")
    for col in ("phase", "runs", "median", "p95", "total", "share"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for row in result["phases"]:
        table.add_row(row["label"], str(row["runs"]), _ms(row["medianMs"]), _ms(row["p95Ms"]), _ms(row["totalMs"]),
                      _share(row["share"]))
    console.print(table)
    stages = ", ".join(f"{s['stage']} {_share(s['share'])}" for s in result["stages"])
    console.print(f"By stage: {stages}", highlight=False)
    console.print(f"Run time: median {_ms(result['runMedianMs'])}, p95 {_ms(result['runP95Ms'])}", highlight=False)
    unprofiled = result["runs"] - result["profiledRuns"]
    if unprofiled:
        console.print(f"{unprofiled} run(s) recorded no phases (stored by an older harness) and are left out.",
                      highlight=False)
    console.print(f"Bottleneck: {result['summary']}.", highlight=False)
