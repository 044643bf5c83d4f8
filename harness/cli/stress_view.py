"""What ``bench stress`` prints: a stress test's steps table, its phases table and its summary in
sentences (:func:`print_report`, for ``bench stress`` and ``bench stress show``), and the
progress of a running test (:func:`stress_view`, for :class:`harness.cli.live.Progress`: one line
per finished step; on a terminal, below them, the step in progress; nothing with ``--json``).

Every number shown is one the test measured or a threshold it applied; the figures are defined
in docs/analysis.md, "Stress tests".
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from harness.cli.live import Progress, View
from harness.events import Event

if TYPE_CHECKING:
    from harness.cells import CellRecord

RESILIENCE_DEFINITION = (
    "resilience = {a}·availability + {r}·recovery + {l}·latency; availability: answered/sent in every "
    "step but the first; recovery: 1 with no failure, else 1 − recovery time / {budget:g} s (0 when not "
    "recovered); latency: p95 of the first step / p95 of the others, at most 1"
)


def new_console():
    from harness.cli.render import make_console

    return make_console()


def fmt_num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def fmt_int(value: int | None) -> str:
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
            row.append(fmt_int(s.get("peakInFlight") if profile == "rate-limit" else s["concurrency"]))
        row += [fmt_int(s["requests"]), fmt_int(s["ok"]), fmt_num(s["requestRate"]), fmt_num(s["throughputRps"])]
        if profile == "large-input":
            row.append(fmt_int(s["inputTokens"] // s["ok"]) if s["ok"] else "-")
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
                 f"errors: {_errors(s.get('errors'))}; over {fmt_num(s.get('durationS'), 1)} s; cost {cost_text}")
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
        lines.append(f"Max throughput: {fmt_num(s['maxThroughputRps'], 2)} answers/s (at concurrency "
                     f"{s.get('maxThroughputConcurrency')}), {fmt_num(s.get('maxOutputTokensPerS'), 1)} output tokens/s")
    if record.profile == "ramp":
        knee = s.get("knee")
        growth, lat = thresholds.get("kneeGrowth"), thresholds.get("kneeLatencyGrowth")
        rule = (f"the last concurrency before throughput grows by at most {_pct(growth)} while p95 grows by "
                f"more than {_pct(lat)}") if growth is not None else "see docs/analysis.md"
        if knee:
            lines.append(f"Knee: concurrency {knee['concurrency']} ({fmt_num(knee['throughputRps'], 2)} answers/s, "
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
            lines.append(f"Rate limit: 429s from {fmt_num(onset['requestRate'], 2)} requests/s "
                         f"(step {onset.get('targetRps', 0):g}/s: {onset['rateLimited']} of {onset['requests']})"
                         + (f"; none at {fmt_num(clean, 2)} requests/s" if clean is not None else "")
                         + (f"; Retry-After up to {wait:g} s" if wait is not None else ""))
        else:
            top = max((st["requestRate"] for st in record.steps), default=None)
            lines.append(f"Rate limit: no 429 up to {fmt_num(top, 2)} requests/s.")
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
                          fmt_int(fig["requests"]),
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


def stress_headline(test: Any) -> str:
    """The line that opens a running test: what is sent, in how many steps, how to stop it."""
    opts = test.opts
    plan = test.plan
    per = (f"{opts.step_requests} requests" if opts.step_requests is not None else f"{opts.step_s:g} s")
    return (f"Stress test {test.provider.name}:{opts.model}, profile {opts.profile}: {len(plan)} step(s) "
            f"({plan[0].label} … {plan[-1].label}), {per} each, {'streamed' if opts.stream else 'not streamed'}"
            + (f", up to ${opts.max_cost:g}" if opts.max_cost is not None else "") + ". Ctrl-C stops.")


def step_line(step: dict[str, Any], steps: int) -> str:
    """The line of a finished step (``steps``: how many the test has)."""
    lat = step.get("latencyMs") or {}
    return (f"step {step['index'] + 1}/{steps} {step['label']}: {step['requests']} sent, "
            f"{step['ok']} ok, {fmt_num(step['throughputRps'])} ok/s, p50 {_ms(lat.get('p50'))}, "
            f"p95 {_ms(lat.get('p95'))}, errors {_errors(step.get('errors'))}"
            + (" (cut short)" if step.get("partial") else ""))


def _latency(request: CellRecord) -> tuple[bool, float | None]:
    return (True, request.duration_ms) if request.outcome == "passed" else (False, None)


def stress_view(test: Any) -> View:
    """A running test's progress: a line per finished step; on a terminal, the step sending now
    (how far it is, its answers and failures, the requests in flight, its p50), read from the
    test (``test.current``, ``test.in_flight``) and its samples."""

    def line(progress: Progress, event: Event) -> str:
        return step_line(event.result, len(test.plan))

    def rows(progress: Progress) -> list[Any]:
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        current = test.current
        item = progress.running.get(current["plan"].label) if current is not None else None
        if item is None:  # before the first step, or the last one is done
            return []
        plan = current["plan"]
        if plan.requests is not None:
            total, done = float(plan.requests), float(current["sent"])
            where = f"{current['sent']}/{plan.requests} sent"
        else:
            total = float(plan.seconds or 1.0)
            done = min(total, time.monotonic() - current["started"])
            where = f"{done:.1f}/{total:g} s"
        p50 = sorted(item.values)[len(item.values) // 2] if item.values else None
        grid = Table.grid(padding=(0, 1))
        grid.add_row(Text(f"step {plan.index + 1}/{len(test.plan)} {plan.label}"),
                     ProgressBar(total=total, completed=done, width=24),
                     Text(f"{where}; {item.ok} ok, {item.failed} failed, {test.in_flight} in flight, "
                          f"p50 {_ms(p50)}"))
        return [grid]

    return View(rows=rows, line=line, sample=_latency)
