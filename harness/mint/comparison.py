"""Baseline vs specialist: the statistics a snapshot carries as its proof.

Runs are compared on their overall score (in [0, 1]). When every baseline run has exactly one
specialist run on the same suite, scenario, tier, model and iteration (and there are at least
two such pairs), the test is a paired t-test on those pairs; otherwise it is Welch's t-test
on all runs of each side. The verdict is "better" or "worse" only when the 95% interval of the
difference excludes zero (p < 0.05), else "not enough evidence".
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

from harness import stats
from harness.results.records import RunRecord, mixed_sandbox_note

CONFIDENCE = 0.95


def model_key(run: RunRecord) -> str:
    """What a run's model is called in per-model figures: its model, else its agent's name."""
    return run.model or run.agent


def iteration_of(run: RunRecord) -> int | None:
    """The run's iteration number as the runner recorded it in ``metadata``, if any."""
    for key in ("iteration", "iterationIndex", "repeatIndex", "repeat_index"):
        value = run.metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _pair_keys(runs: Sequence[RunRecord]) -> list[tuple[Any, ...]]:
    """(suite, scenario, tier, model, iteration) per run; without a recorded iteration the
    runs of one cell are numbered in start order, so repeat i meets repeat i."""
    keys: list[tuple[Any, ...] | None] = [None] * len(runs)
    cells: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, run in enumerate(runs):
        it = iteration_of(run)
        base = (run.suite, run.scenario, run.tier, model_key(run))
        if it is None:
            cells[base].append(i)
        else:
            keys[i] = (*base, it)
    for base, idxs in cells.items():
        idxs.sort(key=lambda i: (runs[i].started_at or "", runs[i].run_id))
        for n, i in enumerate(idxs):
            keys[i] = (*base, f"order-{n}")
    return [k for k in keys if k is not None]


def match_pairs(baseline: Sequence[RunRecord], specialist: Sequence[RunRecord]
                ) -> tuple[list[tuple[RunRecord, RunRecord]], bool]:
    """Matched ``(baseline, specialist)`` pairs, and whether they cover every run one to one."""
    bkeys, skeys = _pair_keys(baseline), _pair_keys(specialist)
    bmap: dict[tuple[Any, ...], list[RunRecord]] = defaultdict(list)
    for k, r in zip(bkeys, baseline):
        bmap[k].append(r)
    smap: dict[tuple[Any, ...], list[RunRecord]] = defaultdict(list)
    for k, r in zip(skeys, specialist):
        smap[k].append(r)
    pairs = []
    one_to_one = all(len(v) == 1 for v in bmap.values()) and all(len(v) == 1 for v in smap.values())
    for k in sorted(set(bmap) & set(smap), key=repr):
        if len(bmap[k]) == 1 and len(smap[k]) == 1:
            pairs.append((bmap[k][0], smap[k][0]))
    complete = one_to_one and len(pairs) == len(baseline) == len(specialist)
    return pairs, complete


def _finite(x: float | None) -> float | None:
    if x is None or math.isnan(x) or math.isinf(x):
        return None
    return x


def _round(x: float | None, digits: int = 6) -> float | None:
    x = _finite(x)
    return None if x is None else round(x, digits)


@dataclass
class ComparisonFigures:
    """Baseline vs specialist figures for one group of runs (all runs, or one model)."""

    baseline_mean: float | None
    specialist_mean: float | None
    improvement: float | None
    improvement_pct: float | None
    baseline_runs: int
    specialist_runs: int
    test: str | None
    paired_samples: int
    t_statistic: float | None
    df: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str
    notes: list[str] = field(default_factory=list)

    def statistics_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "confidence_level": CONFIDENCE,
            "paired_samples": self.paired_samples,
            "t_statistic": _round(self.t_statistic),
            "df": _round(self.df),
            "p_value": _round(self.p_value, 8),
            "ci_low": _round(self.ci_low),
            "ci_high": _round(self.ci_high),
            "verdict": self.verdict,
            "notes": list(self.notes),
        }


def compare(baseline: Sequence[RunRecord], specialist: Sequence[RunRecord]) -> ComparisonFigures:
    """Compare the overall scores of two sets of runs (scores must not be ``None``)."""
    b_scores = [float(r.total_score) for r in baseline]  # type: ignore[arg-type]
    s_scores = [float(r.total_score) for r in specialist]  # type: ignore[arg-type]
    b_mean, s_mean = stats.mean(b_scores), stats.mean(s_scores)
    improvement = None if b_mean is None or s_mean is None else s_mean - b_mean
    notes: list[str] = []
    if not baseline:
        notes.append("no baseline runs (specialist disabled) in the batch")
    if not specialist:
        notes.append("no runs of this specialist version in the batch")
    if not baseline or not specialist:
        return ComparisonFigures(b_mean, s_mean, improvement, None, len(b_scores), len(s_scores), None, 0,
                                 None, None, None, None, None, "not enough evidence", notes)
    pairs, complete = match_pairs(baseline, specialist)
    if complete and len(pairs) >= 2:
        result = stats.paired_t_test([float(b.total_score) for b, _ in pairs],  # type: ignore[arg-type]
                                     [float(s.total_score) for _, s in pairs],  # type: ignore[arg-type]
                                     CONFIDENCE)
        paired = len(pairs)
    else:
        if pairs and not complete:
            notes.append(f"{len(pairs)} matched pairs do not cover every run one to one: Welch's test on all runs")
        result = stats.welch_t_test(b_scores, s_scores, CONFIDENCE)
        paired = 0
    notes.extend(result.notes)
    statistic = result.statistic
    if statistic is not None and math.isinf(statistic):
        statistic = None  # JSON has no infinity; the note says why it is absent
    return ComparisonFigures(
        baseline_mean=b_mean,
        specialist_mean=s_mean,
        improvement=improvement,
        improvement_pct=stats.improvement_pct(b_mean, s_mean),
        baseline_runs=len(b_scores),
        specialist_runs=len(s_scores),
        test=result.test,
        paired_samples=paired,
        t_statistic=statistic,
        df=result.df,
        p_value=result.p_value,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        verdict=stats.verdict(result, alpha=1 - CONFIDENCE),
        notes=notes,
    )


def _config_hash_notes(runs: Sequence[RunRecord], side: str) -> list[str]:
    """Repeats of one cell should share a config hash and a system prompt; a difference means the
    scenario, prompt, tools, harness or specialist text changed between them."""
    hashes: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for r in runs:
        if r.config_hash:
            hashes[(r.suite, r.scenario, r.tier, model_key(r))].add(r.config_hash)
    notes = [
        f"{side} runs of {suite}/{scenario} {tier} ({model}) have {len(h)} different config hashes: "
        "the scenario, prompt, tools or harness changed between them"
        for (suite, scenario, tier, model), h in sorted(hashes.items()) if len(h) > 1
    ]
    prompts: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for r in runs:
        digest = r.metadata.get("specialistPromptSha256")
        if digest:
            prompts[(r.suite, r.scenario, r.tier, model_key(r))].add(digest)
    notes.extend(
        f"{side} runs of {suite}/{scenario} {tier} ({model}) used {len(p)} different system prompts "
        "(e.g. before and after enrichment)"
        for (suite, scenario, tier, model), p in sorted(prompts.items()) if len(p) > 1
    )
    return notes


def comparison_section(baseline: Sequence[RunRecord], specialist: Sequence[RunRecord]) -> dict[str, Any]:
    """The snapshot's ``benchmarks.comparison``: overall figures plus ``models_compared``."""
    overall = compare(baseline, specialist)
    section: dict[str, Any] = {
        "baseline_avg_score": _round(overall.baseline_mean),
        "specialist_avg_score": _round(overall.specialist_mean),
        "improvement": _round(overall.improvement),
        "improvement_pct": _round(overall.improvement_pct, 2),
        "baseline_runs": overall.baseline_runs,
        "specialist_runs": overall.specialist_runs,
        "baseline_agents": sorted({r.agent for r in baseline}),
        "specialist_agents": sorted({r.agent for r in specialist}),
        **overall.statistics_dict(),
    }
    b_models, s_models = {model_key(r) for r in baseline}, {model_key(r) for r in specialist}
    if b_models and s_models and b_models != s_models:
        # Not the same agents/models on both sides: the difference is not the specialist's alone.
        section["notes"].append(
            f"baseline and specialist runs come from different agents/models ({', '.join(sorted(b_models))} vs "
            f"{', '.join(sorted(s_models))}): the difference mixes the specialist's effect with theirs"
        )
    section["notes"].extend(_config_hash_notes(baseline, "baseline") + _config_hash_notes(specialist, "specialist"))
    mixed = mixed_sandbox_note([*baseline, *specialist])
    if mixed:
        section["notes"].append(mixed)
    by_model: dict[str, tuple[list[RunRecord], list[RunRecord]]] = defaultdict(lambda: ([], []))
    for r in baseline:
        by_model[model_key(r)][0].append(r)
    for r in specialist:
        by_model[model_key(r)][1].append(r)
    models = []
    for name in sorted(by_model):
        b, s = by_model[name]
        fig = compare(b, s)
        models.append({
            "model": name,
            "baseline_score": _round(fig.baseline_mean),
            "specialist_score": _round(fig.specialist_mean),
            "improvement": _round(fig.improvement),
            "improvement_pct": _round(fig.improvement_pct, 2),
            "baseline_runs": fig.baseline_runs,
            "specialist_runs": fig.specialist_runs,
            **fig.statistics_dict(),
        })
    section["models_compared"] = models
    return section
