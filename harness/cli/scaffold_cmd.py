"""``bench new`` (lay out a scenario that already works) and ``bench check`` (prove scenarios
sound). The work is :mod:`harness.scaffold`; this module parses, prints and picks the exit status."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from harness.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, fail
from harness.cli.sandbox_option import sandbox_kind

_CONTEXT = {"help_option_names": ["-h", "--help"]}



@click.command("new", context_settings=_CONTEXT)
@click.argument("target", metavar="SUITE/SCENARIO")
@click.option("--suites-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ZE_BENCHMARKS_SUITES_DIR",
              default=None, help="Where to write it (default: $ZE_BENCHMARKS_SUITES_DIR, its first directory when it "
                                 "lists several, else the repository's suites/, as `bench` reads them).")
def new(target: str, suites_dir: Path | None) -> None:
    """Lay out a new scenario that already works, to edit from green.

    Writes SUITE/scenarios/SCENARIO/ under the suites directory (the suite is created if it
    does not exist): scenario.yaml with a comment on every key, repo-fixture/ (a small Python
    package with a bug and a visible test that shows it), solution/ (the fixed file, for the
    oracle agent) and hidden-tests/ (run only when grading); and the tier prompts in
    SUITE/prompts/SCENARIO/ (L0-minimal.md, L1-basic.md, L2-directed.md). As written, the
    oracle passes and echo fails: `bench check SUITE/SCENARIO` says so, and keeps saying so
    while you make it your own task (docs/writing-scenarios.md).

    An existing scenario (or prompts folder of that name) is never overwritten: that is an
    error (exit 1). A name that `bench` could not use is exit 2.

    \b
    Examples:
      bench new py-bugs/parse-duration
      bench new my-suite/first-bug --suites-dir ./suites
      bench check my-suite/first-bug --suites-dir ./suites
    """
    from harness.scaffold import InvalidName, ScenarioExists, create_scenario, parse_suite_scenario
    from harness.scenarios.loading import default_suites_dir
    from harness.scenarios.model import ScenarioError

    try:
        suite, name = parse_suite_scenario(target, need_scenario=True)
    except InvalidName as exc:
        fail(str(exc))
    listed = [p for p in str(suites_dir or "").split(os.pathsep) if p.strip()]
    root = Path(listed[0]).expanduser() if listed else default_suites_dir()
    if root.exists() and not root.is_dir():
        fail(f"--suites-dir: {root} is not a directory")
    try:
        created = create_scenario(root, suite, name)
    except InvalidName as exc:
        fail(str(exc))
    except ScenarioExists as exc:
        fail(str(exc), EXIT_FAILED)
    except ScenarioError as exc:  # the loader refused what was written: nothing is left behind
        fail(str(exc), EXIT_FAILED)
    except OSError as exc:
        fail(f"cannot write the scenario under {root}: {exc.strerror or exc}", EXIT_FAILED)
    click.echo(f"Created {created.key}:")
    for path in created.files:
        click.echo(f"  {path}")
    dirs = "" if suites_dir is None else f" --suites-dir {_quoted(root)}"
    click.echo(f"As written, the oracle passes and echo fails. Make it your task (docs/writing-scenarios.md), "
               f"and check it as you go:\n  bench check {created.key}{dirs}")


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


@click.command("check", context_settings=_CONTEXT)
@click.argument("targets", nargs=-1, required=True, metavar="SUITE[/SCENARIO]...")
@click.option("--suites-dir", "suites_dirs", multiple=True, type=click.Path(file_okay=False),
              envvar="ZE_BENCHMARKS_SUITES_DIR", metavar="DIR",
              help="Where suites live; repeat it, or give a list separated by "
                   f"'{os.pathsep}', for several (a suite is taken from the first that holds it). The shipped suites "
                   "are searched after them unless --no-shipped (default: $ZE_BENCHMARKS_SUITES_DIR).")
@click.option("--no-shipped", is_flag=True, help="Do not search the repository's suites/.")
@click.option("--careless", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              metavar="FILE", help="A patch (unified diff, paths a/... b/... as `git diff` writes them) of a careless "
                                   "fix: applied to the fixture with `git apply` (else `patch -p1`), it must fail. "
                                   "Needs one SUITE/SCENARIO.")
@click.option("--tier", default=None, metavar="TIER",
              help="The prompt the runs get (default: L1, else the scenario's first tier).")
@click.option("-j", "--parallel", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of a scenario at once (each in its own workspace).")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "bwrap", "none", "podman", "docker"]),
              envvar="ZE_BENCHMARKS_SANDBOX",
              default="auto", show_default=True, help="How the runs' commands are confined, as for `bench`.")
@click.option("--workspaces-dir", type=click.Path(file_okay=False, path_type=Path),
              envvar="ZE_BENCHMARKS_WORKSPACES_DIR", default=None,
              help="Where the runs' workspaces go (default: $ZE_BENCHMARKS_WORKSPACES_DIR, else "
                   "~/.cache/zebench/workspaces).")
@click.option("--skip-warmup", is_flag=True, help="Do not run the scenarios' warmup.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the verdicts as JSON on stdout (the rows go to stderr as they come).")
def check(targets: tuple[str, ...], suites_dirs: tuple[str, ...], no_shipped: bool, careless: Path | None,
          tier: str | None, parallel: int, sandbox_mode: str, workspaces_dir: Path | None, skip_warmup: bool,
          as_json: bool) -> None:
    """Prove scenarios sound: one row per check and scenario, exit 1 when any fails.

    Each scenario (SUITE/SCENARIO, or every scenario of SUITE) is run with the agents that
    need no model, through the same runner and grading as `bench`, with the judge off;
    nothing is stored. The checks:

    \b
      scenario loads                    scenario.yaml is valid and the tier has a prompt
      oracle passes                     the reference solution (solution/) succeeds
      repeats                           a second oracle run has the same outcome
      echo fails                        doing nothing does not succeed
      hidden tests fail on the fixture  not every hidden test passes on the untouched fixture
      careless fix fails                (--careless FILE) the fixture with FILE applied fails

    A check that does not apply (no hidden-tests/) is skipped. Exit status: 0 when no check
    failed, 1 when one did, 2 for bad input, 130 when interrupted.

    \b
    Examples:
      bench check py-bugs
      bench check py-bugs/pagination-off-by-one py-bugs/unicode-slugify
      bench check my-suite --suites-dir ./suites --no-shipped
      bench check my-suite/first-bug --suites-dir ./suites --careless only-the-easy-half.patch
      bench check team-a/x team-b --suites-dir ../team-a-suites:../team-b-suites -j 2 --json
    """
    from harness.control import BatchControl, handle_sigint
    from harness.scaffold import CHECKS, CheckOptions, InvalidName, check_scenario, find_targets, suites_dirs as dirs_of
    from harness.scenarios.model import ScenarioError

    try:
        dirs = dirs_of(suites_dirs, include_shipped=not no_shipped)
        found = find_targets(targets, dirs)
    except (InvalidName, ScenarioError) as exc:
        fail(str(exc))
    patch = None
    if careless is not None:
        if len(found) != 1:
            fail(f"--careless applies to one scenario; {len(found)} are selected: give one SUITE/SCENARIO")
        try:
            patch = careless.read_text("utf-8", errors="surrogateescape")
        except OSError as exc:
            fail(f"--careless: cannot read {careless}: {exc.strerror or exc}")
        if not patch.strip():
            fail(f"--careless: {careless} is empty")
    kind = sandbox_kind(sandbox_mode)

    control = BatchControl()
    options = CheckOptions(sandbox=kind, workspaces_root=workspaces_dir, tier=tier, careless=patch,
                           careless_name=f"the careless patch {careless.name}" if careless else "the careless patch",
                           parallel=parallel, skip_warmup=skip_warmup, control=control)
    runs = "the oracle twice and echo once" + (", then the careless patch" if patch else "")
    click.echo(f"Checking {len(found)} scenario(s) from {os.pathsep.join(str(d) for d in dirs)}: {runs}; "
               f"sandbox {kind}, judge off, nothing stored.", err=True)
    key_width = max(len(t.key) for t in found)
    check_width = max(len(c) for c in CHECKS)

    def row(verdict) -> None:  # noqa: ANN001 - harness.scaffold.Verdict
        label = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[verdict.status]
        color = {"pass": "green", "fail": "red", "skip": "yellow"}[verdict.status]
        took = f" ({verdict.seconds:.1f} s)" if verdict.seconds is not None else ""
        click.echo(f"{click.style(label, fg=color)}  {verdict.scenario:<{key_width}}  {verdict.check:<{check_width}}  "
                   f"{verdict.detail}{took}", err=as_json)

    verdicts = []

    def first_interrupt() -> None:
        click.echo(f"interrupting: no new runs start; running commands are killed in {control.grace_s:g} s "
                   "(Ctrl-C again to kill them now)", err=True)

    with handle_sigint(control, first_interrupt, lambda: click.echo("killing every running command now", err=True)):
        for target in found:
            if control.stopping:
                break
            verdicts += check_scenario(target, options, on_verdict=row)
    failed = [v for v in verdicts if v.failed]
    if as_json:
        click.echo(json.dumps({"ok": not failed and not control.stopping, "sandbox": kind,
                               "suitesDirs": [str(d) for d in dirs], "verdicts": [v.to_json() for v in verdicts]},
                              indent=2))
    if control.stopping:
        click.echo("interrupted: the checks are not complete", err=True)
        sys.exit(EXIT_INTERRUPTED)
    counts = {s: sum(1 for v in verdicts if v.status == s) for s in ("pass", "fail", "skip")}
    click.echo(f"{len(verdicts)} check(s) of {len(found)} scenario(s): {counts['pass']} passed, {counts['fail']} failed, "
               f"{counts['skip']} skipped.", err=as_json)
    if failed:
        sys.exit(EXIT_FAILED)
