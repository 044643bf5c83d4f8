"""Validity of the comparison and regression statistics, measured on simulated stores whose
truth is known.

Not a timing benchmark: it measures how often the verdicts of
:func:`worker.analysis.compare.compare_runs` and
:func:`worker.analysis.regressions.regressions` are right.

- **Type-I error** of ``compare_runs`` at alpha 0.05: ``--comparisons`` null comparisons, both
  sides drawn from the same distribution, the verdict of the score and of the success metric
  counted as a false positive when it says ``A better`` or ``B better``. Next to it, on the same
  data, a naive paired t-test (``stats.paired_t``) on every pair as if the repeats were
  independent.
- **Power** of ``compare_runs`` on a known effect (a latent shift of +0.10 in the score, or +0.2
  in the success probability) at a few sample sizes, next to the prediction of ``stats.mde`` and
  ``stats.runs_needed`` from the standard deviation and design effect the comparisons reported.
- **Precision and recall** of the ``regressed`` status of ``regressions`` over ``--stores``
  simulated stores with injected regressions and flaky scenarios.

The data model (every run a wire dict as ``RunRecord.to_wire()`` makes it): each scenario has a
difficulty ``mu``; a run's latent quality is normal around ``mu`` (plus, for one configuration on
one scenario, an offset drawn from N(0, tau): configurations are better on some scenarios and
worse on others, which is what makes the repeats of a scenario correlated in a comparison); the
score is the latent quality clipped to [0, 1]; a run succeeds when its score is at least 0.8.
With a success shift, success is drawn first (probability P(score >= 0.8) + shift) and the
score from the latent distribution on the matching side of 0.8, so success and score agree.

Everything is drawn from ``random.Random`` seeded by ``--seed``, the experiment and the index of
the replicate: the same seed gives the same figures, whatever ``--jobs``.

Usage:
  .venv/bin/python benchmarks/stats_validity.py
  .venv/bin/python benchmarks/stats_validity.py --seed 1 --comparisons 1000 --stores 50 --json validity.json
  .venv/bin/python benchmarks/stats_validity.py --quick
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.analysis import stats  # noqa: E402
from worker.analysis.compare import compare_runs  # noqa: E402
from worker.analysis.regressions import regressions  # noqa: E402

ALPHA = 0.05
THRESHOLD = 0.8  # success: a score of at least this
SUITE = "sim"
TIER = "L1"
_N = NormalDist()
_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z


# --------------------------------------------------------------------------- runs in wire form


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def config_parts(scenario: str, model: str, harness: str = "1.0.0") -> dict[str, str]:
    """The config parts of a run (as ``harness.scenarios.plan.config_parts`` names them)."""
    return {"scenario": _digest(f"files of {scenario}"), "prompt": _digest(f"prompt of {scenario}"),
            "tools": "list_directory,read_file,run_command,write_file", "agent": "anthropic", "model": model,
            "specialist": "", "sandbox": "bwrap", "judge": "none", "budgets": "turns=40",
            "baseUrl": "", "timeoutMinutes": "10", "cache": "off", "harness": harness}


def config_hash(parts: dict[str, str]) -> str:
    return _digest(json.dumps(parts, sort_keys=True, separators=(",", ":")))


class RunFactory:
    """Makes runs in wire form with unique ids and increasing start times."""

    def __init__(self, rng: random.Random, prefix: str = "run"):
        self.rng = rng
        self.prefix = prefix
        self.count = 0

    def run(self, *, batch: str, scenario: str, model: str, iteration: int, score: float, success: bool,
            harness: str = "1.0.0", infra_error: bool = False) -> dict[str, Any]:
        self.count += 1
        rng = self.rng
        parts = config_parts(scenario, model, harness)
        started = _EPOCH + self.count * 97
        duration_ms = round(rng.lognormvariate(math.log(60_000), 0.5))
        tokens_in = round(rng.lognormvariate(math.log(40_000), 0.4))
        tokens_out = round(tokens_in * rng.uniform(0.05, 0.15))
        if infra_error:
            status, failure, score_value, success = "error", "infra", None, False
        elif success:
            status, failure, score_value = "completed", None, round(score, 6)
        else:
            status, failure, score_value = "failed", "validation", round(score, 6)
        return {
            "runId": f"{self.prefix}_{self.count:06d}",
            "batchId": batch,
            "suite": SUITE,
            "scenario": scenario,
            "tier": TIER,
            "agent": "anthropic",
            "model": model,
            "status": status,
            "failureClass": failure,
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(started)),
            "completedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(started + duration_ms // 1000)),
            "totalScore": score_value,
            "weightedScore": score_value,
            "isSuccessful": bool(success),
            "successMetric": None if score_value is None else (1.0 if success else 0.0),
            "specialistEnabled": False,
            "specialistName": None,
            "specialistVersion": None,
            "configHash": config_hash(parts),
            "metadata": {"iteration": iteration, "tierLabel": TIER, "configParts": parts},
            "evaluations": [],
            "telemetry": {"costUsd": round((tokens_in * 3 + tokens_out * 15) / 1e6, 6), "durationMs": duration_ms,
                          "tokensIn": tokens_in, "tokensOut": tokens_out, "turns": rng.randint(3, 30),
                          "toolCalls": rng.randint(2, 40)},
        }


# --------------------------------------------------------------------------- the score model


def pass_probability(mu: float, sd: float) -> float:
    """P(score >= THRESHOLD) for a latent N(mu, sd) clipped to [0, 1]."""
    return 1.0 - _N.cdf((THRESHOLD - mu) / sd)


def expected_score(mu: float, sd: float) -> float:
    """E[min(1, max(0, X))] for X ~ N(mu, sd)."""
    a, b = (0.0 - mu) / sd, (1.0 - mu) / sd
    inside = mu * (_N.cdf(b) - _N.cdf(a)) + sd * (_N.pdf(a) - _N.pdf(b))
    return inside + (1.0 - _N.cdf(b))


def draw(rng: random.Random, mu: float, sd: float, p_pass: float | None = None) -> tuple[float, bool]:
    """(score, success) of one run. ``p_pass`` None: the latent N(mu, sd) clipped to [0, 1],
    success when the score is at least THRESHOLD. Otherwise success is drawn with probability
    ``p_pass`` and the latent value from N(mu, sd) truncated to the matching side of THRESHOLD."""
    if p_pass is None:
        score = min(1.0, max(0.0, rng.gauss(mu, sd)))
        return score, score >= THRESHOLD
    success = rng.random() < p_pass
    z0 = (THRESHOLD - mu) / sd
    u = 1.0 - rng.random()  # (0, 1]
    if success:  # X >= THRESHOLD: the upper tail beyond z0
        z = -_N.inv_cdf(min(1.0 - 1e-16, max(1e-300, u * _N.cdf(-z0))))
        z = max(z, z0)
    else:
        z = _N.inv_cdf(min(1.0 - 1e-16, max(1e-300, u * _N.cdf(z0))))
        z = min(z, z0 - 1e-9)
    score = min(1.0, max(0.0, mu + sd * z))
    if not success and score >= THRESHOLD:
        score = math.nextafter(THRESHOLD, 0.0)
    return score, success


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Design:
    """One comparison: ``scenarios`` x ``iterations`` cells a side."""

    name: str
    scenarios: int = 20
    iterations: int = 3
    tau: float = 0.08  # sd of a configuration's offset on one scenario (scenario x configuration)
    sd: float = 0.15  # run-to-run sd of the latent quality
    mu_low: float = 0.3
    mu_high: float = 0.9  # scenario difficulties: mu ~ U(mu_low, mu_high)
    score_shift: float = 0.0  # added to A's latent quality
    success_shift: float = 0.0  # added to A's success probability (clipped to [0, 1])
    infra_rate: float = 0.02  # runs lost to error/infra (left out by compare)


def comparison_store(design: Design, rng: random.Random) -> tuple[list[dict], list[dict], float, float]:
    """(A's runs, B's runs, true score difference A - B, true success difference A - B); the
    true differences are the expected values over this draw of scenarios."""
    factory = RunFactory(rng)
    a_runs: list[dict] = []
    b_runs: list[dict] = []
    true_score = true_success = 0.0
    for s in range(design.scenarios):
        scenario = f"task-{s:03d}"
        mu = rng.uniform(design.mu_low, design.mu_high)
        mu_a = mu + (rng.gauss(0.0, design.tau) if design.tau else 0.0) + design.score_shift
        mu_b = mu + (rng.gauss(0.0, design.tau) if design.tau else 0.0)
        p_b = pass_probability(mu_b, design.sd)
        p_a = pass_probability(mu_a, design.sd)
        if design.success_shift:
            p_a = min(1.0, max(0.0, p_a + design.success_shift))
            # Success first, then the score on its side of THRESHOLD: its expectation follows.
            e_a = p_a * _truncated_mean(mu_a, design.sd, True) + (1 - p_a) * _truncated_mean(mu_a, design.sd, False)
            pa_draw: float | None = p_a
        else:
            e_a = expected_score(mu_a, design.sd)
            pa_draw = None
        true_score += (e_a - expected_score(mu_b, design.sd)) / design.scenarios
        true_success += (p_a - p_b) / design.scenarios
        for it in range(1, design.iterations + 1):
            for side, runs, model, m, p in (("a", a_runs, "model-a", mu_a, pa_draw), ("b", b_runs, "model-b", mu_b, None)):
                score, success = draw(rng, m, design.sd, p)
                runs.append(factory.run(batch=f"batch_{side}", scenario=scenario, model=model, iteration=it,
                                        score=score, success=success,
                                        infra_error=rng.random() < design.infra_rate))
    return a_runs, b_runs, true_score, true_success


def _truncated_mean(mu: float, sd: float, upper: bool) -> float:
    """E[clip(X)] for X ~ N(mu, sd) given X >= THRESHOLD (``upper``) or X < THRESHOLD, clip
    meaning min(1, max(0, X))."""
    t = (THRESHOLD - mu) / sd
    if upper:
        b = (1.0 - mu) / sd
        mass = 1.0 - _N.cdf(t)
        part = mu * (_N.cdf(b) - _N.cdf(t)) + sd * (_N.pdf(t) - _N.pdf(b)) + (1.0 - _N.cdf(b))
    else:
        a = (0.0 - mu) / sd
        mass = _N.cdf(t)
        part = mu * (_N.cdf(t) - _N.cdf(a)) + sd * (_N.pdf(a) - _N.pdf(t))
    return part / mass if mass > 1e-12 else THRESHOLD


def _pairs(a_runs: list[dict], b_runs: list[dict], key: str) -> list[tuple[str, float, float]]:
    """(scenario, A, B) per cell both sides ran, runs lost to error/infra left out (as compare)."""
    def cells(runs: list[dict]) -> dict[tuple[str, int], dict]:
        return {(r["scenario"], r["metadata"]["iteration"]): r for r in runs if r["status"] != "error"}

    ca, cb = cells(a_runs), cells(b_runs)
    out = []
    for cell in sorted(set(ca) & set(cb)):
        if key == "score":
            out.append((cell[0], ca[cell]["totalScore"], cb[cell]["totalScore"]))
        else:
            out.append((cell[0], float(ca[cell]["isSuccessful"]), float(cb[cell]["isSuccessful"])))
    return out


def _naive(pairs: list[tuple[str, float, float]]) -> str:
    """The verdict of a paired t-test on every pair as if each were independent."""
    result = stats.paired_t([p[1] for p in pairs], [p[2] for p in pairs], level=1 - ALPHA)
    if stats.is_degenerate(result) or result.p_value >= ALPHA or not result.estimate:
        return "no detectable difference"
    return "A better" if result.estimate > 0 else "B better"


def one_comparison(task: tuple[int, Design, int]) -> dict[str, Any]:
    """One simulated comparison: compare's verdicts and figures, the naive test's verdicts."""
    seed, design, index = task
    rng = random.Random(f"{seed}:compare:{design.name}:{index}")
    a_runs, b_runs, true_score, true_success = comparison_store(design, rng)
    result = compare_runs(a_runs, b_runs, metrics=("score", "success"))
    out: dict[str, Any] = {"trueScore": true_score, "trueSuccess": true_success,
                           "comparable": result["verdict"] != "not comparable",
                           "scenarioWinners": sum(1 for row in result["scenarios"] if row["winner"])}
    for figure in result["metrics"]:
        metric = figure["metric"]
        # A refused comparison (e.g. the sides lost different shares of runs) claims nothing.
        out[metric] = {"verdict": figure["verdict"] if out["comparable"] else "not comparable", "sd": _sd(a_runs, b_runs, metric),
                       "designEffect": figure["designEffect"], "mde": figure["mde"], "pairs": figure["pairs"],
                       "test": figure["test"]}
        out[metric]["naive"] = _naive(_pairs(a_runs, b_runs, metric))
    return out


def _sd(a_runs: list[dict], b_runs: list[dict], metric: str) -> float | None:
    return stats.stdev([p[1] - p[2] for p in _pairs(a_runs, b_runs, metric)])


def _rate(hits: int, n: int) -> dict[str, Any]:
    low, high = stats.wilson_interval(hits, n)
    return {"rate": round(hits / n, 4) if n else None, "hits": hits, "n": n, "ci95": [round(low, 4), round(high, 4)]}


def type_one_error(seed: int, comparisons: int, designs: list[Design], pool: Callable) -> list[dict[str, Any]]:
    """False-positive rates of compare's verdicts (and of the naive test) under the null."""
    rows = []
    for design in designs:
        outs = pool(one_comparison, [(seed, design, i) for i in range(comparisons)])
        row: dict[str, Any] = {"design": asdict(design), "comparisons": comparisons,
                               "notComparable": sum(1 for o in outs if not o["comparable"])}
        for metric in ("score", "success"):
            wins = ("A better", "B better")
            row[metric] = {
                "compare": _rate(sum(1 for o in outs if o[metric]["verdict"] in wins), comparisons),
                "naivePairedT": _rate(sum(1 for o in outs if o[metric]["naive"] in wins), comparisons),
                "notEnoughRuns": sum(1 for o in outs if o[metric]["verdict"] == "not enough runs"),
                "tests": dict(Counter(str(o[metric]["test"]) for o in outs)),
            }
        row["anyScenarioWinner"] = _rate(sum(1 for o in outs if o["scenarioWinners"]), comparisons)
        rows.append(row)
    return rows


def power(seed: int, comparisons: int, designs: list[Design], pool: Callable) -> list[dict[str, Any]]:
    """Share of comparisons that find the true effect (verdict ``A better``), next to the
    power mde/runs_needed predict from the figures the comparisons reported."""
    rows = []
    z_alpha = _N.inv_cdf(1 - ALPHA / 2)
    for design in designs:
        metric = "success" if design.success_shift else "score"
        outs = pool(one_comparison, [(seed, design, i) for i in range(comparisons)])
        figures = [o[metric] for o in outs]
        true_effect = sum(o["trueSuccess" if metric == "success" else "trueScore"] for o in outs) / len(outs)
        sds = sorted(f["sd"] for f in figures if f["sd"])
        deffs = sorted(f["designEffect"] for f in figures if f["designEffect"] is not None)
        pairs = sorted(f["pairs"] for f in figures)
        sd, deff, n = _median(sds), _median(deffs), _median(pairs)
        mdes = sorted(f["mde"] for f in figures if f["mde"] is not None)
        # What the normal approximation behind mde predicts for the true effect, and the same
        # with Student's t at the clustered test's df (scenarios - 1).
        se = sd * math.sqrt(deff / n)
        predicted = _N.cdf(true_effect / se - z_alpha)
        df = design.scenarios - 1 if design.iterations > 1 else n - 1
        t_crit = stats.t_ppf(1 - ALPHA / 2, df)
        predicted_t = 1 - stats.t_cdf(t_crit - true_effect / se, df) + stats.t_cdf(-t_crit - true_effect / se, df)
        needed = stats.runs_needed(true_effect, sd, alpha=ALPHA, power=0.8, paired=True, design_effect=deff)
        needed_t = _pairs_for_power_t(true_effect, sd, deff, design.iterations, needed)
        rows.append({
            "design": asdict(design), "metric": metric, "comparisons": comparisons,
            "trueEffect": round(true_effect, 4), "medianPairs": n,
            "power": _rate(sum(1 for f in figures if f["verdict"] == "A better"), comparisons),
            "wrongDirection": sum(1 for f in figures if f["verdict"] == "B better"),
            "naivePower": _rate(sum(1 for f in figures if f["naive"] == "A better"), comparisons),
            "medianSd": round(sd, 4), "medianDesignEffect": round(deff, 4),
            "medianMde": round(_median(mdes), 4) if mdes else None,
            "predictedPower": round(predicted, 4), "predictedPowerT": round(predicted_t, 4),
            "pairsNeededFor80": needed, "pairsNeededFor80T": needed_t,
        })
    return rows


def _pairs_for_power_t(effect: float, sd: float, deff: float, per_scenario: int, start: int,
                       power: float = 0.8) -> int:
    """The fewest pairs (in scenarios of ``per_scenario``) at which the clustered test, Student's
    t at df = scenarios - 1, reaches ``power`` for ``effect``: runs_needed's normal answer
    corrected for the test's df."""
    n = start
    while True:
        df = max(1.0, n / per_scenario - 1.0) if per_scenario > 1 else n - 1.0
        shift = effect / (sd * math.sqrt(deff / n))
        t_crit = stats.t_ppf(1 - ALPHA / 2, df)
        if 1 - stats.t_cdf(t_crit - shift, df) >= power:
            return n
        n += 1


def _median(xs: list[float]) -> float:
    return stats.percentile(xs, 50) if xs else float("nan")


# --------------------------------------------------------------------------- regressions


@dataclass(frozen=True)
class StoreDesign:
    """One simulated store for the regression check."""

    name: str = "main"
    scenarios: int = 40
    regressed_share: float = 0.10
    flaky_share: float = 0.15
    history_runs: int = 10  # per scenario at the baseline's configuration (earlier batches)
    older_runs: int = 4  # per scenario at an older configuration (another config hash), shifted
    batch_runs: tuple[int, int] = (3, 5)  # runs per scenario in the baseline and in the candidate batch
    drop: tuple[float, float] = (0.25, 0.45)  # a real regression lowers the latent mean by U(drop)
    passing_share: float = 0.7  # stable scenarios that pass (the others fail, with partial credit)
    passing_mu: tuple[float, float] = (0.92, 1.0)
    failing_mu: tuple[float, float] = (0.2, 0.6)
    stable_sd: tuple[float, float] = (0.02, 0.06)
    flaky_p: tuple[float, float] = (0.3, 0.7)
    infra_rate: float = 0.02
    candidate_sd_scale: float = 1.0  # the candidate's run-to-run sd relative to the baseline's


@dataclass
class Truth:
    kind: dict[str, str] = field(default_factory=dict)  # scenario -> stable / flaky / regressed


def regression_store(design: StoreDesign, rng: random.Random) -> tuple[list[dict], list[dict], list[dict], Truth]:
    """(baseline, candidate, history, truth). One agent and model throughout; the baseline and
    the history share a config hash (harness 1.0.0), the candidate runs a newer harness (1.1.0,
    another hash), and older history runs carry an older one (0.9.0, a third hash) and score
    lower: they must not be pooled with the baseline."""
    factory = RunFactory(rng)
    truth = Truth()
    n = design.scenarios
    kinds = (["regressed"] * round(n * design.regressed_share) + ["flaky"] * round(n * design.flaky_share))
    kinds += ["stable"] * (n - len(kinds))
    rng.shuffle(kinds)
    baseline: list[dict] = []
    candidate: list[dict] = []
    history: list[dict] = []
    for s, kind in enumerate(kinds):
        scenario = f"task-{s:03d}"
        truth.kind[scenario] = kind
        if kind == "flaky":
            mu, sd = rng.uniform(0.7, 0.85), 0.2
            p = rng.uniform(*design.flaky_p)
        else:
            passing = rng.random() < design.passing_share
            mu = rng.uniform(*(design.passing_mu if passing else design.failing_mu))
            sd, p = rng.uniform(*design.stable_sd), None
        mu_c = mu - rng.uniform(*design.drop) if kind == "regressed" else mu

        def runs(count: int, batch: str, model: str, m: float, harness: str = "1.0.0",
                 scale: float = 1.0) -> list[dict]:
            out = []
            for it in range(1, count + 1):
                score, success = draw(rng, m, sd * scale, p if m == mu else None)
                out.append(factory.run(batch=batch, scenario=scenario, model=model, iteration=it, score=score,
                                       success=success, harness=harness,
                                       infra_error=rng.random() < design.infra_rate))
            return out

        for b in range(design.history_runs // 2 + design.history_runs % 2):
            count = 2 if 2 * (b + 1) <= design.history_runs else 1
            history += runs(count, f"batch_hist_{b}", "model-1", mu)
        history += runs(design.older_runs, "batch_old", "model-1", mu - 0.15, harness="0.9.0")
        baseline += runs(rng.randint(*design.batch_runs), "batch_base", "model-1", mu)
        candidate += runs(rng.randint(*design.batch_runs), "batch_cand", "model-1", mu_c, harness="1.1.0",
                          scale=design.candidate_sd_scale)
    # A store's history answers with every run it holds, the baseline's and the candidate's too.
    history = history + baseline + candidate
    return baseline, candidate, history, truth


def one_store(task: tuple[int, StoreDesign, int]) -> dict[str, Any]:
    seed, design, index = task
    rng = random.Random(f"{seed}:regressions:{design.name}:{index}")
    baseline, candidate, history, truth = regression_store(design, rng)
    result = regressions(baseline, candidate, history, alpha=ALPHA)
    status = {row["scenario"].split("/", 1)[1]: row["status"] for row in result["scenarios"]}
    flagged = {s for s, st in status.items() if st == "regressed"}
    real = {s for s, k in truth.kind.items() if k == "regressed"}
    confusion = Counter(f"{truth.kind[s]}->{st}" for s, st in status.items())
    return {"flagged": len(flagged), "truePositives": len(flagged & real), "regressed": len(real),
            # Without a real regression in the store there is nothing to be precise about: a flag
            # is a false alarm, counted by the stores that raised one.
            "precision": len(flagged & real) / len(flagged) if flagged and real else None,
            "recall": len(flagged & real) / len(real) if real else None, "confusion": dict(confusion)}


def regression_accuracy(seed: int, stores: int, designs: list[StoreDesign], pool: Callable) -> list[dict[str, Any]]:
    rows = []
    for design in designs:
        outs = pool(one_store, [(seed, design, i) for i in range(stores)])
        precisions = sorted(o["precision"] for o in outs if o["precision"] is not None)
        recalls = sorted(o["recall"] for o in outs if o["recall"] is not None)
        confusion: Counter = Counter()
        for o in outs:
            confusion.update(o["confusion"])
        flagged = sum(o["flagged"] for o in outs)
        tp = sum(o["truePositives"] for o in outs)
        real = sum(o["regressed"] for o in outs)
        rows.append({
            "design": asdict(design), "stores": stores,
            "precision": _spread(precisions), "recall": _spread(recalls),
            "pooledPrecision": round(tp / flagged, 4) if flagged and real else None,
            "pooledRecall": round(tp / real, 4) if real else None,
            "storesWithoutFlags": sum(1 for o in outs if not o["flagged"]),
            "flagged": flagged, "truePositives": tp, "regressed": real,
            "confusion": dict(sorted(confusion.items())),
        })
    return rows


def _spread(xs: list[float]) -> dict[str, Any]:
    if not xs:
        return {"mean": None, "sd": None, "p10": None, "min": None, "n": 0}
    return {"mean": round(sum(xs) / len(xs), 4), "sd": round(stats.stdev(xs) or 0.0, 4),
            "p10": round(stats.percentile(xs, 10), 4), "min": round(min(xs), 4), "n": len(xs)}


# --------------------------------------------------------------------------- the whole benchmark


def null_designs() -> list[Design]:
    return [
        Design("null 20x3, scenario x configuration offsets"),
        Design("null 20x3, identical configurations", tau=0.0),
        Design("null 20x1, scenario x configuration offsets", iterations=1),
        Design("null 10x5, scenario x configuration offsets", scenarios=10, iterations=5),
    ]


def power_designs() -> list[Design]:
    out = []
    for scenarios in (10, 20, 40):
        out.append(Design(f"score +0.10, {scenarios}x3", scenarios=scenarios, score_shift=0.10))
    for scenarios in (10, 20, 40):
        out.append(Design(f"success +0.2, {scenarios}x3", scenarios=scenarios, success_shift=0.2))
    return out


def store_designs() -> list[StoreDesign]:
    return [
        StoreDesign(),
        StoreDesign("smaller drops (0.10-0.25)", drop=(0.10, 0.25)),
        StoreDesign("3 runs a batch", batch_runs=(3, 3)),
        StoreDesign("no real regression", regressed_share=0.0),
    ]


QUICK = {"comparisons": 100, "power_comparisons": 100, "stores": 20}  # --quick: small counts for a test


def environment() -> dict[str, Any]:
    """Where the figures were measured: Python, processors, and the commit of the code measured
    (with the analysis files that differ from it, if any)."""
    root = Path(__file__).resolve().parent.parent
    out: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    try:
        out["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                       text=True, timeout=10).stdout.strip() or None
        changed = subprocess.run(["git", "status", "--porcelain", "--", "worker/analysis"], cwd=root,
                                 capture_output=True, text=True, timeout=10).stdout.splitlines()
        out["analysisChanges"] = [line[3:] for line in changed]
    except (OSError, subprocess.SubprocessError):
        out["commit"] = None
    return out


def make_pool(jobs: int) -> tuple[Callable, Callable[[], None]]:
    """(map function, close). Results come back in task order whatever the number of jobs."""
    if jobs <= 1:
        return (lambda fn, tasks: [fn(t) for t in tasks]), (lambda: None)
    executor = ProcessPoolExecutor(max_workers=jobs)
    return (lambda fn, tasks: list(executor.map(fn, tasks, chunksize=max(1, len(tasks) // (jobs * 8))))), \
        executor.shutdown


def run_all(seed: int = 0, comparisons: int = 1000, power_comparisons: int | None = None, stores: int = 200,
            jobs: int = 1) -> dict[str, Any]:
    """Every figure of the benchmark, as a plain dict."""
    power_comparisons = power_comparisons or max(50, comparisons // 2)
    pool, close = make_pool(jobs)
    started = time.perf_counter()
    try:
        out = {
            "environment": environment(), "seed": seed, "alpha": ALPHA, "comparisons": comparisons, "powerComparisons": power_comparisons,
            "stores": stores,
            "typeOneError": type_one_error(seed, comparisons, null_designs(), pool),
            "power": power(seed, power_comparisons, power_designs(), pool),
            "regressions": regression_accuracy(seed, stores, store_designs(), pool),
        }
    finally:
        close()
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(rate: dict[str, Any]) -> str:
    return f"{_pct(rate['rate'])} [{_pct(rate['ci95'][0])}, {_pct(rate['ci95'][1])}]"


def print_table(out: dict[str, Any]) -> None:
    env = out["environment"]
    print(f"seed {out['seed']}, alpha {out['alpha']}; {out['seconds']} s on {env['cpus']} cpus, Python {env['python']}, "
          f"commit {env.get('commit')}" + (f" (changed: {', '.join(env['analysisChanges'])})"
                                           if env.get("analysisChanges") else ""))
    print(f"\nType-I error ({out['comparisons']} null comparisons each; 95% Wilson intervals)")
    print(f"{'design':<46} {'score (compare)':<24} {'success (compare)':<24} {'score (naive t)':<24} "
          f"{'success (naive t)':<24}")
    for row in out["typeOneError"]:
        print(f"{row['design']['name']:<46} {_ci(row['score']['compare']):<24} {_ci(row['success']['compare']):<24} "
              f"{_ci(row['score']['naivePairedT']):<24} {_ci(row['success']['naivePairedT']):<24}")
    print(f"\nPower ({out['powerComparisons']} comparisons each)")
    print(f"{'design':<24} {'true effect':>11} {'pairs':>6} {'power':<24} {'predicted':>9} {'with t':>7} "
          f"{'MDE':>7} {'deff':>6} {'pairs for 80%':>13} {'with t':>7} {'naive t':>8}")
    for row in out["power"]:
        print(f"{row['design']['name']:<24} {row['trueEffect']:>11.4f} {row['medianPairs']:>6g} {_ci(row['power']):<24} "
              f"{_pct(row['predictedPower']):>9} {_pct(row['predictedPowerT']):>7} {row['medianMde']:>7.4f} "
              f"{row['medianDesignEffect']:>6.3f} {row['pairsNeededFor80']:>13} {row['pairsNeededFor80T']:>7} "
              f"{_pct(row['naivePower']['rate']):>8}")
    print(f"\nRegressions ({out['stores']} stores each): precision and recall of 'regressed'")
    print(f"{'store':<28} {'precision mean (sd, p10)':<26} {'recall mean (sd, p10)':<26} {'pooled P / R':<15} "
          f"{'stores with a flag':>18}")

    def spread(x: dict[str, Any]) -> str:
        return "-" if x["mean"] is None else f"{x['mean']:.3f} ({x['sd']:.3f}, {x['p10']:.3f})"

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    for row in out["regressions"]:
        print(f"{row['design']['name']:<28} {spread(row['precision']):<26} {spread(row['recall']):<26} "
              f"{num(row['pooledPrecision']) + ' / ' + num(row['pooledRecall']):<15} "
              f"{row['stores'] - row['storesWithoutFlags']:>18}")
    for row in out["regressions"]:
        print(f"  {row['design']['name']}: " + ", ".join(f"{k} {v}" for k, v in row["confusion"].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--comparisons", type=int, default=1000, help="null comparisons per design")
    parser.add_argument("--power-comparisons", type=int, default=None,
                        help="comparisons per power design (default: half of --comparisons)")
    parser.add_argument("--stores", type=int, default=200, help="simulated stores per regression design")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes")
    parser.add_argument("--quick", action="store_true",
                        help=f"small counts ({QUICK['comparisons']} comparisons, {QUICK['stores']} stores)")
    parser.add_argument("--json", metavar="PATH", help="write every figure as JSON to PATH")
    args = parser.parse_args(argv)
    if args.quick:
        args.comparisons, args.power_comparisons, args.stores = (QUICK["comparisons"], QUICK["power_comparisons"],
                                                                 QUICK["stores"])
    out = run_all(args.seed, args.comparisons, args.power_comparisons, args.stores, args.jobs)
    print_table(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
