"""Installed agents: real agent CLIs (Claude Code, Codex, ...) run in the sandbox, one seam for all.

An installed agent brings its own tool loop; the harness installs it (:mod:`.tools`), starts it
non-interactively in the run's sandbox against its model endpoint, and reads what it reports.
Each agent is described once by an :class:`AgentSpec`:

- its package and pinned default version (``--agent codex@0.171.0`` picks another);
- the API its model speaks (``anthropic``, ``openai``, ``gemini``), the variable of its key
  and its provider's default base URL, overridden by ``--base-url`` in that API's own
  convention (OpenAI's includes ``/v1``, Anthropic's and Gemini's do not);
- :meth:`AgentSpec.launch`: the command line with its permission prompts off, its
  environment, its configuration files (in a private home, outside the workspace) and the
  instruction files a specialist reaches it through (``CLAUDE.md``, ``AGENTS.md``, ...);
- :meth:`AgentSpec.parse`: its machine-readable output turned into the run's transcript (tool
  calls and results, as the tool loop records them) and telemetry (turns, tool calls, tokens,
  cost when it reports one, else from the price table, else unknown; its final answer; the
  error that ended it).

:class:`InstalledAgent` does the rest the same way for every agent. Under ``bwrap`` the CLI
runs without the host's network, behind the egress relay (:mod:`harness.sandbox.egress`): its
model endpoint is the only destination, and the real key stays in the harness; so it does
under ``podman`` and ``docker``, in a container without a network (``--network none``) holding
the relay's socket. With the ``none`` backend it reaches the endpoint directly, with its key
in its environment. The instruction files are taken out of the workspace (the fixture's own
version put back) before the diff and grading: they are not the agent's work. The version that
ran, the specialist's channel and the egress record are in the run's metadata (``agentInfo``,
``egress``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.base import AgentContext, AgentResult, SandboxNeeds
from harness.agents.installed.tools import Package, executable_path, install_command, install_dir
from harness.agents.registry import register_agent
from harness._util.ownership import owned
from harness.sandbox.identity import resolve_identity
from harness._util.secrets import is_secret_name
from harness._util.trees import read_regular, remove_tree

AGENT_HOME = "/zebench/agent-home"  # the agent's private home, inside the sandbox (bwrap, containers)
RELAYED_KINDS = ("bwrap", "podman", "docker")  # the backends that run the agent behind the egress relay
PLACEHOLDER_KEY = "zebench-relay-holds-the-key"
OUTPUT_CAP = 32 * 1024 * 1024
TRANSCRIPT_TEXT_CAP = 4000

DEFAULT_BASE_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1",
                     "gemini": "https://generativelanguage.googleapis.com"}
KEY_VARS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
# The header each API takes its key in, as the relay sets it upstream.
KEY_HEADERS = {"anthropic": ("x-api-key", "{key}"), "openai": ("Authorization", "Bearer {key}"),
               "gemini": ("x-goog-api-key", "{key}")}


class AgentNotInstalled(RuntimeError):
    """The agent's CLI is not installed at the version asked for (the message says how to)."""


@dataclass
class Task:
    """What an agent is asked to do in one run, with where it may reach its model."""

    prompt: str
    model: str | None
    api: str
    base_url: str  # in the API's own convention, as the agent must use it
    api_key: str  # what the agent sees (a placeholder behind the relay)
    workspace: str  # the workspace's path inside the sandbox
    home: str  # the agent's private, writable home inside the sandbox
    executable: str = ""  # the agent's program, as the sandbox sees it
    max_turns: int = 50
    max_cost_usd: float | None = None
    specialist: str | None = None  # the specialist's instructions
    specialist_name: str | None = None

    def skill(self) -> tuple[str, str] | None:
        """The specialist as a skill (``SKILL.md`` in a folder of its name), for agents that
        load skills: (folder name, file text), or None without a specialist."""
        if not self.specialist:
            return None
        name = re.sub(r"[^a-z0-9-]+", "-", (self.specialist_name or "specialist").lower()).strip("-") or "specialist"
        first = next((line.strip() for line in self.specialist.splitlines() if line.strip()), name)
        description = first.lstrip("#").strip()[:200].replace('"', "'")
        return name, f'---\nname: {name}\ndescription: "{description}"\n---\n\n{self.specialist}\n'


@dataclass
class Launch:
    """How to start the agent for a :class:`Task`."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    home_files: dict[str, str] = field(default_factory=dict)  # relative to the home -> content
    workspace_files: dict[str, str] = field(default_factory=dict)  # instruction files, out before grading
    channel: str | None = None  # where the specialist went ("CLAUDE.md", "--append-system-prompt", ...)
    model: str | None = None  # the model the agent asks for when the task names none (its default)
    cleanup: tuple[str, ...] = ()  # what the agent leaves in the workspace that is not its work (globs)


@dataclass
class Output:
    """What the agent left: its stdout and stderr, its exit, and its home's files."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    home: Path  # the host directory of the agent's home

    def home_file(self, rel: str, limit: int = OUTPUT_CAP) -> str | None:
        data = read_regular(self.home / rel, limit)
        return None if data is None else data.decode("utf-8", "replace")


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines output (other lines, such as log lines, are skipped)."""
    events = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def cap_text(text: str, limit: int = TRANSCRIPT_TEXT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} characters omitted]"


class AgentSpec(ABC):
    """One installed agent, described once (see the module docstring)."""

    name: str
    package: Package
    api: str  # anthropic | openai | gemini
    summary: str = ""
    # Variables of the harness's environment handed to the CLI (its own settings), never one
    # whose name says it is a secret: the key reaches it only as the launch sets it.
    env_prefixes: tuple[str, ...] = ()

    @abstractmethod
    def launch(self, task: Task) -> Launch:
        """The command line, environment and files that run ``task``."""

    @abstractmethod
    def parse(self, output: Output) -> AgentResult:
        """The run's result from what the agent reported (status, transcript, telemetry)."""

    def provider_failure(self, output: Output) -> str | None:
        """The line saying the agent's model provider failed (not the agent), or None."""
        return None


_SPECS: dict[str, AgentSpec] = {}


def register_spec(spec: AgentSpec) -> None:
    """Make ``spec`` an agent (``--agent NAME[@VERSION]``). Every installed agent, once all are
    loaded: ``harness.agents.installed_specs()``."""
    _SPECS[spec.name] = spec
    register_agent(spec.name, lambda model=None, **options: InstalledAgent(spec, model=model, **options))


_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+\-_]*$")


class InstalledAgent:
    """Runs an :class:`AgentSpec`'s CLI in the run's sandbox (see the module docstring)."""

    uses_reference_solution = False

    def __init__(self, spec: AgentSpec, model: str | None = None, version: str | None = None,
                 base_url: str | None = None, executable: str | None = None, **_: Any) -> None:
        if version is not None and not _VERSION.match(version):
            raise ValueError(f"--agent {spec.name}@{version}: not a version")
        self.spec = spec
        self.name = spec.name
        self.model = model
        self.version = version or spec.package.version
        self.base_url = base_url
        env_override = os.environ.get(f"ZE_BENCHMARKS_{spec.name.upper().replace('-', '_')}_BIN")
        self.executable_override = executable or env_override
        self._home: Path | None = None
        self._relay: Any = None
        self._kind = "none"

    # -- what it is -----------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        """``name@version`` (or ``name@custom`` for an executable given by path): part of the
        run's ``config_hash``."""
        return f"{self.name}@{'custom' if self.executable_override else self.version}"

    def executable(self) -> str:
        if self.executable_override:
            return os.path.realpath(self.executable_override)
        found = executable_path(self.name, self.spec.package, self.version)
        if found is None:
            raise AgentNotInstalled(f"the {self.name} agent is not installed at {self.version}: run "
                                    f"`{install_command(self.name, None if self.version == self.spec.package.version else self.version)}`")
        return str(found)

    def install_root(self) -> Path:
        """The folder holding the agent's program and what it needs (visible read-only)."""
        if self.executable_override:
            return Path(self.executable()).parent
        self.executable()  # installed, or AgentNotInstalled
        return install_dir(self.name, self.version)

    def real_key(self) -> str | None:
        return os.environ.get(KEY_VARS[self.spec.api]) or None

    def endpoint(self) -> str:
        return (self.base_url or DEFAULT_BASE_URLS[self.spec.api]).rstrip("/")

    def _local_endpoint(self) -> bool:
        host = re.sub(r"^https?://", "", self.endpoint()).split("/", 1)[0].split(":", 1)[0]
        return host in ("127.0.0.1", "localhost", "::1", "[::1]")

    def preflight(self) -> str | None:
        """Why every run would fail (not installed, no key for a remote endpoint), or None."""
        try:
            self.executable()
        except AgentNotInstalled as exc:
            return str(exc)
        if self.real_key() is None and not self._local_endpoint():
            return f"the {self.name} agent needs {KEY_VARS[self.spec.api]} for {self.endpoint()}"
        return None

    def price(self):  # -> ModelPrice | None
        """The price of the model asked for (None for the CLI's own default, or an unpriced one)."""
        from harness.models.pricing import price_for

        return price_for(self.spec.api, self.model) if self.model else None

    # -- its sandbox ----------------------------------------------------------------------------
    def sandbox_needs(self, kind: str = "none") -> SandboxNeeds:
        """Its installation (read-only), a private home (writable), and the way to its model:
        the egress relay under ``bwrap`` and in a container, the network with ``none``."""
        from harness.sandbox import Mount
        from harness.sandbox.egress import EgressRelay, Upstream

        self._kind = kind
        self._home = Path(tempfile.mkdtemp(prefix=owned("zebench-agent-home-")))
        resolve_identity().adopt(self._home)  # the agent's own, as the uid its commands run as
        relayed = kind in RELAYED_KINDS
        mounts = [Mount(self._home, AGENT_HOME if relayed else None, writable=True)]
        try:
            mounts.append(Mount(self.install_root().resolve()))
        except AgentNotInstalled:
            pass
        if not relayed:
            return SandboxNeeds(network=True, mounts=tuple(mounts))
        key = self.real_key()
        header, template = KEY_HEADERS[self.spec.api]
        headers = ((header, template.format(key=key)),) if key else ()
        self._relay = EgressRelay(Upstream(self.endpoint(), headers))
        return SandboxNeeds(network=False, mounts=tuple(mounts) + self._relay.mounts(), env=self._relay.env())

    def release(self) -> None:
        """After the run: stop the relay and remove the private home."""
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self._home is not None:
            remove_tree(self._home)
            self._home = None

    # -- a run ----------------------------------------------------------------------------------
    def run(self, ctx: AgentContext) -> AgentResult:
        try:
            executable = self.executable()
        except AgentNotInstalled as exc:
            return AgentResult(status="error", error=str(exc), model=self.model, error_kind="infra")
        if self._home is None:
            self.sandbox_needs(ctx.sandbox.kind)
        home_inner = AGENT_HOME if self._kind in RELAYED_KINDS else str(self._home)
        relayed = self._relay is not None
        task = Task(prompt=ctx.prompt, model=ctx.model or self.model, api=self.spec.api,
                    base_url=self._relay.upstream.inner_base_url if relayed else self.endpoint(),
                    api_key=PLACEHOLDER_KEY if relayed or not self.real_key() else self.real_key(),
                    workspace=ctx.sandbox.inner_workspace, home=home_inner, max_turns=ctx.budgets.max_turns,
                    max_cost_usd=ctx.budgets.max_cost_usd, specialist=ctx.system_prompt, executable=executable,
                    specialist_name=ctx.specialist_name)
        launch = self.spec.launch(task)
        launch.argv[0] = executable if launch.argv[0] == self.spec.package.executable else launch.argv[0]
        for rel, text in launch.home_files.items():
            target = self._home / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, "utf-8")
        ctx.sandbox.adopt(self._home)
        delivered = _deliver(ctx, launch.workspace_files)
        timeout = ctx.remaining_s()
        argv = self._relay.wrap(launch.argv) if relayed else launch.argv
        settings = {k: v for k, v in os.environ.items()
                    if self.spec.env_prefixes and k.startswith(self.spec.env_prefixes) and not is_secret_name(k)}
        env = {**settings, "HOME": home_inner, **launch.env}
        try:
            completed = ctx.sandbox.run_argv(argv, timeout_s=max(1.0, timeout), env=env, output_cap=OUTPUT_CAP)
        finally:
            delivered.restore()
            _clean(ctx.workspace, launch.cleanup)
        output = Output(completed.stdout, completed.stderr, completed.exit_code, completed.timed_out, self._home)
        result = self.spec.parse(output)
        result.model = result.model or task.model or launch.model
        if completed.timed_out or completed.killed_by == "closed":
            result.status = "timeout"
            result.error = f"{self.name} did not finish before the deadline ({completed.duration_ms / 1000:.0f} s)"
        elif result.status != "completed" and (failure := self.spec.provider_failure(output)):
            result.status, result.error_kind = "error", "infra"
            result.error = f"{self.name}'s model provider failed, not the agent: {failure}"
        if result.cost_usd is None and result.model:
            result.cost_usd = _priced(self.spec.api, result)
        info = {"agent": self.name, "version": self.version if not self.executable_override else "custom",
                "package": self.spec.package.spec(self.version), "api": self.spec.api,
                "specialistChannel": launch.channel if ctx.system_prompt else None}
        result.metadata = {"agentInfo": info}
        if relayed:
            result.metadata["egress"] = self._relay.report()
        return result


def _priced(api: str, result: AgentResult) -> float | None:
    """The cost of what the agent reported, from the price table (None, with a warning, when
    the table has no price for the model)."""
    from harness.models.pricing import cost_for_usage
    from harness.models.providers.types import Usage

    return cost_for_usage(api, result.model or "", Usage(
        input_tokens=result.tokens_in, output_tokens=result.tokens_out,
        cache_read_tokens=result.cache_read_tokens, cache_write_tokens=result.cache_write_tokens))


@dataclass
class _Delivered:
    """Instruction files put in the workspace for the agent, and how to take them out."""

    workspace: Path
    originals: dict[str, bytes | None]

    def restore(self) -> None:
        for rel, original in self.originals.items():
            target = self.workspace / rel
            remove_tree(target)
            if original is not None:
                target.write_bytes(original)


def _clean(workspace: Path, patterns: tuple[str, ...]) -> None:
    """Remove what matches ``patterns`` at the top of the workspace (the agent's own files)."""
    for pattern in patterns:
        for path in workspace.glob(pattern):
            if path.parent == workspace:
                remove_tree(path)


def _deliver(ctx: AgentContext, files: dict[str, str]) -> _Delivered:
    """Write the instruction files (after the fixture's own version, when it has one); they are
    taken out again after the run."""
    delivered = _Delivered(ctx.workspace, {})
    for rel, text in files.items():
        target = ctx.workspace / rel
        original = read_regular(target) if target.exists() else None
        delivered.originals[rel] = original
        body = (original.decode("utf-8", "replace") + "\n\n" if original else "") + text
        remove_tree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, "utf-8")
        ctx.sandbox.adopt(target)
    return delivered
