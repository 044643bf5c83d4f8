"""How runs and batches look on a terminal (rich) and to programs (JSON)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.scenarios.plan import completeness
from harness.results.records import BatchRecord, RunRecord, mixed_sandbox_note

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Stored text (an agent's output, a command's, a model's) made safe for a terminal: control
    characters (escape sequences, carriage returns, bells) shown as ``\\xNN``, never sent."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


_STATUS_STYLE = {"completed": "green", "failed": "red", "timeout": "yellow", "budget_exceeded": "yellow",
                 "error": "red bold"}


def make_console(stderr: bool = False) -> Console:
    """A console for reports; when output is not a terminal (a file, a CI log) it is 120 columns wide
    instead of rich's 80 so tables of ids stay readable."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=120)
    return console


def score_text(score: float | None) -> str:
    return "-" if score is None else f"{score:.2f}"


def cached_text(run: RunRecord) -> str | None:
    """``cached 4/4`` for a run whose model answers were replayed from the response cache."""
    meta = run.metadata or {}
    if not meta.get("cached"):
        return None
    calls, cached = meta.get("modelCalls"), meta.get("cachedCalls")
    return f"cached {cached}/{calls}" if isinstance(calls, int) and isinstance(cached, int) else "cached"


def run_json(run: RunRecord, transcript: bool = False) -> dict[str, Any]:
    """A run's wire form, without the transcript unless asked (it can be large)."""
    data = run.to_wire()
    if not transcript:
        data.pop("transcript", None)
    return data


def batch_json(batch: BatchRecord) -> dict[str, Any]:
    data = batch.to_wire()
    data["breakdowns"] = batch.breakdowns
    data["runs"] = [run_json(r) for r in batch.runs]
    state = completeness(batch.metadata, batch.runs)
    if state is not None:
        data["completeness"] = {"plannedCells": state.planned, "storedCells": state.cells,
                                "shardCount": state.shard_count, "shardsReported": sorted(state.shards_seen),
                                "shardsMissing": state.missing_shards, "complete": state.complete}
    return data


def _ms_time(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _iso_time(value: str | None) -> str:
    return (value or "-").replace("T", " ")[:19]


DETAIL_LINES = 40  # per evaluation, with --verbose


def render_run(console: Console, run: RunRecord, threshold: float | None = None, verbose: bool = False) -> None:
    """The per-run report: ids, per-evaluator scores, total with PASS/FAIL, telemetry; with
    ``verbose`` each evaluation's details (command output, checks) too."""
    ok = run.is_successful
    head = "✓ Benchmark completed successfully" if ok else f"✗ Benchmark {run.status.replace('_', ' ')}"
    if run.failure_class:
        head += f" ({run.failure_class})"
    console.print(Text(head, style="green bold" if ok else "red bold"))
    console.print()
    console.print("[bold]Results:[/bold]")
    console.print(f"  Run ID:   {run.run_id}")
    console.print(f"  Batch ID: {run.batch_id}")
    model = f" / {run.model}" if run.model else ""
    tier = run.metadata.get("tierLabel", run.tier)
    console.print(f"  Scenario: {run.suite}/{run.scenario}  tier {tier}  agent {run.agent}{model}")
    if run.specialist_enabled:
        console.print(f"  Specialist: {run.specialist_name}@{run.specialist_version}")
    if run.metadata.get("error"):
        console.print(Text(f"  Error: {printable(str(run.metadata['error']))}", style="red"))
    if run.metadata.get("agentError"):
        first = (str(run.metadata["agentError"]).splitlines() or [""])[0]
        console.print(Text(f"  Agent error: {printable(first)}", style="red"))
    infra = run.metadata.get("infraFailure")
    if isinstance(infra, dict):
        console.print(f"  Infra:    the model provider failed, not the agent (after {infra.get('turnsDone', 0)} "
                      "answered turn(s)); retry with --retry-errors", style="yellow")
    cached = cached_text(run)
    if cached:
        console.print(f"  Cached:   {cached} model answers replayed from the response cache (--cache replay): "
                      "not a new sample; cost and tokens are the original calls'", style="yellow")
    console.print()
    console.print("[bold]Scores:[/bold]")
    if not run.evaluations:
        console.print("  (no evaluations)")
    width = max([len(e.evaluator_name) for e in run.evaluations] + [5]) + 1
    weights = run.metadata.get("weights") or {}
    for e in run.evaluations:
        label = f"{e.evaluator_name}:".ljust(width + 1)
        if e.status != "ok":
            first = (e.details or "").strip().splitlines()
            reason = f" ({printable(first[0][:160])})" if first else ""
            console.print(Text(f"  {label} {e.status}{reason}", style="dim"))
            continue
        mark = "[green]✓[/green]" if e.score >= 1.0 else ("[yellow]⚠[/yellow]" if e.score > 0 else "[red]✗[/red]")
        weight = weights.get(e.evaluator_name)
        wtxt = f"  [dim]weight {weight:g}[/dim]" if weight not in (None, 1, 1.0) else ""
        console.print(f"  {label} {e.score:.2f} / {e.max_score:.2f} {mark}{wtxt}")
        if verbose and e.details:
            lines = e.details.strip().splitlines()
            shown = lines[:DETAIL_LINES] + ([f"... {len(lines) - DETAIL_LINES} more line(s)"] if len(lines) > DETAIL_LINES else [])
            for line in shown:
                console.print(Text("      " + printable(line), style="dim"))
    console.print()
    verdict = "[green bold]✓ PASS[/green bold]" if ok else "[red bold]✗ FAIL[/red bold]"
    thr = run.metadata.get("successThreshold", threshold)
    thr_txt = f"  [dim](threshold {thr:.2f})[/dim]" if isinstance(thr, (int, float)) else ""
    console.print(f"  {'Total:'.ljust(width + 1)} {score_text(run.total_score)} / 1.00 {verdict}{thr_txt}")
    gating = run.metadata.get("gatingFailures")
    if gating:
        console.print(f"  [red]gating command failed: {', '.join(gating)}[/red]")
    broken = run.metadata.get("workspaceErrors")
    if broken:
        console.print(f"  [red]could not grade the agent's output: {', '.join(map(str, broken))}[/red]")
    t = run.telemetry
    if t is not None:
        console.print()
        console.print("[bold]Telemetry:[/bold]")
        console.print(f"  Duration:   {t.duration_ms / 1000:.1f}s")
        console.print(f"  Tokens:     {t.tokens_in:,} in / {t.tokens_out:,} out")
        cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
        console.print(f"  Cost:       {cost}{' (of the original calls, replayed)' if cached else ''}")
        console.print(f"  Tool calls: {t.tool_calls}   Turns: {t.turns}")
        if t.judge_tokens_in or t.judge_tokens_out:
            judge_cost = "unknown" if t.judge_cost_usd is None else f"${t.judge_cost_usd:.4f}"
            console.print(f"  Judge:      {t.judge_tokens_in:,} in / {t.judge_tokens_out:,} out, {judge_cost}")
        if t.workspace_dir:
            console.print(f"  Workspace:  {t.workspace_dir}")
    diff = run.metadata.get("diff")
    if diff:
        console.print(f"  Changes:    {diff.get('summary')}")
    sandbox = run.metadata.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("kind"):
        limits = sandbox.get("limits") or {}
        unenforced = [name for name, v in limits.items()
                      if isinstance(v, dict) and v.get("limit") is not None and not v.get("enforcedBy")]
        line = f"{sandbox['kind']}, {'network on' if sandbox.get('network') else 'no network'}"
        if unenforced:
            line += f" (not enforced here: {', '.join(unenforced)})"
        console.print(f"  Sandbox:    {line}")
    flags = run.metadata.get("suspicious")
    if isinstance(flags, list) and flags:
        console.print(Text(f"  Suspicious: {printable('; '.join(map(str, flags[:5])))}"
                           + (f" (+{len(flags) - 5} more)" if len(flags) > 5 else ""), style="yellow"))
    tampered = run.metadata.get("tampered")
    if isinstance(tampered, list) and tampered:
        console.print(Text(f"  Tampered:   {printable(str(tampered[0]))}", style="red"))
    grading = run.metadata.get("grading")
    if isinstance(grading, dict) and (grading.get("restored") or grading.get("removed")):
        undone = [*(f"restored {p}" for p in grading.get("restored", [])[:5]),
                  *(f"removed {p}" for p in grading.get("removed", [])[:5])]
        console.print(f"  Grading:    {'; '.join(undone)}", style="yellow")


def batch_summary_table(batch: BatchRecord) -> Table:
    table = Table(title=f"Batch {batch.batch_id}", show_header=False, box=None)
    table.add_column("field", style="bold")
    table.add_column("value")
    rate = f" ({batch.successful_runs / batch.total_runs:.0%})" if batch.total_runs else ""
    table.add_row("Runs", str(batch.total_runs))
    table.add_row("Successful", f"{batch.successful_runs}{rate}")
    table.add_row("Mean score", score_text(batch.avg_score))
    table.add_row("Created", _ms_time(batch.created_at))
    table.add_row("Completed", _ms_time(batch.completed_at))
    meta = batch.metadata or {}
    for key in ("suite", "scenario", "tier", "agent", "model", "specialist", "sandbox", "judge"):
        value = meta.get(key)
        if value:
            table.add_row(key.capitalize(), ", ".join(map(str, value)) if isinstance(value, list) else str(value))
    state = completeness(meta, batch.runs) if batch.runs else None
    if state is not None:
        table.add_row("Cells", Text(state.describe(), style="yellow" if state.complete is False else ""))
    replayed = sum(1 for r in batch.runs or [] if (r.metadata or {}).get("cached"))
    if replayed:
        table.add_row("Cached", Text(f"{replayed} run(s) replayed model answers from the cache (--cache replay): "
                                     "not new samples", style="yellow"))
    retried = sum(1 for r in batch.runs or [] if (r.metadata or {}).get("retryOf"))
    if retried:
        table.add_row("Retried", f"{retried} run(s) redo an earlier attempt; the aggregates count the latest")
    mixed = mixed_sandbox_note(batch.runs or [])
    if mixed:
        table.add_row("Warning", Text(mixed, style="yellow"))
    return table


def _short_ms(ms: int | None) -> str:
    return "-" if not ms else datetime.fromtimestamp(ms / 1000, UTC).strftime("%m-%d %H:%M")


def runs_table(runs: list[RunRecord], title: str | None = None, show_started: bool = False) -> Table:
    """Runs, one per row; columns that would be empty for every run are left out (narrow terminals)."""
    table = Table(title=title)
    show_model = any(r.model for r in runs)
    show_suite = len({r.suite for r in runs}) > 1
    columns = ["run"] + (["started"] if show_started else []) + ["scenario", "tier", "agent"]
    show_cache = any(cached_text(r) for r in runs)
    show_flags = any((r.metadata or {}).get("suspicious") for r in runs)
    columns += (["model"] if show_model else []) + ["status", "score", "ok"] + (["cache"] if show_cache else [])
    columns += ["flags"] if show_flags else []
    for col in columns:
        table.add_column(col, justify="right" if col == "score" else "center" if col == "ok" else "left",
                         no_wrap=col in ("run", "started", "score"), overflow="fold")
    for r in runs:
        status = r.status + (f"/{r.failure_class}" if r.failure_class else "")
        row = [r.run_id] + ([_iso_time(r.started_at)[5:16]] if show_started else [])
        row += [f"{r.suite}/{r.scenario}" if show_suite else r.scenario, r.tier, r.agent]
        row += ([r.model or "-"] if show_model else [])
        row += [Text(status, style=_STATUS_STYLE.get(r.status, "")), score_text(r.total_score),
                "✓" if r.is_successful else "✗"]
        row += [Text(cached_text(r) or "", style="yellow")] if show_cache else []
        flags = (r.metadata or {}).get("suspicious") or []
        row += [Text(f"suspicious ({len(flags)})" if flags else "", style="yellow")] if show_flags else []
        table.add_row(*row)
    return table


def breakdown_tables(batch: BatchRecord) -> list[Table]:
    tables = []
    for dimension, rows in (batch.breakdowns or {}).items():
        if not rows or len(rows) < 2 and dimension != "scenario":
            continue
        table = Table(title=f"By {dimension}")
        for col in (dimension, "runs", "successful", "mean", "min", "max"):
            table.add_column(col, justify="left" if col == dimension else "right")
        for row in rows:
            table.add_row(str(row.get("key") or "-"), str(row.get("runs", 0)), str(row.get("successfulRuns", 0)),
                          score_text(row.get("avgScore")), score_text(row.get("minScore")),
                          score_text(row.get("maxScore")))
        tables.append(table)
    return tables


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "-" if value is None else str(value)


def batch_subject(meta: dict[str, Any], kind: str | None) -> tuple[str, str]:
    """What a batch ran and who ran it: suite/scenario and agents for scenario runs, the
    dataset and the providers' models (its targets) for dataset requests."""
    if kind == "dataset" or meta.get("kind") == "dataset":
        dataset = meta.get("dataset")
        name = dataset.get("ref") or dataset.get("name") if isinstance(dataset, dict) else dataset
        return str(name or "-"), _joined(meta.get("targets")) or "-"
    where = f"{_joined(meta.get('suite'))}/{_joined(meta.get('scenario'))}" if meta.get("suite") else "-"
    return where, _joined(meta.get("agent")) or "-"


def batches_table(batches: list[BatchRecord]) -> Table:
    table = Table(title="Batches")
    for col, justify in (("batch", "left"), ("created", "left"), ("kind", "left"), ("scenario / dataset", "left"),
                         ("agent / model", "left"), ("runs", "right"), ("ok", "right"), ("mean", "right")):
        table.add_column(col, justify=justify, no_wrap=col in ("batch", "created"), overflow="fold")
    for b in batches:
        what, who = batch_subject(b.metadata or {}, b.kind)
        table.add_row(b.batch_id, _short_ms(b.created_at), b.kind or "-", what, who, str(b.total_runs),
                      str(b.successful_runs), score_text(b.avg_score))
    return table


# --------------------------------------------------------------------------- transcripts

ARG_VALUE_CHARS = 60  # a tool call's argument value, shown inline
ARGS_CHARS = 200  # all of a call's arguments
RESULT_LINES = 3  # of a tool result
RESULT_LINE_CHARS = 160


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact_value(value: Any) -> str:
    """One argument value on one line: a short string quoted, a long or multi-line one as its
    first line and its size, anything else as compact JSON."""
    if isinstance(value, str):
        lines = value.splitlines() or [""]
        if len(lines) == 1 and len(value) <= ARG_VALUE_CHARS:
            return json.dumps(value, ensure_ascii=False)
        first = json.dumps(_cut(lines[0], ARG_VALUE_CHARS), ensure_ascii=False)
        if len(lines) == 1:
            return f"{first} ({len(value)} chars)"
        return f"{first}… ({len(lines)} lines, {len(value)} chars)"
    return _cut(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str), ARG_VALUE_CHARS)


def tool_call_text(name: Any, arguments: Any) -> str:
    """``name(key=value, ...)`` with every value compacted (see :func:`_compact_value`).
    Arguments stored as a JSON string (the claude-code agent, or unparsed model output) are
    decoded when they can be."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return f"{name}({_compact_value(arguments)})"
    if arguments is None:
        args = ""
    elif isinstance(arguments, dict):
        shown = [(key, _compact_value(value)) for key, value in arguments.items()]
        # Shortened values (a file's content) go last, after the short ones that say what is done.
        shown.sort(key=lambda kv: "…" in kv[1])
        args = ", ".join(f"{key}={value}" for key, value in shown)
    else:
        args = _compact_value(arguments)
    return f"{name or '?'}({_cut(args, ARGS_CHARS)})"


def _result_lines(entry: dict[str, Any]) -> list[Text]:
    content = entry.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    lines = [line for line in text.strip().splitlines() if line.strip()] or ["(empty)"]
    error = bool(entry.get("is_error"))
    shown = [_cut(line, RESULT_LINE_CHARS) for line in lines[:RESULT_LINES]]
    if len(lines) > RESULT_LINES:
        shown.append(f"… {len(lines) - RESULT_LINES} more line(s)")
    first = "    ← error: " if error else "    ← "
    return [Text((first if i == 0 else " " * len(first)) + printable(line), style="red" if error else "dim")
            for i, line in enumerate(shown)]


def _calls_of(entry: dict[str, Any]) -> list[Any]:
    """The tool calls of an assistant entry: ``tool_calls`` (the API agents' loop, one entry per
    turn) or ``tool_call`` (the claude-code agent, one entry per call)."""
    calls = entry.get("tool_calls")
    if isinstance(calls, list):
        return calls
    if isinstance(calls, str):  # the store shortened an oversized list to a note
        return [calls]
    single = entry.get("tool_call")
    return [single] if single else []


def render_transcript(console: Console, messages: list[Any]) -> None:
    """Each message as ``role: text``; an assistant turn's tool calls as ``→ name(args)``, each
    followed by its result (``←``, first lines only, ``error:`` when it failed)."""
    results: dict[Any, list[dict[str, Any]]] = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id"):
            results.setdefault(m["tool_call_id"], []).append(m)
    shown: set[int] = set()
    last_role = None
    for m in messages:
        if not isinstance(m, dict):
            console.print(Text(printable(json.dumps(m, ensure_ascii=False, default=str))))
            continue
        if id(m) in shown:  # a tool result, already shown under its call
            last_role = "tool"
            continue
        role = str(m.get("role", "?"))
        if role == "tool":  # a result whose call was not found
            name = m.get("name") or m.get("tool_call_id")
            console.print(Text(printable(f"tool {name}:") if name else "tool:", style="bold"))
            for line in _result_lines(m):
                console.print(line)
            last_role = role
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else (
            "" if content is None else json.dumps(content, ensure_ascii=False, default=str))
        calls = _calls_of(m) if role == "assistant" else []
        if text or not calls or last_role != "assistant":
            head = Text(f"{printable(role)}:", style="bold")
            if text or not calls:
                head.append(" ")
                head.append(printable(text) or "(no text)", style="" if text else "dim")
            console.print(head)
        for call in calls:
            if not isinstance(call, dict):
                console.print(Text(f"  → {printable(str(call))}", style="yellow"))
                continue
            console.print(Text("  → " + printable(tool_call_text(call.get("name"), call.get("arguments"))),
                               style="cyan"))
            for result in results.get(call.get("id"), []) if call.get("id") else []:
                if id(result) not in shown:
                    shown.add(id(result))
                    for line in _result_lines(result):
                        console.print(line)
                    break
        last_role = role
