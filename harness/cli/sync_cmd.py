"""``bench sync``: deliver results spooled while the store could not take them."""

from __future__ import annotations

import json
import sys

import click

from harness.cli.store_options import db_option


@click.command("sync")
@click.option("--worker-url", envvar="ZE_BENCHMARKS_WORKER_URL", default=None,
              help="Worker to deliver to (default: $ZE_BENCHMARKS_WORKER_URL, else in-process).")
@click.option("--api-key", envvar="ZE_BENCHMARKS_API_KEY", default=None,
              help="Write key of the worker (default: $ZE_BENCHMARKS_API_KEY).")
@db_option("SQLite file for in-process delivery (default here: {store}).")
@click.option("--spool-dir", envvar="ZE_BENCHMARKS_SPOOL_DIR", default=None,
              help="Spool folder (default: spool/ beside the default store).")
@click.option("--from", "from_destination", default=None, metavar="DESTINATION",
              help="Deliver here what was spooled for another destination (a worker URL or sqlite:PATH, "
                   "as `bench sync` lists them), e.g. after the store moved.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def sync(worker_url: str | None, api_key: str | None, db_path: str | None, spool_dir: str | None,
         from_destination: str | None, as_json: bool) -> None:
    """Send spooled runs and batches to the store they were meant for.

    A run that could not be stored (the worker unreachable, a wrong key, a full disk) is kept
    in results/spool/pending with its destination: the worker URL or the SQLite file it was
    meant for. This command delivers, oldest first, what is pending for the store it opens
    (chosen like every other command: --worker-url, --db, or their environment variables),
    and lists what waits for other destinations with the command that delivers it. Runs are
    never delivered to another store unless --from says so. The worker stores each run once,
    even if it is sent again. Exit status 1 when something for this store is still pending
    or was rejected.

    \b
    Examples:
      bench sync
      ZE_BENCHMARKS_WORKER_URL=http://127.0.0.1:8787 bench sync --json
      bench sync --db results/bench.db --from http://old-worker.example:8787
    """
    from harness.cli.store_options import open_store

    client = open_store(worker_url, None if worker_url else db_path, api_key=api_key, spool_dir=spool_dir,
                        sync_spool=False)
    from harness.results.transport import TransportUnavailable

    with client:
        try:
            client.verify()  # say so even when nothing is pending
        except TransportUnavailable as exc:
            click.echo(f"error: cannot reach {client.transport.description}: {exc}", err=True)
            sys.exit(1)
        report = client.sync(include_unassigned=from_destination is None, from_destination=from_destination)
        target = client.transport.description
        destination = client.destination
        rejected_total = client.spool.rejected_count() if client.spool else 0
        pending_dir = client.spool.pending_dir if client.spool else ""
        elsewhere = {d: n for d, n in (client.spool.destinations() if client.spool else {}).items()
                     if d not in (destination, None)}
        notices = list(client.spool.notices) if client.spool else []
    if as_json:
        click.echo(json.dumps({
            "target": target, "destination": destination, "delivered": report.delivered,
            "duplicates": report.duplicates, "rejected": report.rejected, "failed": report.failed,
            "remaining": report.remaining, "error": report.error, "rejectedTotal": rejected_total,
            "pendingElsewhere": elsewhere, "setAside": notices,
        }))
    else:
        for notice in notices:
            click.echo(f"warning: {notice}", err=True)
        click.echo(f"{target}: delivered {report.delivered}, already stored {report.duplicates}, "
                   f"rejected {report.rejected}, failed {report.failed}, still pending {report.remaining}")
        if report.remaining:
            click.echo(f"still pending in {pending_dir}: {report.error or 'not delivered'}", err=True)
        if report.rejected:
            click.echo("rejected requests are kept with their error in the spool's rejected/ folder",
                       err=True)
        for other, count in sorted(elsewhere.items()):
            how = (f"bench sync --db {other.removeprefix('sqlite:')}" if other.startswith("sqlite:")
                   else f"ZE_BENCHMARKS_WORKER_URL={other} bench sync")
            click.echo(f"{count} request(s) wait for {other}: deliver them with `{how}`", err=True)
    if report.remaining or report.rejected:
        sys.exit(1)
