"""``bench``: run scenario benchmarks and look at stored results.

``bench SUITE [SCENARIO...] [options]`` runs a plan of scenarios; ``bench`` alone prints a
short guide; the other words (``bench list``,
``bench batches``, ...) are subcommands. Each subcommand lives in its own module under
``harness/cli/`` and is attached here.
"""

from __future__ import annotations

import importlib

import click

from harness.cli.errors import FriendlyGroup

# Modules that each define a click command or group named in the tuple.
_COMMAND_MODULES = (
    ("harness.cli.run_cmd", "run"),
    ("harness.cli.browse_cmd", "list_cmd"),
    ("harness.cli.results_cmd", "batches"),
    ("harness.cli.results_cmd", "batch"),
    ("harness.cli.results_cmd", "history"),
    ("harness.cli.results_cmd", "show"),
    ("harness.cli.sync_cmd", "sync"),
    ("harness.cli.prices_cmd", "prices"),
    ("harness.cli.doctor_cmd", "doctor"),
    ("harness.cli.profile_cmd", "profile"),
    ("harness.cli.stress_cmd", "stress"),
    ("harness.cli.dataset_cmd", "dataset"),
    ("harness.cli.dataset_cmd", "datasets"),
    ("harness.cli.fleet_cmd", "fleet"),
    ("harness.cli.analysis_cmd", "compare"),
    ("harness.cli.analysis_cmd", "leaderboard"),
    ("harness.cli.analysis_cmd", "regressions"),
    ("harness.cli.analysis_cmd", "costs"),
    ("harness.cli.html_report_cmd", "report"),
    ("harness.cli.view_cmd", "view"),
    ("harness.cli.mock_model_cmd", "mock_model"),
    ("harness.cli.agents_cmd", "agents"),
    ("harness.cli.export_cmd", "export"),
    ("harness.cli.scaffold_cmd", "new"),
    ("harness.cli.scaffold_cmd", "check"),
    ("harness.cli.tasks_cmd", "tasks"),
)


GUIDE = """\
bench runs coding agents on scenario fixtures, scores every run and stores it.

  bench list                                    suites, scenarios and agents installed
  bench doctor                                  is this machine ready (sandbox, tools, keys)?
  bench py-bugs pagination-off-by-one --agent oracle
                                                one scenario (oracle: the reference solution)
  bench py-bugs --agent oracle --agent echo     a whole suite, two agents, one batch
  bench --all --agent anthropic --dry-run       every suite: the cells and a cost estimate
  bench batches                                 the batches stored; `bench batch ID` for one
  bench compare BATCH_A BATCH_B                 which is better, with intervals and p-values
  bench leaderboard --by agent,model            ranked on comparable runs, with rank ranges
  bench view                                    the web dashboard of the stored results

Runs are stored in the results/bench.db of the zebench project at or above this directory
(else the per-user store; `bench doctor` names it) unless --worker-url or
$ZE_BENCHMARKS_WORKER_URL names a results worker. `bench --help` lists the commands; `bench run --help` every run option."""


class DefaultRunGroup(FriendlyGroup):
    """A group whose first argument, when it is not a subcommand, starts ``run``."""

    program = "bench"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            click.echo(GUIDE)
            ctx.exit(0)
        # The group's own options are only --help and --version; anything else that is not a
        # subcommand (a suite name, or a run option written first) belongs to ``run``.
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help", "--version"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultRunGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zebench")
def main() -> None:
    """Benchmark coding agents on scenario fixtures and store scored results.

    \b
    Examples:
      bench list
      bench py-bugs unicode-slugify --tier L1 --agent oracle
      bench py-bugs --agent oracle --agent anthropic --tiers L0,L1 --iterations 3
      bench --all --agent anthropic --dry-run
      bench py-bugs --agent anthropic --resume BATCH_ID
      bench batch BATCH_ID
    """
    from harness._util.places import default_workspaces_root
    from harness.leftovers import sweep

    try:  # what a killed earlier run left behind: never a reason for this command to fail
        report = sweep(default_workspaces_root())
    except Exception as exc:  # noqa: BLE001
        click.echo(f"warning: could not sweep leftovers of earlier runs: {type(exc).__name__}: {exc}", err=True)
    else:
        for entry in report.skipped:
            click.echo(f"warning: a leftover of an earlier run was not removed: {entry}", err=True)


class _LazyCommands(dict):
    """The subcommands by name, each module imported the first time its command is looked up
    (``bench fleet validate`` does not import what ``bench stress`` needs); listing them all,
    as ``--help`` does, imports them all."""

    def __init__(self, modules: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self._where = {_command_name(attr): (module, attr) for module, attr in modules}

    def _load(self, name: object) -> None:
        where = self._where.pop(name, None) if isinstance(name, str) else None
        if where is None:
            return
        module, attr = where
        try:
            loaded = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            return
        command = getattr(loaded, attr, None)
        if command is not None:
            dict.__setitem__(self, command.name, command)

    def _load_all(self) -> None:
        for name in list(self._where):
            self._load(name)

    def __contains__(self, name: object) -> bool:
        self._load(name)
        return dict.__contains__(self, name)

    def __getitem__(self, name: str) -> click.Command:
        self._load(name)
        return dict.__getitem__(self, name)

    def get(self, name: str, default: object = None) -> object:  # type: ignore[override]
        self._load(name)
        return dict.get(self, name, default)

    def __iter__(self):  # noqa: ANN204 - dict's signature
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def keys(self):  # noqa: ANN201 - dict's signature
        self._load_all()
        return dict.keys(self)

    def values(self):  # noqa: ANN201 - dict's signature
        self._load_all()
        return dict.values(self)

    def items(self):  # noqa: ANN201 - dict's signature
        self._load_all()
        return dict.items(self)


def _command_name(attr: str) -> str:
    """The command's name: its attribute's, without a ``_cmd`` suffix, ``-`` for ``_`` (``list_cmd`` is ``list``)."""
    return attr.removesuffix("_cmd").replace("_", "-")


main.commands = _LazyCommands(_COMMAND_MODULES)
