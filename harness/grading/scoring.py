"""Scoring of one run from its evaluator results. Pure functions.

score = Σ w·s / Σ w over the counted results: status ``ok``, and ``error`` results blamed on
the workspace (the agent's output could not be graded), which count as 0; skipped results and
other errors do not count. w comes from ``rubric_overrides.weights``, default 1. A run is
successful when its score is at least the scenario's ``success_threshold``, no gating command
failed (``install``, and ``test`` when the scenario has one) and no evaluator failed on the
agent's output.

The stored fields (docs/scenarios.md, "Score, success, status"): ``totalScore`` and
``weightedScore`` are both this score (one meaning, two names kept by the wire format);
``successMetric`` is 1.0 for a successful run and 0.0 otherwise (None when nothing was scored).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness.grading.evaluators.base import BLAME, BLAME_WORKSPACE, EvaluatorResult

GATING_COMMANDS = ("install", "test")
VALIDATION_GROUP = "validation"

# Weight keys the original harness used for the same measurements; honoured as fallbacks so
# its suites' rubric_overrides keep their meaning.
WEIGHT_ALIASES: dict[str, tuple[str, ...]] = {
    "install": ("install_success",),
    "test": ("tests_nonregression", "test_success"),
    "build": ("build_success",),
    "lint": ("lint_success",),
    "typecheck": ("typecheck_success",),
}


@dataclass
class RunScore:
    """The outcome of scoring one run."""

    score: float | None  # None when no evaluator produced a counted result
    successful: bool
    weights: dict[str, float] = field(default_factory=dict)  # result name -> weight used
    gating_failures: list[str] = field(default_factory=list)
    counted: int = 0  # results that count (ok, or failed on the agent's output)
    workspace_errors: list[str] = field(default_factory=list)  # evaluators the agent's output broke

    @property
    def success_metric(self) -> float | None:
        """1.0 when successful, 0.0 when not, None when nothing was scored."""
        return None if self.score is None else (1.0 if self.successful else 0.0)


def workspace_error(result: EvaluatorResult) -> bool:
    """An ``error`` result blamed on what the agent left: it counts, as 0."""
    return result.status == "error" and result.data.get(BLAME) == BLAME_WORKSPACE


def counts(result: EvaluatorResult) -> bool:
    """Whether ``result`` counts in the score: ``ok``, or failed on the agent's output."""
    return result.status == "ok" or workspace_error(result)


def result_weight(result: EvaluatorResult, weights: Mapping[str, float]) -> float:
    """The weight of ``result``: its own name, then the original's alias, then its group, else 1."""
    for key in (result.name, *WEIGHT_ALIASES.get(result.name, ()), result.data.get("group")):
        if key and key in weights:
            return float(weights[key])
    return 1.0


def weighted_score(results: Iterable[EvaluatorResult], weights: Mapping[str, float] | None = None) -> float | None:
    """Σ w·s / Σ w over counted results (:func:`counts`; a workspace error scores 0); None
    when nothing counts (no counted result, or all weights 0)."""
    weights = weights or {}
    total_w = 0.0
    total = 0.0
    for r in results:
        if not counts(r):
            continue
        w = result_weight(r, weights)
        total_w += w
        total += w * (0.0 if workspace_error(r) else min(1.0, max(0.0, r.score)))
    return total / total_w if total_w > 0 else None


def gating_failures(results: Iterable[EvaluatorResult]) -> list[str]:
    """Names of gating validation commands (install, test) that did not pass."""
    failed = []
    for r in results:
        # A scenario with validation.required: false runs its commands without gating on them.
        if r.name in GATING_COMMANDS and r.data.get("group") == VALIDATION_GROUP and r.data.get("gating", True):
            if r.status == "error" or (r.status == "ok" and r.score < 1.0):
                failed.append(r.name)
    return failed


def score_run(results: list[EvaluatorResult], weights: Mapping[str, float] | None = None,
              success_threshold: float = 0.7) -> RunScore:
    """Score and success of a run from its evaluator results."""
    weights = weights or {}
    score = weighted_score(results, weights)
    gates = gating_failures(results)
    broken = [r.name for r in results if workspace_error(r)]
    return RunScore(
        score=score,
        successful=score is not None and score >= success_threshold and not gates and not broken,
        weights={r.name: result_weight(r, weights) for r in results if counts(r)},
        gating_failures=gates,
        counted=sum(1 for r in results if counts(r)),
        workspace_errors=broken,
    )
