"""Resource limits of sandboxed commands, and the kernel mechanisms that enforce them.

Per command: wall time and captured output (the harness enforces both), processes, memory and
the size of any one file written. Processes and memory are enforced by a cgroup made for the
command (cgroup v2 where the harness may create one, else the v1 ``pids`` and ``memory``
controllers), which also lets the sandbox kill every process the command started, even one
that left its process group. Where no cgroup can be made, ``prlimit`` sets per-process
rlimits instead: ``RLIMIT_DATA`` for memory and ``RLIMIT_NPROC`` for processes, counted over
every process of the uid commands run as (:mod:`harness.sandbox.identity`), so parallel runs
share the allowance; the kernel does not apply ``RLIMIT_NPROC`` to root, so the harness not
being root's own uid matters. ``RLIMIT_FSIZE`` (file size) always comes from prlimit.

What was enforced, and how, is reported by :meth:`LimitEnforcement.describe` and stored with
every run.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._util.ownership import pid_alive

MiB = 1024 * 1024
GiB = 1024 * MiB


@dataclass(frozen=True)
class Limits:
    """Limits of each command run in a sandbox. ``None`` means unlimited."""

    timeout_s: float = 300.0
    max_processes: int | None = 512  # tasks (threads count) in the command's cgroup
    memory_bytes: int | None = 2 * GiB
    file_size_bytes: int | None = 1 * GiB
    output_bytes: int = 64 * 1024  # per stream, head and tail kept
    tmpfs_bytes: int = 512 * MiB  # size of the private /tmp and $HOME (bwrap)
    # What an agent may leave in its workspace to be graded (build output and dependency
    # folders not counted): over it, the run fails as the agent's without being graded.
    workspace_bytes: int = 1 * GiB  # apparent size, holes included
    workspace_files: int = 100_000

    def to_dict(self) -> dict[str, Any]:
        return {
            "timeoutS": self.timeout_s, "maxProcesses": self.max_processes, "memoryBytes": self.memory_bytes,
            "fileSizeBytes": self.file_size_bytes, "outputBytes": self.output_bytes, "tmpfsBytes": self.tmpfs_bytes,
            "workspaceBytes": self.workspace_bytes, "workspaceFiles": self.workspace_files,
        }


# --------------------------------------------------------------------------- cgroups

def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _event_count(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            try:
                return int(parts[1])
            except ValueError:
                return 0
    return 0


@dataclass
class Cgroup:
    """One command's cgroup (one directory per controller on v1, one on v2)."""

    version: str  # "v1" or "v2"
    dirs: dict[str, Path]  # controller ("pids", "memory", "unified") -> directory

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in dict.fromkeys(self.dirs.values()):
            for token in _read(d / "cgroup.procs").split():
                found.add(int(token))
        return found

    def kill(self, attempts: int = 50) -> None:
        """SIGKILL every process in the group, again until none is left (forks race the loop)."""
        unified = self.dirs.get("unified")
        if unified is not None and (unified / "cgroup.kill").exists():
            try:
                _write(unified / "cgroup.kill", "1")
            except OSError:
                pass
        for _ in range(attempts):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def oom_kills(self) -> int:
        if self.version == "v2":
            return _event_count(_read(self.dirs["unified"] / "memory.events"), "oom_kill")
        mem = self.dirs.get("memory")
        return _event_count(_read(mem / "memory.oom_control"), "oom_kill") if mem else 0

    def process_limit_hits(self) -> int:
        d = self.dirs.get("unified") if self.version == "v2" else self.dirs.get("pids")
        return _event_count(_read(d / "pids.events"), "max") if d else 0

    def remove(self) -> None:
        for d in dict.fromkeys(self.dirs.values()):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    self.kill(attempts=1)
                    time.sleep(0.02)


_GROUP_PREFIX = "zebench-"


@dataclass
class CgroupSupport:
    """Where this process may create cgroups, and for which controllers."""

    version: str  # "v1" or "v2"
    parents: dict[str, Path]  # controller -> parent directory of the groups we create
    _counter: Any = field(default_factory=itertools.count, repr=False)

    @property
    def controllers(self) -> set[str]:
        return {"pids", "memory"} if self.version == "v2" else set(self.parents)

    def create(self, limits: Limits) -> Cgroup:
        """A new group with ``limits`` applied; raises OSError when the kernel refuses."""
        name = f"{_GROUP_PREFIX}{os.getpid()}-{next(self._counter)}-{os.urandom(3).hex()}"
        dirs: dict[str, Path] = {}
        try:
            for controller, parent in self.parents.items():
                path = parent / name
                path.mkdir()
                dirs[controller] = path
            group = Cgroup(self.version, dirs)
            if self.version == "v2":
                d = dirs["unified"]
                if limits.max_processes is not None:
                    _write(d / "pids.max", str(limits.max_processes))
                if limits.memory_bytes is not None:
                    _write(d / "memory.max", str(limits.memory_bytes))
                    try:
                        _write(d / "memory.swap.max", "0")
                    except OSError:
                        pass
            else:
                if limits.max_processes is not None and "pids" in dirs:
                    _write(dirs["pids"] / "pids.max", str(limits.max_processes))
                if limits.memory_bytes is not None and "memory" in dirs:
                    _write(dirs["memory"] / "memory.limit_in_bytes", str(limits.memory_bytes))
                    try:  # no escape into swap: memory+swap capped at the same figure
                        _write(dirs["memory"] / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
                    except OSError:
                        pass
            return group
        except OSError:
            Cgroup(self.version, dirs).remove()
            raise


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, filesystem type, super options) of every mount of this process."""
    out = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3:
            out.append((fields[4], rfields[0], rfields[2].split(",")))
    return out


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path (``unified`` for v2)."""
    paths = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        num, controllers, path = line.split(":", 2)
        if num == "0" and controllers == "":
            paths["unified"] = path
        for c in controllers.split(","):
            if c:
                paths[c] = path
    return paths


def _usable(parent: Path) -> bool:
    probe = parent / f"{_GROUP_PREFIX}probe-{os.getpid()}-{os.urandom(3).hex()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


def _detect_v2(mounts: list[tuple[str, str, list[str]]], own: dict[str, str]) -> CgroupSupport | None:
    root = next((Path(m) for m, fs, _ in mounts if fs == "cgroup2"), None)
    if root is None or "unified" not in own:
        return None
    parent = root / own["unified"].lstrip("/")
    if not {"pids", "memory"} <= set(_read(parent / "cgroup.controllers").split()):
        return None
    enabled = set(_read(parent / "cgroup.subtree_control").split())
    if not {"pids", "memory"} <= enabled:
        try:
            _write(parent / "cgroup.subtree_control", "+pids +memory")
        except OSError:
            return None  # a group holding processes may not hand controllers to children
    if not _usable(parent):
        return None
    return CgroupSupport("v2", {"unified": parent})


def _detect_v1(mounts: list[tuple[str, str, list[str]]], own: dict[str, str]) -> CgroupSupport | None:
    parents: dict[str, Path] = {}
    for controller in ("pids", "memory"):
        mount = next((Path(m) for m, fs, opts in mounts if fs == "cgroup" and controller in opts), None)
        if mount is None or controller not in own:
            continue
        parent = mount / own[controller].lstrip("/")
        if _usable(parent):
            parents[controller] = parent
    return CgroupSupport("v1", parents) if parents else None


_support_lock = threading.Lock()
_support: list[CgroupSupport | None] = []


def cgroup_support() -> CgroupSupport | None:
    """How this process can create cgroups (detected once), or None."""
    with _support_lock:
        if not _support:
            if os.environ.get("ZE_BENCHMARKS_NO_CGROUPS"):
                _support.append(None)
            else:
                mounts, own = _mounts(), _own_paths()
                found = _detect_v2(mounts, own) or _detect_v1(mounts, own)
                if found is not None:
                    _sweep_stale(found)
                _support.append(found)
        return _support[0]


def _sweep_stale(support: CgroupSupport) -> None:
    """Remove groups left by a harness process that died (its pid is gone)."""
    for parent in dict.fromkeys(support.parents.values()):
        try:
            children = [c for c in parent.iterdir() if c.is_dir() and c.name.startswith(_GROUP_PREFIX)]
        except OSError:
            continue
        for child in children:
            owner = child.name[len(_GROUP_PREFIX):].split("-", 1)[0]
            if owner.isdigit() and not pid_alive(int(owner)):
                group = Cgroup(support.version, {"x": child})
                group.kill()
                group.remove()


# --------------------------------------------------------------------------- enforcement

def _processes_of_user(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as fh:
                for line in fh:
                    if line.startswith("Uid:"):
                        count += int(line.split()[1]) == uid
                        break
        except OSError:
            continue
    return count


@dataclass
class LimitEnforcement:
    """How a sandbox enforces :class:`Limits` on this machine."""

    limits: Limits
    cgroups: CgroupSupport | None
    prlimit: str | None  # path of the prlimit executable
    uid: int = field(default_factory=os.getuid)  # the uid commands run as

    @classmethod
    def detect(cls, limits: Limits, uid: int | None = None) -> "LimitEnforcement":
        return cls(limits, cgroup_support(), shutil.which("prlimit"), os.getuid() if uid is None else uid)

    def _by_cgroup(self, controller: str) -> bool:
        return self.cgroups is not None and controller in self.cgroups.controllers

    def prlimit_argv(self) -> list[str]:
        """``prlimit --...=N --`` for what the cgroup does not cover; [] when nothing applies."""
        if self.prlimit is None:
            return []
        lim = self.limits
        opts = ["--core=0"]
        if lim.file_size_bytes is not None:
            opts.append(f"--fsize={lim.file_size_bytes}")
        if lim.memory_bytes is not None and not self._by_cgroup("memory"):
            opts.append(f"--data={lim.memory_bytes}")
        if lim.max_processes is not None and not self._by_cgroup("pids") and self.uid != 0:
            # RLIMIT_NPROC counts every process of the user, so the allowance is on top of them.
            opts.append(f"--nproc={_processes_of_user(self.uid) + lim.max_processes}")
        return [self.prlimit, *opts, "--"]

    def new_cgroup(self) -> Cgroup | None:
        if self.cgroups is None:
            return None
        try:
            return self.cgroups.create(self.limits)
        except OSError:
            return None

    def describe(self) -> dict[str, dict[str, Any]]:
        """``{limit: {"limit": value, "enforcedBy": mechanism or None}}`` for the run's record."""
        lim = self.limits
        cg = f"cgroup {self.cgroups.version}" if self.cgroups else None
        pr = "prlimit" if self.prlimit else None
        if lim.max_processes is None:
            procs = None
        elif self._by_cgroup("pids"):
            procs = f"{cg} pids.max"
        elif pr and self.uid != 0:
            procs = "prlimit RLIMIT_NPROC"
        else:
            procs = None
        if lim.memory_bytes is None:
            memory = None
        elif self._by_cgroup("memory"):
            memory = f"{cg} memory limit"
        else:
            memory = "prlimit RLIMIT_DATA (per process)" if pr else None
        return {
            "time": {"limit": lim.timeout_s, "enforcedBy": "harness timer"},
            "output": {"limit": lim.output_bytes, "enforcedBy": "harness capture (per stream)"},
            "processes": {"limit": lim.max_processes, "enforcedBy": procs},
            "memory": {"limit": lim.memory_bytes, "enforcedBy": memory},
            "fileSize": {"limit": lim.file_size_bytes,
                         "enforcedBy": "prlimit RLIMIT_FSIZE" if pr and lim.file_size_bytes is not None else None},
        }

    def unenforced(self) -> list[str]:
        """Names of limits that are set but not enforced here."""
        return [name for name, v in self.describe().items() if v["limit"] is not None and v["enforcedBy"] is None]
