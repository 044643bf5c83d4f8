"""Head to head: two sets of runs compared on the cells both ran, with honest statistics.

Input is two lists of runs in wire form (``RunRecord.to_wire()``, what the worker stores and
serves); output is a plain dict (JSON as it stands). The rules, in order:

1. **What counts.** Per side, runs are left out, each with its reason: an attempt a later run
   redid (``retryOf``); a run whose model answers were replayed from the cache (``cached``:
   not a new sample; kept with ``include_cached``); ``error`` of class ``infra`` (the
   provider or the machine failed, not the agent), ``harness`` (a harness bug) or ``judge``
   (nothing could be scored). Every other run counts, whatever its outcome: an agent that
   failed, timed out or ran out of budget scores what it scored, and 0 when nothing could be
   scored. When the share of runs left out differs between the sides by more than
   ``max_exclusion_gap`` (and by more than two runs), the comparison is refused: the sides
   were not measured alike.
2. **Pairs.** A cell is (suite, scenario, tier, iteration); only cells both sides ran are
   compared, the others are counted. The scenario (suite/scenario) is the cluster: tiers and
   iterations of one scenario are repeats of one item, never independent samples.
3. **Same configuration but for the compared factor.** The config parts of each pair
   (``metadata.configParts``) may differ only in what is being compared: one part, or the
   agent and its model together. A pair that differs in more (the scenario's files, the
   budgets, the judge...) makes the comparison refused unless ``allow_mixed``, which compares
   anyway and says so. ``factor`` names the compared parts exactly (``{"specialist"}``): any
   other part is beyond it. When it leaves out the agent and the model, they belong to the
   cell: runs pair only with runs of the same agent and model, and sides that share no
   agent/model are refused.
4. **Per metric** (score, success, cost, duration, tokens, turns): the means of each side on
   the paired cells, the difference A - B with a 95% interval, the test and why it was
   chosen, p, the effect size d_z, the minimum detectable effect at this sample size and the
   pairs needed for 80% power to detect the difference seen (with the design effect of
   clustering), and a verdict: ``A better``, ``B better``, ``no detectable difference`` or
   ``not enough runs``. Higher is better for score and success, lower for the others.
5. **Per scenario**: Welch's test of A's repeats against B's within each scenario, Holm-
   corrected across scenarios; a scenario has a winner only when its adjusted p < alpha.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from worker.analysis import stats

ALPHA = 0.05
LEVEL = 0.95
POWER = 0.8
EXCLUDED_CLASSES = ("infra", "harness", "judge")
# Config parts that may differ together: comparing agents usually means comparing models too.
AGENT_PARTS = frozenset({"agent", "model", "baseUrl"})

# metric -> (label, higher is better, binary, skewed)
METRICS: dict[str, tuple[str, bool, bool, bool]] = {
    "score": ("score", True, False, False),
    "success": ("success rate", True, True, False),
    "cost": ("cost per run (USD)", False, False, True),
    "duration": ("duration (s)", False, False, True),
    "tokens": ("tokens (in + out)", False, False, True),
    "turns": ("agent turns", False, False, True),
}

VERDICTS = ("A better", "B better", "no detectable difference", "not enough runs", "not comparable")


class CompareError(ValueError):
    """A side that cannot be read (a malformed filter)."""


# --------------------------------------------------------------------------- sides


_SIDE_KEYS = {"agent", "model", "specialist", "since", "until", "suite", "scenario", "tier", "batch", "batchId",
              "configHash"}
_DURATION = re.compile(r"^(\d+)\s*([dhm])$")


def parse_side(text: str) -> dict[str, str]:
    """``"batch_123"`` -> ``{"batchId": "batch_123"}``; ``"agent=oracle,since=30d"`` ->
    ``{"agent": "oracle", "since": "30d"}``; ``"batch_123,agent=oracle"`` -> both. Raises
    :class:`CompareError` naming a bad key."""
    text = text.strip()
    if not text:
        raise CompareError("an empty side: give a batch id or filters such as agent=oracle,model=m")
    if "=" not in text:
        return {"batchId": text}
    out: dict[str, str] = {}
    items = text.split(",")
    if "=" not in items[0] and items[0].strip():
        out["batchId"] = items.pop(0).strip()  # BATCH,agent=NAME: a batch narrowed by filters
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise CompareError(f"{item!r}: expected KEY=VALUE (keys: {', '.join(sorted(_SIDE_KEYS))})")
        if key not in _SIDE_KEYS:
            raise CompareError(f"unknown filter {key!r} (keys: {', '.join(sorted(_SIDE_KEYS))})")
        out["batchId" if key == "batch" else key] = value
    return out


def since_cutoff(value: str, now_ms: int) -> str:
    """``"30d"``, ``"12h"``, ``"90m"`` or an ISO date -> the ISO instant it names."""
    import datetime as _dt

    match = _DURATION.match(value.strip())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        seconds = amount * {"d": 86400, "h": 3600, "m": 60}[unit]
        instant = _dt.datetime.fromtimestamp(now_ms / 1000 - seconds, _dt.UTC)
        return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    try:
        parsed = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CompareError(f"since={value!r}: expected e.g. 30d, 12h or an ISO date (2026-01-31)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
    return parsed.astimezone(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------- reading runs


def _meta(run: dict[str, Any]) -> dict[str, Any]:
    meta = run.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _iteration(run: dict[str, Any]) -> int | None:
    value = _meta(run).get("iteration")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def tier_label(run: dict[str, Any]) -> str:
    return str(_meta(run).get("tierLabel") or run.get("tier") or "")


def run_score(run: dict[str, Any]) -> float | None:
    """The score success is judged on: the weighted score, else the total score."""
    for key in ("weightedScore", "totalScore"):
        value = run.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def metric_value(run: dict[str, Any], metric: str) -> float | None:
    """One metric of one run; None when the run did not record it."""
    tel = run.get("telemetry") if isinstance(run.get("telemetry"), dict) else {}
    if metric == "score":
        score = run_score(run)
        return 0.0 if score is None else score  # counted runs without a score did no scorable work
    if metric == "success":
        return 1.0 if run.get("isSuccessful") else 0.0
    if metric == "cost":
        value = tel.get("costUsd")
    elif metric == "duration":
        value = tel.get("durationMs")
        value = None if value is None else value / 1000.0
    elif metric == "tokens":
        value = None if tel.get("tokensIn") is None else (tel.get("tokensIn") or 0) + (tel.get("tokensOut") or 0)
    elif metric == "turns":
        value = tel.get("turns")
    else:
        raise ValueError(f"unknown metric {metric!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def exclusion_reason(run: dict[str, Any], redone: set[str], include_cached: bool = False) -> str | None:
    """Why a run does not count, or None when it does."""
    if run.get("runId") in redone:
        return "redone by a retry"
    if _meta(run).get("cached") and not include_cached:
        return "replayed from the cache"
    if run.get("status") == "error" and run.get("failureClass") in EXCLUDED_CLASSES:
        return f"error/{run.get('failureClass')}"
    return None


def split_counted(runs: Sequence[dict[str, Any]], include_cached: bool = False
                  ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(runs that count, {reason: runs left out})."""
    redone = {str(_meta(r).get("retryOf")) for r in runs if _meta(r).get("retryOf")}
    counted, excluded = [], defaultdict(int)
    for run in runs:
        reason = exclusion_reason(run, redone, include_cached)
        if reason is None:
            counted.append(run)
        else:
            excluded[reason] += 1
    return counted, dict(excluded)


def cell_of(run: dict[str, Any], order: int) -> tuple[str, str, str, int | str]:
    it = _iteration(run)
    return (str(run.get("suite")), str(run.get("scenario")), tier_label(run), it if it is not None else f"#{order}")


def arm_of(run: dict[str, Any]) -> tuple[str, str]:
    """(agent, model) of a run; the model is empty for agents without one."""
    return str(run.get("agent") or ""), str(run.get("model") or "")


def _arm_names(arms: set[tuple[str, str]]) -> str:
    return ", ".join(sorted(f"{agent}:{model}" if model else agent for agent, model in arms))


def _setup(run: dict[str, Any]) -> str:
    """Agent, model and specialist of a run, as a name."""
    name = ":".join(x for x in arm_of(run) if x) or "-"
    return name + (f"+{run.get('specialistName')}" if run.get("specialistEnabled") else "")


def _cells(runs: Sequence[dict[str, Any]], by_arm: bool = False,
           mixed: set[str] | None = None) -> dict[tuple[Any, ...], dict[str, Any]]:
    """One run per cell: the latest when a cell ran twice (runs without an iteration are
    numbered in start order within their scenario and tier). ``by_arm``: the agent and model
    are part of the cell (after the iteration). ``mixed`` receives the setups (agent, model,
    specialist) that met in one cell: a side that holds several of them cannot be paired."""
    order: dict[tuple[str, ...], int] = defaultdict(int)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for run in sorted(runs, key=lambda r: (str(r.get("startedAt") or ""), str(r.get("runId")))):
        arm = arm_of(run) if by_arm else ()
        base = (str(run.get("suite")), str(run.get("scenario")), tier_label(run), *arm)
        key = (*cell_of(run, order[base]), *arm)
        if _iteration(run) is None:
            order[base] += 1
        if mixed is not None and key in out and _setup(out[key]) != _setup(run):
            mixed.update((_setup(out[key]), _setup(run)))
        out[key] = run
    return out


def differing_parts(a: dict[str, Any], b: dict[str, Any]) -> set[str] | None:
    """The config parts two runs differ in; None when either run has no recorded parts."""
    pa, pb = _meta(a).get("configParts"), _meta(b).get("configParts")
    if not isinstance(pa, dict) or not isinstance(pb, dict):
        return None
    return {k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k)}


def _within_factor(parts: set[str], factor: Collection[str] | None = None) -> bool:
    if factor is not None:
        return parts <= set(factor)
    return len(parts) <= 1 or parts <= AGENT_PARTS


# --------------------------------------------------------------------------- one metric


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _r(x: float | None, digits: int = 6) -> float | None:
    x = _finite(x)
    return None if x is None else round(x, digits)


def _choose_test(binary: bool, skewed: bool, clusters: list[list[float]], a: list[float], b: list[float],
                 alpha: float) -> tuple[stats.TestResult, str, tuple[float | None, float | None]]:
    """(test result, why it was chosen, interval of the mean difference)."""
    level = 1 - alpha
    diffs = [d for c in clusters for d in c]
    n, k = len(diffs), len(clusters)
    if any(len(c) > 1 for c in clusters):
        result = stats.cluster_paired(clusters, level=level)
        if not stats.is_degenerate(result) or k < 2:
            why = (f"{n} pairs in {k} scenarios with repeats: a paired test with standard errors "
                   "clustered by scenario (df = scenarios - 1)")
            return result, why, (result.ci_low, result.ci_high)
        # Every scenario's mean difference is the same: the t statistic is infinite. The signs
        # of the scenario means still carry evidence, which an exact signed-rank test weighs.
        means = [stats.mean(c) or 0.0 for c in clusters]
        result = stats.wilcoxon_signed_rank(means, [0.0] * k)
        why = (f"{n} pairs in {k} scenarios with repeats, every scenario differing by the same amount "
               "(no variance for a t-test): exact signed-rank test of the scenario means, interval by "
               "cluster bootstrap")
        return result, why, stats.cluster_bootstrap_ci(clusters, level=level, seed=0)
    if binary:
        only_a = sum(1 for x, y in zip(a, b) if x > y)
        only_b = sum(1 for x, y in zip(a, b) if y > x)
        result = stats.mcnemar_exact(only_a, only_b, pairs=n)
        why = f"a pass/fail outcome, one pair per scenario: exact McNemar on the {only_a + only_b} discordant pairs"
        return result, why, stats.bootstrap_ci(diffs, level=level, seed=0)
    if skewed:
        result = stats.wilcoxon_signed_rank(a, b)
        why = "a skewed measure, one pair per scenario: Wilcoxon signed-rank (interval by bootstrap)"
        return result, why, stats.bootstrap_ci(diffs, level=level, seed=0)
    result = stats.paired_t(a, b, level=level)
    if not stats.is_degenerate(result):
        return result, "one pair per scenario: paired t-test", (result.ci_low, result.ci_high)
    result = stats.wilcoxon_signed_rank(a, b)
    why = ("one pair per scenario, every pair differing by the same amount (no variance for a t-test): "
           "exact signed-rank test, interval by bootstrap")
    return result, why, stats.bootstrap_ci(diffs, level=level, seed=0)


def exact_p_floor(scenarios: int) -> float:
    """The smallest two-sided p an exact test on ``scenarios`` signs can give: 2 / 2^k."""
    return min(1.0, 2.0 / 2.0 ** scenarios) if scenarios > 0 else 1.0


def scenarios_for_significance(alpha: float = ALPHA) -> int:
    """The fewest scenarios for which :func:`exact_p_floor` is below ``alpha``."""
    k = 1
    while exact_p_floor(k) >= alpha:
        k += 1
    return k


def compare_metric(metric: str, pairs: Sequence[tuple[str, float, float]], alpha: float = ALPHA) -> dict[str, Any]:
    """``pairs``: (cluster, A value, B value). The figures and verdict of one metric."""
    label, higher_better, binary, skewed = METRICS[metric]
    a = [p[1] for p in pairs]
    b = [p[2] for p in pairs]
    diffs_by_cluster: dict[str, list[float]] = defaultdict(list)
    for cluster, x, y in pairs:
        diffs_by_cluster[cluster].append(x - y)
    clusters = list(diffs_by_cluster.values())
    diffs = [d for c in clusters for d in c]
    repeats = any(len(c) > 1 for c in clusters)
    out: dict[str, Any] = {"metric": metric, "label": label, "pairs": len(pairs), "clusters": len(clusters),
                           "meanA": _r(stats.mean(a)), "meanB": _r(stats.mean(b)),
                           "higherIsBetter": higher_better}
    if len(pairs) < 2:
        out.update(difference=_r(stats.mean(diffs)), ci=None, test=None, why=None, p=None, effectSize=None,
                   designEffect=None, mde=None, pairsNeeded=None, verdict="not enough runs",
                   notes=["fewer than two paired cells: nothing to test"])
        return out
    notes: list[str] = []
    result, why, ci = _choose_test(binary, skewed, clusters, a, b, alpha)
    diff = stats.mean(diffs) or 0.0
    sd = stats.stdev(diffs)
    m = len(diffs) / len(clusters)
    deff = stats.design_effect(m, stats.icc(clusters)) if repeats else 1.0
    # The clustered test has df = scenarios - 1: with few scenarios the normal figures are optimistic.
    df = len(clusters) - 1 if repeats and len(clusters) >= 2 else None
    mde = (stats.mde(sd, len(diffs), alpha=alpha, power=POWER, paired=True, design_effect=deff, df=df)
           if sd else None)
    needed = (stats.runs_needed(abs(diff), sd, alpha=alpha, power=POWER, paired=True, design_effect=deff,
                                per_cluster=m if repeats else None)
              if sd and diff else None)
    if result.note:
        notes.append(result.note)
    degenerate = stats.is_degenerate(result) or result.p_value is None
    if repeats and len(clusters) < 2:
        notes.append("one scenario only: its repeats are not independent, and a clustered test needs two")
        degenerate = True
    if degenerate:
        verdict = "not enough runs"
    elif result.p_value < alpha and diff:
        a_wins = diff > 0 if higher_better else diff < 0
        verdict = "A better" if a_wins else "B better"
    else:
        verdict = "no detectable difference"
        if needed is not None and needed > len(diffs):
            notes.append(f"about {needed} pairs would be needed to detect a difference of {abs(diff):.4g} "
                         f"with {POWER:.0%} power")
        floor = exact_p_floor(len(clusters))
        if binary and floor >= alpha:
            notes.append(f"with {len(clusters)} scenario(s) a pass/fail difference that goes the same way in "
                         f"every scenario has p = {floor:.4g} at best (an exact test on the scenarios' signs), "
                         f"never below alpha = {alpha:g}: at least {scenarios_for_significance(alpha)} scenarios "
                         "are needed for a success-rate difference to be significant")
    out.update(difference=_r(diff), ci=None if ci[0] is None or ci[1] is None else [_r(ci[0]), _r(ci[1])],
               test=result.test, why=why, p=_r(result.p_value, 8), effectSize=_r(stats.cohens_dz(diffs)),
               designEffect=_r(deff), mde=_r(mde), pairsNeeded=needed, verdict=verdict, notes=notes)
    return out


# --------------------------------------------------------------------------- the comparison


def _side_summary(label: str, runs: Sequence[dict[str, Any]], counted: Sequence[dict[str, Any]],
                  excluded: dict[str, int]) -> dict[str, Any]:
    def distinct(key: str) -> list[str]:
        return sorted({str(r.get(key)) for r in counted if r.get(key)})

    specialists = sorted({f"{r.get('specialistName')}@{r.get('specialistVersion')}" for r in counted
                          if r.get("specialistEnabled")})
    return {"label": label, "runs": len(runs), "counted": len(counted), "excluded": excluded,
            "agents": distinct("agent"), "models": distinct("model"), "specialists": specialists,
            "batches": distinct("batchId")}


def compare_runs(a_runs: Sequence[dict[str, Any]], b_runs: Sequence[dict[str, Any]], *, labels: tuple[str, str] = ("A", "B"),
                 alpha: float = ALPHA, allow_mixed: bool = False, include_cached: bool = False,
                 max_exclusion_gap: float = 0.10, metrics: Sequence[str] = tuple(METRICS),
                 factor: Collection[str] | None = None) -> dict[str, Any]:
    """Compare two sets of runs (wire dicts). See the module docstring for the rules.
    ``factor``: the config parts being compared (None: one part, or the agent and model together)."""
    a_counted, a_excluded = split_counted(a_runs, include_cached)
    b_counted, b_excluded = split_counted(b_runs, include_cached)
    result: dict[str, Any] = {
        "sides": [_side_summary(labels[0], a_runs, a_counted, a_excluded),
                  _side_summary(labels[1], b_runs, b_counted, b_excluded)],
        "alpha": alpha, "confidenceLevel": 1 - alpha, "notes": [],
    }
    refusals: list[str] = []
    a_rate = 1 - len(a_counted) / len(a_runs) if a_runs else 0.0
    b_rate = 1 - len(b_counted) / len(b_runs) if b_runs else 0.0
    gap_runs = abs((len(a_runs) - len(a_counted)) - (len(b_runs) - len(b_counted)))
    if abs(a_rate - b_rate) > max_exclusion_gap and gap_runs > 2:
        refusals.append(f"the sides lost different shares of their runs ({a_rate:.0%} of {labels[0]}, "
                        f"{b_rate:.0%} of {labels[1]}; see excluded): they were not measured alike")
    by_arm = factor is not None and not {"agent", "model"} & set(factor)
    if by_arm:
        a_arms, b_arms = {arm_of(r) for r in a_counted}, {arm_of(r) for r in b_counted}
        if a_arms and b_arms and not a_arms & b_arms:
            refusals.append(f"{labels[0]} runs are by {_arm_names(a_arms)}, {labels[1]} runs by {_arm_names(b_arms)}: "
                            f"the agent and model are not the compared factor ({', '.join(sorted(factor or ()))})")
    a_mixed: set[str] = set()
    b_mixed: set[str] = set()
    a_cells, b_cells = _cells(a_counted, by_arm, a_mixed), _cells(b_counted, by_arm, b_mixed)
    for label, mixed in ((labels[0], a_mixed), (labels[1], b_mixed)):
        if mixed:
            refusals.append(f"{label} holds runs of {', '.join(sorted(mixed))} in the same cells: narrow it to one "
                            "(e.g. BATCH,agent=NAME or agent=NAME,model=MODEL)")
    common = sorted(set(a_cells) & set(b_cells), key=repr)
    result["cells"] = {"paired": len(common), "onlyA": len(set(a_cells) - set(b_cells)),
                       "onlyB": len(set(b_cells) - set(a_cells))}
    if result["cells"]["onlyA"] or result["cells"]["onlyB"]:
        result["notes"].append(f"only the {len(common)} cells both sides ran are compared "
                               f"({result['cells']['onlyA']} only in {labels[0]}, "
                               f"{result['cells']['onlyB']} only in {labels[1]})")
    differing: set[str] = set()
    unknown = 0
    beyond = 0
    for key in common:
        parts = differing_parts(a_cells[key], b_cells[key])
        if parts is None:
            unknown += 1
            continue
        differing |= parts
        if not _within_factor(parts, factor):
            beyond += 1
    result["configuration"] = {"differingParts": sorted(differing), "pairsBeyondFactor": beyond,
                               "pairsWithoutParts": unknown}
    if beyond:
        message = (f"{beyond} of {len(common)} pairs differ in more than the compared factor "
                   f"({', '.join(sorted(differing))})")
        if allow_mixed:
            result["notes"].append(message + "; compared anyway (allow mixed)")
        else:
            refusals.append(message + "; the difference would not be the factor's alone (allow mixed to compare anyway)")
    if unknown:
        result["notes"].append(f"{unknown} pairs were stored without config parts: their configuration "
                               "could not be checked")
    figures = []
    for metric in metrics:
        pairs = []
        for key in common:
            x, y = metric_value(a_cells[key], metric), metric_value(b_cells[key], metric)
            if x is not None and y is not None:
                pairs.append((f"{key[0]}/{key[1]}", x, y))
        figures.append(compare_metric(metric, pairs, alpha))
    result["metrics"] = figures
    result["scenarios"] = per_scenario(a_cells, b_cells, common, alpha)
    if refusals:
        result["verdict"] = "not comparable"
        result["refused"] = refusals
    else:
        result["verdict"] = next(f["verdict"] for f in figures if f["metric"] == "score") if "score" in metrics \
            else figures[0]["verdict"]
        result["refused"] = []
    return result


def per_scenario(a_cells: dict[tuple[Any, ...], dict[str, Any]], b_cells: dict[tuple[Any, ...], dict[str, Any]],
                 common: Sequence[tuple[Any, ...]], alpha: float = ALPHA) -> list[dict[str, Any]]:
    """Score by scenario: A's repeats against B's (Welch), Holm-corrected across scenarios."""
    groups: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for key in common:
        name = f"{key[0]}/{key[1]}"
        groups[name][0].append(metric_value(a_cells[key], "score"))  # type: ignore[arg-type]
        groups[name][1].append(metric_value(b_cells[key], "score"))  # type: ignore[arg-type]
    rows = []
    for name in sorted(groups):
        a, b = groups[name]
        test = stats.welch_t(a, b, level=1 - alpha) if len(a) >= 2 and len(b) >= 2 else None
        usable = test is not None and test.p_value is not None and test.statistic is not None \
            and math.isfinite(test.statistic)
        rows.append({"scenario": name, "pairs": len(a), "meanA": _r(stats.mean(a)), "meanB": _r(stats.mean(b)),
                     "difference": _r((stats.mean(a) or 0.0) - (stats.mean(b) or 0.0)),
                     "p": _r(test.p_value, 8) if usable else None})
    tested = [i for i, row in enumerate(rows) if row["p"] is not None]
    adjusted = stats.holm([rows[i]["p"] for i in tested]) if tested else []
    for i, row in enumerate(rows):
        row["pHolm"] = None
        row["winner"] = None
    for i, p in zip(tested, adjusted):
        rows[i]["pHolm"] = _r(p, 8)
        if p < alpha and rows[i]["difference"]:
            rows[i]["winner"] = "A" if rows[i]["difference"] > 0 else "B"
    for row in rows:
        if row["p"] is None:
            row["note"] = "fewer than two repeats a side, or no variation: not tested"
    return rows
