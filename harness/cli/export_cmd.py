"""``bench export``: stored runs as CSV, JSONL or Parquet for notebooks and BI tools.

The runs are chosen with the filters of ``bench history`` (the same option objects, so the
same names, choices and meaning); the rows and columns are made by
:mod:`harness.results.export` (docs/export.md). A file is written whole or not at all.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import EXIT_BAD_INPUT
from harness.cli.results_cmd import _specialist_hint, history, specialist_filter
from harness.cli.store_options import open_store, store_options

# The options of `bench history` that choose runs, and the store filter each one sets.
FILTERS = {"suite": "suite", "scenario": "scenario", "agent": "agent", "model": "model", "tier": "tier",
           "status": "status", "batch_id": "batchId", "specialist": "specialist"}
PROGRESS_EVERY = 500  # runs; progress is shown only for exports larger than this


def _bad_input(message: str) -> click.ClickException:
    error = click.ClickException(message)
    error.exit_code = EXIT_BAD_INPUT
    return error


def _destination(output: str | None, fmt: str | None) -> tuple[Path | None, str]:
    """(the file to write, None for stdout; the format), checked before the store is read."""
    from harness.results.export import FORMATS, STREAM_FORMATS, format_for

    to_stdout = output is None or output == "-"
    if to_stdout:
        fmt = fmt or "csv"
        if fmt not in STREAM_FORMATS:
            raise _bad_input(f"--format {fmt} cannot go to stdout: give a file, e.g. -o runs.{fmt}")
        return None, fmt
    assert output is not None
    path = Path(output).expanduser()
    if path.is_dir():
        raise _bad_input(f"--output {output}: is a directory; give a file name such as runs.{fmt or 'csv'}")
    if fmt is None:
        fmt = format_for(path)
        if fmt is None:
            raise _bad_input(f"--output {output}: cannot tell the format from the extension "
                             f"{path.suffix or '(none)'}; give --format {'|'.join(FORMATS)}")
    if not path.parent.is_dir():
        raise _bad_input(f"--output {output}: the directory {path.parent} does not exist")
    return path, fmt


def _to_stdout(runs: Iterable[Any], fmt: str) -> Any:  # -> ExportSummary
    """Write ``runs`` to standard output (after whatever was printed there before)."""
    from harness.results.export import write_runs

    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is not None:
        summary = write_runs(runs, fmt, binary)
        binary.flush()
        return summary
    data = io.BytesIO()  # a text-only stdout (replaced by a caller): the data as text
    summary = write_runs(runs, fmt, data)
    sys.stdout.write(data.getvalue().decode("utf-8"))
    return summary


@click.command("export")
@click.option("--output", "-o", default=None, metavar="FILE",
              help="The file to write (overwritten whole); '-' or none: stdout (csv and jsonl only).")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"], case_sensitive=False),
              default=None, help="Default: from the extension of --output (.csv, .jsonl or .ndjson, "
                                 ".parquet); csv to stdout.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="At most this many runs, the newest (default: every run that matches).")
@store_options
def export(suite: str | None, scenario: str | None, agent: str | None, model: str | None, tier: str | None,
           status: str | None, batch_id: str | None, specialist: str | None, output: str | None,
           fmt: str | None, limit: int | None, worker_url: str | None, db_path: str | None) -> None:
    """Write stored runs to CSV, JSONL or Parquet: one row per run, newest first.

    The filters are those of `bench history`. CSV and Parquet have one column per field: the
    run's fields, telemetry.FIELD, eval.EVALUATOR.score/maxScore/status/details and
    metadata.KEY... (lists as JSON text); JSONL holds each run's stored record as `bench show
    --json` prints it. docs/export.md lists the columns. Parquet needs pyarrow.

    \b
    Examples:
      bench export -o runs.csv
      bench export --batch-id nightly-42 -o nightly-42.parquet
      bench export --suite py-bugs --agent oracle --format jsonl > runs.jsonl
      bench export --status failed --limit 100 -o failed.csv
    """
    from harness.results import ResultsError
    from harness.results.export import ExportError, export_file, require_pyarrow, stored_runs

    path, fmt = _destination(output, fmt.lower() if fmt else None)
    if fmt == "parquet":
        try:
            require_pyarrow()
        except ExportError as exc:
            raise _bad_input(f"--format parquet: {exc}") from None
    if specialist is not None:
        specialist = specialist_filter(specialist)
    values = {"suite": suite, "scenario": scenario, "agent": agent, "model": model, "tier": tier,
              "status": status, "batch_id": batch_id, "specialist": specialist}
    filters = {FILTERS[name]: value for name, value in values.items() if value is not None}

    def progress(done: int, total: int) -> None:
        if total > PROGRESS_EVERY and (done % PROGRESS_EVERY == 0 or done == total):
            click.echo(f"read {done}/{total} runs", err=True)

    hint: list[str] = []
    with open_store(worker_url, db_path) as client:
        where = client.destination
        try:
            if batch_id is not None and client.get_batch(batch_id) is None:
                raise click.ClickException(f"batch {batch_id!r} not found in {where} "
                                           "(bench batches lists the stored batches)")
            runs = stored_runs(client, filters, limit, progress)
            if path is None:
                summary = _to_stdout(runs, fmt)
            else:
                try:
                    summary = export_file(runs, fmt, path)
                except OSError as exc:
                    raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None
            if not summary.runs and specialist is not None:
                hint = _specialist_hint(client, specialist)
        except (ResultsError, ExportError) as exc:
            raise click.ClickException(str(exc)) from None
    if not summary.runs:
        click.echo(f"No runs match in {where}." if filters else f"No runs stored yet in {where}.", err=True)
        for line in hint:
            click.echo(line, err=True)
    shape = f"{summary.columns} columns" if summary.columns is not None else "one record per line"
    noun = "run" if summary.runs == 1 else "runs"
    if path is None:
        click.echo(f"Exported {summary.runs} {noun} ({fmt}, {shape}) to stdout", err=True)
    else:
        click.echo(f"Exported {summary.runs} {noun} ({fmt}, {shape}) to {path}")


# The filters of `bench history`, shared: the same option objects (names, choices, help).
export.params[:0] = [param for param in history.params if param.name in FILTERS]
