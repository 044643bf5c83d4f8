"""Leaderboards: entries (agent, model, specialist, or a combination) ranked on comparable runs.

Rules:

- **What counts**: the runs of :func:`worker.analysis.compare.split_counted` (retried
  attempts, replayed runs and infra/harness/judge errors are left out, and counted).
- **Comparable runs only**: within each scenario-tier, only the runs measured under its most
  common setting (every config part but agent, model, base URL and specialist: the scenario's
  files, prompt, tools, judge, budgets, sandbox, timeout, cache mode, harness version) count;
  the others are left out and counted. An entry is measured on the scenario-tiers (suite,
  scenario, tier) that every entry ran; the others are counted per entry as ``uncommonRuns``. With no
  scenario-tier common to all entries there is no leaderboard, only that message.
- **Mean score** with a 95% interval clustered by scenario (a t interval on the clustered
  standard error; Miller 2024), **success rate** with its Wilson interval, runs, **cost per
  success** (total cost / successes; None without a success or without a recorded cost),
  **median duration**.
- **Ranks as ranges**: an entry's best rank is 1 + the entries whose interval lies wholly
  above its own; its worst rank is the number of entries minus those wholly below. Entries
  whose intervals overlap share a range (``1-3``): the data cannot order them.
- **Composite** (the weights of the benchmarking specification): accuracy 0.30, speed 0.20,
  efficiency 0.20, cost 0.15, reliability 0.15, each normalised to [0, 1]:
  accuracy = mean score; speed, efficiency and cost are what one success took (total
  duration, tokens or cost over the successes), the best entry's over this entry's: 0 for
  an entry that spent something and got no success, 1 for successes that spent nothing;
  reliability = 1 - the share of its runs that ended without a verdict (error, timeout,
  budget exceeded). A component an entry has no data for is left out and the remaining
  weights are rescaled (``compositeParts`` says which). An entry with no success is never
  above one with successes: its composite is capped at the lowest of theirs
  (``compositeCapped``). The composite orders entries for a glance; the score interval says
  what is known.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from worker.analysis import stats
from worker.analysis.compare import AGENT_PARTS, metric_value, split_counted, tier_label

DIMENSIONS = ("agent", "model", "specialist")
WEIGHTS = {"accuracy": 0.30, "speed": 0.20, "efficiency": 0.20, "cost": 0.15, "reliability": 0.15}
NO_VERDICT = ("error", "timeout", "budget_exceeded")


def parse_by(text: str) -> tuple[str, ...]:
    """``"agent,model"`` -> ``("agent", "model")``; ValueError naming a bad dimension."""
    dims = tuple(d.strip() for d in text.split(",") if d.strip())
    bad = [d for d in dims if d not in DIMENSIONS]
    if not dims or bad:
        raise ValueError(f"--by {text!r}: dimensions are {', '.join(DIMENSIONS)} (comma-separated)")
    return dims


def entry_key(run: dict[str, Any], by: Sequence[str]) -> str:
    """The entry a run belongs to, e.g. ``anthropic / claude-sonnet-4-6``. A dimension the run
    has no value for is left out of the name when other dimensions name it (an agent without a
    model is ``oracle``), and is ``-`` when it is the only one."""
    parts = []
    for dim in by:
        if dim == "specialist":
            parts.append(f"{run.get('specialistName')}@{run.get('specialistVersion')}"
                         if run.get("specialistEnabled") else "no specialist")
        elif run.get(dim):
            parts.append(str(run.get(dim)))
    return " / ".join(parts) or "-"


def short_entry(run: dict[str, Any]) -> str:
    """Agent, model and specialist in a few words: ``anthropic / claude-sonnet-4-6 + python-bugfixer@1.0.0``."""
    name = " / ".join(str(run[k]) for k in ("agent", "model") if run.get(k)) or "-"
    if run.get("specialistEnabled"):
        name += f" + {run.get('specialistName')}@{run.get('specialistVersion')}"
    return name


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


def _ratio_to_best(value: float | None, best: float | None) -> float | None:
    """best / value for lower-is-better measures, in [0, 1]."""
    if value is None or best is None:
        return None
    if value <= 0:
        return 1.0
    return max(0.0, min(1.0, best / value))


def _setting(run: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """The run's configuration apart from what a leaderboard ranks (agent, model, base URL,
    specialist); None when the run recorded no config parts."""
    meta = run.get("metadata") if isinstance(run.get("metadata"), dict) else {}
    parts = meta.get("configParts")
    if not isinstance(parts, dict):
        return None
    return tuple(sorted((str(k), str(v)) for k, v in parts.items() if k not in AGENT_PARTS | {"specialist"}))


def same_setting(runs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Per scenario-tier, the runs measured under its most common setting (scenario files,
    prompt, tools, judge, budgets, sandbox, timeout, cache mode, harness version), and how many
    runs were measured under another one and are left out. Runs without parts are kept."""
    by_cell: dict[tuple[Any, ...], dict[Any, int]] = defaultdict(lambda: defaultdict(int))
    for r in runs:
        setting = _setting(r)
        if setting is not None:
            by_cell[(r.get("suite"), r.get("scenario"), tier_label(r))][setting] += 1
    reference = {cell: max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0] for cell, counts in by_cell.items()}
    kept = [r for r in runs if _setting(r) is None
            or _setting(r) == reference[(r.get("suite"), r.get("scenario"), tier_label(r))]]
    return kept, len(runs) - len(kept)


def leaderboard(runs: Sequence[dict[str, Any]], by: Sequence[str] = ("agent",), level: float = 0.95,
                include_cached: bool = False) -> dict[str, Any]:
    counted, excluded = split_counted(runs, include_cached)
    counted, other_setting = same_setting(counted)
    if other_setting:
        excluded = {**excluded, "another setting of the scenario": other_setting}
    entries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in counted:
        entries[entry_key(run, by)].append(run)
    result: dict[str, Any] = {"by": list(by), "runs": len(runs), "counted": len(counted), "excluded": excluded,
                              "weights": WEIGHTS, "entries": [], "notes": []}
    if not entries:
        result["notes"].append("no runs to rank")
        return result
    cells_of = {name: {(r.get("suite"), r.get("scenario"), tier_label(r)) for r in rs} for name, rs in entries.items()}
    common = set.intersection(*cells_of.values())
    result["commonScenarioTiers"] = len(common)
    if not common:
        result["notes"].append("no scenario and tier was run by every entry: nothing comparable to rank "
                               "(narrow the runs, e.g. by suite or time, or run the missing cells)")
        return result
    rows = []
    for name, rs in entries.items():
        used = [r for r in rs if (r.get("suite"), r.get("scenario"), tier_label(r)) in common]
        clusters: dict[str, list[float]] = defaultdict(list)
        for r in used:
            clusters[f"{r.get('suite')}/{r.get('scenario')}"].append(metric_value(r, "score"))  # type: ignore[arg-type]
        scores = [v for c in clusters.values() for v in c]
        mean = stats.mean(scores)
        se = stats.clustered_se(list(clusters.values()))
        if se is not None and len(clusters) >= 2:
            half = stats.t_ppf(1 - (1 - level) / 2, len(clusters) - 1) * se
            interval = [mean - half, mean + half] if mean is not None else None
        else:
            interval = None
        successes = sum(1 for r in used if r.get("isSuccessful"))
        costs = [metric_value(r, "cost") for r in used]
        known_costs = [c for c in costs if c is not None]
        durations = [d for d in (metric_value(r, "duration") for r in used) if d is not None]
        tokens = [t for t in (metric_value(r, "tokens") for r in used) if t is not None]
        no_verdict = sum(1 for r in used if r.get("status") in NO_VERDICT)
        rows.append({
            "entry": name, "runs": len(used), "scenarios": len(clusters), "uncommonRuns": len(rs) - len(used),
            "meanScore": _r(mean), "scoreInterval": None if interval is None else [_r(interval[0]), _r(interval[1])],
            "successes": successes, "successRate": _r(successes / len(used)) if used else None,
            "successInterval": [_r(x) for x in stats.wilson_interval(successes, len(used), level)] if used else None,
            "meanCostUsd": _r(stats.mean(known_costs)) if known_costs else None,
            "costPerSuccessUsd": _r(math.fsum(known_costs) / successes)
            if successes and len(known_costs) == len(costs) else None,
            "medianDurationS": _r(stats.percentile(durations, 50)) if durations else None,
            "meanTokens": _r(stats.mean(tokens)) if tokens else None,
            "reliability": _r(1 - no_verdict / len(used)) if used else None,
            # What one success took: the composite's speed, efficiency and cost parts.
            "_per_success": {
                "speed": (math.fsum(durations) / successes if successes else math.inf) if durations else None,
                "efficiency": (math.fsum(tokens) / successes if successes else math.inf) if tokens else None,
                "cost": (math.fsum(known_costs) / successes if successes else math.inf)
                if known_costs and len(known_costs) == len(costs) else None,
            },
        })
    _composite(rows)
    _rank_ranges(rows)
    rows.sort(key=lambda r: (r["rankBest"], -(r["meanScore"] or 0.0), r["entry"]))
    result["entries"] = rows
    return result


def _composite(rows: list[dict[str, Any]]) -> None:
    def best(part: str) -> float | None:
        values = [r["_per_success"][part] for r in rows
                  if r["_per_success"][part] is not None and 0 < r["_per_success"][part] < math.inf]
        return min(values) if values else None

    lowest = {part: best(part) for part in ("speed", "efficiency", "cost")}
    for row in rows:
        per_success = row.pop("_per_success")
        parts: dict[str, float | None] = {"accuracy": row["meanScore"]}
        for part in ("speed", "efficiency", "cost"):
            value = per_success[part]
            if value is None:
                parts[part] = None  # no data: left out, the other weights rescaled
            elif value == math.inf:
                parts[part] = 0.0  # spent time, tokens or money and got no success
            elif value == 0:
                parts[part] = 1.0  # a success that spent nothing
            else:
                parts[part] = _ratio_to_best(value, lowest[part])
        parts["reliability"] = row["reliability"]
        present = {k: v for k, v in parts.items() if v is not None}
        weight = math.fsum(WEIGHTS[k] for k in present)
        row["compositeParts"] = {k: _r(v) for k, v in parts.items()}
        row["composite"] = _r(math.fsum(WEIGHTS[k] * v for k, v in present.items()) / weight) if weight else None
    # An entry with no success never goes above one with successes on the same cells.
    floor = [r["composite"] for r in rows if r["successes"] and r["composite"] is not None]
    for row in rows:
        if not row["successes"] and floor and row["composite"] is not None and row["composite"] > min(floor):
            row["composite"] = min(floor)
            row["compositeCapped"] = True


def _rank_ranges(rows: list[dict[str, Any]]) -> None:
    n = len(rows)
    for row in rows:
        iv = row["scoreInterval"]
        if iv is None:
            row["rankBest"], row["rankWorst"] = 1, n
        else:
            above = sum(1 for o in rows if o is not row and o["scoreInterval"] and o["scoreInterval"][0] > iv[1])
            below = sum(1 for o in rows if o is not row and o["scoreInterval"] and o["scoreInterval"][1] < iv[0])
            row["rankBest"], row["rankWorst"] = 1 + above, n - below
        row["rank"] = str(row["rankBest"]) if row["rankBest"] == row["rankWorst"] else \
            f"{row['rankBest']}-{row['rankWorst']}"
