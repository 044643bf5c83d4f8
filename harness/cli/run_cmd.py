"""``bench SUITE SCENARIO``: run a scenario benchmark and store every run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

DEFAULT_AGENT = "echo"


def _fail(message: str, code: int = 2) -> None:
    """One-line error on stderr and a non-zero exit (bad input: 2)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.command("run")
@click.argument("suite")
@click.argument("scenario")
@click.option("--tier", default="L1", show_default=True,
              help="Prompt tier: L0, L1, L2, L3, Lx, or a full label such as L1-basic.")
@click.option("--agent", default=None,
              help=f"Agent to run (default: {DEFAULT_AGENT}, the do-nothing baseline that needs no API key). "
                   "See `bench list` for the agents installed.")
@click.option("--model", default=None, help="Model for the agent (the agent's default when omitted).")
@click.option("--base-url", default=None, help="OpenAI-compatible server for agents that take one.")
@click.option("-n", "--iterations", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of the scenario, all in one batch.")
@click.option("-j", "--parallel", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs at once (each in its own workspace).")
@click.option("--batch-id", default=None, help="Batch to store the runs in (default: a new batch_<ms>_<rand>).")
@click.option("--skip-warmup", is_flag=True, help="Do not run the scenario's warmup.")
@click.option("--keep-workspace", is_flag=True,
              help="Keep each run's workspace (under --workspaces-dir) for inspection.")
@click.option("--timeout-minutes", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Override the scenario's timeout_minutes.")
@click.option("--max-turns", type=click.IntRange(min=1), default=None, help="Agent turn budget (default 50).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Total token budget per run.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, help="Cost budget per run, USD.")
@click.option("--no-cache", is_flag=True, help="Bypass the model response cache.")
@click.option("--suites-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_SUITES_DIR",
              default=None, help="Where suites live (default: $ZE_BENCHMARKS_SUITES_DIR, else the repository's suites/).")
@click.option("--workspaces-dir", type=click.Path(file_okay=False, path_type=Path),
              envvar="ZE_BENCHMARKS_WORKSPACES_DIR", default=None,
              help="Where run workspaces go (default: $ZE_BENCHMARKS_WORKSPACES_DIR, else "
                   "~/.cache/zebench/workspaces; never inside the checkout).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "bwrap", "none"]), envvar="ZE_BENCHMARKS_SANDBOX",
              default="auto", show_default=True,
              help="How agent and scenario commands are confined: bwrap (private filesystem, processes and "
                   "network), none (process group only), auto (bwrap where it works, else none with a warning).")
@click.option("--judge", "judge", default=None, metavar="none|PROVIDER:MODEL",
              help="The LLM judge: none to turn it off, or e.g. anthropic:claude-sonnet-4-6 (default: the "
                   "scenario's judge model, else the first provider with a key).")
@click.option("--judge-base-url", default=None, metavar="URL",
              help="An OpenAI-compatible server for the judge (no provider key is sent there).")
@click.option("--worker-url", envvar="ZE_BENCHMARKS_WORKER_URL", default=None, metavar="URL",
              help="Results worker (default: $ZE_BENCHMARKS_WORKER_URL, else the embedded store).")
@click.option("--db", "db_path", envvar="ZE_BENCHMARKS_DB", default=None, metavar="FILE",
              help="SQLite results file for the embedded store (default results/bench.db).")
@click.option("--specialist", default=None, metavar="TEMPLATE",
              help="Run with a specialist template's system prompt (a path, name or @scope/name; see `mint --help`). "
                   "Without --agent, the template's first preferred model picks agent and model.")
@click.option("--mint-template", default=None, metavar="TEMPLATE",
              help="After the runs, mint a snapshot of TEMPLATE from this batch (see `mint snapshot --help`).")
@click.option("--mint-output", type=click.Path(file_okay=False, path_type=Path), default=Path("snapshots"),
              show_default=True, help="Where --mint-template writes the snapshot.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored batch and run records as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Show each evaluation's details (command output, checks).")
def run(suite: str, scenario: str, tier: str, agent: str | None, model: str | None, base_url: str | None,
        iterations: int, parallel: int, batch_id: str | None, skip_warmup: bool, keep_workspace: bool,
        timeout_minutes: float | None, max_turns: int | None, max_tokens: int | None, max_cost: float | None,
        no_cache: bool, suites_dir: Path | None, workspaces_dir: Path | None, sandbox_mode: str,
        judge: str | None, judge_base_url: str | None, worker_url: str | None,
        db_path: str | None, specialist: str | None, mint_template: str | None, mint_output: Path,
        as_json: bool, verbose: bool) -> None:
    """Run SCENARIO of SUITE: copy its fixture, run the agent, validate, score, store.

    Every run is stored (in results/bench.db unless a worker URL is set), whatever its
    outcome. The exit status is 0 when every run was stored, whether or not it passed;
    1 when a run could not be stored or the harness itself failed; 2 for bad input.

    \b
    Examples:
      bench py-bugs pagination-off-by-one --agent oracle
      bench py-bugs pagination-off-by-one --tier L2 --agent anthropic --iterations 3 --parallel 3
      bench node-features retry-backoff --agent openai --base-url http://127.0.0.1:8080/v1
      bench py-bugs pagination-off-by-one --agent oracle --json
      bench py-bugs pagination-off-by-one --specialist python-bugfixer --iterations 3 \\
          --mint-template python-bugfixer --mint-output snapshots
    """
    from harness.agents import UnknownAgentError, agent_names
    from harness.agents.base import Budgets
    from harness.runner import RunOptions
    from harness.scenarios import ScenarioError, load_scenario, resolve_prompt

    from worker.schema import id_problem

    if batch_id is not None and id_problem(batch_id):
        _fail(f"--batch-id: {id_problem(batch_id)}")
    try:
        loaded = load_scenario(suite, scenario, suites_dir)
        prompt = resolve_prompt(loaded, tier)
    except ScenarioError as exc:
        _fail(str(exc))
    spec, mint_spec = None, None
    if agent and agent.startswith("specialist:"):  # DESIGN's `specialist:<name>` agent spelling
        specialist, agent = specialist or agent.split(":", 1)[1], None
    if specialist or mint_template:
        from harness.specialists import TemplateError, load_specialist

        try:
            if specialist:
                spec = load_specialist(specialist).for_scenario(loaded)
                agent, model = spec.agent_and_model(agent, model)
            if mint_template:  # checked now, so a bad template does not surface after the runs
                mint_spec = load_specialist(mint_template)
        except TemplateError as exc:
            _fail(str(exc))
    agent_name = agent or DEFAULT_AGENT
    if agent_name not in agent_names():
        _fail(str(UnknownAgentError(f"unknown agent {agent_name!r}; available: {', '.join(agent_names())}")))
    for warning in loaded.warnings:
        click.echo(f"warning: {warning}", err=True)

    budgets = Budgets()
    if max_turns is not None:
        budgets.max_turns = max_turns
    budgets.max_total_tokens = max_tokens
    budgets.max_cost_usd = max_cost
    agent_options: dict[str, Any] = {}
    if base_url:
        agent_options["base_url"] = base_url
    _preflight(agent_name, model, agent_options, max_cost)
    judge_choice = _judge_choice(judge, judge_base_url)
    sandbox_kind = _sandbox_kind(sandbox_mode, as_json)
    options = RunOptions(
        agent=agent_name, model=model, iterations=iterations, parallel=parallel, batch_id=batch_id,
        skip_warmup=skip_warmup, keep_workspace=keep_workspace, workspaces_root=workspaces_dir,
        budgets=budgets, timeout_minutes=timeout_minutes, agent_options=agent_options, use_cache=not no_cache,
        specialist=spec,
        sandbox=sandbox_kind, judge=judge_choice,
    )
    execute(loaded, prompt, options, worker_url, db_path, as_json,
            mint=(mint_spec, mint_output) if mint_spec is not None else None, verbose=verbose)


def _preflight(agent_name: str, model: str | None, agent_options: dict[str, Any], max_cost: float | None) -> None:
    """Refuse (exit 2), before any run, an agent that cannot work at all (no API key, no CLI)
    and a cost budget that could not be enforced (a model without a price)."""
    from harness.agents import create_agent

    try:
        agent = create_agent(agent_name, model=model, **agent_options)
    except ValueError as exc:
        _fail(f"agent {agent_name}: {exc}")
    from harness.agents.base import Budgets
    from harness.runner import unenforceable_budget

    check = getattr(agent, "preflight", None)
    problem = check() if check is not None else None
    if problem:
        _fail(problem)
    problem = unenforceable_budget(agent, Budgets(max_cost_usd=max_cost))
    if problem:
        _fail(problem)


def _judge_choice(judge: str | None, base_url: str | None) -> Any:
    from harness.evaluators.llm_judge import JudgeChoice

    try:
        return JudgeChoice.parse(judge, base_url)
    except ValueError as exc:
        _fail(f"--judge: {exc}")


def _sandbox_kind(mode: str, quiet: bool) -> str:
    """The backend for ``--sandbox MODE``; a fallback is said on stderr, an impossible bwrap is exit 2."""
    from harness.sandbox import SandboxUnavailable, resolve_mode

    try:
        choice = resolve_mode(mode)
    except SandboxUnavailable as exc:
        _fail(f"--sandbox bwrap: {exc}")
    if choice.fallback_reason:
        click.echo(f"warning: sandbox: bwrap is not usable here ({choice.fallback_reason}); commands run with "
                   "process-group confinement only (--sandbox none): they can read the suites and the "
                   "harness's environment. `bench doctor` says how to fix it.", err=True)
    return choice.kind


def execute(scenario: Any, prompt: Any, options: Any, worker_url: str | None, db_path: str | None,
            as_json: bool, mint: tuple[Any, Path] | None = None, verbose: bool = False) -> None:
    """Run the batch with a progress display, print the report, exit with the documented status."""
    from rich.console import Console

    from harness.cli.report import batch_json, batch_summary_table, make_console, render_run, run_json
    from harness.cli.store_options import open_store
    from harness.evaluators.llm_judge import resolve_judge
    from harness.runner import run_batch

    err_console = Console(stderr=True)
    if scenario.llm_judge.enabled:
        # Said before the runs, so a judge that will not run is no surprise afterwards.
        click.echo(resolve_judge(scenario.llm_judge, options.judge).describe(), err=True)
    from harness.control import BatchControl, handle_sigint

    control = options.control = BatchControl()

    def first_interrupt() -> None:
        err_console.print(f"interrupting: no new runs start; running agents stop at their next turn, and their "
                          f"commands are killed in {control.grace_s:g} s (Ctrl-C again to kill them now)")

    def second_interrupt() -> None:
        err_console.print("killing every running command now")

    client = open_store(worker_url, db_path)
    try:
        with handle_sigint(control, first_interrupt, second_interrupt), \
                _ProgressDisplay(err_console, options.iterations, enabled=not as_json) as progress:
            outcome = run_batch(scenario, prompt, options, client, progress=progress.update)
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
        for i, record in enumerate(records):
            if len(records) > 1:
                console.rule(f"Iteration {i + 1}/{len(records)}")
            render_run(console, record, verbose=verbose)
            kept = outcome.runs[i].workspace
            if kept:
                console.print(f"  Kept workspace: {kept}")
        if outcome.warmup is not None and not outcome.warmup.ok:
            console.print(f"[red]Warmup failed: {outcome.warmup.error}[/red]")
        if len(records) > 1:
            console.print()
            console.print(batch_summary_table(stored_batch or outcome.batch))
    all_stored = _report_storage(outcome, where, spool_dir, quiet=as_json)
    if outcome.interrupted:
        from harness.local_model import stop_shared_server

        stop_shared_server(timeout_s=1.0)  # a model server mid-answer must not hold the exit
        cut = sum(1 for r in records if r.metadata.get("interrupted"))
        click.echo(f"interrupted: {len(records) - cut} run(s) finished, {cut} cut short (stored as "
                   f"error/harness \"interrupted\"), {outcome.not_started} not started; batch {outcome.batch_id} "
                   f"is marked interrupted. To add the missing runs, run the same command again with "
                   f"--batch-id {outcome.batch_id}.", err=True)
        sys.exit(130)
    if mint is not None and not _mint_batch(mint[0], outcome.batch_id, mint[1], worker_url, db_path, as_json):
        sys.exit(1)
    harness_failed = any(r.status == "error" and r.failure_class in ("harness", "infra") for r in records)
    if not all_stored or harness_failed:
        sys.exit(1)


def _report_storage(outcome: Any, where: str, spool_dir: str | None, quiet: bool) -> bool:
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


class _ProgressDisplay:
    """A rich progress display of the runs and the stage each one is in (stderr, terminals only)."""

    def __init__(self, console: Any, total: int, enabled: bool) -> None:
        self.console = console
        self.total = total
        self.enabled = enabled and console.is_terminal
        # Without a terminal (CI logs), one plain line per finished run instead of a live display.
        self.log_lines = enabled and not console.is_terminal
        self.progress = None
        self.tasks: dict[int, Any] = {}
        self.done = 0

    def __enter__(self) -> _ProgressDisplay:
        if self.enabled:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     TimeElapsedColumn(), console=self.console, transient=True)
            self.progress.start()
            self.overall = self.progress.add_task(f"runs 0/{self.total}", total=self.total)
        return self

    def update(self, event: Any) -> None:
        label = f"run {event.iteration + 1}/{self.total}"
        if event.stage == "done":
            self.done += 1
            rec = event.record
            score = "-" if rec.total_score is None else f"{rec.total_score:.2f}"
            line = f"{label}: {rec.status} score {score} ({rec.run_id})"
            if self.progress is not None:
                self.progress.console.print(line)
                task = self.tasks.pop(event.iteration, None)
                if task is not None:
                    self.progress.remove_task(task)
                self.progress.update(self.overall, completed=self.done, description=f"runs {self.done}/{self.total}")
            elif self.log_lines:
                self.console.print(line, highlight=False)
            return
        if self.progress is not None:
            task = self.tasks.get(event.iteration)
            if task is None:
                self.tasks[event.iteration] = self.progress.add_task(f"{label}: {event.stage}", total=None)
            else:
                self.progress.update(task, description=f"{label}: {event.stage}")

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def _mint_batch(specialist: Any, batch_id: str, output: Path, worker_url: str | None, db_path: str | None,
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
    if as_json:  # stdout carries the batch JSON; the snapshot path goes to stderr
        click.echo(f"Snapshot minted: {result.path}", err=True)
        return True
    click.echo(f"Snapshot minted: {result.path} (id {result.snapshot_id})")
    for line in comparison_lines(result.snapshot["benchmarks"]["comparison"]):
        click.echo(f"  {line}")
    return True
