"""``bench doctor``: what this machine supports for benchmarking, and how to get what is missing."""

from __future__ import annotations

import json

import click


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(as_json: bool) -> None:
    """Check the sandbox (bwrap, cgroups, prlimit) and the tools scenarios and agents use
    (pytest, Node, pnpm, chromium, the agent CLIs, the local model), and say how to get
    what is missing. Every check runs the real thing. The exit status is 0: this command
    reports, it does not judge.

    \b
    Examples:
      bench doctor
      bench doctor --json
    """
    from rich.table import Table
    from rich.text import Text

    from harness.cli.render import make_console
    from harness.doctor import run_checks, sandbox_summary

    checks = run_checks()
    summary = sandbox_summary()
    if as_json:
        click.echo(json.dumps({"sandbox": summary, "checks": [c.to_dict() for c in checks]}, indent=2))
        return
    table = Table(title="bench doctor")
    for column in ("check", "status", "detail", "needed for", "how to fix"):
        table.add_column(column, overflow="fold")
    styles = {"ok": "green", "limited": "yellow", "missing": "red"}
    for c in checks:
        table.add_row(c.name, Text(c.status, style=styles.get(c.status, "")), c.detail, c.needed_for, c.fix or "")
    console = make_console()
    console.print(table)
    console.print(summary)
