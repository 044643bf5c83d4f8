"""``bench stress``: load tests of a model endpoint, and the stored ones.

``bench stress PROVIDER:MODEL --profile ...`` runs a test (:mod:`harness.stress`) with a live
display per step, prints the steps and the summary, and stores the test; ``bench stress list``
and ``bench stress show ID`` read stored tests. The figures are defined in docs/analysis.md,
"Stress tests" (computed by :mod:`worker.analysis.stress`); what is printed is in
:mod:`harness.cli.stress_view`.
"""

from __future__ import annotations

import inspect
import json
import sys

import click

from harness.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, FriendlyGroup, fail
from harness.cli.store_options import open_store, store_options
from harness.cli.live import Progress
from harness.cli.stress_view import fmt_int, fmt_num, new_console, print_report, stress_headline, stress_view
from harness.stress import PROFILE_HELP, PROFILES


class StressGroup(FriendlyGroup):
    """``bench stress PROVIDER:MODEL ...`` runs a test; ``list`` and ``show`` read stored ones."""

    program = "bench"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:
            click.echo(ctx.get_help())
            ctx.exit(0)
        if args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)



_PROFILE_LINES = "\n".join(f"  {name:<17} {text}" for name, text in PROFILE_HELP.items())


@click.group("stress", cls=StressGroup, context_settings={"help_option_names": ["-h", "--help"]})
def stress() -> None:
    """Load-test a model endpoint: throughput, latency and time to first token per step, the
    knee, the breaking point, the rate-limit onset, recovery and a resilience score.

    `bench stress PROVIDER:MODEL [OPTIONS]` runs a test and stores it (`bench stress run --help`
    lists every option); `bench stress list` and `bench stress show ID` read stored tests.
    Providers: anthropic, openai, openrouter, google, groq, together, mistral, deepseek,
    ollama, vllm, openai-compatible (with --base-url), local (the shipped SmolLM2 model). Every request
    is sent once: a failure is a measurement, not retried.

    \b
    Examples:
      bench stress openai:qwen2.5 --base-url http://127.0.0.1:8080/v1 --max-concurrency 32
      bench stress anthropic:claude-haiku-4-5 --profile rate-limit --max-cost 0.50
      bench stress openai:gpt-4o-mini --profile spike --duration 90 --concurrency 4 --max-cost 1
      bench stress list --profile ramp
      bench stress show STRESS_ID
    """


@stress.command("run")
@click.argument("target", metavar="PROVIDER:MODEL")
@click.option("--profile", type=click.Choice(PROFILES), default="ramp", show_default=True,
              help="The shape of the load (see below).")
@click.option("--base-url", default=None, metavar="URL",
              help="The API's address (an OpenAI-compatible server: llama.cpp, vLLM, Ollama...).")
@click.option("--concurrency", type=int, default=4, show_default=True,
              help="Requests in flight for sustained and large-input; the baseline of spike and failure-recovery.")
@click.option("--max-concurrency", type=int, default=128, show_default=True,
              help="Top of ramp; peak of spike and failure-recovery; most requests in flight for rate-limit.")
@click.option("--step-seconds", type=float, default=None, metavar="S",
              help="Length of a step (default 10); for the timed profiles, of a time window.")
@click.option("--step-requests", type=int, default=None, metavar="N",
              help="Requests per step instead of a length (ramp, large-input, rate-limit).")
@click.option("--duration", "duration_s", type=float, default=None, metavar="S",
              help="Whole length of sustained, spike and failure-recovery (default 60).")
@click.option("--prompt-tokens", type=int, default=64, show_default=True,
              help="About how many tokens each prompt has (large-input: the first size).")
@click.option("--max-prompt-tokens", type=int, default=32768, show_default=True,
              help="large-input: the last prompt size (sizes grow 4x per step).")
@click.option("--max-tokens", type=int, default=64, show_default=True, help="Answer length asked for.")
@click.option("--start-rate", type=float, default=1.0, show_default=True,
              help="rate-limit: requests per second of the first step (doubling each step).")
@click.option("--max-rate", type=float, default=256.0, show_default=True,
              help="rate-limit: the last rate tried when no 429 came before.")
@click.option("--timeout", "timeout_s", type=float, default=60.0, show_default=True,
              help="Seconds a request may take before it counts as a timeout.")
@click.option("--slo-ms", type=float, default=None, metavar="MS",
              help="A p95 latency above this breaks a step (besides an error rate above 5%).")
@click.option("--max-cost", type=float, default=None, metavar="USD",
              help="Stop before the spend could pass this (refused for a model without a price).")
@click.option("--stream/--no-stream", default=True, show_default=True,
              help="Stream the answers (measures the time to the first token).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored record as JSON, no display.")
@store_options
def run(target: str, profile: str, base_url: str | None, concurrency: int, max_concurrency: int,
        step_seconds: float | None, step_requests: int | None, duration_s: float | None, prompt_tokens: int,
        max_prompt_tokens: int, max_tokens: int, start_rate: float, max_rate: float, timeout_s: float,
        slo_ms: float | None, max_cost: float | None, stream: bool, as_json: bool, worker_url: str | None,
        db_path: str | None) -> None:
    """Run a load test of PROVIDER:MODEL and store it.

    \b
    Profiles:
    {profiles}

    Each request is one sample: latency, time to first token (streamed), tokens, cost, or its
    failure (timeout, 429, 5xx, connection, other; a refused connection or a host name that does
    not resolve is a connection failure, never a timeout). Per step: throughput, p50/p95/p99,
    TTFT, errors; then the knee (ramp), the breaking point (first step with more than 5% errors,
    or a p95 above --slo-ms), the rate-limit onset, the recovery time and the resilience score.
    A test that gets no answer at all is stored as failed, exit 1 (no connection before the
    first answer stops it at once). Ctrl-C stops sending and stores what was measured (status
    interrupted, exit 130); a second Ctrl-C cancels the requests in flight. The key comes from the provider's variable
    (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY); none is needed with --base-url.

    \b
    Examples:
      bench stress openai:qwen2.5 --base-url http://127.0.0.1:8080/v1 --max-concurrency 32
      bench stress openai:qwen2.5 --base-url http://127.0.0.1:8080/v1 --step-requests 50
      bench stress openai:qwen2.5 --base-url http://127.0.0.1:8080/v1 --profile sustained --concurrency 8 --duration 120
      bench stress openai:qwen2.5 --base-url http://127.0.0.1:8080/v1 --profile large-input --max-prompt-tokens 8192
      bench stress anthropic:claude-haiku-4-5 --profile rate-limit --start-rate 2 --max-cost 0.50
      bench stress openai:gpt-4o-mini --profile failure-recovery --duration 120 --max-cost 2 --json
    """
    from harness.control import handle_sigint
    from harness.models.providers import ProviderError
    from harness.stress import StressControl, StressError, StressOptions, parse_target, prepare

    try:
        provider_name, model = parse_target(target)
        opts = StressOptions(
            provider=provider_name, model=model, profile=profile, base_url=base_url, concurrency=concurrency,
            max_concurrency=max_concurrency, step_seconds=step_seconds, step_requests=step_requests,
            duration_s=duration_s, prompt_tokens=prompt_tokens, max_prompt_tokens=max_prompt_tokens,
            max_tokens=max_tokens, start_rate=start_rate, max_rate=max_rate, timeout_s=timeout_s, slo_ms=slo_ms,
            max_cost=max_cost, stream=stream)
        control = StressControl()
        test = prepare(opts, control=control)
    except StressError as exc:
        fail(str(exc))
    except ProviderError as exc:  # missing credentials, a provider that needs --base-url
        fail(str(exc))

    client = open_store(worker_url, db_path)
    console = None if as_json else new_console()
    display = Progress(stress_view(test), console=console, quiet=as_json)
    test.on_event = display

    def say(text: str) -> None:  # with --json nothing is displayed, but Ctrl-C is answered on stderr
        if as_json:
            click.echo(text, err=True)
        else:
            display.note(text)

    def first() -> None:
        say(f"stopping: no new request; waiting for {test.in_flight} in flight (Ctrl-C again to cancel them)")

    def second() -> None:
        say("cancelling the requests in flight")

    import asyncio

    with client, handle_sigint(control, on_first=first, on_second=second):
        if console is not None:
            console.print(stress_headline(test), highlight=False, markup=False)
        with display:
            result = asyncio.run(test.run())
        record = result.record
        try:
            outcome = client.post_stress(record)
        except Exception as exc:  # noqa: BLE001 - the measurements are printed anyway
            outcome = None
            post_error = f"{type(exc).__name__}: {exc}"
        else:
            post_error = None

    if as_json:
        click.echo(json.dumps({**record.to_wire(), "stored": outcome}, indent=2))
    else:
        console = new_console()
        print_report(console, record)
        if outcome in ("stored", "duplicate"):
            console.print(f"Stored as {record.stress_id} (bench stress show {record.stress_id}).", highlight=False)
    if outcome == "spooled":
        where = getattr(client.spool, "directory", None) or "the spool"
        click.echo(f"stress test {record.stress_id} NOT stored: kept in {where}; `bench sync` delivers it",
                   err=True)
        sys.exit(EXIT_FAILED)
    if outcome is None:
        click.echo(f"error: stress test {record.stress_id} NOT stored: {post_error}", err=True)
        sys.exit(EXIT_FAILED)
    if record.status == "interrupted":
        click.echo("interrupted: what was measured is stored", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if record.status == "failed":
        click.echo(f"error: {record.summary.get('stopReason') or 'the test failed'}", err=True)
        sys.exit(EXIT_FAILED)


run.help = inspect.cleandoc(run.help or "").replace("{profiles}", _PROFILE_LINES)


@stress.command("list")
@click.option("--provider", default=None, help="Only tests of this provider.")
@click.option("--model", default=None, help="Only tests of this model.")
@click.option("--profile", type=click.Choice(PROFILES), default=None, help="Only tests of this profile.")
@click.option("--status", type=click.Choice(["completed", "interrupted", "budget_exceeded", "failed"]), default=None,
              help="Only tests that ended so.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many, newest first.")
@click.option("--json", "as_json", is_flag=True, help="Print the tests as JSON.")
@store_options
def list_cmd(provider: str | None, model: str | None, profile: str | None, status: str | None, limit: int,
             as_json: bool, worker_url: str | None, db_path: str | None) -> None:
    """Stored stress tests, newest first, with their headline figures.

    \b
    Examples:
      bench stress list
      bench stress list --profile ramp --model claude-haiku-4-5
      bench stress list --status interrupted --json
    """
    filters = {k: v for k, v in (("provider", provider), ("model", model), ("profile", profile),
                                 ("status", status)) if v is not None}
    with open_store(worker_url, db_path) as client:
        records = client.list_stress(limit=limit, **filters)
    if as_json:
        click.echo(json.dumps([r.to_wire() | {"createdAt": r.created_at} for r in records], indent=2))
        return
    console = new_console()
    if not records:
        console.print("No stress test stored" + (" matches" if filters else "") + ".", highlight=False)
        return
    from rich.table import Table

    table = Table(title=f"Stress tests ({len(records)}), newest first")
    for col in ("id", "target", "profile", "status", "sent", "best ok/s", "knee", "broke at", "score"):
        table.add_column(col, justify="right" if col in ("sent", "best ok/s", "score") else "left",
                         no_wrap=col == "id", overflow="fold")
    for r in records:
        s = r.summary or {}
        knee = s.get("knee")
        broke = s.get("breakingPoint")
        res = s.get("resilience")
        table.add_row(
            r.stress_id, f"{r.provider}:{r.model}", r.profile, r.status, fmt_int(s.get("requests")),
            fmt_num(s.get("maxThroughputRps")), f"c={knee['concurrency']}" if knee else "-",
            f"c={broke['concurrency']}" if broke else "-", fmt_num(res["score"], 2) if res else "-",
        )
    console.print(table)


@stress.command("show")
@click.argument("stress_id")
@click.option("--json", "as_json", is_flag=True, help="Print the stored test as JSON.")
@store_options
def show(stress_id: str, as_json: bool, worker_url: str | None, db_path: str | None) -> None:
    """One stored stress test: its settings, steps and summary.

    \b
    Examples:
      bench stress show STRESS_ID
      bench stress show STRESS_ID --json
    """
    with open_store(worker_url, db_path) as client:
        record = client.get_stress(stress_id)
    if record is None:
        raise click.ClickException(f"stress test {stress_id!r} not found (bench stress list shows the stored ones)")
    if as_json:
        click.echo(json.dumps(record.to_wire() | {"createdAt": record.created_at}, indent=2))
        return
    print_report(new_console(), record)
