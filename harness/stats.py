"""Statistics for comparing two sets of scores: means, t-tests, confidence intervals, verdicts.

Pure functions over plain numbers, so they are tested with plain values (and checked against
scipy in the tests). The Student t distribution is computed here from the regularized
incomplete beta function; nothing outside the standard library is needed at run time.

Degenerate inputs are answered honestly rather than hidden:

- fewer than two values on a side (or two pairs): no variance can be estimated, so there is
  no interval, no p-value and the verdict is ``"not enough evidence"``;
- zero variance with a non-zero difference (e.g. two deterministic agents): the t statistic is
  infinite, the interval has zero width and the p-value is 0 — the limit of the test, which is
  what scipy reports too; the result carries a note saying so;
- zero variance and zero difference: p-value 1, interval [0, 0].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Sequence

Verdict = Literal["better", "worse", "not enough evidence"]
TestName = Literal["paired_t", "welch_t"]

_EPS = 1e-15
_TINY = 1e-300


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, or ``None`` for an empty sequence."""
    if not values:
        return None
    return math.fsum(values) / len(values)


def sample_variance(values: Sequence[float]) -> float | None:
    """Unbiased sample variance (n - 1 denominator), or ``None`` when n < 2."""
    n = len(values)
    if n < 2:
        return None
    m = math.fsum(values) / n
    return math.fsum((v - m) ** 2 for v in values) / (n - 1)


def _is_constant(values: Sequence[float]) -> bool:
    """True when all values are equal up to float rounding (0.8 and 1.0 - 0.2 count as equal)."""
    lo, hi = min(values), max(values)
    return hi - lo <= 1e-12 * max(1.0, abs(hi), abs(lo))


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function, evaluated by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be positive")
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must be in [0, 1]")
    if x == 0.0 or x == 1.0:
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast only on one side of the mean; use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (df may be fractional)."""
    if df <= 0:
        raise ValueError("df must be positive")
    if math.isinf(t):
        return 0.0
    if math.isnan(t):
        return math.nan
    x = df / (df + t * t)
    return min(1.0, regularized_incomplete_beta(df / 2.0, 0.5, x))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = t_two_sided_p(t, df) / 2.0
    return 1.0 - tail if t >= 0 else tail


def t_ppf(p: float, df: float) -> float:
    """The quantile t such that P(T <= t) = p, found by bisection on :func:`t_cdf`."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


@dataclass
class TTestResult:
    """A t-test of ``specialist - baseline``: statistic, df, two-sided p and the CI of the difference."""

    test: TestName
    difference: float  # mean(specialist) - mean(baseline) (or mean of paired differences)
    statistic: float | None
    df: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95
    notes: list[str] = field(default_factory=list)


def _finish(test: TestName, diff: float, se: float, df: float, confidence: float) -> TTestResult:
    if se == 0.0:
        if abs(diff) <= 1e-12:
            return TTestResult(test, diff, 0.0, df, 1.0, 0.0, 0.0, confidence,
                               ["zero variance and no difference"])
        return TTestResult(test, diff, math.copysign(math.inf, diff), df, 0.0, diff, diff, confidence,
                           ["zero variance: every score on each side is identical, so t is infinite"])
    t = diff / se
    q = t_ppf(0.5 + confidence / 2.0, df)
    return TTestResult(test, diff, t, df, t_two_sided_p(t, df), diff - q * se, diff + q * se, confidence)


def paired_t_test(baseline: Sequence[float], specialist: Sequence[float],
                  confidence: float = 0.95) -> TTestResult:
    """Paired t-test on matched pairs ``(baseline[i], specialist[i])``.

    Needs at least two pairs for a variance; with fewer, statistic, p-value and CI are None.
    """
    if len(baseline) != len(specialist):
        raise ValueError("paired samples must have the same length")
    diffs = [s - b for b, s in zip(baseline, specialist)]
    n = len(diffs)
    if n == 0:
        return TTestResult("paired_t", math.nan, None, None, None, None, None, confidence, ["no pairs"])
    d = math.fsum(diffs) / n
    var = sample_variance(diffs)
    if var is None:
        return TTestResult("paired_t", d, None, None, None, None, None, confidence,
                           ["one pair: no variance can be estimated"])
    se = 0.0 if _is_constant(diffs) else math.sqrt(var / n)
    return _finish("paired_t", d, se, n - 1, confidence)


def welch_t_test(baseline: Sequence[float], specialist: Sequence[float],
                 confidence: float = 0.95) -> TTestResult:
    """Welch's unequal-variance t-test of ``specialist`` against ``baseline``.

    Needs at least two values on each side; with fewer, statistic, p-value and CI are None.
    """
    mb, ms = mean(baseline), mean(specialist)
    if mb is None or ms is None:
        return TTestResult("welch_t", math.nan, None, None, None, None, None, confidence,
                           ["a side has no scores"])
    d = ms - mb
    vb, vs = sample_variance(baseline), sample_variance(specialist)
    if vb is None or vs is None:
        return TTestResult("welch_t", d, None, None, None, None, None, confidence,
                           ["a side has fewer than two scores: no variance can be estimated"])
    nb, ns = len(baseline), len(specialist)
    eb = 0.0 if _is_constant(baseline) else vb / nb
    es = 0.0 if _is_constant(specialist) else vs / ns
    se2 = eb + es
    if se2 == 0.0:
        return _finish("welch_t", d, 0.0, float(nb + ns - 2), confidence)
    # Welch–Satterthwaite degrees of freedom.
    df = se2 * se2 / ((eb * eb) / (nb - 1) + (es * es) / (ns - 1))
    return _finish("welch_t", d, math.sqrt(se2), df, confidence)


def verdict(result: TTestResult, alpha: float = 0.05) -> Verdict:
    """"better" / "worse" when the two-sided p-value is below ``alpha``, else "not enough evidence"."""
    if result.p_value is None or math.isnan(result.p_value) or result.p_value >= alpha:
        return "not enough evidence"
    if result.difference > 0:
        return "better"
    if result.difference < 0:
        return "worse"
    return "not enough evidence"


def improvement_pct(baseline_mean: float | None, specialist_mean: float | None) -> float | None:
    """Relative improvement in percent; ``None`` when the baseline mean is missing or zero."""
    if baseline_mean is None or specialist_mean is None or baseline_mean == 0:
        return None
    return (specialist_mean - baseline_mean) / baseline_mean * 100.0
