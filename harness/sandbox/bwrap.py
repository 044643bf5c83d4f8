"""The ``bwrap`` backend: every command in a bubblewrap container of its own.

What a command sees:

- the system's runtime read-only: ``/usr`` (with ``/bin``, ``/lib``, ... as on the host) and
  ``/etc`` (password hashes and SSH/TLS private keys masked);
- the harness's interpreter and virtualenv read-only, at their own paths (so ``python3 -m
  pytest`` is the harness's), and Node and its package managers wherever they are installed;
- the workspace read-write at :data:`WORKSPACE` (the same path on every machine, so
  transcripts and diffs read alike);
- a private ``/tmp`` and ``$HOME`` (:data:`HOME`), size-capped tmpfs, gone with the command;
- a fresh ``/proc`` in a new PID namespace: the command's processes only (PID 1 is
  bubblewrap's reaper, whose environment is the command's clean one);
- no network (a private network namespace with only its own loopback) unless the spec allows
  it; no capabilities; ``/proc/sys`` read-only; and never the host's root: as root, the
  command is switched to the sandbox uid in a user namespace of its own
  (:mod:`harness.sandbox.identity`), and the parents of every mount point are made readable
  to it.

Nothing else: not ``suites/`` (solutions, hidden tests), not ``results/`` (the database,
spool, cache, other workspaces), not the checkout or the user's home. The root is read-only,
so a command writes only to the workspace and its private tmpfs. When the command's first
process exits, the PID namespace ends and every process in it is killed; ``--die-with-parent``
does the same if the harness dies. The options are passed on a pipe (``--args``), so the host
paths of the mounts do not show in the sandbox's ``/proc/1/cmdline``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._util.ownership import owned
from harness.sandbox.base import Sandbox, SandboxSpec, _passthrough_env, interpreter_bin

WORKSPACE = "/workspace"
HOME = "/home/sandbox"
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_MASKED_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
_MASKED_DIRS = ("/etc/ssh", "/etc/ssl/private")
# Tools made visible wherever they are installed (nvm, pyenv, ~/.local all live under $HOME).
RUNTIME_TOOLS = ("node", "npm", "npx", "pnpm", "yarn", "corepack", "git")
_ARGS_PIPE_LIMIT = 60_000  # bytes; a pipe holds 64 KiB without a reader


@dataclass(frozen=True)
class RuntimeView:
    """The read-only host paths commands need beyond /usr and /etc, and the PATH they get."""

    mounts: tuple[str, ...]
    path: tuple[str, ...]


def _visible(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def runtime_view() -> RuntimeView:
    """What of the harness's own runtime is mounted into every sandbox (per ``$PATH`` value)."""
    return _runtime_view(os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _runtime_view(search_path: str) -> RuntimeView:
    roots = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"]
    mounts: list[str] = []
    path: list[str] = [interpreter_bin()]

    def add(prefix: str) -> None:
        if prefix and os.path.isdir(prefix) and not _visible(prefix, roots + mounts):
            mounts.append(prefix)

    add(os.path.realpath(sys.base_prefix))
    add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    add(sys.prefix)  # the virtualenv at its own path: its scripts name it in their shebangs
    add(os.path.realpath(sys.prefix))
    for tool in RUNTIME_TOOLS:
        found = shutil.which(tool, path=search_path)
        if not found:
            continue
        real = os.path.realpath(found)
        bin_dir = os.path.dirname(real)
        prefix = os.path.dirname(bin_dir) if os.path.basename(bin_dir) == "bin" else bin_dir
        add(prefix)
        if not _visible(bin_dir, list(SYSTEM_PATH)):
            path.append(bin_dir)
    return RuntimeView(tuple(mounts), tuple(dict.fromkeys([*path, *SYSTEM_PATH])))


class _Tree:
    """What exists inside the sandbox so far, to create the parents of a mount point readable
    by everyone (bwrap would make them 0700 and root's, closed to the sandbox uid)."""

    def __init__(self, bound: list[str]) -> None:
        self.bound = list(bound)  # mounted trees: everything below them exists
        self.dirs: set[str] = set()  # single directories made so far

    def add_dir(self, path: str) -> None:
        """A directory that exists (empty: a tmpfs), without what may be mounted below it."""
        self.dirs.add(path)

    def parents(self, target: str) -> list[str]:
        """``--perms 0755 --dir P`` for each parent of ``target`` not yet there."""
        opts: list[str] = []
        parts = [p for p in target.split("/") if p][:-1]
        for i in range(1, len(parts) + 1):
            parent = "/" + "/".join(parts[:i])
            if parent not in self.dirs and not _visible(parent, self.bound):
                opts += ["--perms", "0755", "--dir", parent]
                self.dirs.add(parent)
        self.bound.append(target)
        return opts


@functools.lru_cache(maxsize=4)
def _account_files(uid: int, gid: int) -> tuple[str, ...]:
    """``/etc/passwd`` and ``/etc/group`` with an entry for the sandbox uid when the host's have
    none (programs that ask who they are, such as Node's ``os.userInfo()``, fail without one):
    the host's files plus one line each, written once per process and bound over the originals."""
    import atexit
    import grp
    import pwd

    try:
        pwd.getpwuid(uid)
        return ()
    except KeyError:
        pass
    from harness._util.trees import remove_tree

    folder = Path(tempfile.mkdtemp(prefix=owned("zebench-sandbox-accounts-")))
    atexit.register(remove_tree, folder)
    os.chmod(folder, 0o755)
    passwd = Path("/etc/passwd").read_text() if os.path.exists("/etc/passwd") else ""
    (folder / "passwd").write_text(passwd.rstrip("\n") + f"\nsandbox:x:{uid}:{gid}:zebench sandbox:{HOME}:/bin/sh\n")
    opts = ["--ro-bind", str(folder / "passwd"), "/etc/passwd"]
    try:
        grp.getgrgid(gid)
    except KeyError:
        group = Path("/etc/group").read_text() if os.path.exists("/etc/group") else ""
        (folder / "group").write_text(group.rstrip("\n") + f"\nsandbox:x:{gid}:\n")
        opts += ["--ro-bind", str(folder / "group"), "/etc/group"]
    for name in os.listdir(folder):
        os.chmod(folder / name, 0o644)
    return tuple(opts)


def bwrap_executable() -> str | None:
    return os.environ.get("ZE_BENCHMARKS_BWRAP") or shutil.which("bwrap")


class BwrapSandbox(Sandbox):
    kind = "bwrap"

    def __init__(self, workspace: Path, spec: SandboxSpec) -> None:
        super().__init__(workspace, spec)
        exe = bwrap_executable()
        if exe is None:
            from harness.sandbox.base import SandboxUnavailable

            raise SandboxUnavailable("bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        self.executable = exe
        self._options = self._build_options()

    @property
    def inner_workspace(self) -> str:
        return WORKSPACE

    def base_env(self) -> dict[str, str]:
        return {**_passthrough_env(), "PATH": ":".join(runtime_view().path), "HOME": HOME, "TMPDIR": "/tmp"}

    def _build_options(self) -> list[str]:
        spec, view = self.spec, runtime_view()
        opts = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.identity.switch:
            # Only for bwrap's own chdir into the workspace (the sandbox uid's, 0700) and for
            # setpriv, which switches to the sandbox uid and drops them all before the command.
            opts += ["--cap-add", "CAP_DAC_READ_SEARCH", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                     "--cap-add", "CAP_SETPCAP"]
        if not spec.network:
            opts.append("--unshare-net")
        opts += ["--ro-bind", "/usr", "/usr"]
        for top in _TOP_LEVEL:
            if os.path.islink(top):
                opts += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                opts += ["--ro-bind", top, top]
        opts += ["--ro-bind", "/etc", "/etc"]
        opts += _account_files(self.identity.uid, self.identity.gid)
        for file in _MASKED_FILES:
            if os.path.exists(file):
                opts += ["--ro-bind", "/dev/null", file]
        for directory in _MASKED_DIRS:
            if os.path.isdir(directory):
                opts += ["--tmpfs", directory, "--remount-ro", directory]
        if spec.network and os.path.isdir("/run/systemd/resolve"):
            opts += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]
        made = _Tree(["/usr", "/etc", *(t for t in _TOP_LEVEL if os.path.isdir(t))])
        # The private tmpfs first: a mount below /tmp (a runtime installed there) goes on top.
        # Both are writable by the sandbox uid (bwrap makes them as root).
        size = str(spec.limits.tmpfs_bytes)
        opts += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        opts += [*made.parents(HOME), "--perms", "0777", "--size", size, "--tmpfs", HOME,
                 "--symlink", "../tmp", "/var/tmp", "--proc", "/proc", "--dev", "/dev"]
        # The kernel's settings stay the host's: read-only even to a process that is root.
        opts += ["--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
        made.add_dir("/tmp")
        for prefix in view.mounts:
            opts += [*made.parents(prefix), "--ro-bind", prefix, prefix]
        inside: list[str] = []
        for mount in spec.mounts:
            source = mount.source.resolve()
            bind = ["--bind" if mount.writable else "--ro-bind", str(source)]
            if source.is_relative_to(self.workspace) and mount.target is None:
                # A file of the workspace pinned read-only: bound over the workspace's own bind.
                inside += [*bind, self.mount_point(mount)]
            else:
                opts += [*made.parents(mount.inner), *bind, mount.inner]
        opts += ["--bind", str(self.workspace), WORKSPACE, *inside, "--remount-ro", "/", "--chdir", WORKSPACE]
        return opts

    def mount_point(self, mount) -> str:  # noqa: ANN001 - Mount
        source = mount.source.resolve()
        if mount.target is None and source.is_relative_to(self.workspace):
            return f"{WORKSPACE}/{source.relative_to(self.workspace).as_posix()}"
        return mount.inner

    def _argv(self, command: list[str]) -> tuple[list[str], dict[str, Any]]:
        data = b"\0".join(o.encode() for o in self._options) + b"\0"
        if len(data) > _ARGS_PIPE_LIMIT:
            return [self.executable, *self._options, *command], {}
        read_fd, write_fd = os.pipe()
        try:
            os.write(write_fd, data)
        finally:
            os.close(write_fd)
        return [self.executable, "--args", str(read_fd), *command], {"pass_fds": (read_fd,)}


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when the bwrap backend works on this machine, else why not (one line)."""
    if bwrap_executable() is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    with tempfile.TemporaryDirectory(prefix=owned("zebench-probe-")) as tmp:
        try:
            sandbox = BwrapSandbox(Path(tmp), SandboxSpec(kind="bwrap"))
            result = sandbox.run("test -w /workspace && test -r /proc/self/status",
                                 timeout_s=20)
            sandbox.close()
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bwrap could not start: {exc}"
    if result.ok:
        return None
    detail = (result.stderr or result.stdout).strip().splitlines()
    return f"bwrap cannot create a sandbox here: {detail[-1] if detail else result.outcome()}"
