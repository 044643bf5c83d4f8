"""Baseline vs specialist: a snapshot's ``benchmarks.comparison``.

The statistics are the project's one comparison, :func:`worker.analysis.compare.compare_runs`:
side A is the runs with the specialist, side B the baseline runs (no specialist). The compared
factor is the specialist only: runs pair with runs of the same agent and model on the same
cell (suite, scenario, tier, iteration), only cells both sides ran are compared, repeats of
one scenario are clustered, and sides made by different agents or models are not comparable.

What is mint's own: which runs form each side, the snapshot's snake_case field names, the
verdict's wording, and the notes on repeats whose configuration or system prompt changed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from harness.results.records import RunRecord, mixed_sandbox_note
from worker.analysis.compare import ALPHA, compare_runs

# What the specialist's comparison compares: the specialist, nothing else (agent, model,
# scenario, budgets, ... must be the same on both sides of every pair).
FACTOR = frozenset({"specialist"})
LABELS = ("specialist", "baseline")

# compare's verdicts (A = specialist, B = baseline) in a snapshot's words.
VERDICTS = {
    "A better": "specialist better",
    "B better": "baseline better",
    "no detectable difference": "no detectable difference",
    "not enough runs": "not enough runs",
    "not comparable": "not comparable",
}


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


def _wire(run: RunRecord) -> dict[str, Any]:
    """The run as compare reads it; the iteration under ``metadata.iteration`` whatever key recorded it."""
    body = run.to_wire()
    it = iteration_of(run)
    if it is not None and "iteration" not in (body.get("metadata") or {}):
        body["metadata"] = {**(body.get("metadata") or {}), "iteration": it}
    return body


def _pct(difference: float | None, base: float | None) -> float | None:
    if difference is None or not base:
        return None
    return round(difference / base * 100, 2)


def _metric(row: dict[str, Any]) -> dict[str, Any]:
    """One of compare's metric rows in snake_case, A/B named specialist/baseline."""
    ci = row.get("ci")
    return {
        "metric": row["metric"],
        "label": row["label"],
        "higher_is_better": row["higherIsBetter"],
        "paired_samples": row["pairs"],
        "clusters": row["clusters"],
        "baseline_mean": row["meanB"],
        "specialist_mean": row["meanA"],
        "difference": row["difference"],
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "test": row["test"],
        "test_reason": row["why"],
        "p_value": row["p"],
        "effect_size": row["effectSize"],
        "design_effect": row["designEffect"],
        "mde": row["mde"],
        "pairs_needed": row["pairsNeeded"],
        "verdict": VERDICTS[row["verdict"]],
        "notes": list(row.get("notes") or []),
    }


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    """The headline figures of one compare result: its score metric and overall verdict."""
    score = next(m for m in result["metrics"] if m["metric"] == "score")
    spec_side, base_side = result["sides"]
    ci = score.get("ci")
    return {
        "baseline_avg_score": score["meanB"],
        "specialist_avg_score": score["meanA"],
        "improvement": score["difference"] if score["pairs"] else None,
        "improvement_pct": _pct(score["difference"] if score["pairs"] else None, score["meanB"]),
        "baseline_runs": base_side["counted"],
        "specialist_runs": spec_side["counted"],
        "cells": {"paired": result["cells"]["paired"], "baseline_only": result["cells"]["onlyB"],
                  "specialist_only": result["cells"]["onlyA"]},
        "test": score["test"],
        "test_reason": score["why"],
        "confidence_level": result["confidenceLevel"],
        "paired_samples": score["pairs"],
        "clusters": score["clusters"],
        "p_value": score["p"],
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "effect_size": score["effectSize"],
        "mde": score["mde"],
        "pairs_needed": score["pairsNeeded"],
        "verdict": VERDICTS[result["verdict"]],
        "refused": list(result.get("refused") or []),
        "notes": [*result["notes"], *(score.get("notes") or [])],
    }


def compare_sides(baseline: Sequence[RunRecord], specialist: Sequence[RunRecord]) -> dict[str, Any]:
    """compare_runs with the specialist as side A, the baseline as side B, the specialist the only factor."""
    return compare_runs([_wire(r) for r in specialist], [_wire(r) for r in baseline], labels=LABELS,
                        alpha=ALPHA, factor=FACTOR)


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
    """The snapshot's ``benchmarks.comparison``.

    ``baseline`` and ``specialist`` are every run of each side; compare leaves out, and counts,
    those that do not count (redone, replayed from the cache, infra/harness/judge errors).
    """
    result = compare_sides(baseline, specialist)
    spec_side, base_side = result["sides"]
    section: dict[str, Any] = _figures(result)
    section["baseline_agents"] = sorted({r.agent for r in baseline})
    section["specialist_agents"] = sorted({r.agent for r in specialist})
    section["excluded"] = {"baseline": base_side["excluded"], "specialist": spec_side["excluded"]}
    section["configuration"] = {"differing_parts": result["configuration"]["differingParts"],
                                "pairs_beyond_factor": result["configuration"]["pairsBeyondFactor"],
                                "pairs_without_parts": result["configuration"]["pairsWithoutParts"]}
    if not baseline:
        section["notes"].append("no baseline runs (specialist disabled) in the batch")
    section["notes"].extend(_config_hash_notes(baseline, "baseline") + _config_hash_notes(specialist, "specialist"))
    mixed = mixed_sandbox_note([*baseline, *specialist])
    if mixed:
        section["notes"].append(mixed)
    section["metrics"] = [_metric(m) for m in result["metrics"]]
    section["scenarios"] = [
        {"scenario": row["scenario"], "paired_samples": row["pairs"], "baseline_mean": row["meanB"],
         "specialist_mean": row["meanA"], "difference": row["difference"], "p_value": row["p"],
         "p_holm": row["pHolm"],
         "winner": {"A": "specialist", "B": "baseline"}.get(row["winner"] or ""),
         **({"note": row["note"]} if row.get("note") else {})}
        for row in result["scenarios"]
    ]
    section["models_compared"] = _by_model(baseline, specialist)
    return section


def _by_model(baseline: Sequence[RunRecord], specialist: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """The same figures for each agent and model that made runs, on either side."""
    arms: dict[tuple[str, str], tuple[list[RunRecord], list[RunRecord]]] = defaultdict(lambda: ([], []))
    for r in baseline:
        arms[(r.agent, r.model or "")][0].append(r)
    for r in specialist:
        arms[(r.agent, r.model or "")][1].append(r)
    rows = []
    for (agent, model), (b, s) in sorted(arms.items()):
        fig = _figures(compare_sides(b, s))
        rows.append({
            "model": model or agent,
            "agent": agent,
            "baseline_score": fig.pop("baseline_avg_score"),
            "specialist_score": fig.pop("specialist_avg_score"),
            **fig,
        })
    return rows
