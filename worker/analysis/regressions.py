"""Regressions: a candidate's runs against a baseline's, scenario by scenario, told apart from
noise.

For each scenario-tier (suite, scenario, tier) and entry (agent / model / specialist, so that a
batch of several agents is compared like with like) the candidate's mean score is compared with
the baseline's:

- **Noise band**: the score's run-to-run spread at a fixed configuration, estimated from the
  scenario's history (earlier runs with the baseline's config hash) pooled with the
  baseline's runs (the reference): band = z(0.975) · sd · √(1/n_reference + 1/n_candidate). Without two runs to
  estimate a spread from, there is no band.
- **Test**: Welch's t-test of the candidate's scores against the reference (the baseline's runs
  and the history at the baseline's configuration; two runs a side at least), the candidate's
  variance floored at the reference's: at a fixed configuration the spread is the reference's,
  so a few candidate runs that happen to agree neither shrink the standard error nor leave it
  with n_cand - 1 degrees of freedom (the test is then a t-test on the reference's variance,
  df = n_reference - 1). Benjamini–Hochberg-corrected across the scenarios tested
  (``pAdjusted``): among the scenarios flagged, the expected share of false flags is at most
  alpha, and with no real change anywhere a false flag happens in at most alpha of the checks.
  When both sides are constant and differ (a deterministic agent that always passed and now
  always fails) the t statistic is unbounded; the exact rank test of two samples that do not
  overlap is used instead: p = 2 / C(n_ref + n_cand, n_cand).
- ``regressed`` / ``improved``: the difference lies outside the band (when there is one) *and*
  is significant after correction. ``inconclusive``: a difference outside the band (or with
  no band to judge it by) that is not significant, or too few runs to test it; ``runsNeeded``
  says how many runs a side would detect it (two-sample, 80% power, the spread pooled from
  both sides). ``flaky``: a difference inside the band, or none, while runs at one
  configuration (in the history, the baseline or the candidate) both passed and failed: the
  noise is the story, not the change. ``unchanged``: a difference inside the band, or none,
  with no such mixed outcomes. ``new`` / ``missing``:
  the scenario ran on one side only.
- **Severity** of a regression or improvement, from the effect size (Hedges' g): ``minor``
  below 0.5, ``moderate`` below 0.8, ``major`` from 0.8 (and when the runs of each side are
  identical, so g is unbounded).

Runs that do not count (retried attempts, replayed runs, infra/harness/judge errors) are left
out as in :mod:`worker.analysis.compare`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from worker.analysis import stats
from worker.analysis.compare import metric_value, split_counted, tier_label
from worker.analysis.leaderboard import short_entry

ALPHA = 0.05
SEVERITIES = ("minor", "moderate", "major")
STATUSES = ("regressed", "improved", "flaky", "inconclusive", "unchanged", "new", "missing")


def _key(run: dict[str, Any]) -> tuple[str, str, str, str]:
    """Scenario-tier and who ran it: a batch of several agents is compared like with like."""
    return (str(run.get("suite")), str(run.get("scenario")), tier_label(run), short_entry(run))


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


def severity(g: float | None) -> str:
    if g is None or not math.isfinite(g):
        return "major"
    g = abs(g)
    return "minor" if g < 0.5 else "moderate" if g < 0.8 else "major"


def _mixed(runs: Sequence[dict[str, Any]]) -> bool:
    """Both passed and failed at one configuration."""
    by_config: dict[str, set[bool]] = defaultdict(set)
    for run in runs:
        by_config[str(run.get("configHash"))].add(bool(run.get("isSuccessful")))
    return any(len(v) == 2 for v in by_config.values())


def _separated_p(n1: int, n2: int) -> float:
    """Two-sided exact p of two samples that do not overlap at all (every value of one side
    above every value of the other): 2 of the C(n1 + n2, n1) ways to split the pooled runs are
    as extreme (the exact Mann-Whitney test at its extreme)."""
    return min(1.0, 2.0 / math.comb(n1 + n2, n1))


def _floored_p(reference: list[float], candidate: list[float]) -> float | None:
    """Welch's p with the candidate's variance floored at the reference's; None when the
    candidate's own variance is the larger (Welch as it stands)."""
    vr, vc = stats.variance(reference), stats.variance(candidate)
    if vr is None or vc is None or vr == 0.0 or vc >= vr:
        return None
    se = math.sqrt(vr * (1 / len(reference) + 1 / len(candidate)))
    t = ((stats.mean(candidate) or 0.0) - (stats.mean(reference) or 0.0)) / se
    return min(1.0, 2.0 * stats.t_cdf(-abs(t), len(reference) - 1))


def _test(reference: list[float], candidate: list[float]) -> tuple[float | None, str | None]:
    """(p, test) of the candidate's scores against the reference's; (None, None) with fewer
    than two runs a side."""
    if len(reference) < 2 or len(candidate) < 2:
        return None, None
    result = stats.welch_t(candidate, reference)
    if not stats.is_degenerate(result):
        floored = _floored_p(reference, candidate)
        if floored is not None:
            return floored, "welch_t (candidate's variance floored at the reference's)"
        return result.p_value, "welch_t"
    if min(candidate) > max(reference) or max(candidate) < min(reference):
        # Both sides constant (or no overlap and no spread to scale by): an exact rank test.
        return _separated_p(len(reference), len(candidate)), "exact rank (samples do not overlap)"
    return result.p_value, "welch_t"


def _runs_needed(diff: float, reference: list[float], candidate: list[float], alpha: float) -> int | None:
    """Runs a side for a two-sample test to detect ``diff`` at 80% power, with the spread pooled
    from both sides (None when neither side varies, or there is no difference)."""
    spreads = [v for v in (stats.variance(reference), stats.variance(candidate)) if v is not None]
    if not diff or not spreads:
        return None
    sd = math.sqrt(sum(spreads) / len(spreads))
    if sd == 0.0:
        return None
    try:
        return stats.runs_needed(abs(diff), sd, alpha=alpha, paired=False)
    except ValueError:
        return None


def regressions(baseline: Sequence[dict[str, Any]], candidate: Sequence[dict[str, Any]],
                history: Sequence[dict[str, Any]] = (), alpha: float = ALPHA) -> dict[str, Any]:
    base, base_excluded = split_counted(baseline)
    cand, cand_excluded = split_counted(candidate)
    hist, _ = split_counted(history)
    seen = {r.get("runId") for r in [*base, *cand]}
    by_key: dict[tuple[str, str, str, str], tuple[list, list, list]] = defaultdict(lambda: ([], [], []))
    for run in base:
        by_key[_key(run)][0].append(run)
    for run in cand:
        by_key[_key(run)][1].append(run)
    base_hashes = {(_key(r), r.get("configHash")) for r in base}
    for run in hist:
        if run.get("runId") not in seen and (_key(run), run.get("configHash")) in base_hashes:
            by_key[_key(run)][2].append(run)
    rows = []
    for key in sorted(by_key):
        b_runs, c_runs, h_runs = by_key[key]
        b = [metric_value(r, "score") for r in b_runs]
        c = [metric_value(r, "score") for r in c_runs]
        row: dict[str, Any] = {"scenario": f"{key[0]}/{key[1]}", "tier": key[2], "entry": key[3],
                               "baselineRuns": len(b),
                               "candidateRuns": len(c), "historyRuns": len(h_runs),
                               "baselineMean": _r(stats.mean(b)), "candidateMean": _r(stats.mean(c))}
        if not b or not c:
            row.update(status="new" if c else "missing", difference=None, band=None, p=None, pAdjusted=None,
                       effectSize=None, severity=None)
            rows.append(row)
            continue
        diff = (stats.mean(c) or 0.0) - (stats.mean(b) or 0.0)
        # The baseline's configuration as measured before: its history is more of the same sample.
        reference = b + [metric_value(r, "score") for r in h_runs]  # type: ignore[misc]
        sd = stats.stdev(reference) if len(reference) >= 2 else None
        band = None if sd is None else stats.norm_ppf(0.975) * sd * math.sqrt(1 / len(reference) + 1 / len(c))
        p, test_name = _test(reference, c)  # type: ignore[arg-type]
        g = stats.hedges_g(c, reference) if len(reference) >= 2 and len(c) >= 2 else None
        if g is None and len(reference) >= 2 and len(c) >= 2 and diff:
            g = math.inf  # both sides constant and different: no spread to scale by
        row["test"] = test_name
        row.update(difference=_r(diff), band=_r(band), p=_r(p, 8), pAdjusted=None,
                   effectSize=None if g is None else (_r(g) if math.isfinite(g) else None),
                   severity=None, _g=g, _mixed=_mixed(b_runs) or _mixed(c_runs) or _mixed(h_runs),
                   _need=_runs_needed(diff, reference, c, alpha))  # type: ignore[arg-type]
        rows.append(row)
    tested = [i for i, r in enumerate(rows) if r.get("p") is not None]
    for i, adjusted in zip(tested, stats.benjamini_hochberg([rows[i]["p"] for i in tested]) if tested else []):
        rows[i]["pAdjusted"] = _r(adjusted, 8)
    for row in rows:
        if "status" in row:  # new or missing
            continue
        diff, band, p_adjusted = row["difference"], row["band"], row["pAdjusted"]
        outside = band is None or abs(diff) > band
        significant = p_adjusted is not None and p_adjusted < alpha
        if diff and outside and significant:
            row["status"] = "regressed" if diff < 0 else "improved"
            row["severity"] = severity(row["_g"])
        elif diff and outside:
            # A difference the noise does not explain, not (yet) significant: more runs decide it.
            row["status"] = "inconclusive"
            row["runsNeeded"] = row["_need"]
            if row["p"] is None:
                row["note"] = "too few runs a side to test the difference (two at least)"
            else:
                row["note"] = "outside the noise band but not significant after correction"
            if row["_need"] is not None:
                row["note"] += f"; about {row['_need']} runs a side would decide it"
        elif row["_mixed"]:
            # Inside the noise band, and the runs at one configuration both passed and failed.
            row["status"] = "flaky"
        else:
            row["status"] = "unchanged"
        row.pop("_g", None)
        row.pop("_mixed", None)
        row.pop("_need", None)
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in STATUSES}
    return {"alpha": alpha, "scenarios": rows, "counts": counts,
            "excluded": {"baseline": base_excluded, "candidate": cand_excluded},
            "worst": worst_regression(rows)}


def worst_regression(rows: Sequence[dict[str, Any]]) -> str | None:
    found = [r["severity"] for r in rows if r["status"] == "regressed"]
    return max(found, key=SEVERITIES.index) if found else None


def fails(result: dict[str, Any], fail_on: str) -> bool:
    """Whether a regression of at least ``fail_on`` severity was found (a CI gate)."""
    if fail_on not in SEVERITIES:
        raise ValueError(f"--fail-on {fail_on!r}: one of {', '.join(SEVERITIES)}")
    worst = result.get("worst")
    return worst is not None and SEVERITIES.index(worst) >= SEVERITIES.index(fail_on)
