"""How the command-line tools fail: one line that names what failed, never a traceback.

Exit statuses, the same for ``bench`` and ``mint``:

- ``1``: something failed (a store that cannot be reached, a file that cannot be written);
- ``2``: bad input (an option, a file, a field), found before anything ran;
- ``130``: interrupted (Ctrl-C).

An error nobody anticipated is a bug: the tool prints ``internal error`` with the exception's
type and message and the path of a log file holding the traceback
(``$ZE_BENCHMARKS_LOG_DIR``, default ``~/.cache/zebench/logs``), and exits 1.
"""

from __future__ import annotations

import datetime as _dt
import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import NoReturn

import click

from harness._util.places import log_dir

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One line on stderr (``error: MESSAGE``) and the exit status (bad input: 2)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def write_crash_log(program: str, exc: BaseException) -> Path | None:
    """Write the traceback of ``exc`` to a new log file; its path, or None when that failed too."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    try:
        directory = log_dir()
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{program}-{stamp}-{os.getpid()}.log"
        path.write_text("".join(traceback.format_exception(exc)), "utf-8")
        return path
    except OSError:
        return None


def describe(exc: BaseException) -> tuple[str, int] | None:
    """(one line, exit status) for an error with a known meaning, None for a bug."""
    from harness.results import ResultsError
    from harness.sandbox import SandboxUnavailable
    from harness.scenarios.model import ScenarioError

    if isinstance(exc, ResultsError):
        return f"error: {exc}", EXIT_FAILED
    if isinstance(exc, ScenarioError):
        return f"error: {exc}", EXIT_BAD_INPUT
    if isinstance(exc, SandboxUnavailable):
        return f"error: sandbox: {exc}", EXIT_BAD_INPUT
    try:
        from harness.specialists import TemplateError
    except ImportError:  # pragma: no cover - the package is always there
        TemplateError = ()  # type: ignore[assignment,misc]
    if TemplateError and isinstance(exc, TemplateError):
        return f"error: {exc}", EXIT_BAD_INPUT
    if isinstance(exc, sqlite3.DatabaseError):
        return f"error: database: {exc}", EXIT_FAILED
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"error: {exc.strerror or exc}{where}", EXIT_FAILED
    return None


def fail_cleanly(program: str, exc: BaseException) -> int:
    """Print the one line for ``exc`` (logging the traceback of a bug); the exit status."""
    known = describe(exc)
    if known is not None:
        message, status = known
        click.echo(message, err=True)
        return status
    log = write_crash_log(program, exc)
    where = f"; the traceback is in {log}" if log else ""
    click.echo(f"internal error: {type(exc).__name__}: {exc}{where}", err=True)
    return EXIT_FAILED


def repeated_options(command: click.Command, args: list[str]) -> list[str]:
    """Options that take one value and appear more than once in ``args`` (click would keep
    the last silently, e.g. ``--agent echo --agent oracle``)."""
    single: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option) and not (param.multiple or param.count or param.is_flag):
            for opt in (*param.opts, *param.secondary_opts):
                single[opt] = param
    seen: dict[str, int] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        if token.startswith("--"):
            param = single.get(token.split("=", 1)[0])
            attached = "=" in token
        elif token.startswith("-") and len(token) >= 2 and not token[1].isdigit():
            param = single.get(token[:2])
            attached = len(token) > 2
        else:
            continue
        if param is None:
            continue
        label = "/".join(sorted(param.opts, key=len, reverse=True))
        seen[label] = seen.get(label, 0) + 1
        if not attached:
            i += 1  # its value
    return [name for name, n in seen.items() if n > 1]


class FriendlyGroup(click.Group):
    """A click group whose commands fail with one line and the documented exit status, and
    refuse an option that takes one value when it is given twice."""

    program = "zebench"

    def resolve_command(self, ctx: click.Context, args: list[str]):  # noqa: ANN201 - click's signature
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            repeated = repeated_options(command, rest)
            if repeated:
                raise click.UsageError(f"{', '.join(repeated)} given more than once; give each option once",
                                       ctx=ctx)
        return name, command, rest

    def invoke(self, ctx: click.Context):  # noqa: ANN201 - click's signature
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # noqa: BLE001 - this is the one place that turns errors into lines
            ctx.exit(fail_cleanly(self.program, exc))
