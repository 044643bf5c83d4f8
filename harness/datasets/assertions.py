"""Grading one model answer of a dataset test case: the assertion types and how they score.

Each item of a case's ``assert`` list (:class:`~harness.datasets.model.Assertion`) gives a
score in [0, 1] and passes when the score reaches its threshold (default 1.0; 0.5 for
``llm-rubric``):

=============  =========================================  =======================================
type           value                                      score
=============  =========================================  =======================================
contains       string                                     1 when the answer contains it
icontains      string                                     the same, ignoring case
not-contains   string                                     1 when the answer does not contain it
starts-with    string                                     1 when the answer (leading whitespace
                                                          ignored) starts with it
equals         string                                     1 when the stripped answer equals the
                                                          stripped value
regex          Python regular expression                  1 when ``re.search`` finds it
is-json        (none)                                     1 when the answer parses as JSON
json-schema    JSON Schema (Draft 2020-12) object         1 when the answer's JSON validates
max-words      positive integer                           1 when the answer has at most that many
                                                          whitespace-separated words
max-chars      positive integer                           1 when the stripped answer has at most
                                                          that many characters
references     list of strings (default: the case's       the fraction found, ignoring case
               ``references``)
llm-rubric     rubric text                                the judge model's score
latency-ms     maximum milliseconds (> 0)                 1 when the call took at most that long;
                                                          skipped when the latency is unknown
cost           maximum USD (>= 0)                         1 when the call cost at most that much;
                                                          skipped when the cost is unknown
=============  =========================================  =======================================

``is-json`` and ``json-schema`` read the whole stripped answer, or, when the whole answer is
one fenced code block (```` ```json ```` or bare ```` ``` ````), the block's content. A JSON
Schema's ``format`` keywords are checked (email, date-time, ...), not only annotated.

A case's score is the weight-averaged score of its assertions that were not skipped. With a
threshold (the case's or the dataset's ``defaults.threshold``) the case passes when its score
reaches it; without one, when every assertion that was not skipped passes. A case with no
assertion left (none written, or all skipped) is *ungraded*: score and verdict ``None``.
Comparisons with thresholds allow for float rounding (``EPSILON``): a passing assertion of
weight 0.3 beside a failing one of weight 0.1 scores 0.7499999999999999, which meets 0.75.

``llm-rubric`` asks a ``Judge``, a callable ``judge(rubric, prompt, answer)`` returning a
``JudgeVerdict`` (both of :mod:`~harness.datasets.assertion_types`); ``make_judge``
(:mod:`~harness.datasets.rubric_judge`) builds one over the provider layer. Without a judge
the assertion is skipped (never failed) with the reason given; a judge that fails
(``JudgeError``: the model cannot be reached, or answers twice with something that is not
the JSON object asked for) makes the assertion an error that scores 0 and does count.

:func:`grade` runs once per model answer, thousands of times a second on large datasets:
regular expressions and JSON Schema validators are compiled once (``lru_cache``), heavy modules
are imported only when a validator is first built, and the answer's lowered form and parsed
JSON are computed at most once per call.

Where the parts live (each name is imported from its own module):
:mod:`~harness.datasets.assertion_types` (the types, thresholds, protocols and result records),
:mod:`~harness.datasets.assertion_checks` (the deterministic checks),
:mod:`~harness.datasets.assertion_validation` (``validate_assertion``, at load time) and
:mod:`~harness.datasets.rubric_judge` (``make_judge``); this module combines them into
:func:`grade` (and :func:`needs_judge`).
"""

from __future__ import annotations

from harness.datasets.assertion_checks import CHECKS, AnswerView, Outcome
from harness.datasets.assertion_types import (
    EPSILON,
    QUOTE_CAP,
    Answer,
    AssertionResult,
    CaseSpec,
    Grade,
    Judge,
    JudgeError,
    JudgeVerdict,
    default_threshold,
    is_number,
)


def needs_judge(case: CaseSpec) -> bool:
    """True when one of the case's assertions is an ``llm-rubric``."""
    return any(a.type == "llm-rubric" for a in case.asserts)


def grade(case: CaseSpec, answer: Answer, judge: Judge | None = None, *,
          judge_skip_reason: str = "no judge model") -> Grade:
    """Apply every assertion of ``case`` to ``answer`` and combine them (module docstring).

    ``judge`` scores ``llm-rubric`` assertions; without one they are skipped with
    ``judge_skip_reason`` as their detail.
    """
    view = AnswerView(answer)
    results: list[AssertionResult] = []
    tokens_in = tokens_out = calls = 0
    judge_cost: float | None = 0.0
    for a in case.asserts:
        kind = a.type
        threshold = a.threshold if a.threshold is not None else default_threshold(kind)
        check = CHECKS.get(kind)
        if check is not None:
            score, detail = check(a, view, case)
        elif kind == "llm-rubric":
            if judge is None:
                score, detail = None, judge_skip_reason
            else:
                try:
                    verdict = judge(a.value, case.prompt, view.text)
                except JudgeError as exc:
                    score, detail = 0.0, f"judge failed: {str(exc)[: QUOTE_CAP * 2]}"
                    spent = (exc.tokens_in, exc.tokens_out, exc.cost_usd, exc.calls)
                else:
                    score, detail = _verdict_outcome(verdict)
                    spent = (verdict.tokens_in, verdict.tokens_out, verdict.cost_usd, 1)
                tokens_in += spent[0]
                tokens_out += spent[1]
                calls += spent[3]
                judge_cost = None if judge_cost is None or spent[2] is None else judge_cost + spent[2]
        else:
            score, detail = 0.0, f"unknown assertion type {kind!r}"
        if score is None:
            results.append(AssertionResult(kind, None, None, a.weight, threshold, True, detail))
        else:
            results.append(AssertionResult(kind, score, score >= threshold - EPSILON, a.weight, threshold,
                                           False, detail))
    counted = [r for r in results if not r.skipped]
    case_threshold = case.threshold
    if not counted:
        score_all: float | None = None
        passed: bool | None = None
    else:
        total_weight = sum(r.weight for r in counted)
        score_all = min(1.0, max(0.0, sum(r.weight * r.score for r in counted) / total_weight))
        if case_threshold is not None:
            passed = score_all >= case_threshold - EPSILON
        else:
            passed = all(r.passed for r in counted)
    return Grade(score_all, passed, case_threshold, results, judge_tokens_in=tokens_in, judge_tokens_out=tokens_out,
                 judge_cost_usd=judge_cost, judge_calls=calls)


def _verdict_outcome(verdict: JudgeVerdict) -> Outcome:
    score = verdict.score
    if not is_number(score) or not 0 <= score <= 1:
        return 0.0, f"judge failed: score {score!r} is not a number from 0 to 1"
    reason = " ".join(str(verdict.reason or "").split())
    if len(reason) > QUOTE_CAP:
        reason = reason[:QUOTE_CAP] + "…"
    return float(score), f"judge {score:.2f}" + (f": {reason}" if reason else "")
