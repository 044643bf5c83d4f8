"""``python -m harness.cli.fleet_detached RUN_DIR``: the entry point of the detached process
that runs (or completes) a fleet run directory (:func:`harness.fleet.processes.spawn_detached`
starts it, its output in ``RUN_DIR/fleet.log``). The run itself is
:func:`harness.fleet.detached.run_detached`; this prints ``fleet RUN_ID: STATE`` when it ends
and exits 0 when the run completed, 1 when it did not, 2 on a wrong argument list.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m harness.cli.fleet_detached RUN_DIR", file=sys.stderr)
        return 2
    from harness.fleet.detached import run_detached

    results = run_detached(Path(argv[0]).resolve())
    print(f"fleet {results['run_id']}: {results['state']}", flush=True)
    return 0 if results["state"] == "completed" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
