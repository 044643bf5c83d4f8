"""``bench stress``: load tests of a model endpoint, and the stored ones.

``bench stress PROVIDER:MODEL --profile ...`` runs a test (:mod:`harness.stress`) with a live
display per step, prints the steps and the summary, and stores the test; ``bench stress list``
and ``bench stress show ID`` read stored tests. The figures are defined in docs/analysis.md,
"Stress tests" (computed by :mod:`worker.analysis.stress`).
"""

from __future__ import annotations

import inspect
import json
import sys
import time
from typing import Any

import click

from harness.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, FriendlyGroup
from harness.cli.store_options import open_store, store_options
from harness.stress import PROFILE_HELP, PROFILES

RESILIENCE_DEFINITION = (
    "resilience = {a}·availability + {r}·recovery + {l}·latency; availability: answered/sent in every "
    "step but the first; recovery: 1 with no failure, else 1 − recovery time / {budget:g} s (0 when not "
    "recovered); latency: p95 of the first step / p95 of the others, at most 1"
)


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


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


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
    from harness.providers import ProviderError
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
        _fail(str(exc))
    except ProviderError as exc:  # missing credentials, a provider that needs --base-url
        _fail(str(exc))

    client = open_store(worker_url, db_path)
    display = StressDisplay(test, quiet=as_json)
    test.on_event = display.event

    def first() -> None:
        display.note(f"stopping: no new request; waiting for {test.in_flight} in flight "
                     f"(Ctrl-C again to cancel them)")

    def second() -> None:
        display.note("cancelling the requests in flight")

    import asyncio

    with client, handle_sigint(control, on_first=first, on_second=second):
        display.begin()
        try:
            result = asyncio.run(test.run())
        finally:
            display.end()
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
        console = _console()
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
    console = _console()
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
            r.stress_id, f"{r.provider}:{r.model}", r.profile, r.status, _int(s.get("requests")),
            _num(s.get("maxThroughputRps")), f"c={knee['concurrency']}" if knee else "-",
            f"c={broke['concurrency']}" if broke else "-", _num(res["score"], 2) if res else "-",
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
    print_report(_console(), record)


# -- display ---------------------------------------------------------------------------------


def _console():
    from harness.cli.report import make_console

    return make_console()


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f} s" if value >= 10000 else f"{value:,.0f} ms"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _dist(step: dict[str, Any], key: str, pct: str) -> str:
    d = step.get(key)
    return _ms(d.get(pct)) if d else "-"


def _errors(counts: dict[str, int] | None) -> str:
    if not counts:
        return "-"
    parts = [f"{name} {n}" for name, n in counts.items() if n]
    return ", ".join(parts) if parts else "-"


def steps_table(record: Any) -> Any:
    from rich.table import Table

    profile = record.profile
    table = Table(title=f"{record.provider}:{record.model}, profile {profile}: {len(record.steps)} step(s)")
    # The label names what a step varied (c=8, 1024 tokens, 16 rps); other columns say the rest.
    level = {"ramp": None, "rate-limit": "in flight"}.get(profile, "conc.")
    columns = ["step", *([level] if level else []), "sent", "ok", "req/s", "ok/s",
               *(["in tok/req"] if profile == "large-input" else []),
               "p50", "p95", "p99", "TTFT p50", "TTFT p95", "errors"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("step", "errors") else "right")
    for s in record.steps:
        row = [s["label"] + (" (cut)" if s.get("partial") else "")]
        if level:
            row.append(_int(s.get("peakInFlight") if profile == "rate-limit" else s["concurrency"]))
        row += [_int(s["requests"]), _int(s["ok"]), _num(s["requestRate"]), _num(s["throughputRps"])]
        if profile == "large-input":
            row.append(_int(s["inputTokens"] // s["ok"]) if s["ok"] else "-")
        row += [_dist(s, "latencyMs", "p50"), _dist(s, "latencyMs", "p95"), _dist(s, "latencyMs", "p99"),
                _dist(s, "ttftMs", "p50"), _dist(s, "ttftMs", "p95"), _errors(s.get("errors"))]
        table.add_row(*row)
    return table


def summary_lines(record: Any) -> list[str]:
    """The summary of a test in sentences; every number is one the test measured."""
    s = record.summary or {}
    lines: list[str] = []
    thresholds = s.get("thresholds") or {}
    total = s.get("requests") or 0
    cost = s.get("costUsd")
    cost_text = f"${cost:.4f}" if cost is not None else "unknown (no price for this model)"
    lines.append(f"Status: {record.status}" + (f" ({s['stopReason']})" if s.get("stopReason") else ""))
    lines.append(f"Requests: {total:,} sent, {s.get('ok', 0):,} answered ({_pct(1 - (s.get('errorRate') or 0))}); "
                 f"errors: {_errors(s.get('errors'))}; over {_num(s.get('durationS'), 1)} s; cost {cost_text}")
    if total and not s.get("ok"):
        # Nothing answered: no figure of the model was measured, only its failures.
        lines.append("Nothing answered: no throughput, knee, breaking point, recovery or resilience to report.")
        lines += [f"  {item['count']}× {item['class']}: {item['message']}" for item in s.get("errorMessages") or []]
        return lines
    if s.get("latencyMs"):
        ttft = s.get("ttftMs")
        lines.append(f"Latency: p50 {_ms(s['latencyMs']['p50'])}, p95 {_ms(s['latencyMs']['p95'])}, "
                     f"p99 {_ms(s['latencyMs']['p99'])}"
                     + (f"; time to first token p50 {_ms(ttft['p50'])}, p95 {_ms(ttft['p95'])}" if ttft else ""))
    if s.get("maxThroughputRps") is not None:
        lines.append(f"Max throughput: {_num(s['maxThroughputRps'], 2)} answers/s (at concurrency "
                     f"{s.get('maxThroughputConcurrency')}), {_num(s.get('maxOutputTokensPerS'), 1)} output tokens/s")
    if record.profile == "ramp":
        knee = s.get("knee")
        growth, lat = thresholds.get("kneeGrowth"), thresholds.get("kneeLatencyGrowth")
        rule = (f"the last concurrency before throughput grows by at most {_pct(growth)} while p95 grows by "
                f"more than {_pct(lat)}") if growth is not None else "see docs/analysis.md"
        if knee:
            lines.append(f"Knee: concurrency {knee['concurrency']} ({_num(knee['throughputRps'], 2)} answers/s, "
                         f"p95 {_ms(knee['p95Ms'])}); at {knee['nextConcurrency']}: throughput "
                         f"{_signed_pct(knee.get('throughputGrowth'))}, p95 {_signed_pct(knee.get('p95Growth'))}")
        else:
            lines.append("Knee: none, throughput kept growing with concurrency or latency did not grow with it")
        lines.append(f"  [knee: {rule}]")
    broke = s.get("breakingPoint")
    rule = f"error rate above {_pct(thresholds.get('maxErrorRate'))}"
    if thresholds.get("sloMs") is not None:
        rule += f" or p95 above {_ms(thresholds['sloMs'])}"
    if broke:
        lines.append(f"Breaking point: step {broke['label']} (concurrency {broke['concurrency']}): {broke['reason']}. "
                     f"[first step with {rule}]")
    else:
        lines.append(f"Breaking point: none, no step had an {rule}.")
    if record.profile == "rate-limit":
        onset = s.get("rateLimit")
        if onset:
            clean = onset.get("lastCleanRequestRate")
            wait = next((st.get("retryAfterS") for st in record.steps if st["index"] == onset["stepIndex"]), None)
            lines.append(f"Rate limit: 429s from {_num(onset['requestRate'], 2)} requests/s "
                         f"(step {onset.get('targetRps', 0):g}/s: {onset['rateLimited']} of {onset['requests']})"
                         + (f"; none at {_num(clean, 2)} requests/s" if clean is not None else "")
                         + (f"; Retry-After up to {wait:g} s" if wait is not None else ""))
        else:
            top = max((st["requestRate"] for st in record.steps), default=None)
            lines.append(f"Rate limit: no 429 up to {_num(top, 2)} requests/s.")
    rec = s.get("recovery")
    if rec is None:
        lines.append("Recovery: no request failed.")
    elif rec["recovered"]:
        lines.append(f"Recovery: first failure at {rec['firstErrorS']:.2f} s; recovered at {rec['recoveredAtS']:.2f} s, "
                     f"after {rec['recoverySeconds']:.2f} s ({rec['burstErrors']} of {rec['burstRequests']} requests "
                     f"failed in between; recovered = {rec['streak']} answers in a row)")
    else:
        lines.append(f"Recovery: first failure at {rec['firstErrorS']:.2f} s; not recovered before the end "
                     f"({rec['streak']} answers in a row never came).")
    res = s.get("resilience")
    if res:
        w = res["weights"]
        lines.append(f"Resilience: {res['score']:.2f} = {w['availability']:g}×{res['availability']:.2f} + "
                     f"{w['recovery']:g}×{res['recovery']:.2f} + {w['latency']:g}×{res['latency']:.2f}")
        lines.append("  [" + RESILIENCE_DEFINITION.format(a=w["availability"], r=w["recovery"], l=w["latency"],
                                                          budget=res["recoveryBudgetS"]) + "]")
    for item in s.get("errorMessages") or []:
        lines.append(f"  {item['count']}× {item['class']}: {item['message']}")
    return lines


def _signed_pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}%"


def phases_table(record: Any) -> Any | None:
    s = record.summary or {}
    groups = []
    if s.get("phases"):
        groups.append(("phase", s["phases"]))
    if s.get("failureWindow"):
        groups.append(("failure window", s["failureWindow"]))
    if not groups:
        return None
    from rich.table import Table

    table = Table(title="Phases")
    for col in ("", "part", "steps", "sent", "error rate", "p50", "p95", "errors"):
        table.add_column(col, justify="left" if col in ("", "part", "errors") else "right")
    for title, parts in groups:
        for name, fig in parts.items():
            if not fig:
                continue
            lat = fig.get("latencyMs") or {}
            steps = fig["steps"]
            table.add_row(title, name, str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}",
                          _int(fig["requests"]),
                          _pct(fig["errorRate"]), _ms(lat.get("p50")), _ms(lat.get("p95")), _errors(fig["errors"]))
    return table


def print_report(console: Any, record: Any) -> None:
    if not record.steps:
        console.print(f"Stress test {record.stress_id}: no step finished ({record.status}).", highlight=False)
    else:
        console.print(steps_table(record))
        phases = phases_table(record)
        if phases is not None:
            console.print(phases)
    for line in summary_lines(record):
        console.print(line, highlight=False, markup=False)


class StressDisplay:
    """What a running test shows: on a terminal, a live panel of the finished steps and the one
    in progress; elsewhere, one line per finished step. Silent with ``quiet`` (``--json``)."""

    def __init__(self, test: Any, quiet: bool = False) -> None:
        self.test = test
        self.quiet = quiet
        self.console = _console() if not quiet else None
        self.live = None
        self.done: list[dict[str, Any]] = []
        self.step_index: int | None = None  # the step sending now
        self.answered = 0
        self.failed = 0
        self.latencies: list[float] = []

    # events from the test (on the event loop's thread)
    def event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "sample":
            if data["step"] != self.step_index:
                return  # a request of an earlier step, finishing late
            if data["ok"]:
                self.answered += 1
                self.latencies.append(data["latencyMs"])
            else:
                self.failed += 1
        elif kind == "step_start":
            self.step_index = data["index"]
            self.answered = self.failed = 0
            self.latencies = []
        elif kind == "step":
            self.done.append(data)
            if self.console is not None and self.live is None:
                self.console.print(self._step_line(data), highlight=False, markup=False)

    def note(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text, highlight=False, markup=False)
        else:
            click.echo(text, err=True)

    def begin(self) -> None:
        if self.console is None:
            return
        opts = self.test.opts
        plan = self.test.plan
        per = (f"{opts.step_requests} requests" if opts.step_requests is not None else f"{opts.step_s:g} s")
        self.console.print(
            f"Stress test {self.test.provider.name}:{opts.model}, profile {opts.profile}: {len(plan)} step(s) "
            f"({plan[0].label} … {plan[-1].label}), {per} each, {'streamed' if opts.stream else 'not streamed'}"
            + (f", up to ${opts.max_cost:g}" if opts.max_cost is not None else "") + ". Ctrl-C stops.",
            highlight=False, markup=False)
        if self.console.is_terminal:
            from rich.live import Live

            self.live = Live(get_renderable=self._render, console=self.console, refresh_per_second=4,
                             transient=True)
            self.live.start()

    def end(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _step_line(self, step: dict[str, Any]) -> str:
        lat = step.get("latencyMs") or {}
        return (f"step {step['index'] + 1}/{len(self.test.plan)} {step['label']}: {step['requests']} sent, "
                f"{step['ok']} ok, {_num(step['throughputRps'])} ok/s, p50 {_ms(lat.get('p50'))}, "
                f"p95 {_ms(lat.get('p95'))}, errors {_errors(step.get('errors'))}"
                + (" (cut short)" if step.get("partial") else ""))

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        parts: list[Any] = [Text(self._step_line(step)) for step in self.done[-8:]]
        current = self.test.current
        if current is not None and (not self.done or self.done[-1]["index"] != current["plan"].index):
            plan = current["plan"]
            if plan.requests is not None:
                total, done = float(plan.requests), float(current["sent"])
                where = f"{current['sent']}/{plan.requests} sent"
            else:
                total = float(plan.seconds or 1.0)
                done = min(total, time.monotonic() - current["started"])
                where = f"{done:.1f}/{total:g} s"
            p50 = sorted(self.latencies)[len(self.latencies) // 2] if self.latencies else None
            grid = Table.grid(padding=(0, 1))
            grid.add_row(Text(f"step {plan.index + 1}/{len(self.test.plan)} {plan.label}"),
                         ProgressBar(total=total, completed=done, width=24),
                         Text(f"{where}; {self.answered} ok, {self.failed} failed, {self.test.in_flight} in flight, "
                              f"p50 {_ms(p50)}"))
            parts.append(grid)
        return Group(*parts)
