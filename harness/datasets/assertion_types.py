"""The vocabulary of dataset grading: the assertion types, their default thresholds, what is
graded (the protocols the dataset format's records meet) and what grading gives back.

- :data:`ASSERTION_TYPES` lists every type a case's ``assert`` item may name, in the order
  docs and messages show them; :data:`DETERMINISTIC` is every type but ``llm-rubric``.
- An assertion that names no threshold passes at :data:`DEFAULT_THRESHOLD` (1.0), an
  ``llm-rubric`` at :data:`RUBRIC_THRESHOLD` (0.5) (:func:`default_threshold`). Every
  "score >= threshold" comparison allows :data:`EPSILON` for float rounding.
- :class:`AssertionSpec` and :class:`CaseSpec` are what grading reads of
  ``harness.datasets.model.Assertion`` and ``TestCase``; this module and the grading modules
  read them through these protocols and do not import the format.
- :class:`Answer` (the model's text with its latency and cost) goes in;
  :class:`AssertionResult` per assertion and :class:`Grade` per answer come out, each with a
  ``to_dict`` for ``results.jsonl``.
- A :data:`Judge` is a callable ``judge(rubric, prompt, answer)`` returning a
  :class:`JudgeVerdict` or raising :class:`JudgeError`.

:func:`quote` and :func:`is_number` are the small helpers the checks, the validation and the
judge share: a quoted text cut to :data:`QUOTE_CAP` characters, and "a finite int or float,
not a bool".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Protocol

ASSERTION_TYPES: tuple[str, ...] = (
    "contains",
    "icontains",
    "not-contains",
    "starts-with",
    "equals",
    "regex",
    "is-json",
    "json-schema",
    "max-words",
    "max-chars",
    "references",
    "llm-rubric",
    "latency-ms",
    "cost",
)
DETERMINISTIC: frozenset[str] = frozenset(ASSERTION_TYPES) - {"llm-rubric"}

# The threshold of an assertion that names none.
DEFAULT_THRESHOLD = 1.0
RUBRIC_THRESHOLD = 0.5
# Tolerance of every "score >= threshold" comparison: weighted means carry float rounding.
EPSILON = 1e-9
# Quoted text in details is cut to this many characters.
QUOTE_CAP = 80


def default_threshold(kind: str) -> float:
    """The threshold of an assertion of type ``kind`` that names none."""
    return RUBRIC_THRESHOLD if kind == "llm-rubric" else DEFAULT_THRESHOLD


# --------------------------------------------------------------------------------------------
# What is graded: the dataset format (harness.datasets.format) builds its Assertion and TestCase
# and checks their values with validate_assertion; grading reads them through these protocols.


class AssertionSpec(Protocol):
    """What checking and grading read of one assertion (``harness.datasets.model.Assertion``)."""

    @property
    def type(self) -> str: ...

    @property
    def value(self) -> Any: ...

    @property
    def weight(self) -> float: ...

    @property
    def threshold(self) -> float | None: ...


class CaseSpec(Protocol):
    """What grading reads of one test case (``harness.datasets.model.TestCase``)."""

    @property
    def prompt(self) -> str: ...

    @property
    def asserts(self) -> Sequence[AssertionSpec]: ...

    @property
    def threshold(self) -> float | None: ...


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class Answer:
    """What the model answered to one case, with what the call measured."""

    text: str
    latency_ms: float | None = None
    cost_usd: float | None = None  # None: the model has no price


@dataclass
class AssertionResult:
    """One assertion applied to one answer. A skipped result has score and verdict ``None``."""

    type: str
    score: float | None
    passed: bool | None
    weight: float
    threshold: float
    skipped: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "score": None if self.score is None else round(self.score, 6),
            "passed": self.passed,
            "weight": self.weight,
            "threshold": self.threshold,
            "skipped": self.skipped,
            "detail": self.detail,
        }


@dataclass
class Grade:
    """The verdict on one answer: the weighted score, pass/fail, and each assertion's result.

    ``score`` and ``passed`` are ``None`` when the case is ungraded (no assertion counted).
    ``threshold`` is the case's threshold (``None``: every counted assertion must pass). The
    judge's spend on this answer (all its calls, failed ones included) is kept apart from the
    model's: ``judge_tokens_in``, ``judge_tokens_out``, ``judge_cost_usd`` (``None`` when a call
    had no price).
    """

    score: float | None
    passed: bool | None
    threshold: float | None
    results: list[AssertionResult]
    judge_tokens_in: int = 0
    judge_tokens_out: int = 0
    judge_cost_usd: float | None = 0.0
    judge_calls: int = 0

    @property
    def ungraded(self) -> bool:
        return self.passed is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": None if self.score is None else round(self.score, 6),
            "passed": self.passed,
            "threshold": self.threshold,
            "results": [r.to_dict() for r in self.results],
        }
        if self.judge_calls:
            out.update(judge_calls=self.judge_calls, judge_tokens_in=self.judge_tokens_in,
                       judge_tokens_out=self.judge_tokens_out, judge_cost_usd=self.judge_cost_usd)
        return out


@dataclass
class JudgeVerdict:
    """A judge's score in [0, 1] for one answer against one rubric, and what it cost."""

    score: float
    reason: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0


class JudgeError(RuntimeError):
    """The judge could not score an answer. What it spent before failing is kept;
    ``infrastructure`` is true when the judge's provider (not the request) failed."""

    def __init__(self, message: str, *, tokens_in: int = 0, tokens_out: int = 0,
                 cost_usd: float | None = 0.0, calls: int = 0, infrastructure: bool = False) -> None:
        super().__init__(message)
        self.tokens_in = tokens_in
        self.tokens_out = tokens_out
        self.cost_usd = cost_usd
        self.calls = calls
        self.infrastructure = infrastructure


# judge(rubric, prompt, answer) -> verdict; raises JudgeError on failure.
Judge = Callable[[str, str, str], JudgeVerdict]


# --------------------------------------------------------------------------------------------
# Shared helpers


def quote(text: str, cap: int = QUOTE_CAP) -> str:
    """``text`` quoted for a detail, cut to ``cap`` characters (``…`` marks the cut)."""
    if len(text) > cap:
        return repr(text[:cap]) + "…"
    return repr(text)


def is_number(value: Any) -> bool:
    """True for a finite int or float (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)
