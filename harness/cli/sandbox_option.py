"""The ``--sandbox MODE`` option of the commands that run scenario commands (``bench``,
``bench check``, ``bench tasks generate``): the backend it names, checked before anything runs.

``auto`` is kept as it is (the runner resolves it per scenario: a container backend for a
scenario that declares an image); a backend that cannot run here is exit 2 naming why; when
bwrap is asked for by ``auto`` but is not usable, the fallback to process-group confinement is
said on stderr, with ``bench doctor`` as the way to fix it.
"""

from __future__ import annotations

import click

from harness.cli.errors import fail


def sandbox_kind(mode: str) -> str:
    """The backend for ``--sandbox MODE`` (module docstring)."""
    from harness.sandbox import SandboxUnavailable, resolve_mode

    try:
        choice = resolve_mode(mode)
    except SandboxUnavailable as exc:
        fail(f"--sandbox {mode}: {exc}")
    if choice.fallback_reason:
        click.echo(f"warning: sandbox: bwrap is not usable here ({choice.fallback_reason}); commands run with "
                   "process-group confinement only (--sandbox none): they can read the suites and the "
                   "harness's environment. `bench doctor` says how to fix it.", err=True)
    return "auto" if mode == "auto" else choice.kind
