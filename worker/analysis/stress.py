"""Load tests of a model endpoint: per-step figures, the knee, the breaking point, recovery and
the resilience score (docs/analysis.md, "Stress tests", states every definition).

Pure functions over plain data, standard library only. The input is a list of **samples**, one
per request, as dicts:

- ``step``: the index of the step it belongs to;
- ``start``, ``end``: seconds since the test began (sent, answered or failed);
- ``ok``: True when the model answered; ``error``: one of :data:`ERROR_CLASSES` otherwise;
- ``latencyMs``; ``ttftMs`` (None when the call was not streamed or no token came);
- ``inputTokens``, ``outputTokens``, ``costUsd`` (None when the price is unknown);
- ``status`` (the HTTP status of a failure, if any), ``retryAfterS`` (what a 429 asked for).

The output is JSON as it stands (what ``POST /api/stress`` stores).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from worker.analysis.stats import percentile, percentiles

#: Failure classes, in the order they are reported.
ERROR_CLASSES = ("timeout", "429", "5xx", "connection", "other")

#: The thresholds of the analysis and their defaults.
DEFAULT_KNEE_GROWTH = 0.10  # throughput gain at most this fraction: "stopped growing"
DEFAULT_KNEE_LATENCY_GROWTH = 0.10  # p95 grew by more than this fraction: "latency grows"
DEFAULT_MAX_ERROR_RATE = 0.05  # a step whose error rate is above this is broken
DEFAULT_RECOVERY_STREAK = 10  # consecutive successes that mark a recovery
DEFAULT_RECOVERY_BUDGET_S = 60.0  # a recovery this slow (or slower) scores 0

#: Weights of the resilience score's components (they sum to 1).
RESILIENCE_WEIGHTS = {"availability": 0.5, "recovery": 0.25, "latency": 0.25}


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(float(value), digits)


def distribution(values: Iterable[float]) -> dict[str, float] | None:
    """``{p50, p95, p99, mean, max}`` of ``values`` (ms, rounded to 0.1), or None when empty."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    p50, p95, p99 = percentiles(xs, (50, 95, 99))
    return {
        "p50": _round(p50),
        "p95": _round(p95),
        "p99": _round(p99),
        "mean": _round(sum(xs) / len(xs)),
        "max": _round(max(xs)),
    }


def error_counts(samples: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Failed requests by class; a failure without a known class counts as ``other``."""
    counts = dict.fromkeys(ERROR_CLASSES, 0)
    for s in samples:
        if not s.get("ok"):
            kind = s.get("error")
            counts[kind if kind in counts else "other"] += 1
    return counts


def _cost(samples: Sequence[dict[str, Any]]) -> float | None:
    """The summed cost of the answered requests; None as soon as one's cost is unknown."""
    total = 0.0
    for s in samples:
        if s.get("ok"):
            if s.get("costUsd") is None:
                return None
            total += float(s["costUsd"])
    return round(total, 8)


def summarize_step(samples: Sequence[dict[str, Any]], *, index: int, label: str, phase: str,
                   concurrency: int, prompt_tokens: int, duration_s: float) -> dict[str, Any]:
    """The figures of one step from its samples and its length in seconds.

    ``throughputRps`` counts answered requests per second, ``requestRate`` every request that
    finished (answered or failed); latency and TTFT percentiles are over answered requests.
    """
    ok = [s for s in samples if s.get("ok")]
    duration = max(float(duration_s), 1e-9)
    out_tokens = sum(int(s.get("outputTokens") or 0) for s in ok)
    in_tokens = sum(int(s.get("inputTokens") or 0) for s in ok)
    ttfts = [s["ttftMs"] for s in ok if s.get("ttftMs") is not None]
    retry_after = [float(s["retryAfterS"]) for s in samples if s.get("retryAfterS") is not None]
    return {
        "index": index,
        "label": label,
        "phase": phase,
        "concurrency": concurrency,
        "promptTokens": prompt_tokens,
        "requests": len(samples),
        "ok": len(ok),
        "errors": error_counts(samples),
        "errorRate": _round((len(samples) - len(ok)) / len(samples), 4) if samples else 0.0,
        "durationS": _round(duration_s, 3),
        "requestRate": _round(len(samples) / duration, 3),
        "throughputRps": _round(len(ok) / duration, 3),
        "outputTokensPerS": _round(out_tokens / duration, 2),
        "inputTokens": in_tokens,
        "outputTokens": out_tokens,
        "costUsd": _cost(samples),
        "latencyMs": distribution(s["latencyMs"] for s in ok),
        "ttftMs": distribution(ttfts),
        "retryAfterS": max(retry_after) if retry_after else None,
    }


def _p95(step: dict[str, Any]) -> float | None:
    latency = step.get("latencyMs")
    return None if not latency else latency.get("p95")


def find_knee(steps: Sequence[dict[str, Any]], growth: float = DEFAULT_KNEE_GROWTH,
              latency_growth: float = DEFAULT_KNEE_LATENCY_GROWTH) -> dict[str, Any] | None:
    """The knee: the concurrency of the first step ``i`` whose successor (at a higher
    concurrency, same prompt size) gained at most ``growth`` of throughput while its p95
    latency grew by more than ``latency_growth``:

        T[i+1] <= T[i] * (1 + growth)   and   P95[i+1] > P95[i] * (1 + latency_growth)

    A step with no answered request has throughput 0 and an unbounded p95. None when the
    steps never stop scaling, or when concurrency does not increase from step to step.
    """
    for current, following in zip(steps, steps[1:]):
        if following["concurrency"] <= current["concurrency"]:
            continue
        if following.get("promptTokens") != current.get("promptTokens"):
            continue
        t0, t1 = current["throughputRps"], following["throughputRps"]
        p0, p1 = _p95(current), _p95(following)
        if not current["ok"] or p0 is None:
            continue  # nothing answered here: no reference to measure growth against
        latency_grew = following["ok"] == 0 or p1 is None or p1 > p0 * (1 + latency_growth)
        if t1 <= t0 * (1 + growth) and latency_grew:
            return {
                "stepIndex": current["index"],
                "concurrency": current["concurrency"],
                "nextConcurrency": following["concurrency"],
                "throughputRps": t0,
                "nextThroughputRps": t1,
                "throughputGrowth": _round((t1 - t0) / t0, 4) if t0 else None,
                "p95Ms": p0,
                "nextP95Ms": p1,
                "p95Growth": _round((p1 - p0) / p0, 4) if p0 and p1 is not None else None,
            }
    return None


def find_breaking_point(steps: Sequence[dict[str, Any]], max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
                        slo_ms: float | None = None) -> dict[str, Any] | None:
    """The first step whose error rate is above ``max_error_rate``, or (with an SLO) whose p95
    latency of answered requests is above ``slo_ms``; None when every step held."""
    for step in steps:
        if not step["requests"]:
            continue
        reasons = []
        if step["errorRate"] > max_error_rate:
            reasons.append(f"error rate {step['errorRate']:.1%} > {max_error_rate:.1%}")
        p95 = _p95(step)
        if slo_ms is not None and p95 is not None and p95 > slo_ms:
            reasons.append(f"p95 {p95:.0f} ms > SLO {slo_ms:.0f} ms")
        if reasons:
            return {
                "stepIndex": step["index"],
                "concurrency": step["concurrency"],
                "label": step["label"],
                "errorRate": step["errorRate"],
                "p95Ms": p95,
                "reason": "; ".join(reasons),
            }
    return None


def recovery(samples: Sequence[dict[str, Any]], streak: int = DEFAULT_RECOVERY_STREAK) -> dict[str, Any] | None:
    """Time to recover from the first error burst; None when no request failed.

    Samples are taken in the order they finished. The burst starts at the first failed
    request; the endpoint has recovered at the first answered request that begins ``streak``
    answered requests in a row. ``recoverySeconds`` is the time between the two (their end
    times); ``recovered`` is False when the test ended before such a streak.
    """
    ordered = sorted(samples, key=lambda s: s["end"])
    first = next((i for i, s in enumerate(ordered) if not s.get("ok")), None)
    if first is None:
        return None
    run = 0
    recovered_at = None
    for i in range(first + 1, len(ordered)):
        if ordered[i].get("ok"):
            run += 1
            if run == streak:
                recovered_at = i - streak + 1
                break
        else:
            run = 0
    burst = ordered[first:recovered_at] if recovered_at is not None else ordered[first:]
    start = ordered[first]["end"]
    return {
        "firstErrorS": _round(start, 3),
        "recovered": recovered_at is not None,
        "recoveredAtS": None if recovered_at is None else _round(ordered[recovered_at]["end"], 3),
        "recoverySeconds": None if recovered_at is None else _round(ordered[recovered_at]["end"] - start, 3),
        "burstRequests": len(burst),
        "burstErrors": sum(1 for s in burst if not s.get("ok")),
        "streak": streak,
    }


def resilience(steps: Sequence[dict[str, Any]], samples: Sequence[dict[str, Any]],
               recovered: dict[str, Any] | None,
               budget_s: float = DEFAULT_RECOVERY_BUDGET_S) -> dict[str, Any] | None:
    """The resilience score in [0, 1]: ``0.5 A + 0.25 V + 0.25 L``.

    - ``A`` availability under stress: answered / sent over the stress steps (every step but
      the first, the baseline; the only step when there is one);
    - ``V`` recovery: 1 when no request failed, 0 when the test ended before recovering,
      else ``max(0, 1 - recoverySeconds / budget_s)`` (see :func:`recovery`);
    - ``L`` latency inflation: ``min(1, P95(baseline) / P95(stress))`` over answered requests,
      0 when either has none.

    None when the stress steps sent no request.
    """
    if not steps:
        return None
    base_index = steps[0]["index"]
    stress_indices = {s["index"] for s in steps[1:]} or {base_index}
    stress = [s for s in samples if s["step"] in stress_indices]
    if not stress:
        return None
    base = [s for s in samples if s["step"] == base_index]
    availability = sum(1 for s in stress if s.get("ok")) / len(stress)
    if recovered is None:
        recovery_part = 1.0
    elif not recovered["recovered"]:
        recovery_part = 0.0
    else:
        recovery_part = max(0.0, 1.0 - float(recovered["recoverySeconds"]) / budget_s)
    p_base = percentile([s["latencyMs"] for s in base if s.get("ok")], 95)
    p_stress = percentile([s["latencyMs"] for s in stress if s.get("ok")], 95)
    if p_base is None or p_stress is None:
        latency_part = 0.0
    elif p_stress <= 0:
        latency_part = 1.0
    else:
        latency_part = min(1.0, p_base / p_stress)
    w = RESILIENCE_WEIGHTS
    score = w["availability"] * availability + w["recovery"] * recovery_part + w["latency"] * latency_part
    return {
        "score": round(score, 4),
        "availability": round(availability, 4),
        "recovery": round(recovery_part, 4),
        "latency": round(latency_part, 4),
        "weights": dict(w),
        "recoveryBudgetS": budget_s,
    }


def phase_figures(samples: Sequence[dict[str, Any]], indices: Iterable[int]) -> dict[str, Any] | None:
    """Requests, error rate and latency of the samples of the steps ``indices``; None when empty."""
    wanted = set(indices)
    if not wanted:
        return None
    chosen = [s for s in samples if s["step"] in wanted]
    ok = [s for s in chosen if s.get("ok")]
    return {
        "steps": sorted(wanted),
        "requests": len(chosen),
        "errors": error_counts(chosen),
        "errorRate": _round((len(chosen) - len(ok)) / len(chosen), 4) if chosen else 0.0,
        "latencyMs": distribution(s["latencyMs"] for s in ok),
    }


def failure_window(steps: Sequence[dict[str, Any]],
                   max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> tuple[list[int], list[int], list[int]]:
    """Step indices before, during and after the first failure window: the first run of
    consecutive steps whose error rate is above ``max_error_rate`` (empty when none is)."""
    indices = [s["index"] for s in steps]
    failing = [s["errorRate"] > max_error_rate for s in steps]
    if True not in failing:
        return indices, [], []
    start = failing.index(True)
    end = start
    while end + 1 < len(steps) and failing[end + 1]:
        end += 1
    return indices[:start], indices[start:end + 1], indices[end + 1:]


def rate_limit_onset(steps: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Where 429s began: the first step with one, its request rate, and the last step before
    it without any; None when no request was refused with 429."""
    previous = None
    for step in steps:
        if step["errors"].get("429"):
            return {
                "stepIndex": step["index"],
                "concurrency": step["concurrency"],
                "requestRate": step["requestRate"],
                "rateLimited": step["errors"]["429"],
                "requests": step["requests"],
                "lastCleanConcurrency": None if previous is None else previous["concurrency"],
                "lastCleanRequestRate": None if previous is None else previous["requestRate"],
            }
        previous = step
    return None


def summarize_run(steps: Sequence[dict[str, Any]], samples: Sequence[dict[str, Any]], *,
                  varies_concurrency: bool,
                  knee_growth: float = DEFAULT_KNEE_GROWTH,
                  knee_latency_growth: float = DEFAULT_KNEE_LATENCY_GROWTH,
                  max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
                  slo_ms: float | None = None,
                  recovery_streak: int = DEFAULT_RECOVERY_STREAK,
                  recovery_budget_s: float = DEFAULT_RECOVERY_BUDGET_S) -> dict[str, Any]:
    """Totals over every sample, the knee (only when ``varies_concurrency``), the breaking
    point, recovery, resilience, and the thresholds they were computed with."""
    ok = [s for s in samples if s.get("ok")]
    duration = sum(float(s.get("durationS") or 0.0) for s in steps)
    recovered = recovery(samples, recovery_streak)
    best = max(steps, key=lambda s: s["throughputRps"], default=None)
    return {
        "requests": len(samples),
        "ok": len(ok),
        "errors": error_counts(samples),
        "errorRate": _round((len(samples) - len(ok)) / len(samples), 4) if samples else 0.0,
        "durationS": _round(duration, 3),
        "inputTokens": sum(int(s.get("inputTokens") or 0) for s in ok),
        "outputTokens": sum(int(s.get("outputTokens") or 0) for s in ok),
        "costUsd": _cost(samples),
        "latencyMs": distribution(s["latencyMs"] for s in ok),
        "ttftMs": distribution(s["ttftMs"] for s in ok if s.get("ttftMs") is not None),
        "maxThroughputRps": None if best is None else best["throughputRps"],
        "maxThroughputConcurrency": None if best is None else best["concurrency"],
        "maxOutputTokensPerS": max((s["outputTokensPerS"] for s in steps), default=None),
        "knee": find_knee(steps, knee_growth, knee_latency_growth) if varies_concurrency else None,
        "breakingPoint": find_breaking_point(steps, max_error_rate, slo_ms),
        "recovery": recovered,
        "resilience": resilience(steps, samples, recovered, recovery_budget_s),
        "thresholds": {
            "kneeGrowth": knee_growth,
            "kneeLatencyGrowth": knee_latency_growth,
            "maxErrorRate": max_error_rate,
            "sloMs": slo_ms,
            "recoveryStreak": recovery_streak,
            "recoveryBudgetS": recovery_budget_s,
        },
    }
