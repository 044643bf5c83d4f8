"""``mint``: validate specialist templates, enrich their documentation, mint benchmark snapshots.

Thin layer over :mod:`harness.specialists` and :mod:`harness.mint`; SDKs load only when
``mint enrich`` actually calls a model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import FriendlyGroup, fail
from harness.cli.store_options import db_option
from harness.specialists import (TemplateError, load_specialist, missing_documentation, read_json5, resolve_template,
                                 template_family, template_warnings, validate_template)

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _fail(message: str, code: int = EXIT_FAILED) -> None:
    """:func:`~harness.cli.errors.fail`, exit 1 unless told (2 for bad input: a template, an option)."""
    fail(message, code)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def comparison_lines(comparison: dict[str, Any]) -> list[str]:
    """A person's reading of a snapshot's ``benchmarks.comparison``."""
    c = comparison
    cells = c.get("cells") or {}
    lines = [f"Runs counted: {c['baseline_runs']} baseline, {c['specialist_runs']} with the specialist; "
             f"cells paired: {cells.get('paired', 0)} ({cells.get('baseline_only', 0)} only baseline, "
             f"{cells.get('specialist_only', 0)} only specialist)"]
    if c["improvement"] is not None:
        pct = "" if c["improvement_pct"] is None else f" ({c['improvement_pct']:+.1f}%)"
        lines.append(f"Mean score on the paired cells: baseline {_fmt(c['baseline_avg_score'])} -> specialist "
                     f"{_fmt(c['specialist_avg_score'])}: {c['improvement']:+.3f}{pct}")
    if c["p_value"] is not None:
        interval = ("" if c["ci_low"] is None else
                    f"{c['confidence_level']:.0%} CI of the difference [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}], ")
        lines.append(f"{interval}p = {c['p_value']:.3g} ({c['test']}: {c.get('test_reason') or ''})")
    for reason in c.get("refused") or []:
        lines.append(f"Not comparable: {reason}")
    for note in c.get("notes") or []:
        lines.append(f"Note: {note}")
    lines.append(f"Verdict: {c['verdict']}")
    return lines


def _print_models(comparison: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    models = comparison.get("models_compared") or []
    if len(models) < 2:
        return
    table = Table(title="Per agent and model")
    for col in ("agent", "model", "baseline", "specialist", "improvement", "pairs", "p", "verdict"):
        table.add_column(col)
    for m in models:
        table.add_row(m.get("agent", ""), m["model"], _fmt(m["baseline_score"]), _fmt(m["specialist_score"]),
                      "n/a" if m["improvement"] is None else f"{m['improvement']:+.3f}",
                      str(m.get("paired_samples", 0)),
                      "n/a" if m["p_value"] is None else f"{m['p_value']:.3g}", m["verdict"])
    Console().print(table)


class _MintGroup(FriendlyGroup):
    program = "mint"


@click.group(cls=_MintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zebench")
def main() -> None:
    """Specialist templates: validate them, enrich their documentation, mint snapshots.

    A TEMPLATE is a path (templates/python-bugfixer.json5), a bare name (python-bugfixer)
    or a scoped name (@zebench/python-bugfixer). It resolves to, first match wins:

    \b
      templates/<name>/enriched/<version>/enriched-<NNN>.json5   (highest NNN)
      templates/<name>/<version>/<name>.json5
      templates/<name>.json5

    \b
    Examples:
      mint validate templates/python-bugfixer.json5
      mint enrich python-bugfixer --provider anthropic
      mint snapshot python-bugfixer --batch-id my_batch --output snapshots
    """


_templates_dir = click.option(
    "--templates-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Where bare template names are looked up (default: $ZE_BENCHMARKS_TEMPLATES_DIR or the repo's templates/).",
)


@main.command("validate")
@click.argument("template")
@_templates_dir
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def validate_cmd(template: str, templates_dir: Path | None, as_json: bool) -> None:
    """Check TEMPLATE against the template schema, and that its documentation files exist.

    Validates the file TEMPLATE resolves to and, when TEMPLATE is itself a file, that file
    too. Each problem names the field (persona.purpose, documentation[2].path); a
    documentation path (or file:// URL) whose file is missing is a problem, http(s) URLs are
    not fetched. A key the schema does not know is a warning: it is kept, and the rest is
    checked. Exit status 2 when any file is invalid.

    \b
    Example:
      mint validate templates/python-bugfixer.json5
    """
    try:
        resolved = resolve_template(template, templates_dir)
    except TemplateError as exc:
        _fail(str(exc), EXIT_BAD_INPUT)
    files = [resolved.path]
    if Path(template).is_file() and Path(template).resolve() != resolved.path.resolve():
        files.insert(0, Path(template))
    report = []
    for path in files:
        try:
            doc = read_json5(path)
        except TemplateError as exc:
            report.append({"path": str(path), "valid": False, "issues": [{"field": "", "message": str(exc)}],
                           "warnings": []})
            continue
        issues = sorted(validate_template(doc) + missing_documentation(doc, template_family(path)[1]),
                        key=lambda i: i.field)
        entry: dict[str, Any] = {"path": str(path), "valid": not issues,
                                 "issues": [{"field": i.field, "message": i.message} for i in issues],
                                 "warnings": template_warnings(doc, path)}
        if not issues:
            entry.update(name=doc["name"], version=doc["version"])
        report.append(entry)
    if as_json:
        click.echo(json.dumps({"valid": all(r["valid"] for r in report), "files": report}, indent=2))
    else:
        for r in report:
            for warning in r["warnings"]:
                click.echo(f"warning: {warning}", err=True)
            if r["valid"]:
                click.echo(f"valid: {r['path']} ({r['name']} {r['version']})")
            else:
                for issue in r["issues"]:
                    if issue["message"].startswith(r["path"]):  # a read error names the file itself
                        click.echo(f"invalid: {issue['message']}", err=True)
                    else:
                        where = issue["field"] or "(top level)"
                        click.echo(f"invalid: {r['path']}: {where}: {issue['message']}", err=True)
    if not all(r["valid"] for r in report):
        sys.exit(EXIT_BAD_INPUT)


@main.command("snapshot")
@click.argument("template")
@click.option("--batch-id", required=True, help="The batch whose runs prove (or not) the specialist.")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("snapshots"),
              show_default=True, help="Snapshots go to OUTPUT/<name without scope>/<version>/snapshot-NNN.json5.")
@click.option("--worker-url", default=None, help="Results worker URL (default $ZE_BENCHMARKS_WORKER_URL; "
                                                 "unset: the embedded store).")
@db_option("Embedded store file (default here: {store}).")
@_templates_dir
@click.option("--json", "as_json", is_flag=True, help="Print the snapshot path and comparison as JSON.")
def snapshot_cmd(template: str, batch_id: str, output: Path, worker_url: str | None, db_path: str | None,
                 templates_dir: Path | None, as_json: bool) -> None:
    """Mint a snapshot of TEMPLATE with the runs of batch BATCH_ID.

    Runs without the specialist are the baseline; runs with this specialist's name and
    version are the specialist side (a batch without them is refused, exit status 1). Only
    cells both sides ran with the same agent and model are compared (suite, scenario, tier,
    iteration); repeats of a scenario are clustered. The snapshot holds every run, the means,
    the difference with its 95% interval, the test and p-value, and a verdict: specialist
    better, baseline better, no detectable difference, not enough runs, or not comparable
    (the sides differ in more than the specialist, e.g. agent or model). It is validated
    against the snapshot schema before it is written, and never overwrites a snapshot.

    \b
    Example (baseline and specialist runs in one batch, same agent and model, then mint):
      bench py-bugs --tier L1 --agent anthropic --model claude-sonnet-4-6 --batch-id cmp --iterations 3
      bench py-bugs --tier L1 --agent anthropic --model claude-sonnet-4-6 --specialist python-bugfixer \\
        --batch-id cmp --iterations 3
      mint snapshot python-bugfixer --batch-id cmp --output snapshots
    """
    from harness.mint import MintError, mint_snapshot
    from harness.results import ResultsError, open_client

    try:
        specialist = load_specialist(template, templates_dir)
    except TemplateError as exc:
        _fail(str(exc), EXIT_BAD_INPUT)
    try:
        with open_client(worker_url=worker_url, db_path=db_path) as client:
            result = mint_snapshot(specialist, batch_id, output, client)
    except (MintError, ResultsError) as exc:
        _fail(str(exc))
    for where in result.left_out:
        click.echo(f"warning: {specialist.source}: {where}: unknown key, left out of the snapshot", err=True)
    comparison = result.snapshot["benchmarks"]["comparison"]
    if as_json:
        click.echo(json.dumps({"path": str(result.path), "snapshot_id": result.snapshot_id,
                               "template": str(specialist.source), "batch_id": batch_id,
                               "excluded_runs": result.excluded, "left_out_keys": result.left_out,
                               "comparison": comparison}, indent=2))
        return
    click.echo(f"Snapshot minted: {result.path} (id {result.snapshot_id})")
    click.echo(f"Template: {specialist.name} {specialist.version} ({specialist.source})")
    click.echo(f"Batch: {batch_id}, {len(result.snapshot['benchmarks']['runs'])} runs, "
               f"{len(result.excluded)} left out of the comparison")
    for line in comparison_lines(comparison):
        click.echo(f"  {line}")
    _print_models(comparison)


@main.command("enrich")
@click.argument("template")
@click.option("--provider", type=click.Choice(["anthropic", "openai", "openrouter", "openai-compatible"]),
              default="anthropic", show_default=True, help="Model provider for the enrichment calls.")
@click.option("--model", default=None, help="Model id (default per provider: anthropic claude-haiku-4-5, "
                                            "openai gpt-4o-mini, openrouter anthropic/claude-haiku-4.5).")
@click.option("--base-url", default=None, help="API base URL (required for openai-compatible, e.g. a local llama.cpp server).")
@click.option("--concurrency", type=click.IntRange(min=1), default=3, show_default=True,
              help="Documents enriched at the same time.")
@click.option("--force", is_flag=True, help="Enrich entries that already have an enrichment again.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds allowed for each document fetch and model call.")
@click.option("--no-cache", is_flag=True, help="Do not answer from (or write to) the model response cache.")
@_templates_dir
@click.option("--json", "as_json", is_flag=True, help="Print per-document outcomes as JSON.")
def enrich_cmd(template: str, provider: str, model: str | None, base_url: str | None, concurrency: int,
               force: bool, timeout_s: float, no_cache: bool, templates_dir: Path | None, as_json: bool) -> None:
    """Add model-written metadata to each documentation entry of TEMPLATE.

    Every entry's source (a path relative to the template, a file:// URL or an https URL) is
    read as text and the model is asked for summary, key_concepts, use_cases,
    relevant_for_tasks, code_patterns and relevance_to_specialist. The result is written as
    the next templates/<name>/enriched/<version>/enriched-NNN.json5, which resolution then
    prefers. Entries already enriched are skipped unless --force. Exit status 1 when any
    entry failed (the others are still written).

    \b
    Examples:
      mint enrich templates/python-bugfixer.json5
      mint enrich node-feature-builder --provider openai --model gpt-4o-mini --concurrency 5
      mint enrich python-bugfixer --provider openai-compatible --base-url http://127.0.0.1:8080/v1 --model local
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.mint.enrich import DEFAULT_MODELS, EnrichError, enrich_template
    from harness.models.providers import ProviderError, get_provider

    try:
        specialist = load_specialist(template, templates_dir)
    except TemplateError as exc:
        _fail(str(exc), EXIT_BAD_INPUT)
    for warning in specialist.warnings:
        click.echo(f"warning: {warning}", err=True)
    model = model or DEFAULT_MODELS.get(provider)
    if not model:
        _fail(f"--model is required for provider {provider}", EXIT_BAD_INPUT)
    try:
        llm = get_provider(provider, base_url=base_url)
    except ProviderError as exc:
        _fail(str(exc))

    def chat(request):
        return llm.chat(request, use_cache=not no_cache)

    docs = specialist.template.get("documentation") or []
    progress = Progress(TextColumn("[bold]enrich[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), disable=as_json or not sys.stderr.isatty(),
                        console=Console(stderr=True))
    try:
        with progress:
            task = progress.add_task("", total=len(docs))
            result = enrich_template(
                specialist, chat, model, concurrency=concurrency, force=force, timeout_s=timeout_s,
                on_done=lambda o: progress.update(task, advance=1, description=f"{o.status}: {o.source}"),
            )
    except EnrichError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps({"template": str(specialist.source), "model": model, **result.to_dict()}, indent=2))
    else:
        for o in result.outcomes:
            if o.status == "failed":
                click.echo(f"failed: documentation[{o.index}] {o.source}: {o.error}", err=True)
        if result.path:
            click.echo(f"Enriched template: {result.path}")
        else:
            click.echo("No new enriched template written (nothing was enriched).")
        click.echo(f"Documents enriched: {result.count('enriched')}, skipped: {result.count('skipped')}, "
                   f"failed: {result.count('failed')}")
    if result.failed:
        sys.exit(EXIT_FAILED)


if __name__ == "__main__":  # pragma: no cover
    main()
