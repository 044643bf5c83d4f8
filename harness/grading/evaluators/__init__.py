"""Evaluators: each looks at a finished workspace and returns scored results.

What each one checks and how it scores: docs/scenarios.md, "Evaluators".
"""

from harness.grading.evaluators.base import EvaluationContext, EvaluatorResult

__all__ = ["EvaluationContext", "EvaluatorResult"]
