"""``bench [SUITE [SCENARIO...]]``: build a run plan from the words and options given, run it
and store every run. The plan itself (cells, resume, retry, shards) is :mod:`harness.scenarios.plan`;
running it is :func:`harness.scenarios.runner.run_plan`. This module parses the options and checks the
agents, the judge and the sandbox before anything runs; the words are resolved in
:mod:`harness.cli.run_selection`, the plan is listed or run in :mod:`harness.cli.run_execute`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.run_execute import execute_plan, list_plan
from harness.cli.errors import fail
from harness.cli.run_selection import selection, split
from harness.cli.sandbox_option import sandbox_kind
from harness.cli.store_options import db_option

DEFAULT_AGENT = "echo"


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
    from harness.scenarios.plan import AgentChoice, PlanError, build_plan, parse_shard, select_scenarios
    from harness.scenarios.runner import RunOptions, new_batch_id
    from harness.scenarios.model import ScenarioError

    from worker.schema import id_problem

    if resume_id is not None:
        if batch_id is not None and batch_id != resume_id:
            fail(f"--resume {resume_id} and --batch-id {batch_id} name two batches; give one")
        batch_id = resume_id
    for name, value in (("--resume" if resume_id else "--batch-id", batch_id),):
        if value is not None and id_problem(value):
            fail(f"{name}: {id_problem(value)}")
    if no_cache and cache == "replay":
        fail("--no-cache and --cache replay contradict each other; give one")
    if retry_errors and batch_id is None:
        fail("--retry-errors needs the batch to retry: --batch-id BATCH_ID (errors only) or --resume BATCH_ID "
              "(errors and missing cells)")
    try:
        shard = parse_shard(shard_text) if shard_text is not None else None
    except PlanError as exc:
        fail(str(exc))
    if shard is not None and batch_id is None:
        fail("--shard needs --batch-id: every shard of a plan stores into the same batch")

    suites, names, suites_dir = selection(targets, all_suites, scenario_list, suites_dir)
    from harness.tasks.swe import using_repos_dir

    if repos_dir is not None and not repos_dir.expanduser().is_dir():
        fail(f"--repos-dir: directory not found: {repos_dir}")
    try:
        with using_repos_dir(repos_dir):
            scenarios = select_scenarios(suites_dir, suites, names)
    except (ScenarioError, PlanError) as exc:
        fail(str(exc))
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
            fail(str(exc))
    models = split(model_list) + ([model] if model else [])
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
            fail(str(exc))
        for warning in dict.fromkeys([*(spec.warnings if spec else ()), *(mint_spec.warnings if mint_spec else ())]):
            click.echo(f"warning: {warning}", err=True)
    if not choices:
        if models:
            fail(f"--model/--models need --agent: the default agent ({DEFAULT_AGENT}) calls no model")
        choices = [AgentChoice(DEFAULT_AGENT)]
    tiers = split([t for t in (tier, tier_list) if t]) or ["L1"]
    try:
        plan = build_plan(scenarios, tiers, choices, iterations, batch_id or new_batch_id(), specialist=spec,
                          models=models)
    except (ScenarioError, PlanError) as exc:
        fail(str(exc))

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
        judge=_judge_choice(judge, judge_base_url), sandbox=sandbox_kind(sandbox_mode),
    )
    from harness.tasks.harbor import host_runtime_problem

    problem = host_runtime_problem(scenarios, options.sandbox)
    if problem and dry_run:
        click.echo(f"warning: {problem}", err=True)
    elif problem:
        fail(problem)
    given_batch = batch_id is not None
    if dry_run:
        list_plan(plan, options, worker_url, db_path, as_json, given_batch,
                  dict(resume=resume_id is not None, retry_errors=retry_errors, force=force, shard=shard))
        return
    execute_plan(plan, options, worker_url, db_path, as_json, verbose=verbose, given_batch=given_batch,
                 resume=resume_id is not None, retry_errors=retry_errors, force=force, shard=shard,
                 mint=(mint_spec, mint_output) if mint_spec is not None else None)



def _check_agents(pairs: list[tuple[str, str | None]], agent_options: dict[str, Any], max_cost: float | None,
                  warn_only: bool) -> None:
    from harness.agents import is_agent, unknown_agent

    for agent, model in pairs:
        if not is_agent(agent):
            fail(str(unknown_agent(agent)))  # even a dry run cannot plan for an agent that does not exist
        problem = _agent_problem(agent, model, agent_options, max_cost)
        if problem and warn_only:
            click.echo(f"warning: {problem}", err=True)
        elif problem:
            fail(problem)


def _agent_problem(agent_name: str, model: str | None, agent_options: dict[str, Any],
                   max_cost: float | None) -> str | None:
    """Why an agent cannot work at all (unknown, no API key, no CLI), or a cost budget could not
    be enforced (a model without a price); None when it can run."""
    from harness.agents import create_agent, is_agent, unknown_agent
    from harness.agents.base import Budgets
    from harness.scenarios.runner import unenforceable_budget

    if not is_agent(agent_name):
        return str(unknown_agent(agent_name))
    try:
        agent = create_agent(agent_name, model=model, **agent_options)
    except ValueError as exc:
        return f"agent {agent_name}: {exc}"
    check = getattr(agent, "preflight", None)
    return (check() if check is not None else None) or unenforceable_budget(agent, Budgets(max_cost_usd=max_cost))


def _judge_choice(judge: str | None, base_url: str | None) -> Any:
    from harness.grading.evaluators.llm_judge import JudgeChoice

    try:
        return JudgeChoice.parse(judge, base_url)
    except ValueError as exc:
        fail(f"--judge: {exc}")
