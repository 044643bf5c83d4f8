"""Where installed agents live: a per-user tools directory, one folder per agent and version.

``$ZE_BENCHMARKS_TOOLS_DIR``, else ``$XDG_DATA_HOME/zebench/agents`` (by default
``~/.local/share/zebench/agents``): never the checkout, and shared by every run and every
checkout of the same user. ``<dir>/<agent>/<version>/`` holds an npm prefix
(``node_modules/.bin/<executable>``) or a Python virtual environment (``venv/bin/<executable>``);
an ``installed.json`` written last says the install finished.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness._util.trees import remove_tree

TOOLS_ENV = "ZE_BENCHMARKS_TOOLS_DIR"
MARKER = "installed.json"


@dataclass(frozen=True)
class Package:
    """How an agent is installed: its package manager, package and pinned default version,
    and the executable it provides."""

    manager: str  # "npm" | "pip"
    name: str
    version: str
    executable: str

    def spec(self, version: str | None = None) -> str:
        if self.manager == "none":  # a program the harness does not install
            return self.name
        version = version or self.version
        return f"{self.name}@{version}" if self.manager == "npm" else f"{self.name}=={version}"


class InstallError(RuntimeError):
    """An install failed (the message has the package manager's last lines)."""


def tools_dir() -> Path:
    env = os.environ.get(TOOLS_ENV)
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "zebench" / "agents"


def install_dir(agent: str, version: str) -> Path:
    return tools_dir() / agent / version


def executable_path(agent: str, package: Package, version: str | None = None) -> Path | None:
    """The installed executable of ``agent`` at ``version`` (default: the pinned one), or None."""
    root = install_dir(agent, version or package.version)
    if not (root / MARKER).is_file():
        return None
    path = root / ("node_modules/.bin" if package.manager == "npm" else "venv/bin") / package.executable
    return path if path.exists() else None


def installed_versions(agent: str) -> list[str]:
    root = tools_dir() / agent
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / MARKER).is_file())


def install_command(agent: str, version: str | None = None) -> str:
    """What a person types to install ``agent``."""
    return f"bench agents install {agent}" + (f"@{version}" if version else "")


def install(agent: str, package: Package, version: str | None = None, *, log=None) -> Path:  # noqa: ANN001
    """Install ``package`` at ``version`` for ``agent`` (nothing to do when it is there).
    Returns the executable's path; raises :class:`InstallError` when the package manager fails.
    ``log`` (a callable of one line) is told what runs."""
    version = version or package.version
    found = executable_path(agent, package, version)
    if found is not None:
        return found
    # In place, at its final path (a virtual environment cannot move); the marker, written
    # last, says the install finished: a half-done one is removed and done again.
    root = install_dir(agent, version)
    remove_tree(root)
    root.mkdir(parents=True)
    started = time.monotonic()
    try:
        if package.manager == "npm":
            npm = shutil.which("npm")
            if npm is None:
                raise InstallError("npm is not installed (Node.js 20 or later with npm is needed)")
            steps = [[npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error",
                      package.spec(version)]]
        else:
            steps = [[sys.executable, "-m", "venv", str(root / "venv")],
                     [str(root / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet",
                      "--disable-pip-version-check", package.spec(version)]]
        for argv in steps:
            if log:
                log(" ".join(argv))
            done = subprocess.run(argv, capture_output=True, text=True, cwd=root)
            if done.returncode != 0:
                tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
                raise InstallError(f"{argv[0]} failed (exit {done.returncode}) installing {package.spec(version)}:\n{tail}")
        (root / MARKER).write_text(json.dumps({
            "agent": agent, "package": package.name, "version": version, "manager": package.manager,
            "seconds": round(time.monotonic() - started, 1)}))
    except BaseException:
        remove_tree(root)
        raise
    found = executable_path(agent, package, version)
    if found is None:
        raise InstallError(f"{package.spec(version)} installed, but it has no {package.executable} executable")
    return found
