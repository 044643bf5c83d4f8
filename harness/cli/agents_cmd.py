"""``bench agents``: every agent, and installing the agent CLIs (``bench agents install``)."""

from __future__ import annotations

import json

import click


@click.group("agents", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the agents as JSON.")
@click.pass_context
def agents(ctx: click.Context, as_json: bool) -> None:
    """List every agent: its kind (tool loop, installed CLI, scripted), the pinned version of an
    installed CLI and whether it is installed here.

    \b
    Examples:
      bench agents
      bench agents install claude-code
      bench agents install codex@0.171.0      # another version than the pinned one
    """
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from harness.agents import agent_names, installed_specs
    from harness.agents.installed.tools import executable_path, installed_versions, tools_dir
    from harness.cli.render import make_console

    installed = installed_specs()
    rows = []
    for name in agent_names():
        spec = installed.get(name)
        if spec is None:
            kind = "scripted" if name in ("echo", "oracle") else "tool loop"
            rows.append({"agent": name, "kind": kind, "version": None, "installed": None, "versions": []})
            continue
        found = executable_path(name, spec.package, spec.package.version)
        rows.append({"agent": name, "kind": "installed", "package": spec.package.spec(), "api": spec.api,
                     "version": spec.package.version, "installed": found is not None,
                     "versions": installed_versions(name), "executable": str(found) if found else None})
    if as_json:
        from harness.agents import PLUGIN_ERRORS

        click.echo(json.dumps({"toolsDir": str(tools_dir()), "agents": rows, "pluginErrors": PLUGIN_ERRORS}, indent=2))
        return
    table = Table(title="Agents")
    for column in ("agent", "kind", "pinned version", "installed here", "model API"):
        table.add_column(column)
    for row in rows:
        if row["kind"] != "installed":
            table.add_row(row["agent"], row["kind"], "", "", "")
            continue
        state = "yes" if row["installed"] else f"no: bench agents install {row['agent']}"
        others = [v for v in row["versions"] if v != row["version"]]
        if others:
            state += f" (also {', '.join(others)})"
        table.add_row(row["agent"], "installed CLI", row["version"], state, row["api"])
    console = make_console()
    console.print(table)
    console.print(f"Installed CLIs live in {tools_dir()} (ZE_BENCHMARKS_TOOLS_DIR). Your own agent: "
                  "--agent 'cmd:COMMAND', or a package's zebench.agents entry point.")
    from harness.agents import PLUGIN_ERRORS

    for problem in PLUGIN_ERRORS:
        console.print(f"warning: an agent plugin could not be loaded: {problem}", style="yellow")


@agents.command("install")
@click.argument("agent_spec", metavar="NAME[@VERSION]")
def install_cmd(agent_spec: str) -> None:
    """Install an agent CLI (its pinned version, or VERSION) into the per-user tools directory,
    where every run finds it. Installing what is there already does nothing.

    \b
    Examples:
      bench agents install claude-code
      bench agents install codex@0.171.0
    """
    from harness.agents import installed_specs
    from harness.agents.installed.tools import InstallError, install

    name, _, version = agent_spec.partition("@")
    known = installed_specs()
    if name not in known:
        raise click.BadParameter(f"{name!r} is not an installed agent; these are: {', '.join(sorted(known))}",
                                 param_hint="NAME")
    spec = known[name]
    version = version or spec.package.version
    click.echo(f"Installing {spec.package.spec(version)} for the {name} agent ...", err=True)
    try:
        path = install(name, spec.package, version, log=lambda line: click.echo(f"  $ {line}", err=True))
    except InstallError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{name} {version}: {path}")
