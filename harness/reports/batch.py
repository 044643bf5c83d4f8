"""The batch report: one self-contained HTML page of a stored batch, in two steps.

:func:`collect_batch` asks the results store, through the results client, for everything the
page shows: the batch with the aggregates and breakdowns the store computes
(``GET /api/batches/:id``), its runs (``GET /api/runs?batchId=...``, page after page), and
their telemetry (``GET /api/analysis/runs?batchId=...``: duration and cost of every run in one
answer). The result is a plain dict (JSON as it stands). :func:`render_batch_report` turns
that dict into the page: the headline figures (runs, pass rate with its 95% Wilson interval,
mean score, cost with the runs of unknown cost counted apart), breakdowns by scenario, agent,
model and tier (tables and bar charts), the outcome mix, the failures with their failure
class, every run, and for dataset batches (tier ``dataset``) latency percentiles per
provider.

Unknown figures read "unknown" or "—", never zero. Runs an automatic retry redid are listed
but left out of the figures, as the store leaves them out of its aggregates. The same dict
always gives the same page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from harness.reports.html import (
    MISSING,
    Markup,
    badge,
    escape,
    figure,
    fmt_cost,
    fmt_int,
    fmt_ms,
    fmt_pct,
    key_values,
    page,
    paragraph,
    section,
    stat_cards,
    table,
    toc,
)
from harness.reports.svg import bar_chart, percentile_chart, stacked_bar_chart
from worker.analysis.stats import percentile
from worker.analysis.summary import Figures, Rate, Spread, summarize

Entry = Mapping[str, Any]

DIMENSIONS = (("scenario", "Scenario"), ("agent", "Agent"), ("model", "Model"), ("tier", "Tier"))
# The outcome of a run in the outcome chart: its status, with "completed" split by whether it passed.
OUTCOMES = (("passed", "green"), ("completed, not passed", "sky"), ("failed", "vermillion"),
            ("timeout", "orange"), ("budget exceeded", "purple"), ("error", "grey"))
STATUS_TONES = {"completed": "ok", "failed": "bad", "timeout": "warn", "budget_exceeded": "warn", "error": "bad"}
FAILURE_CLASSES = ("agent", "validation", "judge", "tampered", "infra", "harness")
DATASET_TIER = "dataset"
ALL_RUNS = 10**9  # list_runs follows the store's pages until it has them all
NONE_LABEL = "(none)"
NO_CLASS = "not passed"  # a run that completed without passing has no failure class
REASONS_FETCHED = 200  # at most this many failed runs are read whole to say why they failed


class BatchNotFound(LookupError):
    """The store holds no batch of that id."""


# --- collecting -------------------------------------------------------------------------


def _telemetry(client: Any, batch_id: str, runs: Sequence[Any]) -> tuple[dict[str, dict[str, Any] | None], bool]:
    """runId -> telemetry (wire form, or None when the run has none); and whether the store
    cut the answer (the runs beyond it then have unknown durations and costs)."""
    ask = getattr(client, "analysis", None)
    if ask is not None:
        answer = ask("/api/analysis/runs", {"batchId": batch_id})
        found = {str(r.get("runId")): r.get("telemetry") for r in answer.get("runs") or []}
        return found, bool(answer.get("truncated"))
    found = {}
    for run in runs:  # a client without the analysis routes: one request per run
        full = client.get_run(run.run_id)
        found[run.run_id] = full.telemetry.to_wire() if full is not None and full.telemetry is not None else None
    return found, False


def collect_batch(client: Any, batch_id: str) -> dict[str, Any]:
    """Everything the batch report shows, read through ``client`` (a results client).
    Raises :class:`BatchNotFound` when the store has no such batch."""
    batch = client.get_batch(batch_id)
    if batch is None:
        where = getattr(client, "destination", None)
        raise BatchNotFound(f"no batch {batch_id!r}" + (f" in {where}" if where else "")
                            + " (bench batches lists the stored batches)")
    runs = client.list_runs(limit=ALL_RUNS, batchId=batch_id)
    telemetry, truncated = _telemetry(client, batch_id, runs)
    data = batch_data(batch, runs, telemetry)
    if truncated:
        data["notes"].append("the store answered the telemetry of the first runs only: the durations and costs "
                             "of the others are unknown")
    try:
        from harness.scenarios.plan import completeness

        state = completeness(batch.metadata, runs)
    except Exception:  # noqa: BLE001 - a fact of the page, never a reason to fail it
        state = None
    if state is not None:
        data["cells"] = state.describe()
    _evaluation_reasons(client, data["failures"])
    return data


def evaluation_reason(evaluations: Sequence[Any]) -> str | None:
    """The first evaluation that did not give full marks, as "name 0.00/1.00: its first line"."""
    for e in evaluations:
        if e.status != "ok" or e.score < e.max_score:
            detail = _first_line(e.details, 200)
            head = f"{e.evaluator_name} {e.status}" if e.status != "ok" else \
                f"{e.evaluator_name} {e.score:.2f}/{e.max_score:.2f}"
            return f"{head}: {detail}" if detail else head
    return None


def _evaluation_reasons(client: Any, failures: Sequence[dict[str, Any]]) -> None:
    """Fill the reason of failed runs that recorded none from their evaluations (``GET
    /api/runs/:id``), for the first :data:`REASONS_FETCHED` of them."""
    for entry in [f for f in failures if not f.get("reason")][:REASONS_FETCHED]:
        try:
            full = client.get_run(entry["run_id"])
        except Exception:  # noqa: BLE001 - a missing reason is shown as "—"
            continue
        if full is not None:
            entry["reason"] = evaluation_reason(full.evaluations)


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _run_cost(tel: Mapping[str, Any] | None) -> float | None:
    """The agent's and the judge's cost of a run; None when either is unknown."""
    if not tel:
        return None
    agent = _float(tel.get("costUsd"))
    judge = _float(tel.get("judgeCostUsd"))
    if judge is None and not (tel.get("judgeTokensIn") or tel.get("judgeTokensOut")):
        judge = 0.0  # no judge called
    if agent is None or judge is None:
        return None
    return agent + judge


def _first_line(value: Any, limit: int = 300) -> str | None:
    if value is None:
        return None
    lines = [line.strip() for line in str(value).strip().splitlines() if line.strip()]
    if not lines:
        return None
    text = lines[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_reason(status: str, metadata: Mapping[str, Any], score: float | None) -> str | None:
    """Why a run did not succeed, in one line, from what the run recorded."""
    for key in ("error", "agentError"):
        text = _first_line(metadata.get(key))
        if text:
            return text
    if isinstance(metadata.get("infraFailure"), dict):
        return "the model provider failed, not the agent"
    gating = metadata.get("gatingFailures")
    if gating:
        names = gating if isinstance(gating, list) else [gating]
        return "gating command failed: " + ", ".join(map(str, names))
    broken = metadata.get("workspaceErrors")
    if broken:
        names = broken if isinstance(broken, list) else [broken]
        return "could not grade the agent's output: " + ", ".join(map(str, names))
    if metadata.get("ungraded"):
        return "not graded"
    if status in ("timeout", "budget_exceeded"):
        return status.replace("_", " ")
    threshold = _float(metadata.get("successThreshold")) or _float(metadata.get("threshold"))
    if score is not None and threshold is not None:
        return f"score {score:.2f} below the threshold {threshold:.2f}"
    return None


def _run_entry(run: Any, tel: Mapping[str, Any] | None, redone: set[str]) -> dict[str, Any]:
    meta = run.metadata or {}
    score = _float(run.total_score)
    provider = meta.get("target") if isinstance(meta.get("target"), str) else (
        f"{run.agent}:{run.model}" if run.model else str(run.agent))
    return {
        "run_id": run.run_id, "suite": run.suite, "scenario": run.scenario, "tier": run.tier,
        "tier_label": meta.get("tierLabel") if isinstance(meta.get("tierLabel"), str) else None,
        "agent": run.agent, "model": run.model, "provider": provider,
        "specialist": f"{run.specialist_name}@{run.specialist_version}" if run.specialist_enabled else None,
        "status": run.status, "failure_class": run.failure_class, "score": score,
        "successful": bool(run.is_successful), "started_at": run.started_at,
        "duration_ms": _float((tel or {}).get("durationMs")) if tel else None,
        "cost_usd": _run_cost(tel),
        "ttft_ms": _float(meta.get("ttftMs")),
        "iteration": meta.get("iteration") if isinstance(meta.get("iteration"), int) else None,
        "redone": run.run_id in redone, "cached": bool(meta.get("cached")),
        "reason": None if run.is_successful else failure_reason(run.status, meta, score),
    }


def _rate(successes: int, n: int) -> dict[str, Any]:
    rate = Rate.of(successes, n)
    return {"pass_rate": rate.value, "pass_low": rate.low, "pass_high": rate.high}


def _breakdown(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        n, k = int(row.get("runs") or 0), int(row.get("successfulRuns") or 0)
        out.append({"key": row.get("key"), "runs": n, "successful": k, **_rate(k, n),
                    "mean_score": _float(row.get("avgScore")), "min_score": _float(row.get("minScore")),
                    "max_score": _float(row.get("maxScore"))})
    return out


def _computed_breakdown(runs: Sequence[Mapping[str, Any]], dim: str) -> list[dict[str, Any]]:
    """A breakdown from the runs themselves, for a store that answered none."""
    groups: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for run in runs:
        groups[run.get(dim)].append(run)
    rows = []
    for key in sorted(groups, key=lambda k: (k is not None, str(k))):
        members = groups[key]
        scores = [r["score"] for r in members if r["score"] is not None]
        rows.append({"key": key, "runs": len(members), "successfulRuns": sum(1 for r in members if r["successful"]),
                     "avgScore": sum(scores) / len(scores) if scores else None,
                     "minScore": min(scores, default=None), "maxScore": max(scores, default=None)})
    return _breakdown(rows)


def _percentiles(spread: Spread) -> dict[str, float | None]:
    return {"min": spread.min, "p50": spread.p50, "p95": spread.p95, "p99": spread.p99, "max": spread.max}


def _latency(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per provider of a dataset batch: response time percentiles (and time to first token)
    over the requests that got an answer, with the pass rate of its runs."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for run in runs:
        if run["tier"] == DATASET_TIER:
            groups[str(run["provider"])].append(run)
    out = []
    for provider in sorted(groups):
        members = groups[provider]
        figures = summarize(Figures("error" if r["status"] == "error" else "passed" if r["successful"] else "failed",
                                    r["duration_ms"], r["ttft_ms"]) for r in members)
        passed = figures.count("passed")
        out.append({"provider": provider, "runs": len(members), "errors": figures.count("error"),
                    "successful": passed, **_rate(passed, len(members)),
                    "duration": _percentiles(figures.duration), "duration_count": figures.duration.count,
                    "ttft": _percentiles(figures.ttft), "ttft_count": figures.ttft.count})
    return out


def batch_data(batch: Any, runs: Sequence[Any], telemetry: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any]:
    """The report's dict from a :class:`~harness.results.records.BatchRecord`, its runs
    (:class:`~harness.results.records.RunRecord`) and their telemetry by run id."""
    redone = {str((r.metadata or {}).get("retryOf")) for r in runs if (r.metadata or {}).get("retryOf")}
    entries = sorted((_run_entry(r, telemetry.get(r.run_id), redone) for r in runs),
                     key=lambda e: (str(e["started_at"] or ""), e["run_id"]))
    counted = [e for e in entries if not e["redone"]]
    costs = [e["cost_usd"] for e in entries if e["cost_usd"] is not None]
    durations = [e["duration_ms"] for e in counted if e["duration_ms"] is not None]
    total, successful = int(batch.total_runs or 0), int(batch.successful_runs or 0)
    if not total and counted:  # a store without aggregates: count the runs here
        total, successful = len(counted), sum(1 for e in counted if e["successful"])
    breakdowns = {}
    for dim, _ in DIMENSIONS:
        rows = (batch.breakdowns or {}).get(dim)
        breakdowns[dim] = _breakdown(rows) if rows is not None else _computed_breakdown(counted, dim)
    failures = [e for e in counted if not e["successful"]]
    notes = []
    if redone:
        notes.append(f"{len(redone & {e['run_id'] for e in entries})} run(s) were redone by a retry: they are listed "
                     "among the runs but left out of the figures, which count the latest attempt")
    cached = sum(1 for e in counted if e["cached"])
    if cached:
        notes.append(f"{cached} run(s) replayed model answers from the cache: not new samples; their cost and tokens "
                     "are those of the original calls")
    try:
        from harness.results.records import mixed_sandbox_note

        mixed = mixed_sandbox_note(list(runs))
    except Exception:  # noqa: BLE001
        mixed = None
    if mixed:
        notes.append(mixed)
    is_dataset = any(e["tier"] == DATASET_TIER for e in entries)
    return {
        "batch_id": batch.batch_id,
        "created_at": batch.created_at,
        "completed_at": batch.completed_at,
        "metadata": dict(batch.metadata or {}),
        "aggregates": {
            "runs": total, "successful": successful, **_rate(successful, total),
            "mean_score": _float(batch.avg_score),
            "cost_usd": sum(costs) if costs else None, "cost_runs": len(costs),
            "cost_unknown_runs": len(entries) - len(costs), "listed_runs": len(entries),
            "duration_total_ms": sum(durations) if durations else None,
            "duration_p50_ms": percentile(durations, 50),
            "duration_unknown_runs": len(counted) - len(durations),
            "statuses": dict(Counter(e["status"] for e in counted)),
            "failure_classes": dict(Counter(e["failure_class"] or NO_CLASS for e in failures)),
            "failures": len(failures),
        },
        "breakdowns": breakdowns,
        "runs": entries,
        "failures": failures,
        "latency": _latency(counted) if is_dataset else None,
        "cells": None,
        "notes": notes,
    }


# --- rendering --------------------------------------------------------------------------


def _pct(v: float) -> str:
    return f"{v * 100:.1f}%"


def _score(v: float | None) -> str:
    return MISSING if v is None else f"{v:.2f}"


def _label(value: Any) -> str:
    return NONE_LABEL if value is None or value == "" else str(value)


def _when_ms(ms: Any) -> str | None:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms <= 0:
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _joined(value: Any) -> str | None:
    if value is None or value == [] or value == "":
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value if v is not None) or None
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


META_FACTS = (("kind", "Kind"), ("dataset", "Dataset"), ("suite", "Suites"), ("agent", "Agents"),
              ("model", "Models"), ("tier", "Tiers"), ("specialist", "Specialists"), ("targets", "Targets"),
              ("sandbox", "Sandbox"), ("judge", "Judge"), ("configHash", "Config hash"), ("shard", "Shards"),
              ("invocations", "Invocations"), ("harnessVersion", "Harness version"))


def _facts(data: Entry) -> Markup:
    meta = data.get("metadata") or {}
    facts: list[tuple[str, object]] = [("Batch", data.get("batch_id") or MISSING),
                                       ("Created", _when_ms(data.get("created_at")) or MISSING),
                                       ("Completed", _when_ms(data.get("completed_at")) or MISSING)]
    scenarios = meta.get("scenario")
    for key, label in META_FACTS:
        text = _joined(meta.get(key))
        if key == "dataset" and isinstance(meta.get(key), dict):
            text = _joined(meta[key].get("name")) or text
        if key == "configHash" and meta.get(key):
            hashes = [str(h) for h in (meta[key] if isinstance(meta[key], list) else [meta[key]])]
            text = ", ".join(h[:12] for h in hashes[:4]) + (f" and {len(hashes) - 4} more" if len(hashes) > 4 else "")
        if text:
            facts.append((label, text))
    if isinstance(scenarios, list) and len(scenarios) > 6:
        facts.append(("Scenarios", f"{len(scenarios)} scenarios"))
    elif scenarios:
        facts.append(("Scenarios", _joined(scenarios) or MISSING))
    if data.get("cells"):
        facts.append(("Cells", data["cells"]))
    return key_values(facts)


def _headline(agg: Entry) -> Markup:
    runs = agg.get("runs") or 0
    rate = agg.get("pass_rate")
    low, high = agg.get("pass_low"), agg.get("pass_high")
    unknown_cost = agg.get("cost_unknown_runs") or 0
    if agg.get("cost_usd") is None:
        cost_note = f"no run of known cost ({fmt_int(unknown_cost)} unknown)" if unknown_cost else None
    elif unknown_cost:
        cost_note = f"{fmt_int(unknown_cost)} run(s) of unknown cost not included"
    else:
        cost_note = f"all {fmt_int(agg.get('cost_runs'))} runs priced"
    classes = agg.get("failure_classes") or {}
    failure_note = " · ".join(f"{n} {name}" for name, n in sorted(classes.items())) or None
    p50 = agg.get("duration_p50_ms")
    return stat_cards([
        ("Runs", fmt_int(runs), f"{fmt_int(agg.get('successful'))} passed" if runs else "no runs counted"),
        ("Pass rate", fmt_pct(rate, unknown="no runs"),
         f"95% interval {_pct(low)}–{_pct(high)}" if rate is not None and low is not None and high is not None
         else None),
        ("Mean score", _score(agg.get("mean_score")) if agg.get("mean_score") is not None else "unknown", None),
        ("Total cost", fmt_cost(agg.get("cost_usd")), cost_note),
        ("Run time", fmt_ms(agg.get("duration_total_ms")),
         f"median {fmt_ms(p50)} per run" if p50 is not None else "no durations recorded"),
        ("Failures", fmt_int(agg.get("failures")), failure_note),
    ])


def _rate_chart(rows: Sequence[Entry], title: str) -> str:
    items = [(_label(r.get("key")), r.get("pass_rate"), r.get("pass_low"), r.get("pass_high")) for r in rows]
    return figure(bar_chart(items, title=title, max_value=1.0, value_format=_pct),
                  caption="Bars: share of runs that passed; whiskers and brackets: 95% Wilson interval.")


def _score_chart(rows: Sequence[Entry], title: str) -> str:
    items = [(_label(r.get("key")), r.get("mean_score"), None, None) for r in rows]
    return figure(bar_chart(items, title=title, max_value=1.0, value_format=lambda v: f"{v:.2f}"),
                  caption="Mean score of the runs (0 to 1); the table gives the lowest and highest.")


def _breakdowns(breakdowns: Entry) -> str:
    parts = []
    headers = ["", "Runs", "Passed", "Pass rate (95% interval)", "Mean score", "Lowest", "Highest"]
    for dim, label in DIMENSIONS:
        rows = breakdowns.get(dim) or []
        parts.append(f'<h3 id="by-{dim}">By {label.lower()}</h3>')
        if not rows:
            parts.append(paragraph(f"No runs to break down by {label.lower()}.", cls="note"))
            continue
        parts.append(_rate_chart(rows, f"Pass rate by {label.lower()}"))
        parts.append(_score_chart(rows, f"Mean score by {label.lower()}"))
        body = [[_label(r.get("key")), r.get("runs"), r.get("successful"),
                 fmt_pct(r.get("pass_rate"), r.get("pass_low"), r.get("pass_high"), unknown=MISSING),
                 _score(r.get("mean_score")), _score(r.get("min_score")), _score(r.get("max_score"))]
                for r in rows]
        parts.append(table([label, *headers[1:]], body, numeric=headers[1:],
                           caption=f"Runs by {label.lower()}, as the store aggregates them."))
    return "\n".join(parts)


def _outcomes(data: Entry) -> str:
    counted = [r for r in data.get("runs") or [] if not r.get("redone")]
    if not counted:
        return paragraph("No runs in this batch.", cls="note")
    by_setup: dict[str, Counter] = defaultdict(Counter)
    for r in counted:
        by_setup[str(r.get("provider"))][_outcome(r)] += 1
    names = [name for name, _ in OUTCOMES]
    extra = sorted({_outcome(r) for r in counted} - set(names))
    series = [*OUTCOMES, *((name, "black") for name in extra)]
    items = [(setup, [by_setup[setup].get(name, 0) for name, _ in series]) for setup in sorted(by_setup)]
    headers = ["Agent / model", *(name for name, _ in series), "Runs"]
    rows = [[setup, *values, sum(values)] for setup, values in items]
    return "\n".join([
        figure(stacked_bar_chart(items, title="Outcome by agent and model", series=series),
               caption="Passed: completed and successful; completed, not passed: the run finished below the "
                       "bar; the others are the run's status."),
        table(headers, rows, numeric=headers[1:], caption="Runs by outcome (latest attempts)."),
    ])


def _outcome(run: Entry) -> str:
    status = str(run.get("status") or "unknown")
    if status == "completed":
        return "passed" if run.get("successful") else "completed, not passed"
    return status.replace("_", " ")


def _latency_section(latency: Sequence[Entry]) -> str:
    if not latency:
        return paragraph("No dataset runs in this batch.", cls="note")
    parts = []
    known = [(r["provider"], r["duration"]) for r in latency if r.get("duration_count")]
    if known:
        parts.append(figure(percentile_chart(known, title="Response time by provider", value_format=fmt_ms),
                            caption="Over the requests that got an answer (errors left out)."))
    ttft = [(r["provider"], r["ttft"]) for r in latency if r.get("ttft_count")]
    if ttft:
        parts.append(figure(percentile_chart(ttft, title="Time to first token by provider", value_format=fmt_ms)))
    none = [r["provider"] for r in latency if not r.get("duration_count")]
    if none:
        parts.append(paragraph("No durations recorded for: " + ", ".join(none) + ".", cls="note"))
    headers = ["Provider", "Runs", "Errors", "Pass rate (95% interval)", "min", "p50", "p95", "p99", "max",
               "TTFT p50", "TTFT p95"]
    rows = [[r["provider"], r["runs"], r["errors"],
             fmt_pct(r.get("pass_rate"), r.get("pass_low"), r.get("pass_high"), unknown=MISSING),
             *(fmt_ms(r["duration"].get(k), unknown=MISSING) for k in ("min", "p50", "p95", "p99", "max")),
             fmt_ms(r["ttft"].get("p50"), unknown=MISSING), fmt_ms(r["ttft"].get("p95"), unknown=MISSING)]
            for r in latency]
    parts.append(table(headers, rows, numeric=headers[1:], caption="Response time percentiles per provider."))
    return "\n".join(parts)


def _status_badge(status: Any) -> Markup:
    text = str(status or "unknown")
    return badge(text.replace("_", " "), STATUS_TONES.get(text, "neutral"))


def _tier(r: Entry) -> str:
    label = r.get("tier_label")
    return f"{r.get('tier')} ({label})" if label and label != r.get("tier") else str(r.get("tier"))


def _failures(data: Entry) -> str:
    failures = data.get("failures") or []
    if not failures:
        return paragraph("Every counted run passed.", cls="note")
    classes = Counter(r.get("failure_class") or NO_CLASS for r in failures)
    order = [c for c in FAILURE_CLASSES if c in classes] + sorted(set(classes) - set(FAILURE_CLASSES))
    chart = bar_chart([(name, classes[name], None, None) for name in order], title="Failures by class",
                      value_format=lambda v: f"{v:,.0f}")
    headers = ["Run", "Scenario", "Tier", "Agent", "Model", "Status", "Failure class", "Score", "Why"]
    rows = [[r.get("run_id"), f"{r.get('suite')}/{r.get('scenario')}", _tier(r), r.get("agent"), r.get("model"),
             _status_badge(r.get("status")), r.get("failure_class") or NO_CLASS, _score(r.get("score")),
             r.get("reason")] for r in failures]
    return "\n".join([
        figure(chart, caption="Failure classes: agent (the agent's own doing), validation (a gating command or an "
                              "ungradable workspace), judge, infra (the provider or the machine), harness; "
                              f"{NO_CLASS}: completed below the bar."),
        table(headers, rows, numeric=["Score"], caption="Runs that did not pass (latest attempts)."),
    ])


def _runs(data: Entry) -> str:
    runs = data.get("runs") or []
    if not runs:
        return paragraph("No runs in this batch.", cls="note")
    headers = ["Run", "Scenario", "Tier", "Agent", "Model", "Status", "Score", "Duration", "Cost"]
    rows = []
    for r in runs:
        status = _status_badge(r.get("status"))
        if r.get("redone"):
            status = Markup(f"{status} {badge('redone', 'neutral')}")
        elif r.get("cached"):
            status = Markup(f"{status} {badge('cached', 'neutral')}")
        rows.append([r.get("run_id"), f"{r.get('suite')}/{r.get('scenario')}", _tier(r), r.get("agent"),
                     r.get("model"), status, _score(r.get("score")), fmt_ms(r.get("duration_ms")),
                     fmt_cost(r.get("cost_usd"))])
    return table(headers, rows, numeric=["Score", "Duration", "Cost"],
                 caption="Every run of the batch, in the order they started; cost includes the judge's.")


def render_batch_report(data: Mapping[str, Any], *, title: str | None = None) -> str:
    """The batch report as a complete, self-contained HTML document."""
    batch_id = str(data.get("batch_id") or "batch")
    agg = data.get("aggregates") or {}
    latency = data.get("latency")
    sections = [("summary", "Summary"), ("outcomes", "Outcomes"), ("breakdowns", "Breakdowns")]
    if latency is not None:
        sections.append(("latency", "Latency"))
    sections += [("failures", "Failures"), ("runs", "Runs")]
    meta = data.get("metadata") or {}
    notices = []
    if meta.get("interrupted") is True or (isinstance(meta.get("interrupted"), list) and True in meta["interrupted"]):
        notices.append(paragraph("This batch was interrupted: the figures cover the runs stored before it stopped.",
                                 cls="alert"))
    notices += [paragraph(f"Note: {note}.", cls="alert") for note in data.get("notes") or []]
    body = [
        toc(sections),
        *notices,
        section("Summary", _facts(data) + _headline(agg), id="summary"),
        section("Outcomes", _outcomes(data), id="outcomes"),
        section("Breakdowns", _breakdowns(data.get("breakdowns") or {}), id="breakdowns"),
    ]
    if latency is not None:
        body.append(section("Latency by provider", _latency_section(latency), id="latency"))
    body += [
        section("Failures", _failures(data), id="failures"),
        section("Runs", _runs(data), id="runs"),
        f"<footer>Batch {escape(batch_id)}. A self-contained page: no scripts, nothing loaded from the network."
        "</footer>",
    ]
    listed = agg.get("listed_runs")
    subtitle = f"{fmt_int(agg.get('runs'))} runs counted" + (
        f" of {fmt_int(listed)} stored" if listed is not None and listed != agg.get("runs") else "")
    created = _when_ms(data.get("created_at"))
    if created:
        subtitle += f" · created {created}"
    return page(title or f"Batch report: {batch_id}", "\n".join(str(part) for part in body if part),
                subtitle=subtitle)
