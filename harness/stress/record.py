"""What a stress test records: each request as the one recorded cell (:func:`sample_cell`), and,
once finished, the figures of the whole test (:func:`summarize`), its settings
(:func:`record_config`, the base URL without credentials) and the
:class:`~harness.results.records.StressRecord` for ``ResultsClient.post_stress``
(:func:`build_record`).

A request is a :class:`~harness.cells.CellRecord` named ``STEP#N`` (the step's label, the
request's place in it), in the category of its step: ``passed`` when it was answered, else
``timeout`` or ``error`` (``error_kind`` its failure class); its duration is its latency, and its
line the sample the load figures are computed from (:mod:`worker.analysis.stress`). A load test
has no resume, so no request is retryable, and it stores the curve, not its requests.

:func:`summarize` is ``summarize_run`` of :mod:`worker.analysis.stress` plus what the profile
asks for: the rate-limit onset (``rate-limit``), the baseline/spike/after phases (``spike``,
``failure-recovery``) and the failure window (``failure-recovery``, ``sustained``). The record
keeps the steps that measured something (a step cut short before it sent a request is left
out) and the five most frequent failure messages. Times are UTC to the second.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harness._util.clock import now_iso
from harness.cells import CellRecord
from harness.results.records import StressRecord, new_stress_id
from harness.stress.plan import TIMED_PROFILES, StressOptions
from worker.analysis import stress as analysis


def summarize(profile: str, steps: list[dict[str, Any]], samples: list[dict[str, Any]], *,
              slo_ms: float | None = None,
              max_error_rate: float = analysis.DEFAULT_MAX_ERROR_RATE) -> dict[str, Any]:
    """``summarize_run`` plus the figures of ``profile``: the rate-limit onset (``rate-limit``),
    the baseline/spike/after phases (``spike``), the failure window (``failure-recovery``)."""
    summary = analysis.summarize_run(steps, samples, varies_concurrency=profile == "ramp", slo_ms=slo_ms,
                                     max_error_rate=max_error_rate)
    summary["profile"] = profile
    if profile == "rate-limit":
        onset = analysis.rate_limit_onset(steps)
        if onset is not None:
            by_index = {s["index"]: s for s in steps}
            onset["targetRps"] = by_index[onset["stepIndex"]].get("targetRps")
            previous = [s for s in steps if s["index"] < onset["stepIndex"]]
            onset["lastCleanTargetRps"] = previous[-1].get("targetRps") if previous else None
        summary["rateLimit"] = onset
    if profile in ("spike", "failure-recovery"):
        phases: dict[str, list[int]] = {}
        for step in steps:
            phases.setdefault(step["phase"], []).append(step["index"])
        summary["phases"] = {name: analysis.phase_figures(samples, indices) for name, indices in phases.items()}
    if profile in ("failure-recovery", "sustained"):
        before, during, after = analysis.failure_window(steps, max_error_rate)
        summary["failureWindow"] = None if not during else {
            "before": analysis.phase_figures(samples, before),
            "during": analysis.phase_figures(samples, during),
            "after": analysis.phase_figures(samples, after),
        }
    return summary


def sample_cell(sample: dict[str, Any], step: str, index: int) -> CellRecord:
    """The request ``sample`` (the ``index``-th of the step labelled ``step``) as a recorded cell
    (module docstring)."""
    error = sample.get("error")
    outcome = "passed" if sample.get("ok") else "timeout" if error == "timeout" else "error"
    return CellRecord.of((step, index), f"{step}#{index}", step, outcome, "ok" if sample.get("ok") else error,
                         False, None, sample.get("latencyMs"), sample.get("ttftMs"), sample.get("inputTokens") or 0,
                         sample.get("outputTokens") or 0, sample.get("costUsd"), error, None, sample)


def _redacted_url(url: str | None) -> str | None:
    """``url`` without user information, query or fragment (they may hold credentials)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def record_config(opts: StressOptions, *, planned_steps: int, provider: str, requested_provider: str) -> dict[str, Any]:
    """The settings a record keeps: the options that shaped the load, how many steps were
    planned, and the provider asked for when it differs from the one that served (``provider``)."""
    o = opts
    config: dict[str, Any] = {
        "baseUrl": _redacted_url(o.base_url),
        "concurrency": o.concurrency,
        "maxConcurrency": o.max_concurrency,
        "stepSeconds": None if o.step_requests is not None else o.step_s,
        "stepRequests": o.step_requests,
        "durationS": o.total_s if o.profile in TIMED_PROFILES else None,
        "promptTokens": o.prompt_tokens,
        "maxTokens": o.max_tokens,
        "timeoutS": o.timeout_s,
        "stream": o.stream,
        "sloMs": o.slo_ms,
        "maxCost": o.max_cost,
        "plannedSteps": planned_steps,
    }
    if o.profile == "large-input":
        config["maxPromptTokens"] = o.max_prompt_tokens
    if o.profile == "rate-limit":
        config.update(startRate=o.start_rate, maxRate=o.max_rate)
    if requested_provider != provider:
        config["requestedProvider"] = requested_provider
    return config


def build_record(opts: StressOptions, *, provider: str, status: str, stop_reason: str | None,
                 step_summaries: list[dict[str, Any] | None], samples: list[dict[str, Any]],
                 error_messages: dict[tuple[str, str], int], started_at: str,
                 config: dict[str, Any]) -> StressRecord:
    """The record of a test: the summaries of the steps that measured something (a step cut short
    before it sent a request is left out), :func:`summarize` over them with the stop reason and
    the five most frequent ``(class, message)`` failures, and the test's settings."""
    steps = [s for s in step_summaries if s is not None and (s["requests"] or not s.get("partial"))]
    summary = summarize(opts.profile, steps, samples, slo_ms=opts.slo_ms, max_error_rate=opts.max_error_rate)
    summary["stopReason"] = stop_reason
    summary["errorMessages"] = [
        {"class": cls, "message": message, "count": count}
        for (cls, message), count in sorted(error_messages.items(), key=lambda kv: -kv[1])[:5]
    ]
    return StressRecord(
        stress_id=new_stress_id(),
        provider=provider,
        model=opts.model,
        profile=opts.profile,
        status=status,  # type: ignore[arg-type]
        started_at=started_at,
        completed_at=now_iso("seconds"),
        config=config,
        summary=summary,
        steps=steps,
    )
