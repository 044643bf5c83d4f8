"""Cost efficiency: what each agent, model or specialist spends per run and per success, the
score it buys per dollar, and the entries no other entry beats on both cost and score.

Rules:

- The runs that count are those of :func:`worker.analysis.compare.split_counted`, except that
  a run replayed from the cache is left out here too (its cost was paid once, by the run it
  replays). Infra errors are left out of the figures but their spend is reported apart
  (``infraSpendUsd``): a provider that failed mid-run may still have billed.
- A run's **agent cost** is its telemetry ``costUsd`` and its **judge cost** is
  ``judgeCostUsd``; a run with an unknown cost (a model without a price) makes the entry's
  totals unknown rather than smaller (``unknownCostRuns`` says how many).
- **Cost per success** = (agent + judge cost) / successes; **score per dollar** = mean score /
  mean cost per run (None when nothing was spent).
- The **Pareto front** over (mean cost per run, mean score): an entry is on it when no other
  entry is at most as costly and at least as good, and strictly better in one of the two.
- ``reprice``: a function run -> (agent cost, judge cost) at today's prices; the figures are
  then computed from it and each entry says so (``repriced: true``). Runs keep the price
  table version they were priced with in ``metadata.priceTable``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from worker.analysis import stats
from worker.analysis.compare import metric_value, split_counted
from worker.analysis.leaderboard import entry_key

Reprice = Callable[[dict[str, Any]], tuple[float | None, float | None]]


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


def _costs(run: dict[str, Any], reprice: Reprice | None) -> tuple[float | None, float | None]:
    if reprice is not None:
        return reprice(run)
    tel = run.get("telemetry") if isinstance(run.get("telemetry"), dict) else {}
    agent = tel.get("costUsd")
    judge = tel.get("judgeCostUsd")
    return (float(agent) if isinstance(agent, (int, float)) else None,
            float(judge) if isinstance(judge, (int, float)) else 0.0 if judge is None else None)


def cost_report(runs: Sequence[dict[str, Any]], by: Sequence[str] = ("agent", "model"),
                reprice: Reprice | None = None) -> dict[str, Any]:
    counted, excluded = split_counted(runs, include_cached=False)
    infra = [r for r in runs if r.get("status") == "error" and r.get("failureClass") == "infra"]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in counted:
        groups[entry_key(run, by)].append(run)
    infra_spend: dict[str, float] = defaultdict(float)
    for run in infra:
        agent, judge = _costs(run, reprice)
        infra_spend[entry_key(run, by)] += (agent or 0.0) + (judge or 0.0)
    rows = []
    for name in sorted(groups):
        rs = groups[name]
        pairs = [_costs(r, reprice) for r in rs]
        unknown = sum(1 for a, j in pairs if a is None or j is None)
        agent_total = None if unknown else math.fsum(a for a, _ in pairs)  # type: ignore[misc]
        judge_total = None if unknown else math.fsum(j for _, j in pairs)  # type: ignore[misc]
        total = None if agent_total is None else agent_total + (judge_total or 0.0)
        successes = sum(1 for r in rs if r.get("isSuccessful"))
        mean_score = stats.mean([metric_value(r, "score") for r in rs])  # type: ignore[misc]
        per_run = None if total is None else total / len(rs)
        rows.append({
            "entry": name, "runs": len(rs), "successes": successes, "meanScore": _r(mean_score),
            "agentCostUsd": _r(agent_total), "judgeCostUsd": _r(judge_total), "totalCostUsd": _r(total),
            "costPerRunUsd": _r(per_run),
            "costPerSuccessUsd": _r(total / successes) if total is not None and successes else None,
            "scorePerDollar": _r(mean_score / per_run) if per_run and mean_score is not None else None,
            "unknownCostRuns": unknown, "infraSpendUsd": _r(infra_spend.get(name, 0.0)),
            "repriced": reprice is not None,
        })
    front = pareto_front([(r["entry"], r["costPerRunUsd"], r["meanScore"]) for r in rows])
    for row in rows:
        row["paretoOptimal"] = row["entry"] in front
    return {"by": list(by), "runs": len(runs), "counted": len(counted), "excluded": excluded,
            "entries": rows, "paretoFront": [r["entry"] for r in sorted(
                (r for r in rows if r["paretoOptimal"]), key=lambda r: r["costPerRunUsd"])]}


def pareto_front(points: Sequence[tuple[str, float | None, float | None]]) -> set[str]:
    """Names of the (name, cost, score) points no other point dominates (cost lower is better,
    score higher); points with an unknown cost or score are never on the front."""
    known = [(n, c, s) for n, c, s in points if c is not None and s is not None]
    front = set()
    for name, cost, score in known:
        dominated = any(oc <= cost and os_ >= score and (oc < cost or os_ > score)
                        for on, oc, os_ in known if on != name)
        if not dominated:
            front.add(name)
    return front
