"""``bench dataset`` and ``bench datasets``: prompt datasets against several models at once.

The work is done by :mod:`harness.datasets.run` (plan, engine, results.jsonl, exports, store);
this module parses the options, shows progress per target, prints the summary (drawn by
:mod:`harness.cli.dataset_view`) and chooses the exit status (documented in docs/datasets.md,
"Exit status").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, fail
from harness.cli.live import Progress
from harness.cli.store_options import open_store, store_options



def _console():
    from harness.cli.render import make_console

    return make_console()


def _parse_limits(values: tuple[str, ...]) -> dict[str, int]:
    from harness.models.providers.registry import ALIASES, REGISTRY

    limits: dict[str, int] = {}
    for value in values:
        name, sep, number = value.partition("=")
        name = ALIASES.get(name.strip().lower(), name.strip().lower())
        if not sep or not number.strip().isdigit() or int(number) < 1:
            fail(f"--provider-limit {value!r}: expected PROVIDER=N with N >= 1 (e.g. openai=8)")
        if name not in REGISTRY:
            fail(f"--provider-limit {value!r}: unknown provider {name!r}")
        limits[name] = int(number)
    return limits


@click.command("dataset", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("dataset", required=False)
@click.option("--providers", "-p", default=None, metavar="P:M[,P:M...]",
              help="The models to run, e.g. openai:gpt-4o-mini,anthropic:claude-haiku-4-5,local:smollm2.")
@click.option("--base-url", default=None, metavar="URL",
              help="The server of openai-compatible:MODEL (or another base URL for a provider).")
@click.option("--concurrency", "-c", type=click.IntRange(min=1), default=8, show_default=True,
              help="Requests in flight in all.")
@click.option("--provider-limit", "provider_limits", multiple=True, metavar="PROVIDER=N",
              help="Requests in flight for one provider (repeatable; default: --concurrency). Halved on "
                   "each 429 and grown back on success.")
@click.option("--repeat", type=click.IntRange(min=1), default=None,
              help="Answers per case and model (default: each case's own `repeat`, else 1).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N cases.")
@click.option("--filter", "filters", multiple=True, metavar="ID|CATEGORY",
              help="Only cases with this id or category (globs allowed; repeatable or comma-separated).")
@click.option("--stream", is_flag=True, help="Stream answers: time to first token and output tokens/s.")
@click.option("--timeout", "timeout_s", type=float, default=60.0, show_default=True, metavar="S",
              help="Seconds one request may take.")
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Further attempts after a 429, 5xx, timeout or lost connection.")
@click.option("--output", "-o", "output_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for results.jsonl and the exports (default results/datasets/NAME-BATCH).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Complete the run in DIR: only cells with no result there are sent.")
@click.option("--retry-errors", is_flag=True, help="With --resume: also redo the cells whose result is an error.")
@click.option("--shard", default=None, metavar="I/N", help="Run only slice I of N of the cells (stable hash).")
@click.option("--cache", type=click.Choice(["off", "replay"]), default="off", show_default=True,
              help="replay: answer from the response cache when the same request and repeat were answered "
                   "before (marked cached), else call and record.")
@click.option("--judge", "judge", default=None, metavar="PROVIDER:MODEL|none",
              help="The model that scores llm-rubric assertions (default: the first provider with a key).")
@click.option("--judge-base-url", default=None, metavar="URL", help="Server of the judge model.")
@click.option("--no-responses", is_flag=True, help="Do not keep the answers' text in the results.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write JUnit XML here.")
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None, metavar="RATE",
              help="Exit 1 when a model's pass rate (errors count as not passed) is below RATE (0-1).")
@click.option("--dry-run", is_flag=True, help="Validate, print the matrix and an estimated cost; send nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json to stdout, nothing else.")
@click.option("--no-store", is_flag=True, help="Do not store the runs in the results store.")
@store_options
def dataset(dataset: str | None, providers: str | None, base_url: str | None, concurrency: int,
            provider_limits: tuple[str, ...], repeat: int | None, limit: int | None, filters: tuple[str, ...],
            stream: bool, timeout_s: float, retries: int, output_dir: Path | None, resume_dir: Path | None,
            retry_errors: bool, shard: str | None, cache: str, judge: str | None, judge_base_url: str | None,
            no_responses: bool, junit_path: Path | None, fail_under: float | None, dry_run: bool, quiet: bool,
            as_json: bool, no_store: bool, worker_url: str | None, db_path: str | None) -> None:
    """Run a prompt DATASET (a file, or a built-in name: `bench datasets`) against several models
    at once, grade every answer, and report pass rate, latency and cost per model.

    Every finished (case, model, repeat) is appended to results.jsonl in the output directory at
    once; Ctrl-C stops sending, keeps what finished and prints the --resume command (a second
    Ctrl-C cancels the requests in flight). At the end: results.json, results.csv, summary.json,
    JUnit XML with --junit, and one run per cell in the results store (batch = the run's batch
    id; suite = dataset, scenario = case id, tier dataset, agent = provider), so `bench batch`,
    `bench compare` and `bench leaderboard` read it.

    \b
    Providers: anthropic, openai, openrouter, google, groq, together, mistral, deepseek,
    ollama, vllm, openai-compatible (with --base-url), local (the shipped SmolLM2 model).
    A missing key is reported before anything is sent.

    \b
    Exit status: 0 done; 1 a model below --fail-under, nothing answered (every cell an error:
    the line says which kind, e.g. connect, dns or timeout, and the URL), or runs not stored;
    2 bad input; 130 interrupted (resume with --resume DIR).

    \b
    Examples:
      bench datasets
      bench dataset reasoning --providers local:smollm2 --limit 3
      bench dataset reasoning -p openai:gpt-4o-mini,anthropic:claude-haiku-4-5 --dry-run
      bench dataset my-cases.yaml -p openai:gpt-4o-mini -c 32 --repeat 3 --junit junit.xml --fail-under 0.8
      bench dataset coding -p openai-compatible:qwen2.5 --base-url http://127.0.0.1:8080/v1 --stream
      bench dataset --resume results/datasets/reasoning-BATCH --retry-errors
    """
    from harness.datasets.model import DatasetError
    from harness.datasets.planning import DatasetRunError, DatasetRunOptions, prepare
    from harness.grading.evaluators.llm_judge import JudgeChoice
    from harness.scenarios.plan import PlanError, parse_shard
    from harness.models.providers.registry import parse_targets

    if retry_errors and resume_dir is None:
        fail("--retry-errors needs --resume DIR (the run whose errored cells to redo)")
    if resume_dir is not None and output_dir is not None and Path(resume_dir) != Path(output_dir):
        fail("--resume DIR writes to DIR; leave --output out")
    try:
        targets = parse_targets(providers, base_url=base_url) if providers else []
        shard_pair = parse_shard(shard) if shard else None
        judge_choice = JudgeChoice.parse(judge, judge_base_url)
    except (ValueError, PlanError) as exc:
        fail(str(exc))
    split_filters = [f.strip() for value in filters for f in value.split(",") if f.strip()]
    options = DatasetRunOptions(
        dataset=dataset, targets=targets, output_dir=resume_dir or output_dir, concurrency=concurrency,
        provider_limits=_parse_limits(provider_limits), repeat=repeat, limit=limit, filters=split_filters,
        stream=stream, timeout_s=timeout_s, max_attempts=retries + 1, shard=shard_pair, cache=cache,
        judge=judge_choice, save_responses=not no_responses, resume=resume_dir is not None,
        retry_errors=retry_errors)
    try:
        run = prepare(options, require_keys=not dry_run)
    except DatasetError as exc:
        fail(str(exc))
    except DatasetRunError as exc:
        fail(str(exc))
    if dry_run:
        _print_dry_run(run, as_json)
        return
    _execute(run, quiet=quiet or as_json, as_json=as_json, junit_path=junit_path, fail_under=fail_under,
             store=not no_store, worker_url=worker_url, db_path=db_path)


def _print_dry_run(run: Any, as_json: bool) -> None:
    from harness.cli.plan_view import money
    from harness.datasets.planning import estimate

    est = estimate(run)
    cases = len({p.case.id for p in run.cells})
    repeats = sorted({p.repeat for p in run.cells})
    if as_json:
        click.echo(json.dumps({"dataset": run.dataset.name, "cases": cases, "targets": [t.spec for t in run.targets],
                               "repeats": len(repeats), "cells": len(run.cells), "estimate": est}, indent=2))
        return
    console = _console()
    for note in run.notes:
        console.print(note, highlight=False)
    console.print(f"{run.dataset.name} {run.dataset.version} ({run.dataset.source}): {cases} case(s) x "
                  f"{len(run.targets)} model(s) x {len(repeats)} repeat(s) = {len(run.cells)} request(s)",
                  highlight=False)
    from rich.table import Table

    table = Table(box=None)
    for name in ("model", "requests", "input tokens (est.)", "output tokens (max)", "cost (at most)"):
        table.add_column(name, justify="left" if name == "model" else "right")
    total = 0.0
    unknown = False
    for spec, row in est["targets"].items():
        cost = row["maxCostUsd"]
        unknown = unknown or cost is None
        total += cost or 0.0
        table.add_row(spec, str(row["cells"]), f"{row['tokensIn']:,}", f"{row['maxTokensOut']:,}",
                      "unknown (no price)" if cost is None else money(cost))
    console.print(table)
    console.print(f"estimated cost: at most {money(total)}" + (" plus the unpriced models" if unknown else "")
                  + "; nothing was sent (--dry-run)", highlight=False)


def _execute(run: Any, *, quiet: bool, as_json: bool, junit_path: Path | None, fail_under: float | None,
             store: bool, worker_url: str | None, db_path: str | None) -> None:
    import asyncio

    from harness.cli.dataset_view import progress_view, render_summary
    from harness.control import BatchControl, handle_sigint
    from harness.datasets.exports import write_junit
    from harness.datasets.run import execute, resolve_rubric_judge
    from harness.datasets.storing import store as store_runs
    from harness.models.providers import ProviderError

    console = _console()
    if not quiet:
        for note in run.notes:
            click.echo(note, err=True)
        click.echo(f"{run.dataset.name}: {len(run.cells)} request(s) to {', '.join(t.spec for t in run.targets)} "
                   f"-> {run.output_dir}", err=True)
    _, _, judge_identity = resolve_rubric_judge(run)
    if run.judge_note and not quiet:
        click.echo(run.judge_note, err=True)
    client = open_store(worker_url, db_path) if store else None
    control = BatchControl(grace_s=0)
    progress = Progress(progress_view(run), quiet=quiet)

    def first() -> None:
        progress.note("stopping: nothing new is sent; waiting for the requests in flight (Ctrl-C again to cancel)")

    def second() -> None:
        progress.note("cancelling the requests in flight")

    try:
        with handle_sigint(control, on_first=first, on_second=second), progress:
            result = asyncio.run(execute(run, on_event=progress, control=control))
    except ProviderError as exc:  # a provider that cannot be built (e.g. the local model missing)
        fail(str(exc), EXIT_FAILED)
    except Exception as exc:  # noqa: BLE001 - e.g. the local model server failing to start
        if type(exc).__name__ == "LocalModelError":
            fail(str(exc), EXIT_FAILED)
        raise
    if junit_path is not None:
        write_junit(junit_path, result.cells, run.dataset.name)
    if client is not None:
        with client:
            store_runs(result, client, judge_identity)
    if as_json:
        click.echo(json.dumps(result.summary, indent=2))
    else:
        render_summary(result.summary, console)
        console.print(f"results: {run.output_dir} (results.jsonl, results.json, results.csv, summary.json"
                      + (f"; JUnit {junit_path}" if junit_path else "") + ")", highlight=False)
        if client is not None and not result.store_errors:
            console.print(f"stored as batch {run.batch_id} ({result.stored} runs): bench batch {run.batch_id}",
                          highlight=False)
    code = 0
    for problem in result.store_errors[:5]:
        click.echo(f"error: not stored: {problem}", err=True)
    if result.store_errors:
        code = EXIT_FAILED
    blocks = result.summary.get("targets", {})
    if fail_under is not None:
        for spec, block in blocks.items():
            rate = block.get("pass_rate_all")
            if rate is None or rate < fail_under:
                shown = "no graded cell" if rate is None else f"{rate:.1%}"
                click.echo(f"{spec}: pass rate {shown} is below --fail-under {fail_under:.1%}", err=True)
                code = EXIT_FAILED
    from harness.datasets.summary import no_answer_reason
    from harness.models.providers.failures import safe_url

    nothing = no_answer_reason(result.cells, {t.spec: safe_url(t.base_url or "") or None for t in run.targets})
    if nothing is not None:
        click.echo(f"error: {nothing}", err=True)
        code = EXIT_FAILED
    if result.interrupted:
        click.echo(f"interrupted: {len(result.cells)} of {run.planned} cell(s) done; resume with: "
                   f"bench dataset --resume {run.output_dir}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if code:
        sys.exit(code)


@click.command("datasets", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def datasets(as_json: bool) -> None:
    """List the built-in datasets (name them to `bench dataset`) with their case counts."""
    from harness.datasets.format import builtin_datasets

    found = builtin_datasets()
    if as_json:
        click.echo(json.dumps([{"name": b.name, "cases": b.cases, "description": b.description} for b in found],
                              indent=2))
        return
    console = _console()
    from rich.table import Table

    table = Table(box=None)
    table.add_column("name")
    table.add_column("cases", justify="right")
    table.add_column("description")
    for b in found:
        table.add_row(b.name, str(b.cases), b.description)
    console.print(table)
    console.print("Run one: bench dataset NAME --providers PROVIDER:MODEL (bench dataset --help)", highlight=False)
