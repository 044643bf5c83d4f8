"""``bench sync``: deliver results spooled while the worker was unreachable."""

from __future__ import annotations

import json
import sys

import click


@click.command("sync")
@click.option("--worker-url", envvar="ZE_BENCHMARKS_WORKER_URL", default=None,
              help="Worker to deliver to (default: $ZE_BENCHMARKS_WORKER_URL, else in-process).")
@click.option("--api-key", envvar="ZE_BENCHMARKS_API_KEY", default=None,
              help="Write key of the worker (default: $ZE_BENCHMARKS_API_KEY).")
@click.option("--db", "db_path", envvar="ZE_BENCHMARKS_DB", default=None,
              help="SQLite file for in-process delivery (default results/bench.db).")
@click.option("--spool-dir", envvar="ZE_BENCHMARKS_SPOOL_DIR", default=None,
              help="Spool folder (default results/spool).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def sync(worker_url: str | None, api_key: str | None, db_path: str | None, spool_dir: str | None, as_json: bool) -> None:
    """Send spooled runs and batches to the results worker.

    Runs that could not reach the worker are kept in results/spool/pending and sent, oldest
    first, by this command (and whenever a results client opens). The worker stores each
    run once, even if it is sent again. Exit status 1 when something is still pending or
    was rejected.

    \b
    Examples:
      bench sync
      ZE_BENCHMARKS_WORKER_URL=http://127.0.0.1:8787 bench sync --json
    """
    from harness.results import open_client

    with open_client(worker_url=worker_url, api_key=api_key, db_path=db_path, spool_dir=spool_dir,
                     sync_spool=False) as client:
        report = client.sync()
        target = client.transport.description
        rejected_total = client.spool.rejected_count() if client.spool else 0
        pending_dir = client.spool.pending_dir if client.spool else ""
    if as_json:
        click.echo(json.dumps({
            "target": target, "delivered": report.delivered, "duplicates": report.duplicates,
            "rejected": report.rejected, "failed": report.failed, "remaining": report.remaining,
            "error": report.error,
            "rejectedTotal": rejected_total,
        }))
    else:
        click.echo(f"{target}: delivered {report.delivered}, already stored {report.duplicates}, "
                   f"rejected {report.rejected}, failed {report.failed}, still pending {report.remaining}")
        if report.remaining:
            click.echo(f"still pending in {pending_dir}: {report.error or 'not delivered'}", err=True)
        if report.rejected:
            click.echo("rejected requests are kept with their error in the spool's rejected/ folder",
                       err=True)
    if report.remaining or report.rejected:
        sys.exit(1)
