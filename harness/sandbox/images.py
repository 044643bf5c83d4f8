"""Container images of the container backends: built locally from a build context, cached by
the content of that context.

A build context is a directory holding a ``Containerfile`` or ``Dockerfile`` (the first found
wins) and whatever it copies. Its **content hash** (every file's path, kind, executable bit and
content, every link's target) names the image: ``zebench-env:<hash>``, with the full hash in the
``org.zebench.context-hash`` label. A second :func:`build_image` of the same content finds the
tag and builds nothing; ``rebuild=True`` builds again without the runtime's layer cache.

The **host-runtime image** is what the container backends use for a scenario that declares no
image: an empty root with the host's top-level layout (``/bin`` → ``usr/bin`` where the host
has that link, mount points elsewhere), into which the host's ``/usr``, ``/etc`` and the
harness's interpreter are mounted read-only when a container starts, as bubblewrap does
(:mod:`harness.sandbox.container`). It is built from a generated context in a temporary
directory, so it needs nothing from a registry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness._util.ownership import owned

CONTAINERFILES = ("Containerfile", "Dockerfile")
IMAGE_NAME = "zebench-env"
HOST_RUNTIME_NAME = "zebench-host-runtime"
HASH_LABEL = "org.zebench.context-hash"
BUILD_TIMEOUT_S = 1800.0
_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# Mount points and private directories of the host-runtime image (bwrap's view, as a root).
_HOST_DIRS = ("usr", "etc", "tmp", "proc", "dev", "sys", "run", "workspace", "home/sandbox", "zebench")


class Runtime(Protocol):
    """What building and finding images needs of a container runtime
    (:class:`harness.sandbox.container.ContainerRuntime`, found by
    :func:`~harness.sandbox.container.detect_runtime`)."""

    @property
    def kind(self) -> str: ...  # podman | docker

    def argv(self, *args: str) -> list[str]: ...

    def environ(self) -> dict[str, str]: ...


class ImageError(RuntimeError):
    """An image could not be built or found (the message names the context and says why)."""


@dataclass(frozen=True)
class ContainerImage:
    """A built image: what a container backend starts, and what a run records of it."""

    kind: str  # the backend whose image store holds it: podman | docker
    tag: str
    id: str
    context_hash: str
    context: Path | None = None  # None: the host-runtime image
    digest: str | None = None  # the manifest digest, where the backend reports one (podman)
    env: tuple[str, ...] = ()  # the image's ENV, ``NAME=value``
    workdir: str | None = None  # the image's WORKDIR (None: none declared, or ``/``)
    built: bool = False  # this call built it (False: found in the cache)

    @property
    def host_runtime(self) -> bool:
        return self.context is None

    def env_value(self, name: str) -> str | None:
        for item in self.env:
            key, _, value = item.partition("=")
            if key == name:
                return value
        return None

    def config_text(self) -> str:
        """What makes runs in this image comparable: the content of its build context (a
        rebuild of the same context, here or on another machine, keeps it)."""
        return "host runtime" if self.host_runtime else f"image {self.context_hash[:20]}"

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"tag": self.tag, "id": self.id, "contextHash": self.context_hash,
                                "runtime": "host" if self.host_runtime else "image"}
        if self.context is not None:
            info["context"] = str(self.context)
        if self.digest:
            info["digest"] = self.digest
        if self.workdir:
            info["workdir"] = self.workdir
        return info


def find_containerfile(context: Path) -> Path | None:
    """The ``Containerfile`` or ``Dockerfile`` of a build context, or None."""
    for name in CONTAINERFILES:
        if (context / name).is_file():
            return context / name
    return None


def _entries(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, lstat) of everything below ``root``, sorted, never through a link."""
    stack = [""]
    while stack:
        rel = stack.pop()
        folder = root / rel if rel else root
        names = sorted(os.listdir(folder), reverse=True)
        for name in names:
            child = f"{rel}/{name}" if rel else name
            info = os.lstat(root / child)
            yield child, info
            if stat.S_ISDIR(info.st_mode):
                stack.append(child)


def context_hash(context: Path) -> str:
    """The content hash of a build context (sha256, hex)."""
    h = hashlib.sha256(b"zebench build context 1\n")
    for rel, info in sorted(_entries(Path(context)), key=lambda e: e[0]):
        path = Path(context) / rel
        if stat.S_ISLNK(info.st_mode):
            h.update(f"L {rel}\0{os.readlink(path)}\n".encode())
        elif stat.S_ISDIR(info.st_mode):
            h.update(f"D {rel}\n".encode())
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256()
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
            mode = "x" if info.st_mode & 0o111 else "-"
            h.update(f"F {rel}\0{mode}\0{digest.hexdigest()}\n".encode())
        else:
            h.update(f"O {rel}\n".encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- the host's runtime

def _host_layout() -> list[tuple[str, str | None]]:
    """(path in the image, link target or None for a directory) of the host-runtime root."""
    layout: list[tuple[str, str | None]] = [(d, None) for d in _HOST_DIRS]
    for top in _TOP_LEVEL:
        if os.path.islink(top):
            layout.append((top.lstrip("/"), os.readlink(top)))
        elif os.path.isdir(top):
            layout.append((top.lstrip("/"), None))
    layout.append(("var/tmp", "../tmp"))
    return sorted(layout)


def host_runtime_hash() -> str:
    """The content hash of the host-runtime image's context (it depends on the host's layout)."""
    text = "zebench host runtime 1\n" + "".join(f"{p}\0{t or ''}\n" for p, t in _host_layout())
    return hashlib.sha256(text.encode()).hexdigest()


def write_host_runtime_context(folder: Path) -> None:
    """Write the host-runtime image's build context into ``folder`` (empty)."""
    root = folder / "root"
    root.mkdir()
    for path, target in _host_layout():
        where = root / path
        where.parent.mkdir(parents=True, exist_ok=True)
        if target is None:
            where.mkdir(exist_ok=True)
        else:
            where.symlink_to(target)
    for path in ("tmp", "home/sandbox"):
        os.chmod(root / path, 0o1777)
    (folder / "Containerfile").write_text("FROM scratch\nCOPY root/ /\n")


# --------------------------------------------------------------------------- building

def _last_lines(text: str, n: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-n:]) if lines else "no output"


def inspect_image(runtime: Runtime, ref: str) -> dict[str, Any] | None:
    """The runtime's ``image inspect`` record of ``ref``, or None when it has no such image."""
    try:
        done = subprocess.run(runtime.argv("image", "inspect", ref), env=runtime.environ(), capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return None
    return data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else None


def _image(runtime: Runtime, tag: str, record: dict[str, Any], digest: str, context: Path | None,
           built: bool) -> ContainerImage:
    config = record.get("Config") or {}
    env = tuple(str(e) for e in (config.get("Env") or []))
    workdir = str(config.get("WorkingDir") or "").strip()
    return ContainerImage(kind=runtime.kind, tag=tag, id=str(record.get("Id") or ""), context_hash=digest,
                          context=context, digest=record.get("Digest") or None, env=env,
                          workdir=workdir if workdir not in ("", "/") else None, built=built)


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def _build(runtime: Runtime, context: Path, containerfile: Path, tag: str, digest: str, rebuild: bool) -> None:
    argv = runtime.argv("build", "-f", str(containerfile), "-t", tag, "--label", f"{HASH_LABEL}={digest}",
                        *(["--no-cache"] if rebuild else []), str(context))
    try:
        done = subprocess.run(argv, env=runtime.environ(), capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ImageError(f"{context}: the {runtime.kind} build took longer than {BUILD_TIMEOUT_S:.0f} s") from None
    except OSError as exc:
        raise ImageError(f"{context}: {runtime.kind} build could not start: {exc}") from None
    if done.returncode != 0:
        raise ImageError(f"{context}: {runtime.kind} build failed: {_last_lines(done.stderr or done.stdout)}")


#: A build context may list files of the host to copy into it before the build, one per line,
#: ``HOST_PATH [NAME]`` (a static busybox, say, where no registry can give a base image).
HOST_FILES = "zebench-host-files"


@contextlib.contextmanager
def _assembled(context: Path) -> Iterator[Path]:
    """``context`` itself, or, when it lists host files (:data:`HOST_FILES`), a temporary copy
    with them added: its content hash then covers the host files too."""
    listing = context / HOST_FILES
    if not listing.is_file():
        yield context
        return
    with tempfile.TemporaryDirectory(prefix="zebench-build-") as tmp:
        copy = Path(tmp) / "context"
        shutil.copytree(context, copy, symlinks=True)
        for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) > 2:
                raise ImageError(f"{listing}:{number}: expected HOST_PATH [NAME], not {line.strip()!r}")
            source = Path(words[0])
            name = words[1] if len(words) == 2 else source.name
            if "/" in name or name in ("", ".", ".."):
                raise ImageError(f"{listing}:{number}: {name!r} is not a file name in the build context")
            if not source.is_file():
                raise ImageError(f"{listing}:{number}: {source} is not on this machine"
                                 + (" (Debian: apt-get install busybox-static)" if "busybox" in source.name else ""))
            shutil.copy2(source, copy / name)
        yield copy


def build_image(context: str | Path, runtime: Runtime, *, rebuild: bool = False) -> ContainerImage:
    """The image of build context ``context`` (a directory with a Containerfile or Dockerfile),
    built by ``runtime`` (a :class:`~harness.sandbox.container.ContainerRuntime`, from
    :func:`~harness.sandbox.container.detect_runtime`; :func:`harness.sandbox.build_environment`
    takes a backend's name) when its store does not hold it yet (``rebuild``: build again,
    without the layer cache). Raises :class:`ImageError`."""
    context = Path(context).resolve()
    if not context.is_dir():
        raise ImageError(f"{context}: the build context is not a directory")
    containerfile = find_containerfile(context)
    if containerfile is None:
        raise ImageError(f"{context}: no Containerfile or Dockerfile in the build context")
    with _assembled(context) as assembled:
        digest = context_hash(assembled)
        tag = f"{IMAGE_NAME}:{digest[:20]}"
        with _lock(f"{runtime.kind}:{tag}"):
            record = None if rebuild else inspect_image(runtime, tag)
            built = record is None
            if built:
                _build(runtime, assembled, assembled / containerfile.name, tag, digest, rebuild)
                record = inspect_image(runtime, tag)
                if record is None:
                    raise ImageError(f"{context}: {runtime.kind} built {tag} but cannot find it")
            return _image(runtime, tag, record, digest, context, built)


def host_runtime_image(runtime: Runtime, *, rebuild: bool = False) -> ContainerImage:
    """The host-runtime image (see the module docstring), built once per machine."""
    digest = host_runtime_hash()
    tag = f"{HOST_RUNTIME_NAME}:{digest[:20]}"
    with _lock(f"{runtime.kind}:{tag}"):
        record = None if rebuild else inspect_image(runtime, tag)
        built = record is None
        if built:
            folder = Path(tempfile.mkdtemp(prefix=owned("zebench-image-")))
            try:
                write_host_runtime_context(folder)
                _build(runtime, folder, folder / "Containerfile", tag, digest, rebuild)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            record = inspect_image(runtime, tag)
            if record is None:
                raise ImageError(f"{runtime.kind} built {tag} but cannot find it")
        return _image(runtime, tag, record, digest, None, built)
