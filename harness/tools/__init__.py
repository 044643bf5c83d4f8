"""The tools an API agent may call, bound to one sandbox and its workspace.

``Toolset(sandbox, ...)`` offers ``read_file``, ``write_file``, ``list_directory``,
``run_command``, and — only when the scenario allows — ``ask_user`` (it has oracle answers)
and ``fetch_url`` (``allow_fetch_url``). ``Toolset.execute(name, arguments)`` never raises:
every failure (a path outside the workspace, a missing file, bad arguments, a command that
timed out, a call after the run ended) comes back as a :class:`ToolResult` with
``is_error=True`` for the model to read. The original system's camelCase names
(``readFile``, ``listFiles``, ``runCommand``, ...) are accepted as aliases.

``run_command`` runs in the sandbox (:mod:`harness.sandbox`). The file tools run in the
harness on the workspace's host directory: every path is resolved inside the workspace
(symlinks included; ``/workspace/...``, the path commands see, means the same file), and
``write_file`` replaces the file through a new inode, so it never writes through a symlink
or a hard link. Every call holds the sandbox open, so once the sandbox is closed no call is
accepted. Secret values of the harness's environment are redacted from every result.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from harness.models.providers.types import ToolSpec
from harness.sandbox import SandboxClosed
from harness._util.secrets import Redactor
from harness.tools.oracle import Oracle
from harness.tools.paths import PathOutsideWorkspace, confine, relative
from harness._util.trees import make_dirs, read_regular, walk

if TYPE_CHECKING:
    from harness.sandbox import Sandbox

__all__ = ["Toolset", "ToolConfig", "ToolResult", "TOOL_ALIASES", "canonical_tool_name"]

DEFAULT_READ_CAP = 200_000  # characters of a file returned by read_file
DEFAULT_WRITE_CAP = 2_000_000  # bytes write_file accepts
DEFAULT_COMMAND_TIMEOUT_S = 300.0
DEFAULT_COMMAND_OUTPUT_CAP = 32 * 1024  # bytes per stream, head + tail
DEFAULT_LIST_CAP = 1000  # entries

# Directories list_directory does not descend into when listing recursively.
_NOISE_DIRS = {".git", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".venv", "venv", ".tox"}

TOOL_ALIASES = {
    "readFile": "read_file",
    "writeFile": "write_file",
    "listDirectory": "list_directory",
    "listFiles": "list_directory",
    "list_files": "list_directory",
    "runCommand": "run_command",
    "askUser": "ask_user",
    "fetchUrl": "fetch_url",
}

# camelCase argument names of the original tools.
_ARG_ALIASES = {"filePath": "path", "file_path": "path", "dirPath": "path", "directory": "path", "cmd": "command", "url_": "url"}


def canonical_tool_name(name: str) -> str:
    """The snake_case name of a tool, accepting the camelCase aliases."""
    return TOOL_ALIASES.get(name, name)


@dataclass
class ToolResult:
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolConfig:
    """What a scenario enables beyond the base tools: ``ask_user`` answers and ``fetch_url``."""

    oracle_answers: dict[str, str] | None = None
    allow_fetch_url: bool = False


class ToolContext(Protocol):
    """What :meth:`Toolset.for_context` reads of an agent's run (``harness.agents.base.AgentContext``
    has it): the sandbox, the scenario's tool settings and the run's deadline."""

    @property
    def sandbox(self) -> Sandbox: ...

    @property
    def tools(self) -> ToolConfig: ...

    @property
    def deadline(self) -> float | None: ...


class ToolFailure(Exception):
    """A tool could not do what was asked; the message goes back to the model."""


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_SPECS = {
    "read_file": ToolSpec(
        "read_file",
        "Read a UTF-8 text file in the workspace. Paths are relative to the workspace root.",
        _schema({"path": {"type": "string", "description": "File path relative to the workspace root"}}, ["path"]),
    ),
    "write_file": ToolSpec(
        "write_file",
        "Create or overwrite a file in the workspace with the given content. Parent directories are created.",
        _schema(
            {
                "path": {"type": "string", "description": "File path relative to the workspace root"},
                "content": {"type": "string", "description": "The complete new content of the file"},
            },
            ["path", "content"],
        ),
    ),
    "list_directory": ToolSpec(
        "list_directory",
        "List the entries of a directory in the workspace (directories end with '/').",
        _schema(
            {
                "path": {"type": "string", "description": "Directory relative to the workspace root", "default": "."},
                "recursive": {"type": "boolean", "description": "List the whole tree below path", "default": False},
            },
            [],
        ),
    ),
    "run_command": ToolSpec(
        "run_command",
        "Run a shell command in the workspace root and return its exit code and output. "
        "Use it to run tests, linters and scripts. The command has a timeout; output is truncated in the middle when long.",
        _schema({"command": {"type": "string", "description": "The shell command to run"}}, ["command"]),
    ),
    "ask_user": ToolSpec(
        "ask_user",
        "Ask the user a clarifying question about the task and get their answer.",
        _schema({"question": {"type": "string", "description": "The question to ask"}}, ["question"]),
    ),
    "fetch_url": ToolSpec(
        "fetch_url",
        "Fetch a public http(s) URL and return the response body as text (size-capped).",
        _schema({"url": {"type": "string", "description": "An http:// or https:// URL"}}, ["url"]),
    ),
}


class Toolset:
    """The tools of one run, confined to ``sandbox`` and its workspace."""

    def __init__(
        self,
        sandbox: "Sandbox",
        *,
        oracle_answers: dict[str, str] | None = None,
        allow_fetch_url: bool = False,
        command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S,
        command_output_cap: int = DEFAULT_COMMAND_OUTPUT_CAP,
        read_cap: int = DEFAULT_READ_CAP,
        write_cap: int = DEFAULT_WRITE_CAP,
        deadline: float | None = None,
        fetch_resolver: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.workspace = sandbox.workspace
        self.oracle = Oracle(dict(oracle_answers)) if oracle_answers is not None else None
        self.allow_fetch_url = allow_fetch_url
        self.command_timeout_s = command_timeout_s
        self.command_output_cap = command_output_cap
        self.read_cap = read_cap
        self.write_cap = write_cap
        self.deadline = deadline
        self._fetch_resolver = fetch_resolver
        self._redactor = Redactor.from_environment()

    @classmethod
    def for_context(cls, ctx: ToolContext, **overrides: Any) -> "Toolset":
        """The tool set for an agent run: its sandbox, deadline, and what the scenario enables."""
        kwargs: dict[str, Any] = {
            "oracle_answers": ctx.tools.oracle_answers,
            "allow_fetch_url": ctx.tools.allow_fetch_url,
            "deadline": ctx.deadline,
        }
        kwargs.update(overrides)
        return cls(ctx.sandbox, **kwargs)

    def _confine(self, path: str) -> Path:
        return confine(self.workspace, path, self.sandbox.inner_workspace)

    # -- what the model is offered ---------------------------------------------------------
    @property
    def names(self) -> list[str]:
        names = ["read_file", "write_file", "list_directory", "run_command"]
        if self.oracle is not None:
            names.append("ask_user")
        if self.allow_fetch_url:
            names.append("fetch_url")
        return names

    @property
    def specs(self) -> list[ToolSpec]:
        return [_SPECS[n] for n in self.names]

    @property
    def questions(self) -> list[dict[str, str]]:
        """Every ``ask_user`` exchange, in order."""
        return list(self.oracle.log) if self.oracle else []

    # -- running a call --------------------------------------------------------------------
    def execute(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run tool ``name``; failures come back as ``is_error`` results, never as exceptions."""
        canonical = canonical_tool_name(name)
        if canonical not in self.names:
            offered = ", ".join(self.names)
            return ToolResult(f"unknown or unavailable tool {name!r}; available tools: {offered}", True)
        if arguments is None:
            return ToolResult(
                f"the arguments of {name!r} were not a valid JSON object; call it again with a JSON object "
                f"matching its schema",
                True,
            )
        if not isinstance(arguments, dict):
            return ToolResult(f"the arguments of {name!r} must be a JSON object", True)
        args = {_ARG_ALIASES.get(k, k): v for k, v in arguments.items()}
        try:
            with self.sandbox.operation():
                result = getattr(self, f"_{canonical}")(**args)
            return ToolResult(self._redactor.text(result.content), result.is_error)
        except SandboxClosed as exc:
            return ToolResult(f"refused: {exc}", True)
        except TypeError as exc:
            return ToolResult(f"bad arguments for {canonical}: {exc}", True)
        except PathOutsideWorkspace as exc:
            return ToolResult(f"refused: {exc}", True)
        except ToolFailure as exc:
            return ToolResult(str(exc), True)
        except OSError as exc:
            return ToolResult(f"{canonical} failed: {exc.strerror or exc}", True)
        except Exception as exc:  # a tool bug must not end the run; the model sees it
            return ToolResult(self._redactor.text(f"{canonical} failed unexpectedly: {type(exc).__name__}: {exc}"), True)

    # -- the tools -------------------------------------------------------------------------
    def _read_file(self, path: str) -> ToolResult:
        target = self._confine(path)
        if target.is_dir():
            raise ToolFailure(f"{path!r} is a directory; use list_directory")
        if not target.exists():
            raise ToolFailure(f"no such file: {path!r}")
        data = read_regular(target, self.read_cap * 4 + 1)
        if data is None:
            raise ToolFailure(f"{path!r} is not a regular file (a FIFO, socket or device is not read)")
        text = data.decode("utf-8", errors="replace")
        if len(text) > self.read_cap:
            size = target.stat().st_size
            text = text[: self.read_cap] + f"\n... [truncated: file is {size} bytes, first {self.read_cap} characters shown]"
        return ToolResult(text)

    def _write_file(self, path: str, content: str) -> ToolResult:
        if not isinstance(content, str):
            raise ToolFailure("content must be a string")
        data = content.encode("utf-8")
        if len(data) > self.write_cap:
            raise ToolFailure(f"content is {len(data)} bytes; write_file accepts at most {self.write_cap}")
        target = self._confine(path)
        if target == self.workspace or target.is_dir():
            raise ToolFailure(f"{path!r} is a directory")
        missing = next((p for p in [target.parent, *target.parent.parents] if p.exists()), self.workspace)
        make_dirs(target.parent)
        # The parent may have been created through a path the model controls; check again.
        target = confine(self.workspace, str(target))
        _replace_file(target, data)
        # What the tool made belongs to the uid the agent's commands run as.
        created = target.parent.relative_to(missing).parts if target.parent != missing else ()
        self.sandbox.adopt(missing / created[0] if created else target)
        return ToolResult(f"wrote {len(data)} bytes to {relative(self.workspace, target)}")

    def _list_directory(self, path: str = ".", recursive: bool = False) -> ToolResult:
        target = self._confine(path)
        if not target.exists():
            raise ToolFailure(f"no such directory: {path!r}")
        if not target.is_dir():
            raise ToolFailure(f"{path!r} is a file; use read_file")
        entries: list[str] = []
        truncated = False
        if recursive:
            for dirpath, dirnames, filenames in walk(target):
                dirnames[:] = sorted(d for d in dirnames if d not in _NOISE_DIRS)
                base = Path(dirpath)
                for d in dirnames:
                    entries.append(relative(self.workspace, base / d) + "/")
                for f in sorted(filenames):
                    entries.append(relative(self.workspace, base / f))
                if len(entries) > DEFAULT_LIST_CAP:
                    truncated = True
                    break
            entries.sort()
        else:
            for child in sorted(target.iterdir(), key=lambda p: p.name):
                # A link is listed as itself: whether its target is a directory is not the
                # workspace's business (it may point at the host).
                entries.append(child.name + ("@" if child.is_symlink() else "/" if child.is_dir() else ""))
        if len(entries) > DEFAULT_LIST_CAP:
            entries, truncated = entries[:DEFAULT_LIST_CAP], True
        text = "\n".join(entries) if entries else "(empty directory)"
        if truncated:
            text += f"\n... [listing truncated at {DEFAULT_LIST_CAP} entries]"
        return ToolResult(text)

    def _run_command(self, command: str) -> ToolResult:
        if not isinstance(command, str) or not command.strip():
            raise ToolFailure("command must be a non-empty string")
        timeout = self.command_timeout_s
        if self.deadline is not None:
            timeout = min(timeout, max(1.0, self.deadline - time.monotonic()))
        result = self.sandbox.run(command, timeout_s=timeout, output_cap=self.command_output_cap)
        parts = []
        if result.timed_out:
            parts.append(f"timed out after {timeout:.0f} s; the command and its children were killed")
        elif result.killed_by == "memory":
            parts.append(f"exit code: {result.exit_code} (killed: the command reached its memory limit)")
        elif result.killed_by == "processes":
            parts.append(f"exit code: {result.exit_code} (the command reached its process limit)")
        elif result.killed_by == "closed":
            parts.append("killed: the run is over")
        else:
            parts.append(f"exit code: {result.exit_code}")
        if result.stdout:
            parts.append("stdout:\n" + result.stdout)
        if result.stderr:
            parts.append("stderr:\n" + result.stderr)
        return ToolResult("\n".join(parts), is_error=result.timed_out or result.killed_by is not None)

    def _ask_user(self, question: str) -> ToolResult:
        if not isinstance(question, str) or not question.strip():
            raise ToolFailure("question must be a non-empty string")
        assert self.oracle is not None
        return ToolResult(self.oracle.ask(question))

    def _fetch_url(self, url: str) -> ToolResult:
        import httpx

        from harness.tools.fetch import FetchRefused, fetch_text

        kwargs: dict[str, Any] = {}
        if self._fetch_resolver is not None:
            kwargs["resolver"] = self._fetch_resolver
        try:
            status, text, truncated = fetch_text(url, **kwargs)
        except FetchRefused as exc:
            raise ToolFailure(f"refused: {exc}") from exc
        except httpx.HTTPError as exc:
            raise ToolFailure(f"fetch failed: {type(exc).__name__}: {exc}") from exc
        note = "\n... [truncated]" if truncated else ""
        return ToolResult(f"HTTP {status}\n{text}{note}", is_error=status >= 400)


def _replace_file(target: Path, data: bytes) -> None:
    """Write ``data`` as a new file that replaces ``target`` (never through a link it is)."""
    tmp = target.parent / f".zebench-write-{os.urandom(6).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.chmod(tmp, os.stat(target, follow_symlinks=False).st_mode & 0o7777)
        except FileNotFoundError:
            pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
