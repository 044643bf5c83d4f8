"""``bench [SUITE [SCENARIO...]]``: build a run plan from the words and options given, run it
and store every run. The plan itself (cells, resume, retry, shards) is :mod:`harness.plan`;
running it is :func:`harness.runner.run_plan`. This module parses and prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.store_options import db_option

DEFAULT_AGENT = "echo"


def _fail(message: str, code: int = 2) -> None:
    """One-line error on stderr and a non-zero exit (bad input: 2)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _plan_status(exc: Exception) -> int:
    """2 for a plan that cannot be made as asked; 1 for a batch the store does not hold (as
    every command says of a name the store does not know)."""
    from harness.plan import BatchNotFound

    return 1 if isinstance(exc, BatchNotFound) else 2


def _split(values: tuple[str, ...] | list[str] | str | None) -> list[str]:
    """``("a,b", "c")`` -> ``["a", "b", "c"]`` (comma lists and repeated options alike)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        for item in value.split(","):
            if item.strip() and item.strip() not in out:
                out.append(item.strip())
    return out


@click.command("run")
@click.argument("targets", nargs=-1, metavar="[SUITE [SCENARIO...]]")
@click.option("--all", "all_suites", is_flag=True, help="Run every scenario of every suite.")
@click.option("--scenarios", "scenario_list", default=None, metavar="A,B",
              help="Scenarios of SUITE to run (the same as naming them after SUITE).")
@click.option("--tier", "tier", default=None, metavar="TIER[,TIER]",
              help="Prompt tier: L0, L1, L2, L3, Lx, or a full label such as L1-basic (default L1).")
@click.option("--tiers", "tier_list", default=None, metavar="L0,L1,L2",
              help="Several tiers: each scenario runs at each of them.")
@click.option("--agent", "agents", multiple=True, metavar="AGENT[:MODEL]",
              help=f"Agent to run, optionally with its model (openai:gpt-4.1-mini); repeat for several "
                   f"(default: {DEFAULT_AGENT}, the do-nothing baseline that needs no API key). "
                   "See `bench list` for the agents installed.")
@click.option("--model", default=None, help="Model for the agents given without one (their default when omitted).")
@click.option("--models", "model_list", default=None, metavar="M1,M2",
              help="Several models: each agent given without a model runs with each of them.")
@click.option("--base-url", default=None, help="OpenAI-compatible server for agents that take one.")
@click.option("-n", "--iterations", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of each cell (scenario x tier x agent x model), all in one batch.")
@click.option("-j", "--parallel", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs at once (each in its own workspace).")
@click.option("--batch-id", default=None,
              help="Batch to store the runs in (default: a new batch_<ms>_<rand>). Into a batch that has "
                   "runs, new iterations follow the stored ones.")
@click.option("--resume", "resume_id", default=None, metavar="BATCH_ID",
              help="Run only the plan's cells that BATCH_ID has no run for (after a crash or Ctrl-C). "
                   "Refused, naming what changed, if the configuration differs from the stored runs.")
@click.option("--retry-errors", is_flag=True,
              help="Re-run the runs of the batch (--batch-id or --resume) stored as error of class infra or "
                   "harness; the earlier attempt stays stored and the new run names it (retryOf).")
@click.option("--force", is_flag=True, help="Add to a batch even when the configuration changed since its runs.")
@click.option("--shard", "shard_text", default=None, metavar="I/N",
              help="Run only slice I (from 1) of N of the plan's cells; N machines with the same command "
                   "and --batch-id run every cell once. Cells already stored are skipped.")
@click.option("--dry-run", is_flag=True, help="List the cells and an estimated cost range; run nothing.")
@click.option("--skip-warmup", is_flag=True, help="Do not run the scenarios' warmup.")
@click.option("--no-build-cache", "rebuild_images", is_flag=True,
              help="Build the images of scenarios that bring one (sandbox.image, a Harbor task's environment/) "
                   "again, without the build cache.")
@click.option("--keep-workspace", is_flag=True,
              help="Keep each run's workspace (under --workspaces-dir) for inspection.")
@click.option("--timeout-minutes", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Override the scenarios' timeout_minutes.")
@click.option("--max-turns", type=click.IntRange(min=1), default=None, help="Agent turn budget (default 50).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Total token budget per run.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, help="Cost budget per run, USD.")
@click.option("--cache", "cache", type=click.Choice(["off", "replay"]), default=None,
              help="off (default): every model request is sent, so each run is a new sample (answers are "
                   "still recorded); replay: answers recorded for the same request and iteration are "
                   "replayed, with their original cost and tokens, and the run is marked cached.")
@click.option("--no-cache", is_flag=True, help="The same as --cache off (the default).")
@click.option("--suites-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_SUITES_DIR",
              default=None, help="Where suites live (default: $ZE_BENCHMARKS_SUITES_DIR, else the repository's suites/).")
@click.option("--repos-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_REPOS_DIR",
              default=None, help="Local clones or git bundles of the repositories of SWE-bench instances "
                                 "(OWNER__NAME, NAME, OWNER__NAME.bundle or NAME.bundle; default: repos/ beside "
                                 "the instance file). Nothing is fetched.")
@click.option("--workspaces-dir", type=click.Path(file_okay=False, path_type=Path),
              envvar="ZE_BENCHMARKS_WORKSPACES_DIR", default=None,
              help="Where run workspaces go (default: $ZE_BENCHMARKS_WORKSPACES_DIR, else "
                   "~/.cache/zebench/workspaces; never inside the checkout).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "bwrap", "none", "podman", "docker"]),
              envvar="ZE_BENCHMARKS_SANDBOX",
              default="auto", show_default=True,
              help="How agent and scenario commands are confined: bwrap (private filesystem, processes and "
                   "network), none (process group only), podman or docker (one container per sandbox: the "
                   "scenario's image, else the host's runtime), auto (bwrap where it works, else none with a "
                   "warning; a scenario that declares an image runs in a container).")
@click.option("--judge", "judge", default=None, metavar="none|PROVIDER:MODEL",
              help="The LLM judge: none to turn it off, or e.g. anthropic:claude-sonnet-4-6 (default: the "
                   "scenario's judge model, else the agent's own provider, else the first provider with a key; "
                   "none at all when the agent's model is at --base-url, unless named here or in "
                   "ZE_BENCHMARKS_JUDGE_MODEL).")
@click.option("--judge-base-url", default=None, metavar="URL",
              help="An OpenAI-compatible server for the judge (no provider key is sent there).")
@click.option("--worker-url", envvar="ZE_BENCHMARKS_WORKER_URL", default=None, metavar="URL",
              help="Results worker (default: $ZE_BENCHMARKS_WORKER_URL, else the embedded store).")
@db_option()
@click.option("--specialist", default=None, metavar="TEMPLATE",
              help="Run with a specialist template's system prompt (a path, name or @scope/name; see `mint --help`). "
                   "Without --agent, the template's first preferred model picks agent and model.")
@click.option("--mint-template", default=None, metavar="TEMPLATE",
              help="After the runs, mint a snapshot of TEMPLATE from this batch (see `mint snapshot --help`).")
@click.option("--mint-output", type=click.Path(file_okay=False, path_type=Path), default=Path("snapshots"),
              show_default=True, help="Where --mint-template writes the snapshot.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored batch and run records (or the plan) as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Show each run and each evaluation's details.")
def run(targets: tuple[str, ...], all_suites: bool, scenario_list: str | None, tier: str | None,
        tier_list: str | None, agents: tuple[str, ...], model: str | None, model_list: str | None,
        base_url: str | None, iterations: int, parallel: int, batch_id: str | None, resume_id: str | None,
        retry_errors: bool, force: bool, shard_text: str | None, dry_run: bool, skip_warmup: bool,
        rebuild_images: bool, keep_workspace: bool, timeout_minutes: float | None, max_turns: int | None, max_tokens: int | None,
        max_cost: float | None, cache: str | None, no_cache: bool, suites_dir: Path | None,
        repos_dir: Path | None, workspaces_dir: Path | None,
        sandbox_mode: str, judge: str | None, judge_base_url: str | None, worker_url: str | None,
        db_path: str | None, specialist: str | None, mint_template: str | None, mint_output: Path,
        as_json: bool, verbose: bool) -> None:
    """Run scenarios of a suite: copy each fixture, run the agent, validate, score, store.

    SUITE alone runs every scenario of the suite; SUITE A B (or --scenarios A,B) a selection;
    --all every suite. SUITE may be a path: a directory of Harbor tasks (Terminal-Bench 2's
    format) runs as a suite, each task a scenario; so does a .jsonl file of SWE-bench
    instances, each instance a scenario, its repository read from --repos-dir. Tiers, agents
    and models multiply the plan: each cell (scenario x tier x agent x model) runs
    --iterations times, all in one batch.

    Every run is stored (in the default store named under --db unless a worker URL is set), whatever its
    outcome. The exit status is 0 when every run was stored, whether or not it passed;
    1 when a run could not be stored or the harness itself failed; 2 for bad input;
    130 when interrupted (resume with --resume BATCH_ID).

    \b
    Examples:
      bench py-bugs pagination-off-by-one --agent oracle
      bench py-bugs --agent oracle --agent echo --tiers L0,L1
      bench examples/harbor-tasks --agent oracle --agent echo
      bench examples/swe-tasks/instances.jsonl --agent oracle --repos-dir examples/swe-tasks/repos
      bench --all --agent anthropic:claude-haiku-4-5 --iterations 3 -j 4 --dry-run
      bench py-bugs pagination-off-by-one --tier L2 --agent anthropic --iterations 3 --parallel 3
      bench node-features retry-backoff --agent openai --base-url http://127.0.0.1:8080/v1
      bench py-bugs --agent openai --models gpt-4.1-mini,gpt-4.1 --batch-id nightly
      bench py-bugs --agent openai --resume nightly
      bench py-bugs --agent openai --batch-id rejudge --cache replay
      bench py-bugs --agent openai --batch-id nightly --retry-errors
      bench --all --agent oracle --batch-id ci-42 --shard 2/4
      bench py-bugs pagination-off-by-one --specialist python-bugfixer --iterations 3 \\
          --mint-template python-bugfixer --mint-output snapshots
    """
    from harness.agents.base import Budgets
    from harness.plan import AgentChoice, PlanError, build_plan, parse_shard, select_scenarios
    from harness.runner import RunOptions, new_batch_id
    from harness.scenarios import ScenarioError

    from worker.schema import id_problem

    if resume_id is not None:
        if batch_id is not None and batch_id != resume_id:
            _fail(f"--resume {resume_id} and --batch-id {batch_id} name two batches; give one")
        batch_id = resume_id
    for name, value in (("--resume" if resume_id else "--batch-id", batch_id),):
        if value is not None and id_problem(value):
            _fail(f"{name}: {id_problem(value)}")
    if no_cache and cache == "replay":
        _fail("--no-cache and --cache replay contradict each other; give one")
    if retry_errors and batch_id is None:
        _fail("--retry-errors needs the batch to retry: --batch-id BATCH_ID (errors only) or --resume BATCH_ID "
              "(errors and missing cells)")
    try:
        shard = parse_shard(shard_text) if shard_text is not None else None
    except PlanError as exc:
        _fail(str(exc))
    if shard is not None and batch_id is None:
        _fail("--shard needs --batch-id: every shard of a plan stores into the same batch")

    suites, names, suites_dir = _selection(targets, all_suites, scenario_list, suites_dir)
    from harness.tasks.swe import using_repos_dir

    if repos_dir is not None and not repos_dir.expanduser().is_dir():
        _fail(f"--repos-dir: directory not found: {repos_dir}")
    try:
        with using_repos_dir(repos_dir):
            scenarios = select_scenarios(suites_dir, suites, names)
    except (ScenarioError, PlanError) as exc:
        _fail(str(exc))
    for scenario in scenarios:
        for warning in scenario.warnings:
            click.echo(f"warning: {scenario.key}: {warning}", err=True)

    spec, mint_spec = None, None
    choices = []
    for value in agents:
        if value.startswith("specialist:"):  # the `specialist:<name>` agent spelling
            specialist = specialist or value.split(":", 1)[1]
            continue
        try:
            choices.append(AgentChoice.parse(value))
        except PlanError as exc:
            _fail(str(exc))
    models = _split(model_list) + ([model] if model else [])
    if specialist or mint_template:
        from harness.specialists import TemplateError, load_specialist

        try:
            if specialist:
                spec = load_specialist(specialist)
                if not choices:
                    picked, picked_model = spec.agent_and_model(None, None)
                    choices = [AgentChoice(picked, None if models else picked_model)]
            if mint_template:  # checked now, so a bad template does not surface after the runs
                mint_spec = load_specialist(mint_template)
        except TemplateError as exc:
            _fail(str(exc))
        for warning in dict.fromkeys([*(spec.warnings if spec else ()), *(mint_spec.warnings if mint_spec else ())]):
            click.echo(f"warning: {warning}", err=True)
    if not choices:
        if models:
            _fail(f"--model/--models need --agent: the default agent ({DEFAULT_AGENT}) calls no model")
        choices = [AgentChoice(DEFAULT_AGENT)]
    tiers = _split([t for t in (tier, tier_list) if t]) or ["L1"]
    try:
        plan = build_plan(scenarios, tiers, choices, iterations, batch_id or new_batch_id(), specialist=spec,
                          models=models)
    except (ScenarioError, PlanError) as exc:
        _fail(str(exc))

    budgets = Budgets()
    if max_turns is not None:
        budgets.max_turns = max_turns
    budgets.max_total_tokens = max_tokens
    budgets.max_cost_usd = max_cost
    agent_options: dict[str, Any] = {}
    if base_url:
        agent_options["base_url"] = base_url
    pairs = sorted({(g.agent, g.model) for g in plan.groups}, key=str)
    _check_agents(pairs, agent_options, max_cost, warn_only=dry_run)
    options = RunOptions(
        agent=plan.groups[0].agent, model=plan.groups[0].model, iterations=iterations, parallel=parallel,
        batch_id=plan.batch_id, skip_warmup=skip_warmup, rebuild_images=rebuild_images, keep_workspace=keep_workspace,
        workspaces_root=workspaces_dir, budgets=budgets, timeout_minutes=timeout_minutes,
        agent_options=agent_options, use_cache=cache == "replay", specialist=plan.groups[0].specialist,
        judge=_judge_choice(judge, judge_base_url), sandbox=_sandbox_kind(sandbox_mode, as_json or dry_run),
    )
    from harness.tasks.harbor import host_runtime_problem

    problem = host_runtime_problem(scenarios, options.sandbox)
    if problem and dry_run:
        click.echo(f"warning: {problem}", err=True)
    elif problem:
        _fail(problem)
    given_batch = batch_id is not None
    if dry_run:
        _dry_run(plan, options, worker_url, db_path, as_json, given_batch,
                 dict(resume=resume_id is not None, retry_errors=retry_errors, force=force, shard=shard))
        return
    execute_plan(plan, options, worker_url, db_path, as_json, verbose=verbose, given_batch=given_batch,
                 resume=resume_id is not None, retry_errors=retry_errors, force=force, shard=shard,
                 mint=(mint_spec, mint_output) if mint_spec is not None else None)


def _selection(targets: tuple[str, ...], all_suites: bool, scenario_list: str | None,
               suites_dir: Path | None) -> tuple[list[str] | None, list[str], Path | None]:
    """(suites, scenario names, suites directory) from the words given; exit 2 with a suggestion
    for a word that is neither a suite nor a command. SUITE may be a path: a directory of Harbor
    tasks, one task of it, or a suite directory (see :func:`_suite_at`)."""
    names = list(targets[1:]) + _split(scenario_list)
    if all_suites:
        if targets or names:
            _fail("--all runs every suite: give no SUITE or scenarios with it")
        return None, [], suites_dir
    if not targets:
        _fail("give a SUITE to run (see `bench list`), or --all for every suite; `bench --help` shows the commands")
    from harness.scenarios import ScenarioError, discover_suites

    word = targets[0]
    if _is_path(word):
        return _path_selection(word, names)
    try:
        known = [s.name for s in discover_suites(suites_dir)]
    except ScenarioError as exc:
        if Path(word).is_dir():
            return _path_selection(word, names)
        _fail(str(exc))
    if word not in known:
        if Path(word).is_dir():
            return _path_selection(word, names)
        _fail(_unknown_word(word, known))
    return [word], names, suites_dir


def _is_path(word: str) -> bool:
    """A SUITE written as a path rather than a name (``./tasks``, ``~/tb``, ``a/b``, ``x.jsonl``)."""
    return "/" in word or word in (".", "..") or word.startswith("~") or word.lower().endswith((".jsonl", ".json"))


def _suite_at(word: str) -> tuple[Path, str, str | None]:
    """(suites directory, suite, scenario or None) of a suite given by its path; exit 2 naming
    the path when it holds no suite."""
    from harness.tasks import locate_suite

    where = locate_suite(word)
    if where is None:
        from harness.scenarios import ScenarioError, discover_suites

        found = Path(word).expanduser()
        try:
            held = [s.name for s in discover_suites(found)] if found.is_dir() else []
        except ScenarioError:
            held = []
        if not found.exists():
            why = "no such file" if word.lower().endswith((".jsonl", ".json")) else "no such directory"
        elif not found.is_dir():
            why = "not a suite: a file of SWE-bench instances is named *.jsonl or *.json"
        elif held:
            why = f"a directory of suites ({', '.join(held)}): give one of them, or --suites-dir {word} SUITE"
        else:
            why = ("not a suite: neither a directory of Harbor tasks (each holding task.toml), nor one such task, "
                   "nor a suite directory holding scenarios/, nor a .jsonl file of SWE-bench instances")
        _fail(f"{word}: {why}")
    return where.root, where.suite, where.scenario


def _path_selection(word: str, names: list[str]) -> tuple[list[str], list[str], Path]:
    root, suite, scenario = _suite_at(word)
    return [suite], ([scenario] if scenario else []) + names, root


def _unknown_word(word: str, suites: list[str]) -> str:
    """``'bach' is neither a command nor a suite; did you mean `bench batch`?``"""
    import difflib

    from harness.cli.bench import main

    commands = [c for c in main.commands if c != "run"]
    pool = {**{c: f"`bench {c}` (a command)" for c in commands}, **{s: f"`bench {s}` (a suite)" for s in suites}}
    near = difflib.get_close_matches(word, list(pool), n=2, cutoff=0.6)
    hint = f"; did you mean {' or '.join(pool[n] for n in near)}?" if near else "."
    return (f"{word!r} is neither a command nor a suite{hint} Suites: {', '.join(suites) or 'none'}; "
            f"commands: {', '.join(sorted(commands))}.")


def _check_agents(pairs: list[tuple[str, str | None]], agent_options: dict[str, Any], max_cost: float | None,
                  warn_only: bool) -> None:
    from harness.agents import is_agent, unknown_agent

    for agent, model in pairs:
        if not is_agent(agent):
            _fail(str(unknown_agent(agent)))  # even a dry run cannot plan for an agent that does not exist
        problem = _agent_problem(agent, model, agent_options, max_cost)
        if problem and warn_only:
            click.echo(f"warning: {problem}", err=True)
        elif problem:
            _fail(problem)


def _agent_problem(agent_name: str, model: str | None, agent_options: dict[str, Any],
                   max_cost: float | None) -> str | None:
    """Why an agent cannot work at all (unknown, no API key, no CLI), or a cost budget could not
    be enforced (a model without a price); None when it can run."""
    from harness.agents import create_agent, is_agent, unknown_agent
    from harness.agents.base import Budgets
    from harness.runner import unenforceable_budget

    if not is_agent(agent_name):
        return str(unknown_agent(agent_name))
    try:
        agent = create_agent(agent_name, model=model, **agent_options)
    except ValueError as exc:
        return f"agent {agent_name}: {exc}"
    check = getattr(agent, "preflight", None)
    return (check() if check is not None else None) or unenforceable_budget(agent, Budgets(max_cost_usd=max_cost))


def _judge_choice(judge: str | None, base_url: str | None) -> Any:
    from harness.evaluators.llm_judge import JudgeChoice

    try:
        return JudgeChoice.parse(judge, base_url)
    except ValueError as exc:
        _fail(f"--judge: {exc}")


def _sandbox_kind(mode: str, quiet: bool) -> str:
    """The backend for ``--sandbox MODE`` (``auto`` is kept: the runner resolves it per scenario,
    a container backend for a scenario that declares an image); a fallback is said on stderr, an
    impossible backend is exit 2."""
    from harness.sandbox import SandboxUnavailable, resolve_mode

    try:
        choice = resolve_mode(mode)
    except SandboxUnavailable as exc:
        _fail(f"--sandbox {mode}: {exc}")
    if choice.fallback_reason:
        click.echo(f"warning: sandbox: bwrap is not usable here ({choice.fallback_reason}); commands run with "
                   "process-group confinement only (--sandbox none): they can read the suites and the "
                   "harness's environment. `bench doctor` says how to fix it.", err=True)
    return "auto" if mode == "auto" else choice.kind


def _open_for_reading(worker_url: str | None, db_path: str | None) -> Any:
    """The store for a dry run's history and batch, or None when opening it would create it
    (an embedded store that does not exist yet)."""
    import os

    from harness.cli.store_options import open_store
    from harness.results.location import default_db_path

    if not worker_url and not os.path.exists(db_path or default_db_path()):
        return None
    return open_store(worker_url, db_path, sync_spool=False)


def _dry_run(plan: Any, options: Any, worker_url: str | None, db_path: str | None, as_json: bool,
             given_batch: bool, fit: dict[str, Any]) -> None:
    """List the cells (after resume/retry/shard against the stored batch) and the cost range."""
    from rich.console import Console

    from harness.cli.plan_view import dry_run_table, money
    from harness.estimate import estimate_plan
    from harness.plan import PlanError
    from harness.runner import prepare_plan

    client = _open_for_reading(worker_url, db_path)
    try:
        try:
            prepare_plan(plan, options, client, existing_batch=given_batch, **fit)
        except PlanError as exc:
            _fail(str(exc), _plan_status(exc))
        estimate = estimate_plan(plan, options.budgets, options.agent_options, client)
    finally:
        if client is not None:
            client.close()
    if as_json:
        click.echo(json.dumps({
            "batchId": plan.batch_id, "plannedCells": plan.planned, "cells": [c.key for c in plan.cells],
            "shard": f"{plan.shard[0]}/{plan.shard[1]}" if plan.shard else None, "notes": plan.notes,
            "groups": [{"cellGroup": g.group.key, "configHash": g.group.config_hash, "iterations": g.group.iterations,
                        "costPerRunUsd": {"low": g.low, "high": g.high}, "basis": g.basis, "detail": g.detail}
                       for g in estimate.groups],
            "costUsd": {"low": estimate.low, "high": estimate.high},
        }, indent=2))
        return
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    console = Console()
    table, basis_notes = dry_run_table(plan, estimate)
    console.print(table)
    for line in basis_notes:
        console.print(line, highlight=False)
    shard = f" (shard {plan.shard[0]}/{plan.shard[1]} of {plan.planned})" if plan.shard else (
        f" of {plan.planned} planned" if estimate.runs != plan.planned else "")
    low, high = money(estimate.low), money(estimate.high)
    console.print(f"{estimate.runs} run(s){shard}; estimated cost {low if low == high else f'{low} to {high}'}"
                  + (" (? where no price or budget bounds it)" if estimate.high is None else ""), highlight=False)
    console.print("Nothing was run. Drop --dry-run to run the plan.", highlight=False)


def execute_plan(plan: Any, options: Any, worker_url: str | None, db_path: str | None, as_json: bool, *,
                 verbose: bool = False, given_batch: bool = False, resume: bool = False,
                 retry_errors: bool = False, force: bool = False, shard: tuple[int, int] | None = None,
                 mint: tuple[Any, Path] | None = None) -> None:
    """Fit the plan to its batch, run it with a progress display, print the report, exit with the
    documented status."""
    from rich.console import Console

    from harness.cli.plan_view import PlanProgress, summary_table
    from harness.cli.report import batch_json, batch_summary_table, make_console, render_run, run_json
    from harness.cli.store_options import open_store
    from harness.control import BatchControl, handle_sigint
    from harness.evaluators.llm_judge import resolve_judge
    from harness.plan import PlanError
    from harness.runner import group_judge, prepare_plan, run_plan

    err_console = Console(stderr=True)
    client = open_store(worker_url, db_path)
    try:
        try:
            prepare_plan(plan, options, client, existing_batch=given_batch, resume=resume, retry_errors=retry_errors,
                         force=force, shard=shard)
        except PlanError as exc:
            _fail(str(exc), _plan_status(exc))
        for note in plan.notes:
            click.echo(f"note: {note}", err=True)
        cells = len(plan.cells)
        if not cells:
            what = f"shard {shard[0]}/{shard[1]} of " if shard else ""
            if retry_errors and not resume and shard is None:
                click.echo(f"Nothing to run: no run of the plan in batch {plan.batch_id} is stored as an "
                           "error of class infra or harness.", err=True)
            else:
                click.echo(f"Nothing to run: every cell of {what}the plan ({plan.planned}) has a run in batch "
                           f"{plan.batch_id}.", err=True)
            return
        judges = {resolve_judge(g.scenario.llm_judge, group_judge(options, g.agent)).describe()
                  for g in plan.groups if g.iterations and g.scenario.llm_judge.enabled}
        for line in sorted(judges):  # said before the runs, so a judge that will not run is no surprise
            click.echo(line, err=True)
        control = options.control = BatchControl()

        def first_interrupt() -> None:
            err_console.print(f"interrupting: no new runs start; running agents stop at their next turn, and their "
                              f"commands are killed in {control.grace_s:g} s (Ctrl-C again to kill them now)")

        def second_interrupt() -> None:
            err_console.print("killing every running command now")

        with handle_sigint(control, first_interrupt, second_interrupt), \
                PlanProgress(err_console, cells, enabled=not as_json) as progress:
            outcome = run_plan(plan, options, client, progress=progress.update)
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
        one_group = sum(1 for g in plan.groups if g.iterations) == 1
        if one_group or verbose:
            for i, record in enumerate(records):
                if len(records) > 1:
                    console.rule(f"{record.suite}/{record.scenario} {record.agent} iteration "
                                 f"{record.metadata.get('iteration')} ({i + 1}/{len(records)})")
                render_run(console, record, verbose=verbose)
                kept = outcome.runs[i].workspace
                if kept:
                    console.print(f"  Kept workspace: {kept}")
        elif any(r.workspace for r in outcome.runs):
            for r in outcome.runs:
                if r.workspace:
                    console.print(f"Kept workspace of {r.record.run_id}: {r.workspace}")
        if outcome.warmup is not None and not outcome.warmup.ok:
            console.print(f"[red]Warmup failed: {outcome.warmup.error}[/red]")
        if len(records) > 1:
            console.print()
            if not one_group:
                console.print(summary_table(records, f"Batch {outcome.batch_id}: successes/runs, mean score"))
            console.print(batch_summary_table(stored_batch or outcome.batch))
    all_stored = _report_storage(outcome, where, spool_dir, quiet=as_json)
    if outcome.interrupted:
        from harness.local_model import stop_shared_server

        stop_shared_server(timeout_s=1.0)  # a model server mid-answer must not hold the exit
        cut = sum(1 for r in records if r.metadata.get("interrupted"))
        click.echo(f"interrupted: {len(records) - cut} run(s) finished, {cut} cut short (stored as "
                   f"error/harness \"interrupted\"), {outcome.not_started} not started; batch {outcome.batch_id} "
                   f"is marked interrupted. To run the missing cells, run the same command with "
                   f"--resume {outcome.batch_id} (add --retry-errors to redo the runs cut short).", err=True)
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
    for where in result.left_out:
        click.echo(f"warning: {specialist.source}: {where}: unknown key, left out of the snapshot", err=True)
    if as_json:  # stdout carries the batch JSON; the snapshot path goes to stderr
        click.echo(f"Snapshot minted: {result.path}", err=True)
        return True
    click.echo(f"Snapshot minted: {result.path} (id {result.snapshot_id})")
    for line in comparison_lines(result.snapshot["benchmarks"]["comparison"]):
        click.echo(f"  {line}")
    return True
