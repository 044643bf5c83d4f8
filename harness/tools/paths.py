"""Path confinement: every path an agent names must resolve inside its workspace.

Resolution follows symlinks (``Path.resolve``), so a link inside the workspace that points
outside it is refused just like ``../`` or an absolute path elsewhere.
"""

from __future__ import annotations

from pathlib import Path


class PathOutsideWorkspace(ValueError):
    """The path resolves outside the workspace."""


def confine(workspace: Path, path: str, inner_root: str | None = None) -> Path:
    """The resolved absolute path of ``path`` (relative to ``workspace``, or absolute inside it).

    ``inner_root`` is the workspace's path as sandboxed commands see it (``/workspace``): an
    absolute path under it means the same file as the relative path. Raises
    :class:`PathOutsideWorkspace` when the path resolves anywhere else.
    """
    if not isinstance(path, str):
        raise PathOutsideWorkspace(f"path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise PathOutsideWorkspace("path contains a NUL byte")
    root = workspace.resolve()
    text = path.strip() or "."
    if inner_root and inner_root != "/" and (text == inner_root or text.startswith(inner_root.rstrip("/") + "/")):
        text = text[len(inner_root.rstrip("/")):].lstrip("/") or "."
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise PathOutsideWorkspace(f"{path!r} is outside the workspace; use paths relative to the workspace root")
    return resolved


def relative(workspace: Path, resolved: Path) -> str:
    """``resolved`` as the workspace-relative path shown to the model."""
    rel = resolved.relative_to(workspace.resolve()).as_posix()
    return rel or "."
