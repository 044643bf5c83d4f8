"""The ``none`` backend: process-group confinement only, for machines where bwrap cannot run.

A command runs as the harness's user (an unprivileged uid when the harness is root,
:mod:`harness.sandbox.identity`), in the workspace directory, in its own session, with
the sandbox's clean environment (no secret variable; a private ``$HOME`` and ``$TMPDIR``
made for the command and deleted after it, as bwrap's are), the limits of
:mod:`harness.sandbox.limits`, and is
killed with everything it started when it returns or times out: its process group, its
cgroup when one could be made, and any process still carrying the sandbox's marker variable.

It does **not** hide the filesystem (a command can read ``suites/``: as root's sandbox uid it
keeps the capability to read every file, see :meth:`Identity.for_process_group`, and it can
write wherever its uid may), the network, or other processes (when the harness is not root,
they are the same user's: ``/proc/<pid>/environ`` of the harness holds its API keys). Runs
record the kind, so such runs are never mistaken for contained ones.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness._util.ownership import MARKER_VAR, owned
from harness.sandbox.base import Mount, Sandbox, SandboxSpec, _passthrough_env, interpreter_bin
from harness.sandbox.limits import Cgroup
from harness._util.trees import remove_tree




class ProcessGroupSandbox(Sandbox):
    kind = "none"

    def __init__(self, workspace: Path, spec: SandboxSpec) -> None:
        super().__init__(workspace, spec)
        self.identity = self.identity.for_process_group()
        self._private = Path(tempfile.mkdtemp(prefix=owned("zebench-sandbox-")))
        self.adopt(self._private)

    @property
    def inner_workspace(self) -> str:
        return str(self.workspace)

    def mount_point(self, mount: Mount) -> str:
        return str(mount.source.resolve())  # nothing is mounted: commands see the host path

    def base_env(self) -> dict[str, str]:
        path = [interpreter_bin(), *[p for p in os.environ.get("PATH", "").split(os.pathsep) if p]]
        return {
            **_passthrough_env(),
            "PATH": os.pathsep.join(dict.fromkeys(path)),
        }

    @contextmanager
    def _command_scope(self) -> Iterator[dict[str, str]]:
        scope = Path(tempfile.mkdtemp(prefix="cmd-", dir=self._private))
        (scope / "home").mkdir()
        (scope / "tmp").mkdir()
        self.adopt(scope)
        try:
            yield {"HOME": str(scope / "home"), "TMPDIR": str(scope / "tmp")}
        finally:
            remove_tree(scope)

    def _argv(self, command: list[str]) -> tuple[list[str], dict[str, Any]]:
        return command, {"cwd": str(self.workspace)}

    def _after(self, pid: int, cgroup: Cgroup | None) -> None:
        super()._after(pid, cgroup)
        if cgroup is None:
            self._kill_marked()

    def _kill_marked(self) -> None:
        """Kill processes that left the process group but still carry the marker variable."""
        needle = f"{MARKER_VAR}={self.marker}".encode()
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as fh:
                    if needle in fh.read().split(b"\0"):
                        os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ValueError):
                continue

    def _cleanup(self) -> None:
        remove_tree(self._private)
