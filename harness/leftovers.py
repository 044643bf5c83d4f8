"""What a killed harness leaves behind, and cleaning it up on the next command.

A harness process killed outright (SIGKILL, a lost machine) cannot remove its workspaces,
grading copies and temporary directories, nor kill what its commands started when they ran
outside bubblewrap. Everything it creates therefore carries its pid in its name
(``...-p<pid>-...``) and every sandboxed command carries the sandbox's marker variable
(``ZEBENCH_SANDBOX_ID=<pid>-...``), the conventions of :mod:`harness._util.ownership`. :func:`sweep`
removes the directories, and kills the processes, of harness processes that are no longer
alive. (Cgroups of dead harness processes are swept too; with bubblewrap, commands die with the
harness anyway, except one killed in the moment between its start and bubblewrap's own setup.
A container backend's containers die with their processes, whose init carries the marker too,
and are removed by :func:`harness.sandbox.container.sweep_containers`.)
"""

from __future__ import annotations

import os
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness._util.ownership import MARKER_VAR, owner_of, pid_alive
from harness._util.trees import remove_tree

TEMP_PREFIXES = ("zebench-sandbox-", "zebench-reports-", "zebench-tools-", "zebench-probe-", "zebench-egress-",
                 "zebench-agent-home-", "zebench-image-")


@dataclass
class SweepReport:
    removed: list[str] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why", for entries that could not be removed


def sweep(workspaces_root: Path | None = None) -> SweepReport:
    """Remove leftovers of dead harness processes: workspaces and grading copies under
    ``workspaces_root``, the harness's temporary directories, and sandboxed processes."""
    report = SweepReport()
    owners = {os.getuid()}
    if os.geteuid() == 0:  # a workspace belongs to the uid the sandbox ran commands as
        from harness.sandbox.identity import sandbox_uid

        owners.add(sandbox_uid()[0])
    places: list[tuple[Path, tuple[str, ...]]] = [(Path(tempfile.gettempdir()), TEMP_PREFIXES)]
    if workspaces_root is not None:
        places.append((Path(workspaces_root), ("",)))
    for root, prefixes in places:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(prefixes):
                continue
            owner = owner_of(entry.name)
            if owner is None or owner == os.getpid() or pid_alive(owner):
                continue
            try:
                if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid in owners:
                    remove_tree(entry.path)
                    if os.path.lexists(entry.path):
                        report.skipped.append(f"{entry.path}: could not be removed entirely")
                    else:
                        report.removed.append(entry.path)
            except Exception as exc:  # noqa: BLE001 - one bad leftover never stops a command
                report.skipped.append(f"{entry.path}: {type(exc).__name__}: {exc}")
    report.killed = _kill_orphans()
    from harness.sandbox.container import sweep_containers

    report.removed += [f"container {name}" for name in sweep_containers()]
    from harness.sandbox.limits import cgroup_support

    cgroup_support()  # finding the cgroups also removes those of dead harness processes
    return report


def _kill_orphans() -> list[int]:
    """SIGKILL processes whose sandbox marker names a harness process that is gone."""
    killed = []
    prefix = f"{MARKER_VAR}=".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(prefix):
                owner = item[len(prefix):].split(b"-", 1)[0]
                if owner.isdigit() and not pid_alive(int(owner)):
                    try:
                        os.kill(int(entry.name), signal.SIGKILL)
                        killed.append(int(entry.name))
                    except (ProcessLookupError, PermissionError):
                        pass
                break
    return killed
