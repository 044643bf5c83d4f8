"""``bench view``: open the dashboard, serving the results store with ``worker dev`` if needed."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from urllib.parse import quote

import click

from harness.cli.store_options import store_options

SERVICE_NAME = "zebench-results"


def page_path(target: str | None) -> str:
    """The dashboard path for ``target``: a path as given, a run id, or a batch id."""
    if not target:
        return "/"
    if target.startswith("/"):
        return target
    if target.startswith("run_"):
        return f"/runs/{quote(target, safe='')}"
    return f"/batches/{quote(target, safe='')}"


def probe(base_url: str, timeout_s: float = 2.0) -> str:
    """``"worker"`` when a results worker answers at ``base_url``, ``"other"`` when something else
    does, ``"none"`` when nothing listens."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/health", timeout=timeout_s) as resp:
            body = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError:
        return "other"
    except (urllib.error.URLError, OSError):
        return "none"
    except ValueError:
        return "other"
    return "worker" if isinstance(body, dict) and body.get("service") == SERVICE_NAME else "other"


def _open(url: str, no_open: bool) -> None:
    click.echo(f"dashboard: {url}")
    if no_open:
        return
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser is not an error; the URL is printed
        opened = False
    if not opened:
        click.echo("(no browser could be opened here: open the address above)", err=True)


@click.command("view")
@click.argument("target", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address worker dev listens on.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535),
              help="Port of worker dev (0: any free port).")
@click.option("--no-open", is_flag=True, help="Print the address instead of opening a browser.")
@store_options
def view(target: str | None, host: str, port: int, no_open: bool, worker_url: str | None,
         db_path: str | None) -> None:
    """Open the web dashboard of the results store.

    With a worker URL ($ZE_BENCHMARKS_WORKER_URL or --worker-url) the dashboard that worker
    serves is opened. Otherwise, if a results worker already listens on --host/--port it is
    used; if not, `worker dev` is started here over the embedded store (--db, default: the
    store found from this directory, see --db) and serves until Ctrl-C. A store that does not
    exist yet is not created: the command says so and exits 1.

    TARGET opens one page: a run id (run_...), a batch id, or a path such as /leaderboard.

    \b
    Examples:
      bench view                        overview of the default store
      bench view ci-nightly-42          that batch
      bench view /compare?a=B1&b=B2     a comparison
      bench view --db /tmp/bench.db --port 9000 --no-open
    """
    path = page_path(target)
    if worker_url:
        base = worker_url.rstrip("/")
        if probe(base) != "worker":
            raise click.ClickException(f"no results worker answers at {base} (GET /health)")
        _open(base + path, no_open)
        return
    base = f"http://{host}:{port}"
    if port:
        found = probe(base)
        if found == "worker":
            click.echo(f"a results worker is already serving on {base}", err=True)
            _open(base + path, no_open)
            return
        if found == "other":
            raise click.ClickException(f"{base} is taken by something that is not a results worker; "
                                       "choose another --port")
    _serve(host, port, db_path, path, no_open)


def _serve(host: str, port: int, db_path: str | None, path: str, no_open: bool) -> None:
    import os

    from harness.results.location import default_db_path
    from worker.config import WorkerConfig
    from worker.devserver import make_server, resolve_config

    db = db_path or default_db_path()
    if not os.path.exists(db):
        raise click.ClickException(f"no results store at {db} yet: store a run first "
                                   "(bench SUITE SCENARIO --agent oracle) or name one with --db")
    try:
        config, notice = resolve_config(host, WorkerConfig.from_env(os.environ))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        server, worker = make_server(host, port, db, config, False)
    except OSError as exc:
        raise click.ClickException(f"cannot serve {db} on {host}:{port}: {exc.strerror or exc}") from None
    if notice:
        click.echo(notice, err=True)
    bound_host, bound_port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, name="worker-dev", daemon=True)
    thread.start()
    click.echo(f"worker dev: serving {db} on http://{bound_host}:{bound_port} (Ctrl-C stops it)")
    _open(f"http://{bound_host}:{bound_port}{path}", no_open)
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.shutdown()
        server.server_close()
        worker.close()
