"""Running a fleet run directory in the detached process that :func:`harness.fleet.start` (and
``bench fleet --no-wait``, ``bench fleet resume --no-wait``) starts: :func:`run_detached` runs
(or completes) the run with the results client it was started with. SIGTERM and SIGINT stop it
as Ctrl-C stops ``bench fleet``: nothing new starts, what is in flight finishes and is kept,
and the run reads ``interrupted`` (``bench fleet resume`` completes it); a second signal
aborts what is in flight (:meth:`harness.control.BatchControl.abort`).

The process's entry point, which reads its argument and writes its outcome to its output
(``fleet.log`` in the run directory), is :mod:`harness.cli.fleet_detached`.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any


def run_detached(run_dir: Path) -> dict[str, Any]:
    """Run the fleet of ``run_dir`` in this process, stopped by SIGTERM or SIGINT; its results."""
    from harness.control import BatchControl
    from harness.fleet import execute_run_dir, open_run_client

    control = BatchControl()

    def stop(signum: int, frame: object) -> None:
        if control.stopping:
            control.abort()
        else:
            control.interrupt()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    client = open_run_client(run_dir)
    try:
        return execute_run_dir(run_dir, client=client, control=control)
    finally:
        if client is not None:
            client.close()
