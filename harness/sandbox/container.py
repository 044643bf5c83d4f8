"""The container backends (``podman``, ``docker``): one container per sandbox, every command
executed into it.

A :class:`ContainerSandbox` starts its container at its first command (a sandbox that runs no
command starts none) and executes each command into it with ``podman exec`` (``docker exec``:
the same code with the other program), or, where rootful podman runs its containers with runc,
with ``runc exec`` and the process podman would have built from the container's own
configuration (:func:`_with_direct_exec`: the same user, capabilities, ``no-new-privileges``,
seccomp profile, cgroup and namespaces, for a third of the cost;
``ZE_BENCHMARKS_CONTAINER_EXEC=podman`` keeps ``podman exec``). The run records which
(``runtime.exec``). What a command sees:

- the image's root, read-only: a scenario's own image (``sandbox.image``,
  :mod:`harness.sandbox.images`), or the **host-runtime image**, an empty root into which the
  host's ``/usr`` and ``/etc`` (password hashes and SSH/TLS private keys masked), the harness's
  interpreter and virtualenv, and Node are mounted read-only at their own paths, as bubblewrap
  mounts them (:mod:`harness.sandbox.bwrap`);
- the workspace read-write at the image's ``WORKDIR`` when it declares one (a Harbor task's
  ``/app``: its tests and solution name files by that path), else at :data:`WORKSPACE`, the
  path bwrap uses (:func:`workspace_point`); and the spec's mounts;
- a private ``/tmp`` and ``$HOME`` (size-capped tmpfs), the container's own, emptied before each
  command that starts while no other command of the sandbox runs: as under bwrap, what a
  command leaves there is not seen by the next (commands running at the same time share them);
- its own PID, IPC and UTS namespaces, no network (``--network none``) unless the spec allows
  it (then the host's, as bwrap and ``none`` give it), no capability (``--cap-drop ALL``),
  ``no-new-privileges``, never ``--privileged``, and never root: the sandbox uid
  (:mod:`harness.sandbox.identity`), with ``--userns keep-id`` for rootless podman.

Limits: memory and processes by the container's cgroup (``--memory`` with no swap beyond it,
``--pids-limit``; what the container's own init holds is added to the processes allowance),
shared by the commands of the sandbox; the file size by ``RLIMIT_FSIZE``, set by the shell
each command starts in; wall time and output by the harness, as for the other backends.
When a command returns or is killed, every process it started is killed too: with no other
command in flight, every process of the container but its init; else those carrying the
command's marker variable. :meth:`Sandbox.close` kills the container's init (so every process
in it) and removes the container; a harness killed outright leaves containers named
``zebench-p<pid>-...``, recorded in the user's cache until removed, which
:func:`sweep_containers` removes (:mod:`harness.leftovers`).

What the runtime needs on this machine is found by probing, not assumed
(:func:`detect_runtime`): podman's default OCI runtime may refuse to start containers (crun
with cgroups in hybrid mode), then ``--runtime runc --cgroup-manager cgroupfs`` is tried; runc
may refuse the default rlimits podman asks for, then a ``containers.conf`` with
``default_ulimits = []`` (in the user's cache directory) is pointed at by ``CONTAINERS_CONF``.
"""

from __future__ import annotations

import atexit
import copy
import functools
import itertools
import json
import math
import os
import posixpath
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness._util.places import user_cache_dir
from harness._util.ownership import MARKER_VAR, owned, pid_alive
from harness.sandbox.base import (
    CONTAINER_KINDS,
    Mount,
    Sandbox,
    SandboxSpec,
    SandboxUnavailable,
    _kill_group,
    _passthrough_env,
)
from harness.sandbox.bwrap import (
    _MASKED_DIRS,
    _MASKED_FILES,
    _TOP_LEVEL,
    HOME,
    SYSTEM_PATH,
    WORKSPACE,
    _account_files,
    runtime_view,
)
from harness.sandbox.images import ContainerImage, ImageError, host_runtime_image
from harness.sandbox.limits import Cgroup
from harness.sandbox.output import CommandResult, feed_stdin, reap, supervise

LABEL = "org.zebench.sandbox"
NAME_PREFIX = "zebench-p"
# The container's init: a shell waiting on one long sleep, which reaps whatever a command left
# to it meanwhile. As PID 1 without a signal handler it ignores signals sent from inside the
# container; were its sleep killed, it would exit and the container with it.
INIT = "sleep 2147483647 & wait $!"
INIT_TASKS = 2  # the init shell and its sleep, on top of the commands' allowance
_INSTALL = {"podman": "apt-get install podman runc", "docker": "apt-get install docker.io"}
_START_TIMEOUT_S = 120.0
_CONF_TEXT = "[containers]\n# runc here refuses the rlimits podman would set by default\ndefault_ulimits = []\n"


# --------------------------------------------------------------------------- the runtime

@dataclass(frozen=True)
class ContainerRuntime:
    """How to drive one container program on this machine: the program, the global options
    and environment this machine needs (found by :func:`detect_runtime`)."""

    kind: str  # podman | docker
    executable: str
    options: tuple[str, ...] = ()  # global options, before the subcommand
    conf: str | None = None  # the containers.conf CONTAINERS_CONF points at, when one is needed
    version: str = ""
    notes: tuple[str, ...] = ()  # what was adjusted to this machine, and why
    verified: tuple[str, ...] = ()  # limits read back from a probe container's cgroup
    # The OCI runtime podman starts containers with, and its state root, when commands can be
    # executed with it directly (:func:`_with_direct_exec`); empty: every command is a ``podman exec``.
    direct: tuple[str, ...] = ()

    def argv(self, *args: str) -> list[str]:
        return [self.executable, *self.options, *args]

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.conf is not None:
            env["CONTAINERS_CONF"] = self.conf
        return env

    def call(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), env=self.environ(), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    @property
    def rootless(self) -> bool:
        return self.kind == "podman" and os.geteuid() != 0

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"program": self.kind, "version": self.version}
        if self.options:
            info["options"] = list(self.options)
        if self.conf:
            info["containersConf"] = self.conf
        if self.notes:
            info["adjusted"] = list(self.notes)
        info["exec"] = f"{os.path.basename(self.direct[0])} exec" if self.direct else f"{self.kind} exec"
        return info


def container_executable(kind: str) -> str | None:
    """``$ZE_BENCHMARKS_PODMAN`` / ``$ZE_BENCHMARKS_DOCKER``, else the program on PATH."""
    return os.environ.get(f"ZE_BENCHMARKS_{kind.upper()}") or shutil.which(kind)


def _detail(text: str) -> str:
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def conf_path() -> Path:
    """Where the containers.conf of :func:`detect_runtime` goes: the user's cache directory."""
    return user_cache_dir() / "containers" / "containers.conf"


def _write_conf() -> str:
    path = conf_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != _CONF_TEXT:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_CONF_TEXT)
        os.replace(tmp, path)
    return str(path)


def _trial(runtime: ContainerRuntime) -> tuple[str | None, tuple[str, ...]]:
    """Start a container the way sandboxes do and run one command in it: (None, the limits
    read back from its cgroup) when it works, else (why not, ())."""
    try:
        image = host_runtime_image(runtime)
    except ImageError as exc:
        return f"{runtime.kind} cannot build images here: {exc}", ()
    with tempfile.TemporaryDirectory(prefix=owned("zebench-probe-")) as tmp:
        try:
            box = ContainerSandbox(Path(tmp), SandboxSpec(kind=runtime.kind), image=image, runtime=runtime)
        except SandboxUnavailable as exc:
            return str(exc), ()
        try:
            result = box.run("test -w /workspace && test -r /proc/self/status", timeout_s=60)
            verified = box.verify_limits()
        except SandboxUnavailable as exc:
            return str(exc), ()
        finally:
            box.close()
    if not result.ok:
        return f"a command in a {runtime.kind} container failed: {_detail(result.stderr or result.stdout)}", ()
    return None, verified


_detected: dict[str, ContainerRuntime | SandboxUnavailable] = {}
_detect_lock = threading.Lock()


def detect_runtime(kind: str) -> ContainerRuntime:
    """How ``kind`` (``podman`` or ``docker``) runs containers here, found once per process by
    starting real ones; raises :class:`SandboxUnavailable` saying why not and what fixes it."""
    if kind not in CONTAINER_KINDS:
        raise ValueError(f"unknown container backend {kind!r}; choose one of {', '.join(CONTAINER_KINDS)}")
    with _detect_lock:
        if kind not in _detected:
            try:
                _detected[kind] = _detect(kind)
            except SandboxUnavailable as exc:
                _detected[kind] = exc
        found = _detected[kind]
    if isinstance(found, SandboxUnavailable):
        raise SandboxUnavailable(str(found))
    return found


def _detect(kind: str) -> ContainerRuntime:
    exe = container_executable(kind)
    if exe is None:
        raise SandboxUnavailable(f"{kind} is not installed (Debian/Ubuntu: {_INSTALL[kind]})")
    runtime = ContainerRuntime(kind, exe)
    try:
        version = runtime.call("version", "--format", "{{.Client.Version}}" if kind == "docker" else "{{.Version}}")
        if kind == "docker" and version.returncode == 0:
            server = runtime.call("version", "--format", "{{.Server.Version}}")
            if server.returncode != 0:
                raise SandboxUnavailable(f"docker cannot reach its daemon: {_detail(server.stderr)}")
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"{kind} could not run: {exc}") from None
    if version.returncode != 0:
        raise SandboxUnavailable(f"{kind} does not work here: {_detail(version.stderr or version.stdout)}")
    runtime = replace(runtime, version=version.stdout.strip())
    problem, verified = _trial(runtime)
    for _ in range(3):
        if problem is None:
            return _with_direct_exec(replace(runtime, verified=verified))
        lowered = problem.lower()
        runc = shutil.which("runc")
        if (kind == "podman" and "--runtime" not in runtime.options and runc
                and ("crun" in lowered or "cgroups in hybrid mode" in lowered or "systemd" in lowered)):
            runtime = replace(runtime, options=(*runtime.options, "--runtime", runc, "--cgroup-manager", "cgroupfs"),
                              notes=(*runtime.notes, "runc with cgroupfs (the default OCI runtime could not start "
                                                     "a container)"))
        elif kind == "podman" and runtime.conf is None and "rlimit" in lowered:
            runtime = replace(runtime, conf=_write_conf(),
                              notes=(*runtime.notes, "containers.conf with default_ulimits = [] (the OCI runtime "
                                                     "refused podman's default rlimits)"))
        else:
            break
        problem, verified = _trial(runtime)
    if problem is None:
        return _with_direct_exec(replace(runtime, verified=verified))
    raise SandboxUnavailable(problem)


def _direct_candidate(runtime: ContainerRuntime) -> tuple[str, ...]:
    """``(runc, --root, its state root)`` where rootful podman runs containers with runc, else ()."""
    if runtime.kind != "podman" or runtime.rootless or os.environ.get("ZE_BENCHMARKS_CONTAINER_EXEC") == "podman":
        return ()
    if "--runtime" in runtime.options:
        oci = runtime.options[runtime.options.index("--runtime") + 1]
    else:
        try:
            done = runtime.call("info", "--format", "{{.Host.OCIRuntime.Path}}", timeout=60)
        except (OSError, subprocess.SubprocessError):
            return ()
        oci = done.stdout.strip() if done.returncode == 0 else ""
    oci = shutil.which(oci) if oci else None
    if oci is None or os.path.basename(oci) != "runc" or not os.path.isdir("/run/runc"):
        return ()
    return (oci, "--root", "/run/runc")


def _with_direct_exec(runtime: ContainerRuntime) -> ContainerRuntime:
    """``runtime``, executing commands with runc itself where that works here.

    ``podman exec`` builds a process from the container's own OCI configuration (its user,
    capabilities, ``no-new-privileges``, seccomp and AppArmor profiles, rlimits, cgroup and
    namespaces) and has the OCI runtime start it; most of its ~0.2 s goes to podman's own start.
    Rootful podman with runc keeps that configuration in the container's bundle, so the sandbox
    can build the same process (:meth:`ContainerSandbox._process_file`) and hand it to ``runc exec``.
    Used when a probe container runs a command that way, as the sandbox uid, with the
    container's seccomp filter and no capability; else every command is a ``podman exec``."""
    direct = _direct_candidate(runtime)
    if not direct:
        return runtime
    trial = replace(runtime, direct=direct)
    with tempfile.TemporaryDirectory(prefix=owned("zebench-probe-")) as tmp:
        try:
            box = ContainerSandbox(Path(tmp), SandboxSpec(kind=runtime.kind), image=_host_image(trial), runtime=trial)
        except SandboxUnavailable:
            return runtime
        try:
            result = box.run("id -u; grep -e '^CapEff' -e '^NoNewPrivs' -e '^Seccomp:' /proc/self/status",
                             timeout_s=60)
            used = box._container is not None and box._container.process is not None
        except SandboxUnavailable:
            return runtime
        finally:
            box.close()
    seen = result.stdout.split()
    expected = [str(box.identity.uid), "CapEff:", "0000000000000000", "NoNewPrivs:", "1", "Seccomp:", "2"]
    if not (used and result.ok and seen == expected):
        return runtime
    return replace(runtime, direct=direct, notes=(*runtime.notes, "commands executed with runc exec, with the "
                                                                  "container's own process configuration"))


def probe(kind: str) -> str | None:
    """None when the ``kind`` backend works here, else why not (one line)."""
    try:
        detect_runtime(kind)
    except SandboxUnavailable as exc:
        return str(exc)
    return None


def probe_clear() -> None:
    """Forget what :func:`detect_runtime` found (tests, after installing a runtime)."""
    with _detect_lock:
        _detected.clear()
    _host_image.cache_clear()


@functools.lru_cache(maxsize=4)
def _host_image(runtime: ContainerRuntime) -> ContainerImage:
    """The host-runtime image of ``runtime`` (built or found once per process)."""
    try:
        return host_runtime_image(runtime)
    except ImageError as exc:
        raise SandboxUnavailable(str(exc)) from None


# --------------------------------------------------------------------------- cgroups of a container

def _cgroup_mounts() -> list[tuple[str, str, str, list[str]]]:
    """(root, mount point, filesystem type, super options) of every cgroup mount."""
    out = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4], rfields[0], rfields[2].split(",")))
    return out


def _container_cgroup(pid: int) -> Cgroup | None:
    """The cgroup of process ``pid`` (a container's init), as the host sees it, or None."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    mounts = _cgroup_mounts()

    def locate(fstype: str, controller: str | None, path: str) -> Path | None:
        for root, point, fs, opts in mounts:
            if fs != fstype or (controller is not None and controller not in opts):
                continue
            if path == root or path.startswith(root.rstrip("/") + "/"):
                found = Path(point) / path[len(root.rstrip("/")):].lstrip("/")
                if found.is_dir():
                    return found
        return None

    v1: dict[str, Path] = {}
    unified = None
    for line in lines:
        num, controllers, path = line.split(":", 2)
        if num == "0" and controllers == "":
            unified = locate("cgroup2", None, path)
        for controller in ("pids", "memory"):
            if controller in controllers.split(","):
                found = locate("cgroup", controller, path)
                if found is not None:
                    v1[controller] = found
    if v1:
        return Cgroup("v1", v1)
    if unified is not None and (unified / "pids.max").exists():
        return Cgroup("v2", {"unified": unified})
    return None


def _status(pid: int) -> dict[str, str]:
    """``/proc/<pid>/status`` as a mapping (empty when the process is gone or hidden)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return {key: value.strip() for key, _, value in (line.partition(":") for line in text.splitlines())}


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


# --------------------------------------------------------------------------- removal

# Containers of closed sandboxes: killed, and removed by their runtime (``--rm``); whatever
# is still there when the harness exits is removed then, in one call per runtime.
_closed: dict[ContainerRuntime, set[str]] = {}
_closed_lock = threading.Lock()


def _rm_args(kind: str, names: list[str]) -> tuple[str, ...]:
    if kind == "podman":
        return ("rm", "--force", "--time", "0", "--ignore", *names)
    return ("rm", "--force", *names)


def _existing(runtime: ContainerRuntime, names: set[str]) -> set[str]:
    try:
        listed = runtime.call("ps", "--all", "--filter", f"label={LABEL}", "--format", "{{.Names}}", timeout=30)
    except (OSError, subprocess.SubprocessError):
        return set(names)
    return set(listed.stdout.split()) & names if listed.returncode == 0 else set(names)


def _remove_closed() -> None:
    with _closed_lock:
        pending = {runtime: sorted(names) for runtime, names in _closed.items() if names}
        _closed.clear()
    for runtime, names in pending.items():
        try:
            done = runtime.call(*_rm_args(runtime.kind, names), timeout=120)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 or runtime.kind == "docker":
            _forget(runtime.kind, names)


atexit.register(_remove_closed)


def wait_for_removals(timeout: float = 30.0) -> None:
    """Wait until the containers of closed sandboxes are gone; remove those still there then."""
    deadline = time.monotonic() + timeout
    while True:
        with _closed_lock:
            pending = {runtime: set(names) for runtime, names in _closed.items() if names}
        left = {runtime: _existing(runtime, names) for runtime, names in pending.items()}
        with _closed_lock:
            for runtime, names in pending.items():
                _closed.get(runtime, set()).difference_update(names - left[runtime])
                _forget(runtime.kind, names - left[runtime])
        if not any(left.values()):
            return
        if time.monotonic() >= deadline:
            _remove_closed()
            return
        time.sleep(0.1)


def records_dir() -> Path:
    """Where a file per started container is kept until the container is known to be removed:
    what :func:`sweep_containers` reads (no container program is asked when it is empty)."""
    return conf_path().parent / "started"


def _record(kind: str, name: str) -> Path:
    return records_dir() / f"{kind}.{name}"


def _forget(kind: str, names: set[str] | list[str]) -> None:
    for name in names:
        _record(kind, name).unlink(missing_ok=True)


def sweep_containers() -> list[str]:
    """Remove the containers of harness processes that are gone (their names carry the pid:
    ``zebench-p<pid>-...``); returns their names. Reads the started containers' records, so it
    runs no program unless a dead process left one; never fails."""
    removed: list[str] = []
    try:
        entries = sorted(os.listdir(records_dir()))
    except OSError:
        return removed
    for entry in entries:
        kind, _, name = entry.partition(".")
        match = re.match(rf"^{re.escape(NAME_PREFIX)}(\d+)-", name)
        if kind not in CONTAINER_KINDS or not match:
            continue
        owner = int(match.group(1))
        if owner == os.getpid() or pid_alive(owner):
            continue
        exe = container_executable(kind)
        if exe is not None:
            try:
                done = ContainerRuntime(kind, exe).call(*_rm_args(kind, [name]), timeout=60)
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode != 0 and kind == "docker" and "no such container" not in done.stderr.lower():
                continue
        _forget(kind, [name])
        removed.append(name)
    return removed


# --------------------------------------------------------------------------- the sandbox

# Where the workspace may not be mounted, whatever an image's WORKDIR says: the container's
# private and kernel directories (and anything below them), and the system's own trees (an
# image's ``/usr/src/app`` is fine, ``/usr`` is not).
_NOT_BELOW = ("/proc", "/sys", "/dev", "/tmp", HOME, "/zebench", "/run")
_NOT_AT = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/home", "/opt")


def workspace_point(image: ContainerImage, mount_points: list[str] | tuple[str, ...] = ()) -> tuple[str, str | None]:
    """Where a container mounts the workspace: the image's WORKDIR (a scenario's own image that
    declares one), else :data:`WORKSPACE`; and why a declared WORKDIR was not used (None when
    it was, or when there is none)."""
    declared = image.workdir
    if image.host_runtime or not declared:
        return WORKSPACE, None
    point = posixpath.normpath(declared)
    if not point.startswith("/") or point == "/" or "," in point or "\n" in point:
        return WORKSPACE, f"WORKDIR {declared!r} cannot hold a mount"

    def overlaps(other: str) -> bool:
        return point == other or point.startswith(other.rstrip("/") + "/") or other.startswith(point + "/")

    for reserved in _NOT_BELOW:
        if overlaps(reserved):
            return WORKSPACE, f"WORKDIR {point} overlaps {reserved}, private to the sandbox"
    for system in _NOT_AT:
        if point == system or system.startswith(point + "/"):
            return WORKSPACE, f"WORKDIR {point} would hide the image's {system}"
    for other in mount_points:
        if overlaps(other):
            return WORKSPACE, f"WORKDIR {point} overlaps the mount at {other}"
    return point, None


def _mount_option(source: str, target: str, writable: bool) -> str:
    for path in (source, target):
        if "," in path or "\n" in path:
            raise SandboxUnavailable(f"a container cannot mount {path!r}: the path holds a comma")
    return f"type=bind,source={source},target={target}" + ("" if writable else ",readonly")


@dataclass
class _Started:
    """A running container: its name, its init's host pid (and its sleep's), PID namespace and cgroup."""

    name: str
    init_pid: int | None = None
    sleep_pid: int | None = None
    pid_ns: str | None = None
    cgroup: Cgroup | None = None
    markers: dict[int, str] = field(default_factory=dict)  # exec client pid -> command marker
    cid: str | None = None  # the container's id
    process: dict[str, Any] | None = None  # the OCI process of its configuration (direct exec)
    clients: dict[int, subprocess.Popen] = field(default_factory=dict)  # exec client pid -> client


def _running(pid: int) -> bool:
    """Whether host process ``pid`` runs (neither gone nor a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


class _RuncClient:
    """A ``runc exec`` client as :func:`~harness.sandbox.output.supervise` sees it: over when the
    command's first process is (``runc`` itself returns only once every process holding the
    command's output has closed it, as a detached child does; ``podman exec`` returns at once)."""

    def __init__(self, proc: subprocess.Popen, pid_file: Path) -> None:
        self.proc, self.pid_file = proc, pid_file
        self.pid, self.stdin, self.stdout, self.stderr = proc.pid, proc.stdin, proc.stdout, proc.stderr
        self._main: int | None = None

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None:
            return code
        if self._main is None:
            try:
                text = self.pid_file.read_text().strip()
            except OSError:
                return None
            if not text.isdigit():
                return None
            self._main = int(text)
        return None if _running(self._main) else -1  # not the exit status: runc gives it once it returns

    def wait(self, timeout: float | None = None) -> int:
        return self.proc.wait(timeout)


class ContainerSandbox(Sandbox):
    """A sandbox backed by one container; see the module docstring."""

    kind = "podman"

    def __init__(self, workspace: Path, spec: SandboxSpec, image: ContainerImage | None = None,
                 runtime: ContainerRuntime | None = None) -> None:
        super().__init__(workspace, spec)
        self.kind = spec.kind
        self.runtime = runtime or detect_runtime(spec.kind)
        if image is None:
            image = _host_image(self.runtime)
        if image.kind != self.runtime.kind:
            raise ValueError(f"image {image.tag} belongs to {image.kind}, not {self.runtime.kind}")
        self.image = image
        self.name = f"{NAME_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
        self._workdir, self.workdir_ignored = workspace_point(
            image, [m.inner for m in spec.mounts if m.target is not None or not m.source.resolve().is_relative_to(
                self.workspace)])
        self._targets: list[str] = []  # every mount point in the container
        self._mounts = self._mount_options()
        self._inflight = 0  # commands between their start and their end
        self._process_dir: Path | None = None  # the OCI processes of commands (direct exec)
        self._start_lock = threading.Lock()
        self._container: _Started | None = None
        self._start_error: str | None = None
        self._counter = itertools.count()

    # -- what commands see -----------------------------------------------------------------
    @property
    def inner_workspace(self) -> str:
        return self._workdir

    def mount_point(self, mount: Mount) -> str:
        source = mount.source.resolve()
        if mount.target is None and source.is_relative_to(self.workspace):
            return f"{self.inner_workspace}/{source.relative_to(self.workspace).as_posix()}"
        return mount.inner

    def base_env(self) -> dict[str, str]:
        if self.image.host_runtime:
            path = ":".join(runtime_view().path)
        else:
            path = self.image.env_value("PATH") or ":".join(SYSTEM_PATH)
        return {**_passthrough_env(), "PATH": path, "HOME": HOME, "TMPDIR": "/tmp"}

    def _mount_options(self) -> list[str]:
        opts: list[str] = []

        def bind(source: str, target: str, writable: bool = False) -> None:
            opts.extend(["--mount", _mount_option(source, target, writable)])
            self._targets.append(target)

        if self.image.host_runtime:
            bind("/usr", "/usr")
            for top in _TOP_LEVEL:
                if os.path.isdir(top) and not os.path.islink(top):
                    bind(top, top)
            bind("/etc", "/etc")
            extra = list(_account_files(self.identity.uid, self.identity.gid))
            for i in range(0, len(extra) - 2, 3):  # ("--ro-bind", source, target) triples
                bind(extra[i + 1], extra[i + 2])
            for file in _MASKED_FILES:
                if os.path.exists(file):
                    bind("/dev/null", file)
            for directory in _MASKED_DIRS:
                if os.path.isdir(directory):
                    opts.extend(["--tmpfs", f"{directory}:ro,size=4k"])
                    self._targets.append(directory)
            if self.spec.network and os.path.isdir("/run/systemd/resolve"):
                bind("/run/systemd/resolve", "/run/systemd/resolve")
            for prefix in runtime_view().mounts:
                bind(prefix, prefix)
        for mount in self.spec.mounts:
            bind(str(mount.source.resolve()), self.mount_point(mount), mount.writable)
        bind(str(self.workspace), self.inner_workspace, writable=True)
        return opts

    def _run_argv(self) -> list[str]:
        spec, lim = self.spec, self.spec.limits
        size = str(lim.tmpfs_bytes)
        argv = ["run", "--detach", "--rm", "--name", self.name, "--label", f"{LABEL}={os.getpid()}",
                "--pull", "never", "--log-driver", "none",
                "--user", f"{self.identity.uid}:{self.identity.gid}",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
                "--tmpfs", f"/tmp:rw,size={size},mode=1777", "--tmpfs", f"{HOME}:rw,size={size},mode=1777",
                "--workdir", self.inner_workspace, "--env", f"{MARKER_VAR}={self.marker}-init"]
        if self.runtime.rootless:
            argv += ["--userns", "keep-id"]
        if self.kind == "podman" and self.image.host_runtime:
            argv.append("--passwd=false")  # the host's /etc/passwd (or the account file) names the uid
        if spec.network:
            argv += ["--network", "host"]
        else:
            argv += ["--network", "none", "--hostname", "sandbox"]
        if lim.memory_bytes is not None:
            argv += ["--memory", str(lim.memory_bytes), "--memory-swap", str(lim.memory_bytes)]
        if lim.max_processes is not None:
            argv += ["--pids-limit", str(lim.max_processes + INIT_TASKS)]
        return argv + self._mounts + [self.image.id or self.image.tag, "/bin/sh", "-c", INIT]

    # -- the container ---------------------------------------------------------------------
    def _ensure_started(self) -> _Started:
        with self._start_lock:
            if self._container is not None:
                return self._container
            if self._start_error is not None:
                raise SandboxUnavailable(self._start_error)
            try:
                record = _record(self.kind, self.name)
                record.parent.mkdir(parents=True, exist_ok=True)
                record.touch()
                done = self.runtime.call(*self._run_argv(), timeout=_START_TIMEOUT_S)
            except (OSError, subprocess.SubprocessError) as exc:
                done = None
                problem = f"{type(exc).__name__}: {exc}"
            if done is None or done.returncode != 0:
                if done is not None:
                    problem = _detail(done.stderr or done.stdout)
                self._start_error = f"the {self.kind} container could not start: {problem}"
                with _closed_lock:  # a container created but not started is not removed by --rm
                    _closed.setdefault(self.runtime, set()).add(self.name)
                raise SandboxUnavailable(self._start_error)
            started = _Started(self.name)
            started.init_pid, started.sleep_pid = self._find_init()
            if started.init_pid is not None:
                try:
                    started.pid_ns = os.readlink(f"/proc/{started.init_pid}/ns/pid")
                except OSError:
                    started.pid_ns = None
                started.cgroup = _container_cgroup(started.init_pid)
            if self.runtime.direct:
                lines = done.stdout.split()
                started.cid = lines[-1] if lines and re.fullmatch(r"[0-9a-f]{64}", lines[-1]) else None
                started.process = self._load_process(started.cid)
            self._container = started
            return started

    def _load_process(self, cid: str | None) -> dict[str, Any] | None:
        """The OCI process of container ``cid``'s configuration, as its runtime keeps it (None
        when it cannot be read: commands are then executed by ``podman exec``)."""
        if cid is None:
            return None
        try:
            done = subprocess.run([*self.runtime.direct, "state", cid], capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                return None
            bundle = Path(json.loads(done.stdout)["bundle"])
            process = json.loads((bundle / "config.json").read_text())["process"]
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
            return None
        user = process.get("user") if isinstance(process, dict) else None
        if not isinstance(user, dict) or user.get("uid") != self.identity.uid or not process.get("noNewPrivileges"):
            return None  # not the process this sandbox asked podman for
        if self._process_dir is None:
            self._process_dir = Path(tempfile.mkdtemp(prefix=owned("zebench-sandbox-exec-")))
        return process

    def _process_file(self, started: _Started, marker: str, args: list[str], env: Mapping[str, str]) -> Path:
        """The OCI process of one command, written for ``runc exec --process``: the container's
        own (user, capabilities, no-new-privileges, seccomp and AppArmor profiles, rlimits), with
        the command, its environment over the container's and the workspace as directory, as
        ``podman exec`` builds it."""
        process = copy.deepcopy(started.process)
        merged = dict(item.partition("=")[::2] for item in process.get("env") or [])
        merged.update(env)
        process.update(args=args, env=[f"{k}={v}" for k, v in merged.items()], cwd=self.inner_workspace,
                       terminal=False)
        process.pop("consoleSize", None)
        process["user"] = {**process["user"], "uid": self.identity.uid, "gid": self.identity.gid}
        path = self._process_dir / f"{marker}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(process, fh)
        return path

    def _find_init(self) -> tuple[int | None, int | None]:
        """The host pids of the container's init and of its sleep: found by the sandbox's init
        marker in their environment (the init is PID 1 of the container's namespace), else by
        asking the runtime for the init and looking for its child; None where the host cannot
        see them."""
        needle = f"{MARKER_VAR}={self.marker}-init".encode()
        init = sleep = None
        deadline = time.monotonic() + 1.0
        while init is None or sleep is None:
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry.name}/environ", "rb") as fh:
                        if needle not in fh.read().split(b"\0"):
                            continue
                    status = _status(int(entry.name))
                except OSError:
                    continue
                if status.get("NSpid", "").split()[-1:] == ["1"]:
                    init = int(entry.name)
                else:
                    sleep = int(entry.name)
            if (init is not None and sleep is not None) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if init is None:
            try:
                done = self.runtime.call("inspect", "--format", "{{.State.Pid}}", self.name)
            except (OSError, subprocess.SubprocessError):
                return None, None
            pid = done.stdout.strip()
            init = int(pid) if done.returncode == 0 and pid.isdigit() and int(pid) > 0 else None
        if init is not None and sleep is None:
            for entry in os.scandir("/proc"):
                if entry.name.isdigit() and _status(int(entry.name)).get("PPid") == str(init):
                    sleep = int(entry.name)
                    break
        return init, sleep

    def _container_pids(self, started: _Started) -> set[int] | None:
        """Host pids of the container's processes but its init; None when they cannot be seen."""
        if started.init_pid is None or started.sleep_pid is None:
            return None
        spared = {started.init_pid, started.sleep_pid}
        if started.cgroup is not None:
            return started.cgroup.pids() - spared
        if started.pid_ns is None:
            return None
        found = set()
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and int(entry.name) not in spared:
                try:
                    if os.readlink(f"/proc/{entry.name}/ns/pid") == started.pid_ns:
                        found.add(int(entry.name))
                except OSError:
                    continue
        return found

    def _kill_in_container(self, marker: str) -> None:
        """Kill the processes a command started: every process but the init when no other
        command is in flight, else those carrying ``marker``."""
        started = self._container
        if started is None:
            return
        with self._cond:
            others = any(m != marker for m in started.markers.values())
        needle = f"{MARKER_VAR}={marker}".encode()
        for _ in range(50):
            pids = self._container_pids(started)
            if pids is None:
                if not others:  # the host cannot see them: ask the container to
                    try:
                        self.runtime.call("exec", "--user", f"{self.identity.uid}:{self.identity.gid}", self.name,
                                          "/bin/sh", "-c", "kill -9 -1", timeout=30)
                    except (OSError, subprocess.SubprocessError):
                        pass
                return
            victims = []
            for pid in pids:
                if others:
                    try:
                        with open(f"/proc/{pid}/environ", "rb") as fh:
                            if needle not in fh.read().split(b"\0"):
                                continue
                    except OSError:
                        continue
                victims.append(pid)
            if not victims:
                return
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def verify_limits(self) -> tuple[str, ...]:
        """The limits read back from the container's cgroup as set (``memory``, ``processes``)."""
        started = self._container
        if started is None or started.cgroup is None:
            return ()
        lim, group, found = self.spec.limits, started.cgroup, []
        if group.version == "v1":
            memory = _read_int(group.dirs["memory"] / "memory.limit_in_bytes") if "memory" in group.dirs else None
            pids = _read_int(group.dirs["pids"] / "pids.max") if "pids" in group.dirs else None
        else:
            memory = _read_int(group.dirs["unified"] / "memory.max")
            pids = _read_int(group.dirs["unified"] / "pids.max")
        if lim.memory_bytes is not None and memory is not None and memory <= lim.memory_bytes:
            found.append("memory")
        if lim.max_processes is not None and pids == lim.max_processes + INIT_TASKS:
            found.append("processes")
        return tuple(found)

    # -- running ---------------------------------------------------------------------------
    def _argv(self, command: list[str]) -> tuple[list[str], dict[str, Any]]:
        return self.runtime.argv("exec", self.name, *command), {}

    def _emptying(self) -> str:
        """Shell that empties the private ``/tmp`` and ``$HOME``, sparing the mounts below them
        (a host directory mounted there is never written through)."""
        roots = ("/tmp", HOME)
        spared = sorted({f"{root}/{target[len(root) + 1:].split('/')[0]}" for target in self._targets
                         for root in roots if target.startswith(root + "/")})
        globs = " ".join(f"{root}/* {root}/.[!.]* {root}/..?*" for root in roots)
        keep = "|".join(shlex.quote(path) for path in spared)
        skip = f"{keep}) ;; " if keep else ""
        return f'for f in {globs}; do case "$f" in {skip}*) rm -rf "$f" 2>/dev/null ;; esac; done; '

    def _wrapper(self, fresh: bool = False) -> str:
        """The shell each command starts in: the private directories emptied (``fresh``), no core
        dumps, the file size limit, then the command."""
        size = self.spec.limits.file_size_bytes
        fsize = f"ulimit -f {math.ceil(size / 512)} 2>/dev/null; " if size is not None else ""
        empty = self._emptying() if fresh else ""
        return f'{empty}ulimit -c 0 2>/dev/null; {fsize}exec /bin/sh -c "$1"'

    def _after(self, pid: int, cgroup: Cgroup | None) -> None:
        # What the command started inside the container first, then the exec client (so that a
        # runc client reaps what it started; a podman client's conmon does it anyway).
        started = self._container
        marker = started.markers.get(pid) if started is not None else None
        if marker is not None:
            self._kill_in_container(marker)
            client = started.clients.get(pid)
            if client is not None and started.process is not None:
                try:  # runc returns the command's exit status once its output is closed
                    client.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    pass
        _kill_group(pid)

    def _run(self, command: str, timeout_s: float | None, output_cap: int | None,
             env: Mapping[str, str] | None, stdin_data: bytes | None) -> CommandResult:
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        cap = self.limits.output_bytes if output_cap is None else output_cap
        start = time.monotonic()
        started = self._ensure_started()
        with self._cond:
            fresh = self._inflight == 0  # no other command uses /tmp and $HOME now
            self._inflight += 1
        try:
            return self._exec(started, command, fresh, start, timeout, cap, env, stdin_data)
        finally:
            with self._cond:
                self._inflight -= 1

    def _exec(self, started: _Started, command: str, fresh: bool, start: float, timeout: float, cap: int,
              env: Mapping[str, str] | None, stdin_data: bytes | None) -> CommandResult:
        marker = f"{self.marker}-c{next(self._counter)}"
        full_env = {**self.base_env(), **self.spec.env, **(env or {}), MARKER_VAR: marker}
        inner = ["/bin/sh", "-c", self._wrapper(fresh), "zebench-sandbox", command]
        process_file = None
        if started.process is not None:
            process_file = self._process_file(started, marker, inner, full_env)
            argv = [*self.runtime.direct, "exec", "--process", str(process_file),
                    "--pid-file", str(process_file.with_suffix(".pid")), started.cid]
        else:
            argv = self.runtime.argv("exec", *(["--interactive"] if stdin_data is not None else []),
                                     "--user", f"{self.identity.uid}:{self.identity.gid}",
                                     "--workdir", self.inner_workspace,
                                     *[f"--env={k}={v}" for k, v in full_env.items()], self.name, *inner)
        group = started.cgroup
        before = (group.oom_kills(), group.process_limit_hits()) if group is not None else (0, 0)
        proc = subprocess.Popen(argv, env=self.runtime.environ(), stdin=subprocess.PIPE if stdin_data is not None
                                else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        with self._cond:
            self._running[proc.pid] = None
            started.markers[proc.pid] = marker
            started.clients[proc.pid] = proc
        client = proc if process_file is None else _RuncClient(proc, process_file.with_suffix(".pid"))
        try:
            feed_stdin(proc, stdin_data)
            outcome = supervise(client, start + timeout, cap, kill=lambda: self._after(proc.pid, None),
                                should_stop=lambda: self._closed)
        finally:
            self._after(proc.pid, None)
            reap(proc)
            with self._cond:
                self._running.pop(proc.pid, None)
                started.markers.pop(proc.pid, None)
                started.clients.pop(proc.pid, None)
            if process_file is not None:
                process_file.unlink(missing_ok=True)
                process_file.with_suffix(".pid").unlink(missing_ok=True)
        stopped = outcome.stopped or (self._closed and not outcome.timed_out)
        killed_by = "timeout" if outcome.timed_out else ("closed" if stopped else None)
        if group is not None and killed_by is None:
            if group.oom_kills() > before[0]:
                killed_by = "memory"
            elif group.process_limit_hits() > before[1]:
                killed_by = "processes"
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

    def _cleanup(self) -> None:
        if self._process_dir is not None:
            shutil.rmtree(self._process_dir, ignore_errors=True)
        started = self._container
        if started is None:
            return
        if started.init_pid is not None:
            try:
                os.kill(started.init_pid, signal.SIGKILL)  # the PID namespace ends with its init
                with _closed_lock:
                    _closed.setdefault(self.runtime, set()).add(self.name)  # --rm removes it
                return
            except (ProcessLookupError, PermissionError):
                pass
        try:
            done = self.runtime.call(*_rm_args(self.kind, [self.name]), timeout=120)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0:
            _forget(self.kind, [self.name])
        else:
            with _closed_lock:
                _closed.setdefault(self.runtime, set()).add(self.name)

    # -- reporting -------------------------------------------------------------------------
    def _exec_used(self) -> dict[str, str]:
        """How this sandbox's commands were executed, where it differs from the runtime's way (a
        container whose configuration could not be read falls back to ``podman exec``)."""
        started = self._container
        if started is not None and self.runtime.direct and started.process is None:
            return {"exec": f"{self.kind} exec"}
        return {}

    def describe(self) -> dict[str, Any]:
        lim, verified = self.spec.limits, set(self.runtime.verified)

        def by(mechanism: str, name: str) -> str:
            return f"{mechanism} (read back from a probe container's cgroup)" if name in verified else mechanism

        return {
            "kind": self.kind,
            "network": self.spec.network,
            "workspace": self.inner_workspace,
            **({"workdirIgnored": self.workdir_ignored} if self.workdir_ignored else {}),
            "user": {"uid": self.identity.uid, "gid": self.identity.gid, "switchedFromRoot": self.identity.switch},
            "image": self.image.describe(),
            "runtime": {**self.runtime.describe(), **self._exec_used()},
            "limits": {
                "time": {"limit": lim.timeout_s, "enforcedBy": "harness timer"},
                "output": {"limit": lim.output_bytes, "enforcedBy": "harness capture (per stream)"},
                "processes": {"limit": lim.max_processes, "enforcedBy": None if lim.max_processes is None
                              else by("container cgroup (--pids-limit, shared by the sandbox's commands)",
                                      "processes")},
                "memory": {"limit": lim.memory_bytes, "enforcedBy": None if lim.memory_bytes is None
                           else by("container cgroup (--memory, no swap; shared by the sandbox's commands)",
                                   "memory")},
                "fileSize": {"limit": lim.file_size_bytes, "enforcedBy": None if lim.file_size_bytes is None
                             else "RLIMIT_FSIZE (the command's shell in the container)"},
            },
        }

