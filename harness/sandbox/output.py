"""Running one spawned process to completion: capped output, a deadline, what happened.

:func:`supervise` reads a process's stdout and stderr as they arrive, keeping at most a cap of
each (head and tail, so a command printing gigabytes costs bounded memory), and stops at a
deadline. Killing is the caller's business (the sandbox knows what "everything the command
started" means); this module only reports.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_OUTPUT_CAP = 64 * 1024  # bytes per stream


@dataclass
class CommandResult:
    """What one command did."""

    command: str
    exit_code: int | None  # None when it was killed (timeout, sandbox closed)
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: float
    truncated: bool = False
    # Why the sandbox killed it, when it did: "timeout", "memory", "processes", "closed".
    killed_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.killed_by is None

    def combined_output(self) -> str:
        parts = [p for p in (self.stdout, self.stderr) if p]
        return "\n".join(parts)

    def outcome(self) -> str:
        """A few words: ``exit 0``, ``timed out``, ``killed: memory limit``."""
        if self.timed_out:
            return "timed out"
        if self.killed_by == "memory":
            return "killed: memory limit reached"
        if self.killed_by == "processes":
            return f"exit {self.exit_code} (process limit reached)"
        if self.killed_by == "closed":
            return "killed: the sandbox was closed"
        return f"exit {self.exit_code}"


class CappedBuffer:
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


@dataclass
class Supervised:
    """The raw outcome of :func:`supervise`."""

    stdout: CappedBuffer
    stderr: CappedBuffer
    timed_out: bool
    stopped: bool  # ``should_stop`` asked to stop early


# After the command's first process exits, how long its output may keep arriving before
# whatever still holds the pipes (a detached child) is killed.
EXIT_GRACE_S = 0.2
# After a kill, how long to read what the pipes still hold.
DRAIN_S = 1.0


def feed_stdin(proc: subprocess.Popen, data: bytes | None) -> None:
    """Write ``data`` to ``proc``'s stdin and close it (nothing when None); a command that exits
    without reading it all is no error."""
    if data is None:
        return
    try:
        proc.stdin.write(data)  # type: ignore[union-attr]
    except BrokenPipeError:
        pass
    proc.stdin.close()  # type: ignore[union-attr]


def reap(proc: subprocess.Popen) -> None:
    """Wait for ``proc`` (already killed or exited) and close its output pipes."""
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def supervise(proc: subprocess.Popen, deadline: float, output_cap: int, kill: Callable[[], None],
              should_stop: Callable[[], bool] | None = None) -> Supervised:
    """Read ``proc``'s output until it is over, and say how it ended.

    The command is over when its first process has exited and its output is closed; a
    detached child still holding the output gets :data:`EXIT_GRACE_S`, then ``kill()`` ends
    it. At ``deadline`` (a ``time.monotonic()`` value), or when ``should_stop()`` turns
    true, ``kill()`` is called and the run is reported as timed out or stopped.
    """
    buffers = {proc.stdout: CappedBuffer(output_cap), proc.stderr: CappedBuffer(output_cap)}
    selector = selectors.DefaultSelector()
    for stream in buffers:
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ)
    timed_out = stopped = killed = False
    exited_at: float | None = None
    drain_until = 0.0
    open_streams = len(buffers)
    try:
        while open_streams:
            now = time.monotonic()
            if killed:
                if now >= drain_until:
                    break
            elif now >= deadline:
                timed_out = killed = True
            elif should_stop is not None and should_stop():
                stopped = killed = True
            elif exited_at is None and proc.poll() is not None:
                exited_at = now
            elif exited_at is not None and now - exited_at >= EXIT_GRACE_S:
                killed = True
            if killed and not drain_until:
                kill()
                drain_until = time.monotonic() + DRAIN_S
            wait = 0.1 if not killed else max(0.0, drain_until - time.monotonic())
            for key, _ in selector.select(timeout=min(wait, max(0.0, deadline - now)) if not killed else wait):
                chunk = key.fileobj.read1(65536) if hasattr(key.fileobj, "read1") else key.fileobj.read(65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                buffers[key.fileobj].feed(chunk)
        while not killed:
            # Output closed; the process may still run if it closed its output itself.
            try:
                proc.wait(timeout=max(0.0, min(0.1, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    timed_out = killed = True
                elif should_stop is not None and should_stop():
                    stopped = killed = True
                if killed:
                    kill()
    finally:
        selector.close()
    return Supervised(buffers[proc.stdout], buffers[proc.stderr], timed_out, stopped)
