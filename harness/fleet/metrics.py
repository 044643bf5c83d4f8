"""The fleet's numbers: the 19 summary metrics and the provider, repository, category and cell
breakdowns, all computed from the list of every test of the fleet (docs/fleets.md has the
formulas).

A *test* is one graded answer: a dataset case at one repeat, or one scenario run. Its
``outcome`` is ``succeeded`` (passed), ``failed`` (graded below its threshold, or an error
other than a timeout), ``timeout`` (the request or the run ran out of time) or ``skipped``
(planned but not run: its cell was never started because the fleet stopped, or the answer
could not be graded). Rates are over every test (``total_succeeded / total_tests``, as the
original defined them) with a Wilson 95% interval; durations are percentiles over the
durations of every test that ran (never averages of averages); a cost no price is known for
makes the total unknown (``None``) rather than zero, and is counted in ``cost_unknown_tests``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from worker.analysis.summary import Figures, summarize

OUTCOMES = ("succeeded", "failed", "timeout", "skipped")

# The 19 metrics of the fleet summary, in the order of csv/fleet-summary.csv.
SUMMARY_METRICS = (
    "total_repositories", "total_tests", "total_succeeded", "total_failed", "total_timeout", "total_skipped",
    "success_rate", "avg_duration_ms", "p50_duration_ms", "p95_duration_ms", "p99_duration_ms",
    "min_duration_ms", "max_duration_ms", "total_tokens", "avg_tokens_per_request", "total_cost",
    "avg_cost_per_repository", "avg_tests_per_repository", "total_duration_ms",
)


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


#: A fleet test's outcome as an outcome of :mod:`worker.analysis.summary`.
_OUTCOME = {"succeeded": "passed", "failed": "failed", "timeout": "timeout", "skipped": "skipped"}
#: Every test that ran is timed (a timeout's duration too, as the fleet's figures define it).
_TIMED = frozenset({"passed", "failed", "timeout"})


def _figures(test: dict[str, Any]) -> Figures:
    """A test's figures; a skipped test's count for nothing but its outcome (tokens are the
    total of in and out, read back as ``tokens_in``)."""
    outcome = _OUTCOME[test["outcome"]]
    if outcome == "skipped":
        return Figures(outcome)
    return Figures(outcome, test.get("duration_ms"), None, int(test.get("tokens") or 0), 0, test.get("cost_usd"))


def block(tests: list[dict[str, Any]], *, full: bool = False) -> dict[str, Any]:
    """Counts, rate with interval, durations, tokens and cost of ``tests`` (one pass over them)."""
    figures = summarize((_figures(t) for t in tests), timed=_TIMED)
    n = figures.cells
    rate = figures.rate(("passed",), ("passed", "failed", "timeout", "skipped"))
    duration = figures.duration
    out: dict[str, Any] = {
        "total_tests": n,
        "total_succeeded": figures.count("passed"), "total_failed": figures.count("failed"),
        "total_timeout": figures.count("timeout"), "total_skipped": figures.count("skipped"),
        "success_rate": _round(rate.value, 6),
        "success_rate_low": _round(rate.low, 6), "success_rate_high": _round(rate.high, 6),
        "avg_duration_ms": _round(duration.mean),
        "p50_duration_ms": _round(duration.p50),
        "p95_duration_ms": _round(duration.p95),
    }
    if full:
        out.update({"p99_duration_ms": _round(duration.p99), "min_duration_ms": _round(duration.min),
                    "max_duration_ms": _round(duration.max)})
    cost = figures.cost_usd
    out.update({"total_tokens": figures.tokens_in, "total_cost": None if cost is None else round(cost, 8),
                "cost_unknown_tests": figures.cost_unknown})
    return out


def summary(tests: list[dict[str, Any]], repositories: int, total_duration_ms: float | None) -> dict[str, Any]:
    """The fleet summary: the 19 metrics (plus the interval and ``cost_unknown_tests``)."""
    out = block(tests, full=True)
    n = out["total_tests"]
    ran = n - out["total_skipped"]
    out["total_repositories"] = repositories
    out["avg_tokens_per_request"] = _round(out["total_tokens"] / ran) if ran else None
    out["avg_cost_per_repository"] = (None if out["total_cost"] is None or not repositories
                                      else round(out["total_cost"] / repositories, 8))
    out["avg_tests_per_repository"] = _round(n / repositories) if repositories else None
    out["total_duration_ms"] = None if total_duration_ms is None else int(round(total_duration_ms))
    ordered = {k: out[k] for k in SUMMARY_METRICS}
    ordered.update({k: out[k] for k in ("success_rate_low", "success_rate_high", "cost_unknown_tests")})
    return ordered


def _group(tests: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for t in tests:
        out.setdefault(t[key], []).append(t)
    return out


def by_provider(tests: list[dict[str, Any]], providers: list[str]) -> list[dict[str, Any]]:
    """One row per provider, in manifest order: repositories it ran on, counts, rate, tokens, cost."""
    groups = _group(tests, "provider")
    rows = []
    for provider in providers:
        mine = groups.get(provider, [])
        rows.append({"provider": provider,
                     "repository_count": len({t["repo_id"] for t in mine}),
                     **block(mine)})
    return rows


def by_repository(tests: list[dict[str, Any]], repositories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per repository (``repositories``: dicts with repo_id, adapter, source), in order."""
    groups = _group(tests, "repo_id")
    return [{**repo, **block(groups.get(repo["repo_id"], []), full=True)} for repo in repositories]


def by_category(tests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per category, sorted by name: counts, rate with interval, mean duration."""
    rows = []
    for category, mine in sorted(_group(tests, "category").items()):
        b = block(mine)
        rows.append({"category": category,
                     **{k: b[k] for k in ("total_tests", "total_succeeded", "total_failed", "total_timeout",
                                          "total_skipped", "success_rate", "success_rate_low", "success_rate_high",
                                          "avg_duration_ms")}})
    return rows
