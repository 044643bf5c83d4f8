"""``bench list``: the suites, scenarios and tier prompts available to run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command("list")
@click.argument("suite", required=False)
@click.option("--suites-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_SUITES_DIR",
              default=None, help="Where suites live (default: $ZE_BENCHMARKS_SUITES_DIR, else the repository's suites/).")
@click.option("--repos-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_REPOS_DIR",
              default=None, help="Local clones or git bundles of the repositories of SWE-bench instances "
                                 "(default: repos/ beside the instance file).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(suite: str | None, suites_dir: Path | None, repos_dir: Path | None, as_json: bool) -> None:
    """List suites, their scenarios and the prompt tiers each one has, plus the agents.

    SUITE may be a path: a directory of Harbor tasks is listed as a suite, each task a
    scenario; so is a .jsonl file of SWE-bench instances, each instance a scenario. A scenario
    whose scenario.yaml (task.toml, instance) does not load is listed with its error, and the
    exit status is 1.

    \b
    Examples:
      bench list
      bench list py-bugs
      bench list examples/harbor-tasks
      bench list examples/swe-tasks/instances.jsonl
      bench list --json
    """
    from harness.agents import agent_names
    from harness.scenarios.loading import available_tiers, discover_suites, load_scenario
    from harness.scenarios.model import ScenarioError

    if suite is not None and _names_a_path(suite, suites_dir):
        from harness.tasks import locate_suite

        where = locate_suite(suite)
        if where is None:
            found = Path(suite).expanduser()
            raise click.ClickException(f"{suite}: no such directory" if not found.exists() else
                                       f"{suite}: not a suite: a file of SWE-bench instances is named *.jsonl or "
                                       "*.json" if not found.is_dir() else
                                       f"{suite}: not a suite: neither a directory of Harbor tasks (each holding "
                                       "task.toml), nor one such task, nor a suite directory holding scenarios/, "
                                       "nor a .jsonl file of SWE-bench instances")
        suites_dir, suite = where.root, where.suite
    if repos_dir is not None and not repos_dir.expanduser().is_dir():
        raise click.ClickException(f"--repos-dir: directory not found: {repos_dir}")
    from harness.tasks.swe import using_repos_dir

    try:
        suites = discover_suites(suites_dir)
    except ScenarioError as exc:
        raise click.ClickException(str(exc)) from None
    if suite is not None:
        suites = [s for s in suites if s.name == suite]
        if not suites:
            raise click.ClickException(f"unknown suite {suite!r}")
    rows = []
    for s in suites:
        for name in s.scenarios:
            entry = {"suite": s.name, "scenario": name}
            try:
                with using_repos_dir(repos_dir):
                    scenario = load_scenario(s.name, name, suites_dir)
                entry.update(id=scenario.id, title=scenario.title, difficulty=scenario.difficulty,
                             tags=scenario.tags, tiers=available_tiers(scenario),
                             hasSolution=scenario.solution_dir is not None,
                             hasHiddenTests=scenario.hidden_tests_dir is not None, warnings=scenario.warnings)
            except ScenarioError as exc:
                entry["error"] = str(exc)
            rows.append(entry)
    broken = [r for r in rows if "error" in r]
    agents = agent_names()
    if as_json:
        click.echo(json.dumps({"suites": [{"name": s.name, "path": str(s.path)} for s in suites],
                               "scenarios": rows, "agents": agents}, indent=2))
    else:
        from rich.table import Table

        from harness.cli.render import make_console

        table = Table(title="Scenarios")
        for col in ("suite", "scenario", "title", "tiers"):
            table.add_column(col, no_wrap=col in ("suite", "scenario"))
        for r in rows:
            if "error" in r:
                table.add_row(r["suite"], r["scenario"], f"[red]error: {r['error']}[/red]", "")
            else:
                tiers = sorted({label.split("-", 1)[0] for label in r["tiers"]})
                table.add_row(r["suite"], r["scenario"], r["title"], " ".join(tiers) or "[red]none[/red]")
        console = make_console()
        console.print(table)
        console.print(f"Agents: {', '.join(agents)}")
        console.print("Run one: bench SUITE SCENARIO --tier L1 --agent oracle; a whole suite: bench SUITE --agent oracle; "
                      "see what a plan would run: add --dry-run")
    if broken:
        click.echo(f"{len(broken)} scenario(s) failed to load", err=True)
        sys.exit(1)


def _names_a_path(word: str, suites_dir: Path | None) -> bool:
    """SUITE written as a path (``./tasks``, ``a/b``, ``x.jsonl``), or a directory here that no suite is called."""
    if "/" in word or word in (".", "..") or word.startswith("~") or word.lower().endswith((".jsonl", ".json")):
        return True
    if not Path(word).is_dir():
        return False
    from harness.scenarios.loading import discover_suites
    from harness.scenarios.model import ScenarioError

    try:
        return word not in {s.name for s in discover_suites(suites_dir)}
    except ScenarioError:
        return True
