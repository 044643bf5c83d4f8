"""``bench report``: a stored batch, a comparison or a fleet run as one self-contained HTML file.

The pages are drawn by :mod:`harness.reports` (inline CSS and SVG, no scripts, nothing
fetched, a print stylesheet); the figures come from the results store through the results
client (the batch, its runs and their telemetry; the compare route of ``bench compare``), or
for a fleet from its ``fleet-results.json``. The file is written whole or not at all: to a
temporary file beside it, then renamed. docs/reports.md describes the pages.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import EXIT_BAD_INPUT
from harness.cli.store_options import open_store, store_options


def _bad_input(message: str) -> click.ClickException:
    error = click.ClickException(message)
    error.exit_code = EXIT_BAD_INPUT
    return error


def _safe_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return name[:80] or "report"


def _output_path(output: str | None, default_name: str) -> Path:
    """The file to write, checked before anything is read: its directory must exist."""
    path = Path(output).expanduser() if output else Path.cwd() / default_name
    if path.is_dir():
        raise _bad_input(f"--output {output}: is a directory; give a file name such as {default_name}")
    parent = path.parent
    if not parent.is_dir():
        raise _bad_input(f"--output {output}: the directory {parent} does not exist")
    return path


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


# ------------------------------------------------------------------------------ the three pages


def _batch_page(batch_id: str, worker_url: str | None, db_path: str | None) -> str:
    from harness.reports.batch import BatchNotFound, collect_batch, render_batch_report
    from harness.results import ResultsError

    with open_store(worker_url, db_path) as client:
        try:
            data = collect_batch(client, batch_id)
        except BatchNotFound as exc:
            raise click.ClickException(str(exc)) from None
        except ResultsError as exc:
            raise click.ClickException(str(exc)) from None
    return render_batch_report(data)


def _compare_page(side_a: str, side_b: str, worker_url: str | None, db_path: str | None,
                  **options: Any) -> tuple[str, dict[str, Any]]:
    from harness.reports.compare import collect_comparison, render_compare_report
    from harness.results import ResultsError

    with open_store(worker_url, db_path) as client:
        try:
            data = collect_comparison(client, side_a, side_b, **options)
        except ResultsError as exc:
            raise click.ClickException(str(exc)) from None
    return render_compare_report(data), data["result"]


def _stored_batch(run_id: str, worker_url: str | None, db_path: str | None) -> bool:
    """Whether the results store holds a batch ``run_id`` (a fleet stores its runs under its run
    id). An embedded store that does not exist is not created to find out."""
    from harness.results.location import default_db_path

    if not (worker_url or os.environ.get("ZE_BENCHMARKS_WORKER_URL")):
        if not Path(db_path or default_db_path()).is_file():
            return False
    try:
        with open_store(worker_url, db_path) as client:
            return client.get_batch(run_id) is not None
    except Exception:  # noqa: BLE001 - only a hint for the error message
        return False


def _fleet_page(run_id: str, fleet_dir: str | None, worker_url: str | None, db_path: str | None
                ) -> tuple[str, str]:
    """(the executive report, the fleet's run id)."""
    import json

    from harness.fleet import FleetError, find_run
    from harness.fleet.run_files import RESULTS_FILE
    from harness.reports.fleet import render_executive_report

    def in_store(problem: str) -> click.ClickException:
        if _stored_batch(run_id, worker_url, db_path):
            return click.ClickException(
                f"{problem}. Its runs are in the results store as batch {run_id}: `bench report {run_id}` "
                "renders them (the fleet's own figures need its fleet-results.json)")
        return click.ClickException(problem)

    try:
        run_dir = find_run(run_id, fleet_dir)
    except FleetError as exc:
        raise in_store(f"fleet run {run_id!r}: its results file is not available here ({exc})") from None
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        raise in_store(f"fleet run {run_id!r}: no {RESULTS_FILE} in {run_dir} yet (bench fleet status {run_id} "
                       "tells how far it got)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from None
    if not isinstance(results, dict):
        raise click.ClickException(f"{path}: not a fleet results file")
    return render_executive_report(results), str(results.get("run_id") or run_dir.name)


# ------------------------------------------------------------------------------------ command


@click.command("report")
@click.argument("batch_id", metavar="[BATCH]", required=False)
@click.option("--compare", "compare_sides", nargs=2, default=None, metavar="A B",
              help="Report `bench compare A B` instead of a batch (A and B as bench compare takes them).")
@click.option("--fleet", "fleet_run", default=None, metavar="RUN_ID",
              help="Report a fleet run (its executive report) instead of a batch.")
@click.option("--output", "-o", default=None, metavar="FILE.html",
              help="The file to write (default: report-ID.html in the current directory).")
@click.option("--title", default=None, help="The page's title (default: what the page reports).")
@click.option("--fleet-dir", default=None, metavar="DIR", help="With --fleet: the base directory the run was "
              "written to, when the run id is not one started on this machine.")
@click.option("--allow-mixed", is_flag=True, help="With --compare: as bench compare --allow-mixed.")
@click.option("--include-cached", is_flag=True, help="With --compare: as bench compare --include-cached.")
@click.option("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True), default=None,
              help="With --compare: the significance level (default 0.05; intervals at 1 - alpha).")
@store_options
def report(batch_id: str | None, compare_sides: tuple[str, str] | None, fleet_run: str | None, output: str | None,
           title: str | None, fleet_dir: str | None, allow_mixed: bool, include_cached: bool, alpha: float | None,
           worker_url: str | None, db_path: str | None) -> None:
    """Write one self-contained HTML report: a batch, a comparison or a fleet run.

    The page has inline CSS and SVG charts, no scripts and nothing fetched: it opens offline,
    can be mailed or archived as one file, and prints (a print stylesheet keeps table rows
    and charts whole). BATCH: the batch's figures (runs, pass rate with its 95% Wilson
    interval, mean score, cost), breakdowns by scenario, agent, model and tier, the failures
    with their class, every run, and latency percentiles per provider for dataset batches.
    --compare A B: the figures and verdict of `bench compare A B`, with a chart of the
    differences by scenario and their intervals. --fleet RUN_ID: the fleet's executive
    report, from its fleet-results.json.

    \b
    Examples:
      bench report nightly-42
      bench report nightly-42 -o reports/nightly-42.html --title "Nightly 42"
      bench report --compare nightly-41 nightly-42 -o compare.html
      bench report --compare agent=oracle,batch=b1 agent=echo,batch=b1
      bench report --fleet my-fleet-20261123T101500Z-1a2b3c4d -o fleet.html
    """
    modes = [name for name, given in (("BATCH", batch_id is not None), ("--compare", compare_sides is not None),
                                      ("--fleet", fleet_run is not None)) if given]
    if len(modes) != 1:
        raise click.UsageError("give one of BATCH, --compare A B or --fleet RUN_ID"
                               + (f" (not {' and '.join(modes)} together)" if modes else ""))
    compare_only = [name for name, given in (("--allow-mixed", allow_mixed), ("--include-cached", include_cached),
                                             ("--alpha", alpha is not None)) if given]
    if compare_only and compare_sides is None:
        verb = "goes" if len(compare_only) == 1 else "go"
        raise click.UsageError(f"{' and '.join(compare_only)} only {verb} with --compare")
    if fleet_dir is not None and fleet_run is None:
        raise click.UsageError("--fleet-dir goes with --fleet")

    if batch_id is not None:
        if not batch_id.strip():
            raise _bad_input("BATCH: an empty batch id")
        path = _output_path(output, f"report-{_safe_name(batch_id)}.html")
        document, kind = _batch_page(batch_id, worker_url, db_path), f"batch {batch_id}"
        verdict = None
    elif compare_sides is not None:
        side_a, side_b = compare_sides
        path = _output_path(output, f"report-{_safe_name(side_a)}-vs-{_safe_name(side_b)}.html")
        document, result = _compare_page(side_a, side_b, worker_url, db_path, alpha=alpha or 0.05,
                                         allow_mixed=allow_mixed, include_cached=include_cached)
        kind, verdict = f"comparison {side_a} vs {side_b}", result
    else:
        assert fleet_run is not None
        default = f"report-{_safe_name(Path(fleet_run).name)}.html"
        path = _output_path(output, default)
        document, fleet_id = _fleet_page(fleet_run, fleet_dir, worker_url, db_path)
        kind, verdict = f"fleet run {fleet_id}", None
    if title:
        from harness.reports.html import retitle

        document = retitle(document, title)
    _write_atomic(path, document)
    click.echo(f"Wrote the report of {kind} to {path.resolve()} ({_size(len(document.encode('utf-8')))})")
    if verdict is not None:
        click.echo(f"Verdict (score): {verdict.get('verdict')}")
        for reason in verdict.get("refused") or []:
            click.echo(f"Refused: {reason}", err=True)
