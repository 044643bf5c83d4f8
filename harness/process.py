"""Run shell commands confined to a directory, in their own process group, with a timeout.

Used by validation commands, heuristic checks, warmup and the agents' ``run_command`` tool.
The timeout kills the whole process group, so children a command forked die with it.
Output is read as it arrives and capped head+tail, so a command printing gigabytes costs
bounded memory.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUTPUT_CAP = 64 * 1024

# Environment variables never handed to commands the harness runs for an agent or a scenario.
_SECRET_NAME = re.compile(
    r"(API_KEY|APIKEY|_TOKEN|TOKEN_|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)",
    re.IGNORECASE,
)
_SECRET_EXACT = {"ZE_BENCHMARKS_WORKER_URL", "API_SECRET_KEY", "AWS_ACCESS_KEY_ID"}


@dataclass
class CommandResult:
    """What one command did."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: float
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def combined_output(self) -> str:
        parts = [p for p in (self.stdout, self.stderr) if p]
        return "\n".join(parts)


def command_env() -> dict[str, str]:
    """The default environment of scenario and agent commands: :func:`scrubbed_env`, with the
    directory of the harness's own interpreter first on ``PATH``.

    Scenario commands say ``python3 -m pytest``; that must mean the interpreter running the
    harness (its virtualenv has pytest) even when ``bench`` was started without activating
    the virtualenv, as on a fresh machine whose system Python has no pytest.
    """
    env = scrubbed_env()
    bin_dir = os.path.dirname(sys.executable)
    if bin_dir:
        env["PATH"] = os.pathsep.join([bin_dir, env["PATH"]]) if env.get("PATH") else bin_dir
    return env


def scrubbed_env(base: dict[str, str] | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) without anything that looks like a secret."""
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if name in _SECRET_EXACT or _SECRET_NAME.search(name):
            del env[name]
    if extra:
        env.update(extra)
    return env


class _CappedBuffer:
    """Keeps the first and last ``cap/2`` bytes of a stream and counts what was dropped."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self.tail_cap
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n... [{self.dropped} bytes omitted] ...\n{tail}"
        return head + tail


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(
    command: str,
    cwd: str | Path,
    timeout_s: float = 300.0,
    env: dict[str, str] | None = None,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    stdin_data: bytes | None = None,
) -> CommandResult:
    """Run ``command`` with ``/bin/sh -c`` in ``cwd``.

    ``env`` defaults to :func:`command_env` (secrets removed, the harness's interpreter first
    on PATH). The command gets its own session (process group); on timeout the whole group
    is killed. Each of stdout and stderr keeps at most ``output_cap`` bytes (head and tail).
    """
    start = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=str(cwd),
        env=command_env() if env is None else env,
        stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    if stdin_data is not None:
        try:
            proc.stdin.write(stdin_data)
        except BrokenPipeError:
            pass
        proc.stdin.close()
    buffers = {proc.stdout: _CappedBuffer(output_cap), proc.stderr: _CappedBuffer(output_cap)}
    selector = selectors.DefaultSelector()
    for stream in buffers:
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ)
    deadline = start + timeout_s
    timed_out = False
    open_streams = len(buffers)
    try:
        while open_streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=min(remaining, 0.5)):
                chunk = key.fileobj.read1(65536) if hasattr(key.fileobj, "read1") else key.fileobj.read(65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                buffers[key.fileobj].feed(chunk)
        if not timed_out:
            # Streams closed; the shell may still be running if it detached its output.
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        if timed_out:
            _kill_group(proc)
            proc.wait()
        else:
            # Children left running in the background with the group are not ours to keep.
            _kill_group(proc)
        selector.close()
        for stream in buffers:
            stream.close()
    out, err = buffers[proc.stdout], buffers[proc.stderr]
    return CommandResult(
        command=command,
        exit_code=None if timed_out else proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        duration_ms=(time.monotonic() - start) * 1000.0,
        truncated=bool(out.dropped or err.dropped),
    )
