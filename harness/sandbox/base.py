"""The sandbox interface: what every backend offers, and the command lifecycle they share.

A :class:`Sandbox` is bound to one workspace directory. :meth:`Sandbox.run` runs a shell
command in it with a clean environment (no variable of the harness's own environment but
``LANG``/``TZ``; no secret), its own session, a cgroup where one can be made, rlimits, a
deadline and capped output; when the command returns or is killed, everything it started is
killed too. :meth:`Sandbox.close` kills whatever is still running and refuses every later
command or file operation (:class:`SandboxClosed`): once an agent's run is over, nothing it
started survives and no tool call is accepted.

Backends differ in what a command can *see*: ``bwrap`` (:mod:`harness.sandbox.bwrap`) builds
a private filesystem view, PID namespace and network namespace; ``none``
(:mod:`harness.sandbox.process_group`) only confines the process tree.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._util.ownership import MARKER_VAR
from harness.sandbox.identity import resolve_identity
from harness.sandbox.limits import Cgroup, LimitEnforcement, Limits
from harness.sandbox.output import CommandResult, feed_stdin, reap, supervise

CONTAINER_KINDS = ("podman", "docker")
KINDS = ("bwrap", "none", *CONTAINER_KINDS)
MODES = ("auto", *KINDS)


class SandboxClosed(RuntimeError):
    """The sandbox was closed: the run it served is over."""


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run on this machine (the message says why)."""


@dataclass(frozen=True)
class Mount:
    """A host path made visible to commands: at ``target`` (bwrap) or where it is (``none``)."""

    source: Path
    target: str | None = None  # default: the same path as on the host
    writable: bool = False

    @property
    def inner(self) -> str:
        return self.target or str(self.source)


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox is asked to be. ``kind`` is a resolved backend (``bwrap`` or ``none``)."""

    kind: str = "none"
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    mounts: tuple[Mount, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # added to every command's environment


def _passthrough_env() -> dict[str, str]:
    env = {"LANG": os.environ.get("LANG") or "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1"}
    for name in ("LC_ALL", "TZ"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def interpreter_bin() -> str:
    """The directory of the harness's interpreter: first on every command's PATH, so that
    ``python3 -m pytest`` means the harness's Python and its virtualenv."""
    return os.path.dirname(sys.executable)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Sandbox(ABC):
    """Runs commands for one workspace; see the module docstring."""

    kind: str = ""

    def __init__(self, workspace: Path, spec: SandboxSpec) -> None:
        self.workspace = Path(workspace).resolve()
        self.spec = spec
        self.limits = spec.limits
        # As root, commands run as an unprivileged uid (harness.sandbox.identity): the
        # workspace becomes theirs.
        self.identity = resolve_identity()
        self.enforcement = LimitEnforcement.detect(spec.limits, self.identity.uid)
        self.identity.adopt(self.workspace)
        self._cond = threading.Condition()
        self._closed = False
        self._active = 0
        self._running: dict[int, Cgroup | None] = {}
        # In every command's environment: lets this process, or the next harness process if
        # this one is killed, find what the sandbox started (harness.leftovers).
        self.marker = f"{os.getpid()}-{os.urandom(8).hex()}"

    # -- what commands see -----------------------------------------------------------------
    @property
    @abstractmethod
    def inner_workspace(self) -> str:
        """The workspace's path as commands see it."""

    def inner_path(self, host: Path | str) -> str:
        """Where a host path inside the workspace or a mount appears to commands."""
        host = Path(host).resolve()
        roots = [(self.workspace, self.inner_workspace)] + [(m.source.resolve(), self.mount_point(m))
                                                             for m in self.spec.mounts]
        for root, inner in roots:
            if host == root or host.is_relative_to(root):
                rel = host.relative_to(root).as_posix()
                return inner if rel == "." else f"{inner.rstrip('/')}/{rel}"
        raise ValueError(f"{host} is not visible inside the sandbox")

    def mount_point(self, mount: Mount) -> str:
        """Where ``mount`` appears to commands."""
        return mount.inner

    def host_path(self, inner: str) -> Path | None:
        """The host path of an absolute path inside the workspace as commands see it, else None."""
        root = self.inner_workspace.rstrip("/")
        if inner == root or inner.startswith(root + "/"):
            return self.workspace / inner[len(root):].lstrip("/")
        return None

    @abstractmethod
    def base_env(self) -> dict[str, str]:
        """The environment every command starts from (PATH, HOME, TMPDIR, LANG, ...)."""

    @abstractmethod
    def _argv(self, command: list[str]) -> tuple[list[str], dict[str, Any]]:
        """The process to spawn for ``command`` and extra ``Popen`` keyword arguments."""

    def _after(self, pid: int, cgroup: Cgroup | None) -> None:
        """Kill everything the command started (the backend may know more than the group)."""
        _kill_group(pid)
        if cgroup is not None:
            cgroup.kill()

    def _cleanup(self) -> None:
        """Release what the sandbox holds on the host (private directories)."""

    @contextmanager
    def _command_scope(self) -> Iterator[dict[str, str]]:
        """Environment overrides for one command, and what to undo after it (per-command
        private directories)."""
        yield {}

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    @contextmanager
    def operation(self) -> Iterator[None]:
        """Hold the sandbox open for one tool call or command; :class:`SandboxClosed` once closed."""
        with self._cond:
            if self._closed:
                raise SandboxClosed("the run is over: the sandbox is closed and accepts no more calls")
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def close(self, grace_s: float = 5.0) -> None:
        """Kill every running command, refuse later calls, wait up to ``grace_s`` for calls in
        flight to return, and release host resources. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            running = list(self._running.items())
        for pid, cgroup in running:
            self._after(pid, cgroup)
        with self._cond:
            self._cond.wait_for(lambda: self._active == 0, timeout=grace_s)
        self._cleanup()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running ---------------------------------------------------------------------------
    def run(self, command: str, *, timeout_s: float | None = None, output_cap: int | None = None,
            env: Mapping[str, str] | None = None, stdin_data: bytes | None = None) -> CommandResult:
        """Run ``command`` with ``/bin/sh -c`` in the workspace root; see the module docstring.

        ``env`` is added to the sandbox's environment for this command only.
        Raises :class:`SandboxClosed` when the sandbox is closed.
        """
        with self.operation(), self._command_scope() as scoped:
            return self._run(command, timeout_s, output_cap, {**scoped, **(env or {})}, stdin_data)

    def run_argv(self, argv: list[str], **kwargs: Any) -> CommandResult:
        """:meth:`run` for an argument vector (quoted for the shell)."""
        return self.run(shlex.join(argv), **kwargs)

    def _run(self, command: str, timeout_s: float | None, output_cap: int | None,
             env: Mapping[str, str] | None, stdin_data: bytes | None) -> CommandResult:
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        cap = self.limits.output_bytes if output_cap is None else output_cap
        full_env = {**self.base_env(), **self.spec.env, **(env or {}), MARKER_VAR: self.marker}
        cgroup = self.enforcement.new_cgroup()
        argv, popen_kwargs = self._argv(self.identity.wrap(["/bin/sh", "-c", command]))
        argv = self.enforcement.prlimit_argv() + argv
        if cgroup is not None:
            # The first process enters the cgroup before it execs anything, so every
            # descendant is accounted for and can be killed.
            enter = " && ".join(f"echo $$ > {shlex.quote(p)}" for p in cgroup.procs_files)
            argv = ["/bin/sh", "-c", f'{enter} && exec "$@"', "zebench-sandbox", *argv]
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv, env=full_env, stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **popen_kwargs,
            )
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            raise
        finally:
            for fd in popen_kwargs.get("pass_fds", ()):
                os.close(fd)
        with self._cond:
            self._running[proc.pid] = cgroup
        try:
            feed_stdin(proc, stdin_data)
            outcome = supervise(proc, start + timeout, cap, kill=lambda: self._after(proc.pid, cgroup),
                                should_stop=lambda: self._closed)
        finally:
            # Whatever happened, nothing the command started outlives it.
            self._after(proc.pid, cgroup)
            reap(proc)
            with self._cond:
                self._running.pop(proc.pid, None)
        # close() may have killed the command before the supervisor noticed it was asked to.
        stopped = outcome.stopped or (self._closed and not outcome.timed_out)
        killed_by = "timeout" if outcome.timed_out else ("closed" if stopped else None)
        if cgroup is not None:
            if killed_by is None and cgroup.oom_kills():
                killed_by = "memory"
            elif killed_by is None and cgroup.process_limit_hits():
                killed_by = "processes"
            cgroup.remove()
        killed = outcome.timed_out or stopped
        return CommandResult(
            command=command,
            exit_code=None if killed else proc.returncode,
            stdout=outcome.stdout.text(),
            stderr=outcome.stderr.text(),
            timed_out=outcome.timed_out,
            duration_ms=(time.monotonic() - start) * 1000.0,
            truncated=bool(outcome.stdout.dropped or outcome.stderr.dropped),
            killed_by=killed_by,
        )

    def adopt(self, path: Path | str) -> None:
        """Hand a file or tree the harness wrote for commands to the uid they run as."""
        self.identity.adopt(path)

    # -- reporting -------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What the sandbox is, for the run's record."""
        return {
            "kind": self.kind,
            "network": self.spec.network,
            "workspace": self.inner_workspace,
            "user": self.identity.describe(),
            "limits": self.enforcement.describe(),
        }
