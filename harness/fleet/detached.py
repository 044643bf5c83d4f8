"""``python -m harness.fleet.detached RUN_DIR``: run (or complete) a fleet run directory in
this process, as :func:`harness.fleet.start` does in the background. SIGTERM and SIGINT stop it
as Ctrl-C stops ``bench fleet``: nothing new starts, what is in flight finishes and is kept,
and the run reads ``interrupted`` (``bench fleet resume`` completes it)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m harness.fleet.detached RUN_DIR", file=sys.stderr)
        return 2
    from harness.control import BatchControl
    from harness.fleet import execute_run_dir, open_run_client

    run_dir = Path(argv[0]).resolve()
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
        results = execute_run_dir(run_dir, client=client, control=control)
    finally:
        if client is not None:
            client.close()
    print(f"fleet {results['run_id']}: {results['state']}", flush=True)
    return 0 if results["state"] == "completed" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
