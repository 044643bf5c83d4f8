"""Workspaces: a fresh copy of a scenario's fixture for one run, and its diff against the fixture.

Copy safety. A workspace file must never share storage with the fixture file it came from,
because agents and their commands write in place (``>>``, ``open(..., "r+")``, truncating
writes) and the harness may run as root, which ignores read-only permission bits. Hard links
would therefore let a run corrupt the committed fixture, so they are not used. Each file is
copied with a reflink (``FICLONE``: copy-on-write, the fixture's blocks stay untouched by any
later write) where the filesystem supports it, and with the kernel's in-kernel copy
(``shutil.copyfile`` → ``copy_file_range``/``sendfile``) otherwise. Either way the workspace
owns its own data; ``tests/test_workspace.py`` writes through every mode and checks the
fixture is unchanged.

Never copied: ``node_modules``, ``.git``, build output and caches (``ALWAYS_EXCLUDED``), plus
the scenario's ``workspace.exclude`` globs (a pattern without ``/`` matches at any depth).
Symlinks are recreated only when they are relative and stay inside the fixture; others are
skipped and reported, so no link leads from a workspace back into the fixture or elsewhere.
"""

from __future__ import annotations

import difflib
import errno
import fcntl
import os
import secrets
import shutil
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._util.globs import walk_files
from harness._util.places import default_workspaces_root
from harness._util.dependency_files import MANIFEST_CAP, ManifestError, is_manifest, parse_manifest_text
from harness._util.trees import copy_sparse, is_sparse, make_dirs, read_regular, remove_tree, same_content, valid_utf8

if TYPE_CHECKING:
    from harness.scenarios.model import Scenario

ALWAYS_EXCLUDED = frozenset({
    "node_modules", ".git", ".hg", ".svn",
    "dist", "build", "out-tsc", ".next", ".nuxt", ".turbo", ".parcel-cache", "coverage", ".nyc_output",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv", "venv",
})
DEFAULT_DIFF_CAP = 200_000  # bytes of unified diff text kept
_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
_NO_REFLINK = {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EBADF}


class WorkspaceError(RuntimeError):
    """The workspace could not be created or populated."""


@dataclass
class CopyReport:
    files: int = 0
    bytes: int = 0
    reflinked: int = 0
    skipped_links: list[str] = field(default_factory=list)


class _FileCopier:
    """Copies single files with a reflink when possible; remembers when reflinks are unsupported."""

    def __init__(self) -> None:
        self.reflink_ok = True

    def copy(self, src: str, dst: str, st: os.stat_result, report: CopyReport) -> None:
        if self.reflink_ok and st.st_size > 0:
            try:
                with open(src, "rb") as fin, open(dst, "wb") as fout:
                    fcntl.ioctl(fout.fileno(), _FICLONE, fin.fileno())
                report.reflinked += 1
            except OSError as exc:
                if exc.errno not in _NO_REFLINK:
                    raise
                self.reflink_ok = False
                self._copy(src, dst, st)
        else:
            self._copy(src, dst, st)
        # Mode and times only: shutil.copystat would also walk extended attributes, at a cost
        # that dominated copies of many small files.
        os.chmod(dst, stat.S_IMODE(st.st_mode))
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        report.files += 1
        report.bytes += st.st_size

    @staticmethod
    def _copy(src: str, dst: str, st: os.stat_result) -> None:
        if is_sparse(st):
            copy_sparse(src, dst, st.st_size)  # holes stay holes: a filled copy could fill the disk
        else:
            shutil.copyfile(src, dst)  # a new inode with its own data (copy_file_range/sendfile)


def _inside(target: Path, root: Path) -> bool:
    try:
        target.relative_to(root)
        return True
    except ValueError:
        return False


def real_directory(root: Path, rel_dir: str) -> Path:
    """Make ``root/rel_dir`` a real directory, replacing any symlink or file on the way.

    Writes into a tree someone else prepared (hidden tests laid over an agent's work, files
    restored for grading) go through this, so a planted link can never lead them elsewhere.
    """
    current = Path(root)
    for part in [p for p in rel_dir.split("/") if p]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        if not current.exists():
            current.mkdir()
    return current


def copy_tree(src: Path, dst: Path, exclude: list[str] | tuple[str, ...] = (),
              prune_dirs: frozenset[str] = ALWAYS_EXCLUDED) -> CopyReport:
    """Copy ``src`` into ``dst`` (created if needed), overwriting files already there.

    Skips ``prune_dirs`` and ``exclude`` globs. The copy never shares data with ``src``.
    Into a ``dst`` that already holds files, every directory on the way is made a real one
    and every target is replaced, not written through (:func:`real_directory`).
    """
    src = Path(src)
    dst = Path(dst)
    real_src = src.resolve()
    report = CopyReport()
    copier = _FileCopier()
    dst.mkdir(parents=True, exist_ok=True)
    fresh = not any(dst.iterdir())  # nothing to replace: skip per-file checks of the target
    made_dirs = {""}
    for rel in walk_files(src, prune_dirs, exclude, anywhere=True):
        source = os.path.join(src, rel)
        target = os.path.join(dst, rel)
        parent = rel.rpartition("/")[0]
        if parent not in made_dirs:
            if fresh:
                make_dirs(os.path.join(dst, parent))
            else:
                real_directory(dst, parent)
            made_dirs.add(parent)
        if not fresh:
            remove_tree(target)
        st = os.lstat(source)
        if stat.S_ISLNK(st.st_mode):
            link = os.readlink(source)
            resolved = (Path(source).parent / link).resolve()
            if os.path.isabs(link) or not _inside(resolved, real_src):
                report.skipped_links.append(rel)
                continue
            os.symlink(link, target)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # sockets, fifos, devices: never part of a fixture
        copier.copy(source, target, st, report)
    return report


@dataclass
class Workspace:
    """A run's private copy of the fixture."""

    path: Path
    fixture: Path | None
    exclude: list[str]
    copy: CopyReport

    def remove(self) -> None:
        """Delete the workspace directory (idempotent)."""
        remove_tree(self.path)


def create_workspace(scenario: Scenario, root: Path | str | None = None, label: str | None = None) -> Workspace:
    """Copy ``scenario``'s fixture to ``<root>/<suite>-<scenario>[-label]-<random>/``.

    ``root`` defaults to :func:`default_workspaces_root`. A scenario without a fixture
    (artifact-only) gets an empty workspace. The directory is private to the user (0700).
    """
    base = Path(root) if root is not None else default_workspaces_root()
    suffix = f"-{label}" if label else ""
    try:
        base.mkdir(parents=True, exist_ok=True)
        while True:
            # The pid lets the next command remove it should this process be killed.
            path = base / f"{scenario.suite}-{scenario.name}{suffix}-p{os.getpid()}-{secrets.token_hex(4)}"
            try:
                path.mkdir(mode=0o700)
                break
            except FileExistsError:
                continue
        report = CopyReport()
        if scenario.fixture_dir is not None:
            report = copy_tree(scenario.fixture_dir, path, scenario.workspace_exclude)
    except OSError as exc:
        raise WorkspaceError(f"cannot create workspace for {scenario.key}: {exc}") from exc
    return Workspace(path=path.resolve(), fixture=scenario.fixture_dir, exclude=list(scenario.workspace_exclude),
                     copy=report)


def overlay(src: Path, workspace: Path) -> CopyReport:
    """Lay the files of ``src`` over ``workspace`` (the oracle's solution, hidden tests)."""
    return copy_tree(src, workspace, prune_dirs=frozenset({".git", "node_modules", "__pycache__"}))


# --------------------------------------------------------------------------- diff


@dataclass
class DependencyChange:
    file: str
    name: str
    section: str
    before: str | None  # None: added
    after: str | None  # None: removed


@dataclass
class WorkspaceDiff:
    """What a run changed relative to the fixture."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    patch: str = ""  # unified diff text, capped
    truncated: bool = False
    dependency_changes: list[DependencyChange] = field(default_factory=list)

    @property
    def changed_files(self) -> list[str]:
        return sorted({*self.added, *self.modified, *self.deleted})

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.modified or self.deleted)

    def summary(self) -> str:
        return f"{len(self.added)} added, {len(self.modified)} modified, {len(self.deleted)} deleted"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changed_files"] = self.changed_files
        return data


DIFF_FILE_CAP = 512 * 1024  # bytes of one file read for its unified diff
DIFF_LINE_CAP = 20_000  # lines of one file given to difflib
DIFF_DEADLINE_S = 120.0  # wall time of one diff; what is left after it is not shown


class _Side:
    """One side of a changed file, read as far as the diff needs it."""

    def __init__(self, path: Path | None) -> None:
        self.data: bytes | None = None  # None: absent (or not a regular file, see note)
        self.note: str | None = None  # why it is not diffed line by line
        self.size = 0
        if path is None:
            return
        try:
            st = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode):
            try:
                self.data = f"symlink -> {os.readlink(path)}".encode("utf-8", "surrogateescape")
            except OSError:
                self.note = "a link that cannot be read"
        elif not stat.S_ISREG(st.st_mode):
            self.note = "not a regular file (a FIFO, socket or device)"
        elif st.st_size > DIFF_FILE_CAP:
            self.size = st.st_size
            self.note = f"{st.st_size} bytes"
        else:
            self.data = read_regular(path, DIFF_FILE_CAP)
            self.size = len(self.data or b"")


def _as_text(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    if b"\0" in data[:8192]:
        return None
    try:
        lines = data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
    if len(lines) > DIFF_LINE_CAP:
        return None
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"  # keeps unified_diff's output line-structured
    return lines


def _dependency_changes(rel: str, before: bytes | None, after: bytes | None) -> list[DependencyChange]:
    def parse(data: bytes | None) -> dict[tuple[str, str], str]:
        if data is None:
            return {}
        try:
            return {(d.section, d.name): d.spec for d in parse_manifest_text(data.decode("utf-8", "replace"), rel)}
        except ManifestError:
            return {}

    old, new = parse(before), parse(after)
    changes = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            changes.append(DependencyChange(rel, key[1], key[0], old.get(key), new.get(key)))
    return changes


def _changed(a: Path, b: Path) -> bool:
    a_link, b_link = os.path.islink(a), os.path.islink(b)
    if a_link or b_link:
        try:
            return not (a_link and b_link and os.readlink(a) == os.readlink(b))
        except OSError:
            return True
    return not same_content(a, b)


def compute_diff(fixture: Path | None, workspace: Path, exclude: list[str] | tuple[str, ...] = (),
                 max_bytes: int = DEFAULT_DIFF_CAP, deadline_s: float = DIFF_DEADLINE_S) -> WorkspaceDiff:
    """Diff ``workspace`` against ``fixture``.

    The fixture side honours the same exclusions as the copy, so files never copied do not
    count as deleted; on the workspace side only ``ALWAYS_EXCLUDED`` directories are skipped,
    so an agent creating an excluded file name still shows up. Text files get a unified diff;
    binary files, files over :data:`DIFF_FILE_CAP` bytes or :data:`DIFF_LINE_CAP` lines, and
    what is not a regular file get a one-line note. Files are compared a chunk at a time and
    never read past the caps, so memory stays bounded whatever the workspace holds; after
    ``deadline_s`` seconds the rest is left out and said so. The patch keeps at most
    ``max_bytes`` characters and says how many files were left out. File names that are not
    UTF-8 are listed with ``\\udcNN`` escapes.
    """
    stop_at = time.monotonic() + deadline_s
    before = set(walk_files(fixture, ALWAYS_EXCLUDED, exclude, anywhere=True)) if fixture else set()
    after = set(walk_files(workspace, ALWAYS_EXCLUDED))
    added, deleted = sorted(after - before), sorted(before - after)
    modified: list[str] = []
    uncompared = 0
    for rel in sorted(before & after):
        if time.monotonic() > stop_at:
            uncompared += 1
        elif _changed(fixture / rel, workspace / rel):
            modified.append(rel)

    pieces: list[str] = []
    size = 0
    left_out = 0
    dependency_changes: list[DependencyChange] = []
    for rel in sorted({*added, *modified, *deleted}):
        old_path = fixture / rel if rel in before else None
        new_path = workspace / rel if rel in after else None
        if is_manifest(rel) and time.monotonic() <= stop_at:
            dependency_changes += _dependency_changes(
                rel, read_regular(old_path, MANIFEST_CAP) if old_path else None,
                read_regular(new_path, MANIFEST_CAP) if new_path else None)
        if size >= max_bytes or time.monotonic() > stop_at:
            left_out += 1
            continue
        name = valid_utf8(rel)
        old, new = _Side(old_path), _Side(new_path)
        old_lines = None if old.note else _as_text(old.data)
        new_lines = None if new.note else _as_text(new.data)
        if old.note or new.note:
            notes = [f"{side} {s.note}" for side, s in (("a:", old), ("b:", new)) if s.note]
            piece = f"Files a/{name} and b/{name} differ, not shown ({'; '.join(notes)})\n"
        elif old_lines is None or new_lines is None:
            piece = f"Binary files a/{name} and b/{name} differ\n"
        else:
            piece = "".join(difflib.unified_diff(
                old_lines, new_lines,
                fromfile=f"a/{name}" if old_path else "/dev/null",
                tofile=f"b/{name}" if new_path else "/dev/null",
            ))
            piece = valid_utf8(piece)
        if size + len(piece) > max_bytes:
            piece = piece[: max_bytes - size] + "\n"
        pieces.append(piece)
        size += len(piece)
    diff = WorkspaceDiff(added=[valid_utf8(r) for r in added], modified=[valid_utf8(r) for r in modified],
                         deleted=[valid_utf8(r) for r in deleted], dependency_changes=dependency_changes)
    if size >= max_bytes:
        diff.truncated = True
    if left_out:
        diff.truncated = True
        pieces.append(f"... diff truncated: {left_out} more changed file(s) not shown\n")
    if uncompared:
        diff.truncated = True
        pieces.append(f"... diff stopped after {deadline_s:.0f} s: {uncompared} file(s) not compared\n")
    diff.patch = "".join(pieces)
    return diff
