"""The ``--worker-url`` / ``--db`` options shared by commands that read or write results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class DbOption(click.Option):
    """An option whose help ends with the store this directory would use ("{store}" in the help
    text is replaced when help is shown, so ``--help`` names the actual file)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from harness.results.location import store_help

        template = self.help or ""
        self.help = template.replace("{store}", store_help())
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = template


DB_HELP = "SQLite results file used when no worker URL is set (default here: {store})."


def db_option(help_text: str = DB_HELP) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--db FILE`` ($ZE_BENCHMARKS_DB), whose help names the default store of this directory."""
    return click.option("--db", "db_path", cls=DbOption, envvar="ZE_BENCHMARKS_DB", default=None,
                        metavar="FILE", help=help_text)


def store_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--worker-url`` and ``--db`` (same environment variables as ``open_client``)."""
    func = db_option()(func)
    func = click.option("--worker-url", envvar="ZE_BENCHMARKS_WORKER_URL", default=None, metavar="URL",
                        help="Results worker to use (default: $ZE_BENCHMARKS_WORKER_URL, else the "
                             "embedded store).")(func)
    return func


def open_store(worker_url: str | None, db_path: str | None, **options: Any):  # -> WorkerClient
    """Open the results client, turning failures into a one-line CLI error. Spool files set
    aside while opening (not spool records) are reported here, once."""
    from harness.results import ResultsError, open_client

    try:
        client = open_client(worker_url=worker_url, db_path=db_path, **options)
    except ResultsError as exc:
        raise click.ClickException(f"cannot open the results store: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - reported as one line
        raise click.ClickException(f"cannot open the results store: {type(exc).__name__}: {exc}") from None
    if client.spool is not None:
        for notice in client.spool.notices:
            click.echo(f"warning: {notice}", err=True)
        client.spool.notices.clear()
    return client
