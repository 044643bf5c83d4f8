"""``bench mock-model``: serve a scripted model on loopback, to check an agent integration offline."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import click


@click.command("mock-model")
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one, printed).")
@click.option("--workspace", default="/workspace", show_default=True,
              help="Where relative paths go for tools that want absolute ones (Claude Code's Write).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Append every request received to this JSONL file (path, API, body).")
def mock_model(script: Path, port: int, workspace: str, log_path: Path | None) -> None:
    """Serve a scripted model: every request is answered with the next step of SCRIPT, in the
    wire format the client speaks (OpenAI Chat Completions and Responses, Anthropic Messages,
    Gemini; plain or streamed) and with the client's own tools. Runs until Ctrl-C.

    SCRIPT is a YAML or JSON file of steps: `write: {path, content | content_file}`,
    `run: COMMAND`, `call: {name, arguments}`, `say: TEXT` (the final answer). Step n answers
    the request that follows n answers of the model. Format: docs/agents.md.

    \b
    Examples:
      bench mock-model fix.yaml --port 8765
      OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=x my-agent ...
      bench mock-model fix.yaml --log requests.jsonl   # what the agent sent, for a look
    """
    from harness.scripted import ScriptedServer, ScriptError, load_script

    try:
        loaded = load_script(script, workspace=workspace)
    except ScriptError as exc:
        raise click.BadParameter(str(exc), param_hint="SCRIPT") from None
    try:
        server = ScriptedServer(loaded, port=port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    click.echo(f"Scripted model ({len(loaded.steps)} steps) on {server.url}")
    click.echo(f"  OpenAI (Chat Completions, Responses): {server.base_url('openai')}")
    click.echo(f"  Anthropic Messages:                   {server.base_url('anthropic')}")
    click.echo(f"  Gemini:                               {server.base_url('gemini')}")
    click.echo("Ctrl-C stops it.")
    stop = threading.Event()
    server.start()
    written = 0
    try:
        while not stop.wait(0.2):
            if log_path is not None and len(server.requests) > written:
                with log_path.open("a", encoding="utf-8") as fh:
                    for request in server.requests[written:]:
                        fh.write(json.dumps(request) + "\n")
                written = len(server.requests)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    click.echo(f"{len(server.requests)} request(s) answered.")
