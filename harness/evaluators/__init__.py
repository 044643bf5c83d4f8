"""Evaluators: each looks at a finished workspace and returns scored results (DESIGN section 5)."""

from harness.evaluators.base import EvaluationContext, EvaluatorResult

__all__ = ["EvaluationContext", "EvaluatorResult"]
