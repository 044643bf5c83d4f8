"""The container backends (``podman``, ``docker``): one container per sandbox, every command
executed into it.

A :class:`ContainerSandbox` starts its container at its first command (a sandbox that runs no
command starts none) and executes each command into it with ``podman exec`` (``docker exec``:
the same code with the other program). What a command sees:

- the image's root, read-only: a scenario's own image (``sandbox.image``,
  :mod:`harness.sandbox.images`), or the **host-runtime image**, an empty root into which the
  host's ``/usr`` and ``/etc`` (password hashes and SSH/TLS private keys masked), the harness's
  interpreter and virtualenv, and Node are mounted read-only at their own paths, as bubblewrap
  mounts them (:mod:`harness.sandbox.bwrap`);
- the workspace read-write at :data:`WORKSPACE`, the path bwrap uses, and the spec's mounts;
- a private ``/tmp`` and ``$HOME`` (size-capped tmpfs), the container's own: they last as long
  as the sandbox (bwrap makes them per command);
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
import functools
import itertools
import math
import os
import re
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

from harness.leftovers import MARKER_VAR, owned, pid_alive
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
from harness.sandbox.output import CommandResult, supervise

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
        return info


def container_executable(kind: str) -> str | None:
    """``$ZE_BENCHMARKS_PODMAN`` / ``$ZE_BENCHMARKS_DOCKER``, else the program on PATH."""
    return os.environ.get(f"ZE_BENCHMARKS_{kind.upper()}") or shutil.which(kind)


def _detail(text: str) -> str:
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def conf_path() -> Path:
    """Where the containers.conf of :func:`detect_runtime` goes: the user's cache directory."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "zebench" / "containers" / "containers.conf"


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
            return replace(runtime, verified=verified)
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
        return replace(runtime, verified=verified)
    raise SandboxUnavailable(problem)


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
        self._mounts = self._mount_options()
        self._start_lock = threading.Lock()
        self._container: _Started | None = None
        self._start_error: str | None = None
        self._counter = itertools.count()

    # -- what commands see -----------------------------------------------------------------
    @property
    def inner_workspace(self) -> str:
        return WORKSPACE

    def mount_point(self, mount: Mount) -> str:
        source = mount.source.resolve()
        if mount.target is None and source.is_relative_to(self.workspace):
            return f"{WORKSPACE}/{source.relative_to(self.workspace).as_posix()}"
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
            if self.spec.network and os.path.isdir("/run/systemd/resolve"):
                bind("/run/systemd/resolve", "/run/systemd/resolve")
            for prefix in runtime_view().mounts:
                bind(prefix, prefix)
        for mount in self.spec.mounts:
            bind(str(mount.source.resolve()), self.mount_point(mount), mount.writable)
        bind(str(self.workspace), WORKSPACE, writable=True)
        return opts

    def _run_argv(self) -> list[str]:
        spec, lim = self.spec, self.spec.limits
        size = str(lim.tmpfs_bytes)
        argv = ["run", "--detach", "--rm", "--name", self.name, "--label", f"{LABEL}={os.getpid()}",
                "--pull", "never", "--log-driver", "none",
                "--user", f"{self.identity.uid}:{self.identity.gid}",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
                "--tmpfs", f"/tmp:rw,size={size},mode=1777", "--tmpfs", f"{HOME}:rw,size={size},mode=1777",
                "--workdir", WORKSPACE, "--env", f"{MARKER_VAR}={self.marker}-init"]
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
            self._container = started
            return started

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

    def _wrapper(self) -> str:
        """The shell each command starts in: no core dumps, the file size limit, then the command."""
        size = self.spec.limits.file_size_bytes
        fsize = f"ulimit -f {math.ceil(size / 512)} 2>/dev/null; " if size is not None else ""
        return f'ulimit -c 0 2>/dev/null; {fsize}exec /bin/sh -c "$1"'

    def _after(self, pid: int, cgroup: Cgroup | None) -> None:
        _kill_group(pid)  # the exec client; what it started inside is the container's
        started = self._container
        marker = started.markers.get(pid) if started is not None else None
        if marker is not None:
            self._kill_in_container(marker)

    def _run(self, command: str, timeout_s: float | None, output_cap: int | None,
             env: Mapping[str, str] | None, stdin_data: bytes | None) -> CommandResult:
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        cap = self.limits.output_bytes if output_cap is None else output_cap
        start = time.monotonic()
        started = self._ensure_started()
        marker = f"{self.marker}-c{next(self._counter)}"
        full_env = {**self.base_env(), **self.spec.env, **(env or {}), MARKER_VAR: marker}
        argv = self.runtime.argv("exec", *(["--interactive"] if stdin_data is not None else []),
                                 "--user", f"{self.identity.uid}:{self.identity.gid}", "--workdir", WORKSPACE,
                                 *[f"--env={k}={v}" for k, v in full_env.items()],
                                 self.name, "/bin/sh", "-c", self._wrapper(), "zebench-sandbox", command)
        group = started.cgroup
        before = (group.oom_kills(), group.process_limit_hits()) if group is not None else (0, 0)
        proc = subprocess.Popen(argv, env=self.runtime.environ(), stdin=subprocess.PIPE if stdin_data is not None
                                else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        with self._cond:
            self._running[proc.pid] = None
            started.markers[proc.pid] = marker
        try:
            if stdin_data is not None:
                try:
                    proc.stdin.write(stdin_data)
                except BrokenPipeError:
                    pass
                proc.stdin.close()
            outcome = supervise(proc, start + timeout, cap, kill=lambda: self._after(proc.pid, None),
                                should_stop=lambda: self._closed)
        finally:
            self._after(proc.pid, None)
            proc.wait()
            for stream in (proc.stdout, proc.stderr):
                stream.close()
            with self._cond:
                self._running.pop(proc.pid, None)
                started.markers.pop(proc.pid, None)
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
    def describe(self) -> dict[str, Any]:
        lim, verified = self.spec.limits, set(self.runtime.verified)

        def by(mechanism: str, name: str) -> str:
            return f"{mechanism} (read back from a probe container's cgroup)" if name in verified else mechanism

        return {
            "kind": self.kind,
            "network": self.spec.network,
            "workspace": self.inner_workspace,
            "user": {"uid": self.identity.uid, "gid": self.identity.gid, "switchedFromRoot": self.identity.switch},
            "image": self.image.describe(),
            "runtime": self.runtime.describe(),
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

