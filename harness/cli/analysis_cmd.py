"""``bench compare``, ``bench leaderboard``, ``bench regressions`` and ``bench costs``.

Each asks the results store's analysis route (``/api/compare``, ...), which runs the code of
:mod:`worker.analysis` over the stored runs: the embedded store and a deployed worker answer
alike. ``bench costs --reprice`` reads the runs (``/api/analysis/runs``) and prices them here,
with the harness's price table. docs/analysis.md explains every figure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from harness.cli.store_options import open_store, store_options
from harness.reports.html import fmt_number, fmt_p


def _ask(worker_url: str | None, db_path: str | None, path: str, query: dict[str, Any]) -> dict[str, Any]:
    from harness.results import ResultsError

    with open_store(worker_url, db_path) as client:
        try:
            return client.analysis(path, query)
        except ResultsError as exc:
            raise click.ClickException(str(exc)) from None


def _num(value: Any, digits: int = 3) -> str:
    return fmt_number(value, digits, missing="-")


def _p(value: float | None) -> str:
    return fmt_p(value, missing="-")


def _interval(iv: list[float] | None, digits: int = 3) -> str:
    return "-" if not iv else f"[{_num(iv[0], digits)}, {_num(iv[1], digits)}]"


def _console():
    from harness.cli.render import make_console

    return make_console()


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


# ----------------------------------------------------------------------------------- compare


@click.command("compare")
@click.argument("side_a", metavar="A")
@click.argument("side_b", metavar="[B]", required=False)
@click.option("--allow-mixed", is_flag=True,
              help="Compare even when pairs differ in more than the compared factor (flagged in the result).")
@click.option("--include-cached", is_flag=True, help="Count runs that replayed cached model answers.")
@click.option("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True), default=0.05, show_default=True,
              help="Significance level (the intervals are at 1 - alpha).")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(side_a: str, side_b: str | None, allow_mixed: bool, include_cached: bool, alpha: float,
            worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """Compare two sets of runs, A and B, on the cells both ran.

    A and B are batch ids, filters KEY=VALUE joined by commas (agent, model, specialist,
    suite, scenario, tier, batch, configHash, since as 30d, 12h or a date, until), or a batch
    id narrowed by filters (nightly,agent=oracle). Cells
    (scenario, tier, iteration) are paired; the scenario is the cluster, so repeats never
    count as independent samples. For each metric: the means, A - B with a 95% interval, the
    test and why it was chosen, p, the effect size, the minimum detectable effect and the
    pairs needed for 80% power; a verdict (A better, B better, no detectable difference, not
    enough runs); and per scenario, winners after Holm's correction.

    With A alone, a batch id: its two agents (or, with one agent, its two models) are
    compared, as BATCH,agent=X BATCH,agent=Y would.

    Refused (exit 1) when pairs differ in more than the compared factor (the scenario's
    files, the judge, budgets...; --allow-mixed compares anyway) or when the sides lost
    different shares of runs to infra or harness errors; the reason is printed instead of
    figures that would mislead.

    \b
    Examples:
      bench compare demo-1                  the two agents of batch demo-1
      bench compare batch_1732270000000_a1b2c3 batch_1732280000000_d4e5f6
      bench compare agent=oracle agent=echo
      bench compare specialist=python-bugfixer,since=7d agent=anthropic,specialistEnabled=false
      bench compare nightly-41,agent=anthropic nightly-42,agent=anthropic --json
    """
    if side_b is None:
        side_a, side_b = _two_sides_of(side_a, worker_url, db_path)
    result = _ask(worker_url, db_path, "/api/compare",
                  {"a": side_a, "b": side_b, "allowMixed": "true" if allow_mixed else None,
                   "includeCached": "true" if include_cached else None, "alpha": str(alpha)})
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        render_comparison(result)
    if result.get("refused"):
        raise SystemExit(1)


def _two_sides_of(batch_id: str, worker_url: str | None, db_path: str | None) -> tuple[str, str]:
    """``BATCH,agent=X`` and ``BATCH,agent=Y`` for a batch of two agents (or of one agent and
    two models); a usage error naming what the batch holds otherwise."""
    if "=" in batch_id or "," in batch_id:
        raise click.UsageError("with one side, A is a batch id (its two agents are compared); "
                               "with filters, give both sides: bench compare A B")
    with open_store(worker_url, db_path) as client:
        batch = client.get_batch(batch_id)
    if batch is None:
        raise click.ClickException(f"batch {batch_id!r} not found (bench batches lists the stored batches)")
    for dimension in ("agent", "model"):
        keys = [str(row.get("key")) for row in batch.breakdowns.get(dimension) or [] if row.get("key") is not None]
        if len(keys) == 2:
            return f"{batch_id},{dimension}={keys[0]}", f"{batch_id},{dimension}={keys[1]}"
        if len(keys) > 2:
            raise click.UsageError(f"batch {batch_id} holds {len(keys)} {dimension}s ({', '.join(keys)}): name the "
                                   f"two to compare, e.g. bench compare {batch_id},{dimension}={keys[0]} "
                                   f"{batch_id},{dimension}={keys[1]}")
    raise click.UsageError(f"batch {batch_id} holds one agent and one model: compare it with another batch, "
                           f"bench compare {batch_id} OTHER_BATCH")


def render_comparison(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = _console()
    a, b = result["sides"]
    for side, name in ((a, "A"), (b, "B")):
        excluded = ", ".join(f"{n} {reason}" for reason, n in side["excluded"].items()) or "none"
        who = ", ".join(side["agents"]) or "-"
        models = ", ".join(side["models"]) or "-"
        console.print(f"{name} = {side['label']}: {side['runs']} runs, {side['counted']} counted "
                      f"(left out: {excluded}); agents {who}; models {models}"
                      + (f"; specialists {', '.join(side['specialists'])}" if side["specialists"] else ""),
                      highlight=False)
    cells = result.get("cells", {})
    console.print(f"Paired cells: {cells.get('paired', 0)} (only in A: {cells.get('onlyA', 0)}, "
                  f"only in B: {cells.get('onlyB', 0)})", highlight=False)
    if result.get("refused"):
        # Figures of a comparison that compares more than it says would mislead: the reason only.
        for reason in result["refused"]:
            console.print(f"Refused: {reason}", style="red", highlight=False)
        console.print("--allow-mixed compares anyway and flags the result; --json has the figures.",
                      highlight=False)
        return
    table = Table(title="A vs B on paired cells")
    for col in ("metric", "mean A", "mean B", "A - B", "95% interval", "p", "d_z", "MDE", "pairs needed", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for m in result.get("metrics", []):
        table.add_row(m["label"], _num(m["meanA"]), _num(m["meanB"]), _num(m["difference"]),
                      _interval(m["ci"]), _p(m["p"]), _num(m.get("effectSize"), 2), _num(m.get("mde")),
                      _num(m.get("pairsNeeded")), m["verdict"])
    console.print(table)
    for m in result.get("metrics", []):
        if m.get("why"):
            console.print(f"  {m['label']}: {m['why']}", highlight=False)
        for note in m.get("notes") or []:
            console.print(f"  {m['label']}: {note}", style="yellow", highlight=False)
    rows = result.get("scenarios") or []
    if rows:
        per = Table(title="Score by scenario (Welch, Holm-corrected)")
        for col in ("scenario", "pairs", "mean A", "mean B", "A - B", "p", "p (Holm)", "winner"):
            per.add_column(col, justify="left" if col in ("scenario", "winner") else "right")
        for r in rows:
            per.add_row(r["scenario"], str(r["pairs"]), _num(r["meanA"]), _num(r["meanB"]), _num(r["difference"]),
                        _p(r["p"]), _p(r["pHolm"]), r["winner"] or "-")
        console.print(per)
    for note in result.get("notes", []):
        console.print(f"Note: {note}", style="yellow", highlight=False)
    style = {"A better": "green", "B better": "green", "not comparable": "red"}.get(result["verdict"], "yellow")
    console.print(f"Verdict (score): {result['verdict']}", style=f"bold {style}", highlight=False)


# ------------------------------------------------------------------------------- leaderboard

_SCOPE_OPTIONS = (
    click.option("--suite", default=None, help="Only runs of this suite."),
    click.option("--since", default=None, metavar="AGE|DATE", help="Only runs started since: 30d, 12h or a date."),
    click.option("--agent", default=None, help="Only runs of this agent."),
    click.option("--model", default=None, help="Only runs of this model."),
    click.option("--batch-id", default=None, help="Only runs of this batch."),
)


def _scope(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_SCOPE_OPTIONS):
        func = option(func)
    return func


@click.command("leaderboard")
@click.option("--by", default="agent", show_default=True, metavar="DIMS",
              help="What to rank: agent, model, specialist, or a combination such as agent,model.")
@_scope
@click.option("--kind", type=click.Choice(["scenario", "dataset"]), default="scenario", show_default=True,
              help="Rank scenario runs (agents on fixtures) or dataset requests (`bench dataset`, by provider "
                   "and model); the two are never ranked together.")
@click.option("--include-cached", is_flag=True, help="Count runs that replayed cached model answers.")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the leaderboard as JSON.")
def leaderboard(by: str, suite: str | None, since: str | None, agent: str | None, model: str | None,
                batch_id: str | None, kind: str, include_cached: bool, worker_url: str | None, db_path: str | None,
                as_json: bool) -> None:
    """Rank agents, models or specialists on comparable runs.

    Only the scenario-tiers every entry ran count, under their most common setting. Per
    entry: mean score with a 95% interval clustered by scenario, success rate with its
    Wilson interval, cost per success, median duration, and a rank range (entries whose
    intervals overlap share a range: the data cannot order them). The composite weighs
    accuracy .30, speed .20, efficiency .20, cost .15 and reliability .15, each normalised
    to [0, 1] against the best entry (docs/analysis.md).

    \b
    Examples:
      bench leaderboard
      bench leaderboard --by agent,model --suite py-bugs --since 30d
      bench leaderboard --by specialist --json
      bench leaderboard --kind dataset --by model
    """
    result = _ask(worker_url, db_path, "/api/leaderboard",
                  {"by": by, "suite": suite, "since": since, "agent": agent, "model": model, "batchId": batch_id,
                   "kind": kind, "includeCached": "true" if include_cached else None})
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from rich.table import Table

    console = _console()
    excluded = ", ".join(f"{n} {reason}" for reason, n in result.get("excluded", {}).items()) or "none"
    console.print(f"{result['counted']} of {result['runs']} runs counted (left out: {excluded}); "
                  f"{result.get('commonScenarioTiers', 0)} scenario-tiers common to every entry", highlight=False)
    if result["entries"]:
        table = Table(title=f"Leaderboard by {', '.join(result['by'])}")
        for col in ("rank", "entry", "runs", "mean score", "95% interval", "success", "success interval",
                    "cost/success", "median s", "composite"):
            table.add_column(col, justify="left" if col in ("rank", "entry") else "right")
        for r in result["entries"]:
            table.add_row(r["rank"], r["entry"], str(r["runs"]), _num(r["meanScore"]), _interval(r["scoreInterval"]),
                          _num(r["successRate"], 2), _interval(r["successInterval"], 2),
                          _money(r["costPerSuccessUsd"]), _num(r["medianDurationS"], 1), _num(r["composite"]))
        console.print(table)
    for note in result.get("notes", []):
        console.print(f"Note: {note}", style="yellow", highlight=False)


# ------------------------------------------------------------------------------- regressions


@click.command("regressions")
@click.option("--baseline", default=None, metavar="BATCH", help="The batch to compare against (BATCH, or BATCH,agent=NAME as compare takes it).")
@click.option("--candidate", default=None, metavar="BATCH", help="The batch under test (BATCH or BATCH,agent=NAME).")
@click.option("--agent", default=None, help="Instead of batches: this agent's two latest batches.")
@click.option("--model", default=None, help="With --agent: only this model's batches.")
@click.option("--suite", default=None, help="Only scenarios of this suite.")
@click.option("--since", default=None, metavar="AGE|DATE",
              help="History (and, with --agent, batches) since: 30d, 12h or a date.")
@click.option("--fail-on", type=click.Choice(["minor", "moderate", "major"]), default=None,
              help="Exit 1 when a regression of at least this severity is found (for CI).")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def regressions(baseline: str | None, candidate: str | None, agent: str | None, model: str | None,
                suite: str | None, since: str | None, fail_on: str | None, worker_url: str | None,
                db_path: str | None, as_json: bool) -> None:
    """Find the scenarios a candidate batch got worse (or better) at than a baseline.

    Each scenario-tier gets a noise band from its history (runs at the baseline's config
    hash); it is `regressed` or `improved` only when the difference lies outside the band
    and is significant after correction (Benjamini-Hochberg). `inconclusive`: outside the
    band but not significant, or too few runs to test, with the runs a side that would
    decide it; `flaky`: inside the band while runs at one configuration both passed and
    failed; `new`/`missing`: ran on one side only. Severity comes from the effect size
    (Hedges' g: minor < 0.5 <= moderate < 0.8 <= major).

    A side is a batch id, or a batch narrowed as `bench compare` takes it (BATCH,agent=NAME).

    \b
    Examples:
      bench regressions --baseline nightly-41 --candidate nightly-42
      bench regressions --baseline nightly-42,agent=oracle --candidate nightly-43,agent=oracle
      bench regressions --agent anthropic --since 30d --fail-on moderate
    """
    if (baseline is None) != (candidate is None):
        raise click.UsageError("--baseline and --candidate go together")
    if baseline is None and agent is None:
        raise click.UsageError("give --baseline BATCH --candidate BATCH, or --agent NAME (its two latest batches)")
    result = _ask(worker_url, db_path, "/api/regressions",
                  {"baseline": baseline, "candidate": candidate, "agent": agent, "model": model, "suite": suite,
                   "since": since})
    from worker.analysis.regressions import fails

    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        from rich.table import Table

        console = _console()
        console.print(f"Baseline {result['baseline']}, candidate {result['candidate']}", highlight=False)
        table = Table(title="Scenarios")
        for col in ("scenario", "tier", "entry", "status", "severity", "baseline", "candidate", "difference",
                    "band", "p (BH)", "runs b/c/history", "runs to decide"):
            table.add_column(col, justify="left" if col in ("scenario", "tier", "entry", "status", "severity")
                             else "right", overflow="fold")
        order = {s: i for i, s in enumerate(("regressed", "improved", "flaky", "inconclusive", "new", "missing",
                                             "unchanged"))}
        styles = {"regressed": "red", "improved": "green", "flaky": "yellow", "inconclusive": "yellow"}
        for r in sorted(result["scenarios"], key=lambda r: (order.get(r["status"], 9), r["scenario"])):
            table.add_row(r["scenario"], r["tier"], r.get("entry", "-"), f"[{styles.get(r['status'], '')}]{r['status']}[/]"
                          if r["status"] in styles else r["status"], r.get("severity") or "-",
                          _num(r["baselineMean"]), _num(r["candidateMean"]), _num(r.get("difference")),
                          _num(r.get("band")), _p(r.get("pAdjusted")),
                          f"{r['baselineRuns']}/{r['candidateRuns']}/{r['historyRuns']}",
                          str(r["runsNeeded"]) if r.get("runsNeeded") else "-")
        console.print(table)
        counts = ", ".join(f"{n} {s}" for s, n in result["counts"].items() if n)
        console.print(f"{counts or 'nothing to compare'}; worst regression: {result['worst'] or 'none'}",
                      highlight=False)
    if fail_on and fails(result, fail_on):
        click.echo(f"regression of severity {result['worst']} found (--fail-on {fail_on})", err=True)
        raise SystemExit(1)


# ------------------------------------------------------------------------------------- costs


def repricer() -> Callable[[dict[str, Any]], tuple[float | None, float | None]]:
    """run -> (agent cost, judge cost) at today's prices of the harness's table, from the
    run's stored token counts. Agents that pay no provider (oracle, echo, local) cost 0."""
    from harness.models.pricing import price_for
    from harness.models.providers.types import Usage

    provider_of = {"anthropic": "anthropic", "claude-code": "anthropic", "openai": "openai"}

    def usage(tel: dict[str, Any], prefix: str = "") -> Usage:
        key = (lambda name: f"{prefix}{name[0].upper()}{name[1:]}") if prefix else (lambda name: name)
        return Usage(input_tokens=int(tel.get(key("tokensIn")) or 0), output_tokens=int(tel.get(key("tokensOut")) or 0),
                     cache_read_tokens=0 if prefix else int(tel.get("cacheReadTokens") or 0),
                     cache_write_tokens=0 if prefix else int(tel.get("cacheWriteTokens") or 0))

    def reprice(run: dict[str, Any]) -> tuple[float | None, float | None]:
        tel = run.get("telemetry") or {}
        provider = provider_of.get(str(run.get("agent")))
        if provider is None:
            agent_cost: float | None = 0.0
        else:
            row = price_for(provider, str(run.get("model") or ""))
            agent_cost = None if row is None else row.cost(usage(tel))
        judge_cost: float | None = 0.0
        if tel.get("judgeTokensIn") or tel.get("judgeTokensOut"):
            identity = str((run.get("metadata") or {}).get("judge") or "")
            judge_provider, _, judge_model = identity.partition(":")
            row = price_for(judge_provider, judge_model) if judge_model else None
            judge_cost = None if row is None else row.cost(usage(tel, "judge"))
        return agent_cost, judge_cost

    return reprice


@click.command("costs")
@click.option("--by", default="agent,model", show_default=True, metavar="DIMS",
              help="Group by agent, model, specialist, or a combination.")
@_scope
@click.option("--reprice", is_flag=True,
              help="Price the stored token counts with today's price table instead of the cost each run recorded.")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def costs(by: str, suite: str | None, since: str | None, agent: str | None, model: str | None,
          batch_id: str | None, reprice: bool, worker_url: str | None, db_path: str | None, as_json: bool) -> None:
    """What each agent, model or specialist spends: per run and per success, score per dollar,
    agent vs judge cost, and the Pareto front of cost against score.

    Runs replayed from the cache are left out (their cost was paid once); infra errors are
    left out of the figures but their spend is shown. A run with an unknown cost (an unpriced
    model) makes its entry's totals unknown, never smaller.

    \b
    Examples:
      bench costs
      bench costs --by model --suite py-bugs --since 30d
      bench costs --reprice --json
    """
    scope = {"suite": suite, "since": since, "agent": agent, "model": model, "batchId": batch_id}
    if reprice:
        from harness.models.pricing import load_price_table
        from worker.analysis.costs import cost_report
        from worker.analysis.leaderboard import parse_by

        try:
            dims = parse_by(by)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--by") from None
        loaded = _ask(worker_url, db_path, "/api/analysis/runs", scope)
        result = cost_report(loaded["runs"], by=dims, reprice=repricer())
        result["priceTable"] = load_price_table().version
        result["notes"] = ["only the first runs were analysed (the store cut them)"] if loaded.get("truncated") else []
    else:
        result = _ask(worker_url, db_path, "/api/costs", {"by": by, **scope})
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from rich.table import Table

    console = _console()
    title = f"Costs by {', '.join(result['by'])}" + (f" (repriced, table {result['priceTable']})" if reprice else "")
    table = Table(title=title)
    for col in ("entry", "runs", "successes", "mean score", "agent $", "judge $", "per run", "per success",
                "score/$", "Pareto"):
        table.add_column(col, justify="left" if col == "entry" else "right")
    for r in result["entries"]:
        table.add_row(r["entry"], str(r["runs"]), str(r["successes"]), _num(r["meanScore"]), _money(r["agentCostUsd"]),
                      _money(r["judgeCostUsd"]), _money(r["costPerRunUsd"]), _money(r["costPerSuccessUsd"]),
                      _num(r["scorePerDollar"], 1), "✓" if r["paretoOptimal"] else "")
    console.print(table)
    unknown = sum(r["unknownCostRuns"] for r in result["entries"])
    if unknown:
        console.print(f"{unknown} run(s) have an unknown cost (a model without a price): their entries' totals are "
                      "unknown", style="yellow", highlight=False)
    front = ", ".join(result["paretoFront"]) or "none"
    console.print(f"Pareto front (cheapest first): {front}", highlight=False)
    for note in result.get("notes", []):
        console.print(f"Note: {note}", style="yellow", highlight=False)
