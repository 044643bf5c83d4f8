"""Finding processes on the host by a marker in their command line (for containment tests)."""

from __future__ import annotations

import os
import signal
import time


def alive(marker: str) -> list[int]:
    """Host pids of processes whose command line contains ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry.name}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def gone(marker: str, wait_s: float = 5.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not alive(marker):
            return True
        time.sleep(0.05)
    return False


def interruptible() -> None:
    """``preexec_fn`` for a command a test stops with SIGINT, as a user's Ctrl-C would: the
    command starts with SIGINT at its default disposition and unblocked, whatever the test
    process inherited or was left with by earlier tests."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
