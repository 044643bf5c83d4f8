"""A scripted model: what it answers at each turn of a conversation, in the agent's own tools.

A script is a JSON or YAML file (or a dict) of steps, played in order; step ``n`` answers the
request that carries ``n`` earlier answers of the model, so the script follows the
conversation whatever the agent does in between::

    steps:
      - write: {path: pagekit/paginator.py, content_file: fixed_paginator.py}
      - run: python3 -m pytest -q
      - say: Fixed the off-by-one errors.

- ``write: {path, content | content_file}``: write a file with the agent's own tool for it
  (``write_file``, ``Write``, ``write``, ``create_file``, ...); with a write tool that takes an
  absolute ``file_path`` (Claude Code's, Qwen Code's), which refuse to replace a file they
  have not read, the file is read first (one more answer);
  ``content_file`` is read relative to the script;
  Codex's ``apply_patch`` gets a patch that adds the file whole;
- ``run: COMMAND``: run a shell command with the agent's own tool for it (``run_command``,
  ``Bash``, ``shell``, ``run_shell_command``, ``exec_command``, ...);
- ``call: {name, arguments}``: call a tool by its name, with these arguments;
- ``say: TEXT``: answer with text and no tool call: the agent's final answer.

With ``if_sent: TEXT`` the script plays ``steps`` when the agent's request carries TEXT (its
specialist's instructions reached the model), and the steps under ``otherwise`` when not: a
model that knows the fix only when the specialist told it.

When the script has no step left, the model says ``done``. A request that asks for JSON of a
schema (Gemini CLI's router) gets an instance of the schema. A request that offers no tool
gets the step as text (:meth:`Script.as_text`): Aider reads a file's whole new content from a
fenced block under its path, mini-swe-agent runs the one ``bash`` block of each answer.

How a step becomes a tool call depends on what the request offers: :func:`pick_tool` finds
the agent's tool by name and fills its parameters by their names in the tool's schema
(``file_path`` or ``path``, ``content`` or ``file_text``, a command as a string or a list).
A path is made absolute under the workspace (``/workspace`` by default) where the tool's
parameter asks for an absolute path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

WRITE_TOOLS = ("write_file", "write", "writefile", "create_file", "createfile", "write_to_file")
RUN_TOOLS = ("run_command", "bash", "shell", "run_shell_command", "exec_command", "execute_bash", "execute_command",
             "terminal", "run_terminal_cmd")
PATH_PARAMS = ("file_path", "absolute_path", "path", "filepath", "filename", "target_file")
CONTENT_PARAMS = ("content", "file_text", "text", "contents", "new_content")
COMMAND_PARAMS = ("command", "cmd", "commands", "script")
ABSOLUTE_PARAMS = ("file_path", "absolute_path")
# Tools that read a file: offered beside a write tool that wants an absolute path (Claude
# Code's ``Write``, Qwen Code's ``write_file``), which refuses to replace a file it has not read.
READ_TOOLS = ("Read", "read_file")


class ScriptError(ValueError):
    """A script that cannot be played (the message names the step and the field)."""


@dataclass(frozen=True)
class Tool:
    """A tool a request offers: its name and the JSON Schema of its parameters."""

    name: str
    parameters: dict[str, Any] = field(default_factory=dict)
    freeform: bool = False  # a custom tool taking raw text (Codex's apply_patch)

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties") if isinstance(self.parameters, dict) else None
        return props if isinstance(props, dict) else {}


@dataclass(frozen=True)
class Call:
    """A tool call the model makes. ``arguments`` is an object, or text for a freeform tool."""

    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class Answer:
    """One answer: text, tool calls, or both."""

    text: str = ""
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Step:
    kind: str  # write | run | call | say
    value: Any


SUBMIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # how mini-swe-agent is told the task is done


@dataclass
class Script:
    steps: list[Step]
    workspace: str = "/workspace"
    text_format: str = "auto"  # auto | whole | bash: how steps read as text (see Script.as_text)
    if_sent: str | None = None  # play ``steps`` only when the agent's requests carry this text
    otherwise: list[Step] | None = None  # played when they do not

    def for_request(self, sent: str) -> "Script":
        """The script to play for a request whose body reads ``sent``: itself, or the
        ``otherwise`` branch when ``if_sent`` is not in it."""
        if self.if_sent is None or self.if_sent in sent:
            return self
        return Script(self.otherwise or [], self.workspace, self.text_format)

    def answer(self, turn: int, tools: list[Tool], json_schema: dict[str, Any] | None = None,
               system: str = "", submit: bool = False) -> Answer:
        """The answer to the request that follows ``turn`` earlier answers. A request asking for
        JSON of a schema (a router's question) gets an instance of it. A request without tools
        gets the step as text (:meth:`as_text`): agents that edit through text (Aider) or run
        the commands of fenced blocks (mini-swe-agent) read it so. ``submit``: the agent ends
        its task with a command (mini-swe-agent): the final answer is that command."""
        if json_schema:
            return Answer(text=json.dumps(instance_of(json_schema)))
        if not tools:
            if turn >= len(self.steps):
                return Answer(text="done")
            return Answer(text=self.as_text(self.steps[turn], system))
        answers = self.answers_for(tools, upto=turn)
        answer = answers[turn] if turn < len(answers) else Answer(text="done")
        if submit and not answer.calls:
            tool = pick_tool(tools, RUN_TOOLS)
            if tool is not None:
                return Answer(text=answer.text, calls=(self.call_for(Step("run", SUBMIT_COMMAND), tools),))
        return answer

    def as_text(self, step: Step, system: str = "") -> str:
        """A step as an answer in text. Where the agent's instructions ask for one bash block
        per answer (mini-swe-agent), every step is a command: a write is a here-document, the
        final answer the command that says the task is done. Else (Aider's "whole" edit
        format) a write is the file's path and its whole content in a fence, a command a
        fenced shell block."""
        bash_only = self.text_format == "bash" or (self.text_format == "auto" and "```bash" in system)
        if step.kind == "say":
            return f"```bash\n{SUBMIT_COMMAND}\n```" if bash_only else str(step.value)
        if step.kind == "write":
            content = step.value["content"] if step.value["content"].endswith("\n") else step.value["content"] + "\n"
            if bash_only:
                return f"Writing {step.value['path']}.\n\n```bash\n{_heredoc(step.value)}\n```"
            return f"{step.value['path']}\n```\n{content}```"
        if step.kind == "run":
            return f"Running a command.\n\n```bash\n{step.value}\n```"
        return json.dumps(step.value)

    def answers_for(self, tools: list[Tool], upto: int | None = None) -> list[Answer]:
        """The script's answers with the tools offered (as far as answer ``upto``, when given).
        A step is one answer, except a write with a tool that refuses to replace a file it has
        not read (Claude Code's ``Write``): the file is read first, in an answer of its own."""
        answers: list[Answer] = []
        for step in self.steps:
            if upto is not None and len(answers) > upto:
                break
            if step.kind == "say":
                answers.append(Answer(text=str(step.value)))
                continue
            if step.kind == "write":
                read = self._read_before_write(step, tools)
                if read is not None:
                    answers.append(Answer(calls=(read,)))
                    if upto is not None and len(answers) > upto:
                        break
            answers.append(Answer(calls=(self.call_for(step, tools),)))
        return answers

    def _read_before_write(self, step: Step, tools: list[Tool]) -> Call | None:
        write = pick_tool(tools, WRITE_TOOLS)
        if write is None or (_param(write, PATH_PARAMS) or "") not in ABSOLUTE_PARAMS:
            return None
        read = pick_tool(tools, READ_TOOLS)
        if read is None:
            return None
        param = _param(read, PATH_PARAMS) or "file_path"
        return Call(read.name, {param: self._path(step.value["path"], param)})

    def _path(self, path: str, param: str) -> str:
        if param in ABSOLUTE_PARAMS and not path.startswith("/"):
            return f"{self.workspace.rstrip('/')}/{path}"
        return path

    def call_for(self, step: Step, tools: list[Tool]) -> Call:
        """The tool call that carries out ``step`` with the tools offered."""
        if step.kind == "call":
            return Call(step.value["name"], dict(step.value.get("arguments") or {}))
        if step.kind == "write":
            tool = pick_tool(tools, WRITE_TOOLS)
            patch = pick_tool(tools, ("apply_patch",)) if tool is None else None
            if patch is not None:
                return Call(patch.name, _patch(step.value) if patch.freeform
                            else {(_param(patch, ("input", "patch")) or "input"): _patch(step.value)})
            if tool is None and pick_tool(tools, RUN_TOOLS) is not None:
                return self.call_for(Step("run", _heredoc(step.value)), tools)  # a shell is all it has
            if tool is None:
                raise ScriptError(f"no tool to write a file among {[t.name for t in tools]}")
            path_param = _param(tool, PATH_PARAMS) or "path"
            return Call(tool.name, {path_param: self._path(step.value["path"], path_param),
                                    (_param(tool, CONTENT_PARAMS) or "content"): step.value["content"]})
        tool = pick_tool(tools, RUN_TOOLS)
        if tool is None:
            raise ScriptError(f"no tool to run a command among {[t.name for t in tools]}")
        param = _param(tool, COMMAND_PARAMS) or "command"
        spec = tool.properties.get(param) or {}
        command: Any = ["bash", "-lc", step.value] if spec.get("type") == "array" else step.value
        return Call(tool.name, {param: command})


def instance_of(schema: Any) -> Any:
    """A small value that satisfies a JSON Schema (Gemini's type names in capitals too): the
    first of an enum, the minimum of a number, every property of an object."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance_of(schema[key][0])
    kind = schema.get("type")
    kind = (kind[0] if isinstance(kind, list) and kind else kind or "object").lower()
    if kind == "object":
        return {name: instance_of(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance_of(schema["items"])] * int(schema.get("minItems") or 0) if schema.get("items") else []
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "scripted"


def _heredoc(write: dict[str, Any]) -> str:
    """A shell command that writes the whole file (for an agent whose only tool is a shell)."""
    content = write["content"] if write["content"].endswith("\n") else write["content"] + "\n"
    path = write["path"]
    return f"mkdir -p \"$(dirname '{path}')\" && cat > '{path}' <<'ZEBENCH_EOF'\n{content}ZEBENCH_EOF"


def _patch(write: dict[str, Any]) -> str:
    """An ``apply_patch`` patch (Codex's file tool) that writes the whole file: ``Add File``
    writes it whether it exists or not."""
    lines = write["content"].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "".join(f"+{line}\n" for line in lines)
    return f"*** Begin Patch\n*** Add File: {write['path']}\n{body}*** End Patch\n"


def pick_tool(tools: list[Tool], names: tuple[str, ...]) -> Tool | None:
    """The first of ``names`` (any case, ignoring ``_``) the request offers."""
    def key(name: str) -> str:
        return name.lower().replace("_", "").replace("-", "")

    offered = {key(t.name): t for t in tools}
    return next((offered[key(n)] for n in names if key(n) in offered), None)


def _param(tool: Tool, names: tuple[str, ...]) -> str | None:
    props = {p.lower(): p for p in tool.properties}
    return next((props[n.lower()] for n in names if n.lower() in props), None)


def _parse_steps(steps_data: Any, base: Path | None, label: str) -> list[Step]:
    if not isinstance(steps_data, list):
        raise ScriptError(f"{label}: a list of steps is expected")
    steps = []
    for i, raw in enumerate(steps_data):
        where = f"{label}[{i}]"
        if not isinstance(raw, dict) or len(raw) != 1:
            raise ScriptError(f"{where}: a step is one of write, run, call, say")
        kind, value = next(iter(raw.items()))
        if kind == "say" or kind == "run":
            if not isinstance(value, str):
                raise ScriptError(f"{where}.{kind}: must be a string")
        elif kind == "write":
            if not isinstance(value, dict) or not isinstance(value.get("path"), str):
                raise ScriptError(f"{where}.write: needs a path")
            if "content_file" in value:
                source = (base or Path.cwd()) / str(value["content_file"])
                try:
                    value = {"path": value["path"], "content": source.read_text("utf-8")}
                except OSError as exc:
                    raise ScriptError(f"{where}.write.content_file: cannot read {source}: {exc.strerror}") from None
            elif not isinstance(value.get("content"), str):
                raise ScriptError(f"{where}.write: needs content or content_file")
        elif kind == "call":
            if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                raise ScriptError(f"{where}.call: needs a name")
        else:
            raise ScriptError(f"{where}: unknown step {kind!r}; use write, run, call or say")
        steps.append(Step(kind, value))
    return steps


def parse_script(data: Any, base: Path | None = None, workspace: str = "/workspace") -> Script:
    """A :class:`Script` from its parsed form (``{"steps": [...], "text_format": ...}`` or a bare
    list of steps). With ``if_sent: TEXT``, ``steps`` are played when the agent's requests
    carry TEXT (a specialist's instructions reached the model) and ``otherwise`` when not."""
    if not isinstance(data, (dict, list)):
        raise ScriptError("a script is a list of steps, or an object with a 'steps' list")
    options = data if isinstance(data, dict) else {}
    text_format = str(options.get("text_format", "auto"))
    if text_format not in ("auto", "whole", "bash"):
        raise ScriptError(f"text_format: {text_format!r} is not auto, whole or bash")
    steps_data = options.get("steps") if isinstance(data, dict) else data
    if isinstance(data, dict) and not isinstance(steps_data, list):
        raise ScriptError("a script is a list of steps, or an object with a 'steps' list")
    steps = _parse_steps(steps_data, base, "steps")
    condition = options.get("if_sent")
    otherwise: list[Step] | None = None
    if condition is not None:
        if not isinstance(condition, str) or not condition:
            raise ScriptError("if_sent: must be a non-empty string")
        otherwise = _parse_steps(options.get("otherwise") or [], base, "otherwise")
    return Script(steps, workspace=workspace, text_format=text_format, if_sent=condition, otherwise=otherwise)


def load_script(path: str | Path, workspace: str = "/workspace") -> Script:
    """Read a script file (JSON or YAML)."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None
    try:
        return parse_script(data, path.parent, workspace)
    except ScriptError as exc:
        raise ScriptError(f"{path}: {exc}") from None
