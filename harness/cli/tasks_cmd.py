"""``bench tasks generate``: verified bug-fix tasks from real Python code by mutation. The work
is :mod:`harness.taskgen`; this module parses, prints progress and picks the exit status."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.cli.errors import EXIT_INTERRUPTED, fail

_CONTEXT = {"help_option_names": ["-h", "--help"]}



@click.group("tasks", context_settings=_CONTEXT)
def tasks() -> None:
    """Make scenarios from real code (`bench tasks generate`)."""


@tasks.command("generate", context_settings=_CONTEXT)
@click.argument("source", metavar="SOURCE")
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path), metavar="DIR",
              help="The suite to write: DIR/scenarios/<task>/ and DIR/prompts/<task>/ (the suite's name is DIR's).")
@click.option("--count", type=click.IntRange(min=1), default=20, show_default=True,
              help="Stop after this many verified tasks.")
@click.option("--seed", type=int, default=0, show_default=True, help="The order mutants are tried in.")
@click.option("--max-failing", type=click.IntRange(min=1), default=5, show_default=True,
              help="A mutant that fails more tests than this is too broad to be a task.")
@click.option("--max-candidates", type=click.IntRange(min=1), default=None,
              help="Stop after trying this many mutants (default: all).")
@click.option("--kinds", default=None, metavar="K1,K2",
              help="Mutation kinds to use (default: all): arith, compare, boolean, constant, negate, range, slice.")
@click.option("--repeats", type=click.IntRange(min=2), default=3, show_default=True,
              help="Oracle runs of each task that must have the same outcome.")
@click.option("-j", "--parallel", type=click.IntRange(min=1), default=4, show_default=True,
              help="Runs of one task's verification at once.")
@click.option("--model", default=None, metavar="PROVIDER:MODEL",
              help="Have this model write each task's L1 prompt from the failing tests (default: a fixed template; "
                   "no model is called).")
@click.option("--base-url", default=None, help="The endpoint of an openai-compatible --model.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(["auto", "bwrap", "none"]),
              envvar="ZE_BENCHMARKS_SANDBOX", default="auto", show_default=True,
              help="How the project's tests and the verification runs are confined, as for `bench`.")
@click.option("--workspaces-dir", type=click.Path(file_okay=False, path_type=Path),
              envvar="ZE_BENCHMARKS_WORKSPACES_DIR", default=None,
              help="Where the verification runs' workspaces go (default: as for `bench`).")
@click.option("--test-timeout", type=click.FloatRange(min=1), default=300.0, show_default=True,
              help="Seconds one run of the project's tests may take.")
@click.option("--force", is_flag=True, help="Replace the tasks an earlier run generated in DIR.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
def generate(source: str, out: Path, count: int, seed: int, max_failing: int, max_candidates: int | None,
             kinds: str | None, repeats: int, parallel: int, model: str | None, base_url: str | None,
             sandbox_mode: str, workspaces_dir: Path | None, test_timeout: float, force: bool, as_json: bool) -> None:
    """Generate verified bug-fix tasks from a Python project's own tests.

    SOURCE is a project directory, or a package (NAME or NAME==VERSION) whose source
    distribution is downloaded with `pip download --no-deps --no-binary :all:`. Its pytest
    tests run once on the pristine source (failing test files are dropped); then small bugs
    are made in its functions (operators, constants, conditions, range and slice bounds) and
    kept when a few tests fail with assertion failures and everything still imports. Each kept
    bug becomes a scenario of the suite DIR: the fixture is the project with the bug and
    without the failing test files, which become its hidden tests; the solution is the original
    file; the prompt describes the failing tests. A task is kept only when `bench check`'s
    checks pass (oracle passes, the same outcome REPEATS times, echo fails, the hidden tests fail
    on the fixture). Progress goes to stderr; Ctrl-C keeps the tasks verified so far.

    Exit status: 0 when COUNT tasks were kept, 1 when fewer were (the candidates ran out),
    2 for bad input, 130 when interrupted.

    \b
    Examples:
      bench tasks generate toolz==1.2.0 -o ./toolz-bugs --count 20
      bench tasks generate ./my-project -o ./my-bugs --count 5 --seed 7
      bench ./toolz-bugs --agent oracle --agent echo
    """
    from harness.control import BatchControl, handle_sigint
    from harness.taskgen import KINDS, GenerateOptions, TaskgenError
    from harness.taskgen import generate as run_generation

    chosen = tuple(k.strip() for k in kinds.split(",") if k.strip()) if kinds else KINDS
    from harness.cli.sandbox_option import sandbox_kind

    kind = sandbox_kind(sandbox_mode)
    control = BatchControl()
    options = GenerateOptions(source=source, out=out, count=count, seed=seed, force=force, max_failing=max_failing,
                              max_candidates=max_candidates, kinds=chosen,
                              sandbox=None if kind == "auto" else kind, repeats=repeats, parallel=parallel,
                              model=model, base_url=base_url, test_timeout_s=test_timeout,
                              workspaces_root=workspaces_dir, control=control)

    def progress(text: str) -> None:
        click.echo(text, err=True)

    def first_interrupt() -> None:
        click.echo("interrupting: the task being verified is dropped; the tasks verified so far are kept "
                   "(Ctrl-C again to kill running commands now)", err=True)

    try:
        with handle_sigint(control, first_interrupt, lambda: click.echo("killing every running command now", err=True)):
            outcome = run_generation(options, progress)
    except TaskgenError as exc:
        fail(str(exc))
    per = outcome.seconds_per_kept
    summary = (f"{len(outcome.kept)} task(s) kept of {outcome.tried} candidate(s) tried "
               f"({outcome.candidates} available) in {outcome.seconds:.1f} s"
               + (f", {per:.1f} s per kept task" if per is not None else "") + f"; suite {out}")
    if as_json:
        click.echo(json.dumps(outcome.to_json(), indent=2))
    click.echo(summary, err=as_json)
    if outcome.rejected:
        click.echo("rejected: " + ", ".join(f"{n} {why}" for why, n in outcome.rejected.most_common()), err=as_json)
    if outcome.kept:
        click.echo(f"run it: bench {out if '/' in str(out) else './' + str(out)} --agent oracle --agent echo",
                   err=as_json)
    if outcome.stopped:
        click.echo("interrupted: the tasks verified so far are kept", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if len(outcome.kept) < count:
        sys.exit(1)
