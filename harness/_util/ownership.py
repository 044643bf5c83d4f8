"""Which harness process owns a directory, a container or a process.

Whatever the harness creates carries the pid of the harness process that made it: directories
and containers in their name (``...-p<pid>-...``, made with :func:`owned`), sandboxed commands
in the sandbox's marker variable (``ZEBENCH_SANDBOX_ID=<pid>-...``, :data:`MARKER_VAR`). This
module holds those conventions and nothing else (it imports nothing of the harness), so that the
sandbox can mark what it starts and :mod:`harness.leftovers` can find what a dead harness process
left (:func:`owner_of`, :func:`pid_alive`).
"""

from __future__ import annotations

import os
import re

MARKER_VAR = "ZEBENCH_SANDBOX_ID"
_OWNED = re.compile(r"-p(\d+)-")


def owned(prefix: str) -> str:
    """``prefix`` with this process's pid, for a name :func:`owner_of` can attribute."""
    return f"{prefix}p{os.getpid()}-"


def owner_of(name: str) -> int | None:
    """The pid a name made with :func:`owned` carries; None for any other name."""
    match = _OWNED.search(name)
    return int(match.group(1)) if match else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (possibly another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
