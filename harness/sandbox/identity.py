"""Who a sandboxed command runs as: never the host's root.

When the harness runs as root, every sandboxed command is switched to an unprivileged host
uid before it execs anything the agent or the scenario wrote (``setpriv``: real, effective
and saved uid and gid, no supplementary groups, no capabilities, an empty bounding set,
``no_new_privs`` so that no set-uid program can give root back). The uid is
``$ZE_BENCHMARKS_SANDBOX_UID`` if set, else the uid of a ``zebench-sandbox`` account if the
machine has one, else :data:`DEFAULT_UID`. The kernel's root-only surfaces (``/proc/sys``,
``/proc/sysrq-trigger``, other users' processes and files) are then closed by ordinary
permission checks, whatever the backend.

Every command also gets a user namespace of its own (``unshare --user``, the uid mapped to
itself) where the kernel allows unprivileged ones: kernel keyrings are kept per user
namespace, so a key one command stores in its user keyring is gone for the next command and
for every later run. Where the kernel refuses, the keyring of the sandbox uid is shared by
every command that runs as it, and the run's record says so.

Files the harness writes for a command (the workspace, a grading copy, a file the agent's
``write_file`` tool writes) are given to the sandbox uid with :meth:`Identity.adopt`.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

UID_ENV = "ZE_BENCHMARKS_SANDBOX_UID"
ACCOUNT = "zebench-sandbox"
# Outside Debian's allocated ranges and systemd's dynamic users (61184-65519), below nobody.
DEFAULT_UID = 65530


class IdentityError(RuntimeError):
    """Commands cannot be run as an unprivileged user here (the message says why)."""


@dataclass(frozen=True)
class Identity:
    """The uid and gid commands run as, and how the switch is made."""

    uid: int
    gid: int
    switch: bool  # the harness is root: commands are switched to ``uid`` by setpriv
    setpriv: str | None
    unshare: str | None  # a user namespace per command (private keyring), when the kernel allows
    read_all: bool = False  # keeps CAP_DAC_READ_SEARCH (process-group confinement as root)

    def for_process_group(self) -> "Identity":
        """The identity of process-group confinement. Without a private view of the
        filesystem, the harness's runtime and the workspace may lie where only root can go
        (``/root/...``): as root, commands keep the capability to read and search every file
        (what root could read before), and no user namespace, which would take it away."""
        if not self.switch:
            return self
        return replace(self, unshare=None, read_all=True)

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run as this identity: ``setpriv ... -- unshare --user ... -- argv``."""
        out: list[str] = []
        if self.switch:
            caps = ("--bounding-set=-all,+dac_read_search", "--inh-caps=-all,+dac_read_search",
                    "--ambient-caps=+dac_read_search") if self.read_all else ("--bounding-set=-all", "--inh-caps=-all")
            out += [self.setpriv, f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
                    *caps, "--no-new-privs", "--"]
        if self.unshare:
            out += [self.unshare, "--user", "--map-current-user", "--"]
        return out + argv

    def adopt(self, path: Path | str) -> None:
        """Give ``path`` (a file, or a directory and everything below it) to the sandbox uid.
        Links are changed themselves, never followed; the walk is iterative."""
        if not self.switch:
            return
        root = os.fspath(path)
        try:
            os.lchown(root, self.uid, self.gid)
        except FileNotFoundError:
            return
        if os.path.islink(root) or not os.path.isdir(root):
            return
        stack = [root]
        while stack:
            current = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                try:
                    os.lchown(entry.path, self.uid, self.gid)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                except OSError:
                    continue

    def describe(self) -> dict[str, object]:
        """For the run's record: the host uid commands ran as and what kept them apart."""
        info: dict[str, object] = {
            "uid": self.uid,
            "gid": self.gid,
            "switchedFromRoot": self.switch,
            "keyring": "private (a user namespace per command)" if self.unshare
            else f"shared by every command run as uid {self.uid}",
        }
        if self.read_all:
            info["readsEveryFile"] = True
        return info


def sandbox_uid() -> tuple[int, int]:
    """(uid, gid) commands run as when the harness is root."""
    value = os.environ.get(UID_ENV, "").strip()
    if value:
        try:
            uid = int(value)
        except ValueError:
            raise IdentityError(f"{UID_ENV}={value!r} is not a number") from None
        if uid <= 0:
            raise IdentityError(f"{UID_ENV} must name an unprivileged uid (not {uid})")
        return uid, uid
    try:
        entry = pwd.getpwnam(ACCOUNT)
        if entry.pw_uid > 0:
            return entry.pw_uid, entry.pw_gid
    except KeyError:
        pass
    return DEFAULT_UID, DEFAULT_UID


def _userns_works(prefix: list[str], unshare: str) -> bool:
    try:
        done = subprocess.run([*prefix, unshare, "--user", "--map-current-user", "--", "/bin/true"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=20, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=1)
def resolve_identity() -> Identity:
    """The identity of sandboxed commands on this machine (decided once per process).

    Raises :class:`IdentityError` when the harness is root and cannot switch users.
    """
    unshare = shutil.which("unshare")
    if os.geteuid() != 0:
        ns = unshare if unshare and _userns_works([], unshare) else None
        return Identity(os.getuid(), os.getgid(), False, None, ns)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise IdentityError("bench runs as root and setpriv (util-linux) is not installed, so sandboxed "
                            "commands cannot be run as an unprivileged user; install util-linux")
    uid, gid = sandbox_uid()
    switch = [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
    ns = unshare if unshare and _userns_works(switch, unshare) else None
    return Identity(uid, gid, True, setpriv, ns)
