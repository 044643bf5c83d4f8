"""Where the code comes from: a local project directory, or a package's source distribution
fetched with ``pip download --no-deps --no-binary :all:`` (run in the sandbox with network:
the only network the generator uses) and unpacked safely."""

from __future__ import annotations

import email.parser
import hashlib
import os
import re
import shlex
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox import Limits, SandboxSpec, open_sandbox

#: A requirement the generator can fetch: ``name`` or ``name==version``.
REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:==([A-Za-z0-9][A-Za-z0-9.+!_-]*))?$")
#: The largest archive member unpacked (a source distribution is small).
MAX_MEMBER_BYTES = 20 * 1024 * 1024


class SourceError(ValueError):
    """A SOURCE that cannot be used: not found, not fetched, not unpacked."""


@dataclass
class Source:
    """The project the tasks are made from: where it was unpacked, and its provenance."""

    given: str  # SOURCE as written
    kind: str  # directory | sdist
    root: Path  # the project's root directory
    name: str
    version: str | None
    archive: str | None = None  # the sdist's file name
    sha256: str | None = None  # of the sdist

    def provenance(self) -> dict[str, object]:
        return {"source": self.given, "kind": self.kind, "name": self.name, "version": self.version,
                "archive": self.archive, "sha256": self.sha256}


def _pkg_info(root: Path) -> tuple[str | None, str | None]:
    for file in (root / "PKG-INFO", *sorted(root.glob("*.egg-info/PKG-INFO")), *sorted(root.glob("src/*.egg-info/PKG-INFO"))):
        if file.is_file():
            try:
                meta = email.parser.Parser().parsestr(file.read_text("utf-8", errors="replace"), headersonly=True)
            except Exception:  # noqa: BLE001 - a malformed file just gives no metadata
                continue
            return meta.get("Name"), meta.get("Version")
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        try:
            project = tomllib.loads(pyproject.read_text("utf-8")).get("project") or {}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
        version = project.get("version")
        return project.get("name"), str(version) if version is not None else None
    return None, None


def local_source(path: Path, given: str) -> Source:
    root = path.resolve()
    name, version = _pkg_info(root)
    return Source(given=given, kind="directory", root=root, name=name or root.name, version=version)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip_env() -> dict[str, str]:
    """The user's pip settings (``PIP_*``: an index, a certificate bundle) for the download:
    the sandbox's environment is otherwise clean."""
    return {k: v for k, v in os.environ.items() if k.startswith("PIP_")}


def fetch_sdist(requirement: str, into: Path, sandbox_kind: str, timeout_s: float = 300.0) -> Path:
    """Download the source distribution of ``requirement`` (``name`` or ``name==version``)
    into ``into``; its path. Raises :class:`SourceError`."""
    if not REQUIREMENT.match(requirement):
        raise SourceError(f"SOURCE {requirement!r}: neither a directory nor a package name (NAME or NAME==VERSION)")
    into.mkdir(parents=True, exist_ok=True)
    command = shlex.join(["python3", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--no-cache-dir",
                          "--disable-pip-version-check", "-q", "-d", ".", requirement])
    spec = SandboxSpec(kind=sandbox_kind, network=True, limits=Limits(timeout_s=timeout_s))
    with open_sandbox(into, spec) as box:
        result = box.run(command, env=_pip_env(), timeout_s=timeout_s)
    archives = sorted(p for p in into.iterdir() if p.name.endswith((".tar.gz", ".tgz", ".zip", ".tar.bz2")))
    if not result.ok or not archives:
        lines = [line for line in (result.stderr or result.stdout).strip().splitlines()
                 if line.strip() and not line.lstrip().startswith("WARNING")]
        why = lines[-1].strip() if lines else result.outcome()
        raise SourceError(f"SOURCE {requirement!r}: pip download of its source distribution failed: {why}")
    return archives[0]


def _safe_member(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts


def unpack(archive: Path, into: Path) -> Path:
    """Unpack ``archive`` (regular files and directories only, no path outside ``into``) and
    return the project root: the single top directory, else ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if info.is_dir() or not _safe_member(info.filename) or info.file_size > MAX_MEMBER_BYTES:
                        continue
                    target = into / info.filename
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        else:
            with tarfile.open(archive) as tf:
                for member in tf.getmembers():
                    if not member.isfile() or not _safe_member(member.name) or member.size > MAX_MEMBER_BYTES:
                        continue
                    target = into / member.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    src = tf.extractfile(member)
                    if src is None:
                        continue
                    with src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise SourceError(f"{archive.name}: cannot unpack: {exc}") from None
    tops = [p for p in into.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else into


def resolve_source(given: str, scratch: Path, sandbox_kind: str) -> Source:
    """SOURCE as a :class:`Source`: an existing directory is used in place; anything else is a
    requirement whose sdist is downloaded and unpacked under ``scratch``."""
    path = Path(given).expanduser()
    if path.is_dir():
        return local_source(path, given)
    if path.exists():
        raise SourceError(f"SOURCE {given!r}: not a directory (give a project directory or a package name)")
    if "/" in given or given.startswith((".", "~")):
        raise SourceError(f"SOURCE {given!r}: directory not found")
    match = REQUIREMENT.match(given)
    if not match:
        raise SourceError(f"SOURCE {given!r}: neither a directory nor a package name (NAME or NAME==VERSION)")
    archive = fetch_sdist(given, scratch / "download", sandbox_kind)
    root = unpack(archive, scratch / "unpacked")
    name, version = _pkg_info(root)
    return Source(given=given, kind="sdist", root=root, name=name or match.group(1), version=version or match.group(2),
                  archive=archive.name, sha256=sha256_of(archive))
