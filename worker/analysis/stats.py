"""The statistics of the project: descriptive statistics, distributions, tests, intervals,
clustered errors, effect sizes, power and pass@k.

Everything here is a pure function over plain numbers (ints and floats; any iterable of them
where a sample is expected), written against the Python standard library only, so that the
results worker can run it in Pyodide. Resampling is deterministic: every bootstrap draws from
``random.Random(seed)``. The Student t distribution is computed from the regularized
incomplete beta function; the normal quantile comes from ``statistics.NormalDist``.

Conventions
-----------

- **Inputs.** A NaN or an infinite value in a sample or a numeric argument is refused with a
  ``ValueError`` that names the argument (``a[3] is NaN``); so is a string. Counts must be
  non-negative integers. The distribution functions (``t_cdf``, ``norm_cdf``) accept an
  infinite point or an infinite ``df`` (the normal limit), since infinity is part of their
  domain, and ``t_ppf``/``norm_ppf`` answer ``p = 0`` and ``p = 1`` with ``-inf``/``inf``;
  NaN is refused there too.
- **Tests** return a :class:`TestResult`. ``estimate`` is ``a - b`` (the mean of the paired
  differences, or the difference of the means for Welch); p-values are two-sided; the
  interval is for ``estimate`` at ``level``.
- **Equality with tolerance.** A sample counts as having zero variance when its largest and
  smallest values differ by at most ``1e-12`` relative to their magnitude (so 0.8 and
  1.0 - 0.2 are equal), and a difference counts as zero when it is at most ``1e-12`` relative
  to the magnitude of the data. The Wilcoxon test is the exception: it ranks the differences
  exactly as ``scipy.stats.wilcoxon`` does (bit-equal values are ties, only exact zeros are
  zeros).

Degenerate cases
----------------

The answer is honest and the same in every test:

1. **Fewer than two values** (no pairs, one pair, a Welch side with fewer than two values, a
   clustered test with fewer than two clusters): no variance can be estimated, so
   ``statistic``, ``p_value``, ``ci_low``, ``ci_high`` and ``se`` are ``None``; ``estimate``
   is given when there is anything to estimate; ``note`` says "fewer than two ...".
   ``bootstrap_ci`` and ``cluster_bootstrap_ci`` raise ``ValueError`` instead (they return a
   bare interval); ``clustered_se`` returns ``None``; ``cohens_dz``, ``hedges_g`` and ``mde``
   return ``None``; ``icc`` returns 0.
2. **Zero variance and no difference** (all pairs equal, both Welch sides constant and equal,
   every cluster mean equal to zero): ``statistic = 0``, ``p_value = 1``, a zero-width
   interval at the estimate, ``se = 0``. A Wilcoxon test whose differences are all zero
   answers ``statistic = 0``, ``p_value = 1``; a McNemar test without discordant pairs
   answers ``p_value = 1``.
3. **Zero variance with a nonzero difference** (e.g. two deterministic agents): the t
   statistic is infinite (signed like the estimate), ``p_value = 0``, the interval has zero
   width at the estimate and ``se = 0``. This is the limit of the test, not evidence: the note
   says the test's assumptions fail and a verdict must not rely on it; callers treat it as
   "not enough runs". :func:`is_degenerate` is true for cases 1 and 3.
4. ``cohens_dz`` and ``hedges_g`` are ``None`` when the standard deviation is zero (the effect
   size is undefined or infinite); ``wilson_interval`` with ``n = 0`` is ``(0, 1)``;
   ``runs_needed`` is ``None`` for a zero effect and at least 2 otherwise.

References: clustered standard errors follow Miller (2024), "Adding Error Bars to Evals"
(clusters are the items, the values in a cluster its repeated runs); the unbiased pass@k
estimator is the one of Chen et al. (2021), "Evaluating Large Language Models Trained on Code".
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Callable, Iterable, Sequence

__all__ = [
    "TestResult",
    "is_degenerate",
    "mean",
    "variance",
    "stdev",
    "percentile",
    "t_cdf",
    "t_ppf",
    "norm_cdf",
    "norm_ppf",
    "paired_t",
    "welch_t",
    "wilcoxon_signed_rank",
    "mcnemar_exact",
    "bootstrap_ci",
    "cluster_bootstrap_ci",
    "clustered_se",
    "cluster_paired",
    "icc",
    "design_effect",
    "wilson_interval",
    "cohens_dz",
    "hedges_g",
    "mde",
    "runs_needed",
    "holm",
    "benjamini_hochberg",
    "pass_at_k",
    "pass_hat_k",
]

_NORMAL = NormalDist()
_TINY = 1e-300
_CF_EPS = 1e-16
_REL_TOL = 1e-12
# Beyond this many degrees of freedom the t tail comes from its expansion in 1/df (for moderate t).
_LARGE_DF = 1e5
# Above this many discordant pairs the exact binomial tail is taken from the incomplete beta
# function instead of summing binomial coefficients.
_EXACT_BINOMIAL_MAX = 20_000
# scipy.stats.wilcoxon(method="auto"): exact distribution up to 50 pairs without ties or zeros,
# enumeration of every sign (a permutation test, exact) up to 13 pairs otherwise.
_WILCOXON_EXACT_MAX = 50
_WILCOXON_ENUMERATE_MAX = 13

_ZERO_VARIANCE_NOTE = (
    "zero variance with a nonzero difference: the statistic is infinite, p = 0 and the interval "
    "has zero width; the test's assumptions fail, so a verdict must not rely on it (more runs are needed)"
)
_NO_DIFFERENCE_NOTE = "zero variance and no difference: p = 1"


@dataclass(frozen=True)
class TestResult:
    """The outcome of one test; see the module docstring for the degenerate cases."""

    __test__ = False  # not a pytest test class

    test: str  # "paired_t", "welch_t", "wilcoxon", "mcnemar_exact", "cluster_paired"
    statistic: float | None
    p_value: float | None  # two-sided; None when it cannot be computed
    estimate: float | None  # a - b: mean difference; (b - c) / n for McNemar
    ci_low: float | None
    ci_high: float | None  # interval for `estimate` at the test's level
    df: float | None = None
    n: int = 0  # pairs / observations used
    se: float | None = None
    note: str | None = None  # why something is None or degenerate, in words


def is_degenerate(result: TestResult) -> bool:
    """True when a verdict must not rest on ``result``: no p-value, or an infinite statistic
    (zero variance with a nonzero difference)."""
    return (result.p_value is None or result.statistic is None
            or math.isinf(result.statistic))


# ---------------------------------------------------------------------------------------------
# Input checks


def _number(x: Any, name: str) -> float:
    """``x`` as a finite float, or ValueError naming ``name``."""
    value = _not_nan(x, name)
    if math.isinf(value):
        raise ValueError(f"{name} is infinite")
    return value


def _not_nan(x: Any, name: str) -> float:
    """``x`` as a float that may be infinite but not NaN."""
    if isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name} is not a number: {x!r}")
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} is not a number: {x!r}") from None
    if math.isnan(value):
        raise ValueError(f"{name} is NaN")
    return value


def _values(xs: Iterable[Any], name: str) -> list[float]:
    """A sample as a list of finite floats."""
    if isinstance(xs, (str, bytes)) or xs is None:
        raise ValueError(f"{name} must be a sequence of numbers, not {xs!r}")
    try:
        items = list(xs)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of numbers, not {xs!r}") from None
    if all(type(x) is float or type(x) is int for x in items):
        values = [float(x) for x in items]
        if math.isfinite(sum(values)):  # then none is NaN or infinite: the usual case, checked at once
            return values
    return [_number(x, f"{name}[{i}]") for i, x in enumerate(items)]


def _clusters(clusters: Iterable[Iterable[Any]], name: str) -> list[list[float]]:
    """Clusters as lists of finite floats; an empty cluster is refused."""
    if isinstance(clusters, (str, bytes)) or clusters is None:
        raise ValueError(f"{name} must be a sequence of sequences of numbers")
    try:
        items = list(clusters)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of sequences of numbers") from None
    out = []
    for i, cluster in enumerate(items):
        values = _values(cluster, f"{name}[{i}]")
        if not values:
            raise ValueError(f"{name}[{i}] is empty: every cluster needs at least one value")
        out.append(values)
    return out


def _count(x: Any, name: str, minimum: int = 0) -> int:
    """A non-negative integer (an integral float is accepted)."""
    if isinstance(x, float):
        if not math.isfinite(x) or not x.is_integer():
            raise ValueError(f"{name} must be an integer, not {x!r}")
        x = int(x)
    try:
        value = int(x.__index__())
    except (AttributeError, TypeError):
        raise ValueError(f"{name} must be an integer, not {x!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


def _probability(x: Any, name: str) -> float:
    """A number strictly between 0 and 1 (a level, an alpha, a power)."""
    value = _number(x, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, not {value}")
    return value


def _df(df: Any) -> float:
    value = _not_nan(df, "df")
    if value <= 0:
        raise ValueError(f"df must be positive, not {value}")
    return value


def _is_constant(values: Sequence[float]) -> bool:
    """True when all values are equal up to float rounding (0.8 and 1.0 - 0.2 are equal)."""
    lo, hi = min(values), max(values)
    return hi - lo <= _REL_TOL * max(1.0, abs(hi), abs(lo))


def _is_zero(value: float, scale: float) -> bool:
    return abs(value) <= _REL_TOL * max(1.0, scale)


def _stat_value(value: Any) -> float:
    if value is None:
        raise ValueError("stat returned None for a resample")
    return _number(value, "stat(resample)")


# ---------------------------------------------------------------------------------------------
# Descriptive statistics


def mean(xs: Iterable[float]) -> float | None:
    """Arithmetic mean (exactly rounded sum), or ``None`` for an empty sample."""
    values = _values(xs, "xs")
    if not values:
        return None
    return math.fsum(values) / len(values)


def _variance(values: Sequence[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    m = math.fsum(values) / n
    return math.fsum((v - m) ** 2 for v in values) / (n - 1)


def variance(xs: Iterable[float]) -> float | None:
    """Sample variance with the n - 1 denominator, or ``None`` with fewer than two values."""
    return _variance(_values(xs, "xs"))


def stdev(xs: Iterable[float]) -> float | None:
    """Sample standard deviation (n - 1), or ``None`` with fewer than two values."""
    var = _variance(_values(xs, "xs"))
    return None if var is None else math.sqrt(var)


def _percentile_sorted(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks, as ``numpy.percentile``'s default."""
    n = len(ordered)
    position = q / 100.0 * (n - 1)
    below = min(int(math.floor(position)), n - 1)
    above = min(below + 1, n - 1)
    gamma = position - below
    lo, hi = ordered[below], ordered[above]
    diff = hi - lo
    # numpy's lerp: from the nearer end, so that gamma = 1 gives `hi` exactly.
    return hi - diff * (1.0 - gamma) if gamma >= 0.5 else lo + diff * gamma


def percentile(xs: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (``q`` in [0, 100]) with linear interpolation, as
    ``numpy.percentile(xs, q)``; ``None`` for an empty sample."""
    return percentiles(xs, (q,))[0]


def percentiles(xs: Iterable[float], qs: Iterable[float]) -> list[float | None]:
    """:func:`percentile` of ``xs`` for each of ``qs``, the sample checked and sorted once."""
    values = _values(xs, "xs")
    levels = []
    for q in qs:
        q = _number(q, "q")
        if not 0.0 <= q <= 100.0:
            raise ValueError(f"q must be in [0, 100], not {q}")
        levels.append(q)
    if not values:
        return [None] * len(levels)
    ordered = sorted(values)
    return [_percentile_sorted(ordered, q) for q in levels]


# ---------------------------------------------------------------------------------------------
# Distributions


def _stirling_correction(x: float) -> float:
    """lgamma(x) - ((x - 0.5) log x - x + log(2 pi) / 2), for x >= 10."""
    x2 = x * x
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0) / x2) / x2) / x2) / x


def _log_beta(a: float, b: float) -> float:
    """log B(a, b) for a, b > 0, accurate when one argument is large."""
    if a < b:
        a, b = b, a
    if a < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(a) - lgamma(a + b) through Stirling's series, without the cancellation of two
    # large lgamma values.
    ratio = (-b * math.log(a + b) + (a - 0.5) * math.log1p(-b / (a + b)) + b
             + _stirling_correction(a) - _stirling_correction(a + b))
    return math.lgamma(b) + ratio


def _beta_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of I_x(a, b) (modified Lentz), y = 1 - x."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
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
        if abs(delta - 1.0) < _CF_EPS:
            break
    return h


def _betainc(a: float, b: float, x: float, y: float, log_x: float, log_y: float) -> float:
    """Regularized incomplete beta I_x(a, b). The caller gives y = 1 - x and both logarithms,
    each computed without cancellation (x or y may underflow while its logarithm is exact)."""
    if log_x == -math.inf:
        return 0.0
    if log_y == -math.inf:
        return 1.0
    log_front = a * log_x + b * log_y - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x, y) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, y, x) / b


def _t_tail(t: float, df: float) -> float:
    """P(T >= t) for t >= 0: I_x(df/2, 1/2) / 2 with x = df / (df + t^2)."""
    if t == 0.0:
        return 0.5
    if math.isinf(t):
        return 0.0
    if math.isinf(df):
        return 0.5 * math.erfc(t / math.sqrt(2.0))
    if df > _LARGE_DF and t ** 4 <= 1e-3 * df:
        # The continued fraction converges slowly for large df and moderate t; there the
        # expansion of the t tail around the normal one in powers of 1/df is accurate (its
        # relative error grows like (t^4 / df)^3, hence the bound on t).
        t2 = t * t
        density = math.exp(-t2 / 2.0) / math.sqrt(2.0 * math.pi)
        correction = (t * (t2 + 1.0) / (4.0 * df)
                      + t * (((3.0 * t2 - 7.0) * t2 - 5.0) * t2 - 3.0) / (96.0 * df * df))
        return 0.5 * math.erfc(t / math.sqrt(2.0)) + density * correction
    root = math.sqrt(df)
    if t > root:
        r = root / t  # x = r^2 / (1 + r^2), y = 1 / (1 + r^2)
        r2 = r * r
        log_y = -math.log1p(r2)
        log_x = 2.0 * math.log(r) + log_y
        x, y = r2 / (1.0 + r2), 1.0 / (1.0 + r2)
    else:
        s = (t / root) ** 2  # x = 1 / (1 + s), y = s / (1 + s)
        log_x = -math.log1p(s)
        log_y = math.log(s) + log_x if s > 0.0 else -math.inf
        x, y = 1.0 / (1.0 + s), s / (1.0 + s)
    return 0.5 * _betainc(df / 2.0, 0.5, x, y, log_x, log_y)


def _t_log_pdf(t: float, df: float) -> float:
    """log of the density of Student's t at t >= 0."""
    root = math.sqrt(df)
    if t > root:
        log1p_s = 2.0 * math.log(t / root) + math.log1p((root / t) ** 2)
    else:
        log1p_s = math.log1p((t / root) ** 2)
    return -_log_beta(df / 2.0, 0.5) - 0.5 * math.log(df) - (df + 1.0) / 2.0 * log1p_s


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (fractional and infinite df
    allowed; an infinite ``t`` gives 0 or 1)."""
    t = _not_nan(t, "t")
    df = _df(df)
    tail = _t_tail(abs(t), df)
    return 1.0 - tail if t >= 0 else tail


def _t_upper_quantile(q: float, df: float) -> float:
    """The t >= 0 with P(T >= t) = q, for 0 < q < 0.5: Newton's method on the tail, kept in a
    bracket that shrinks by bisection (geometric while the bracket spans orders of magnitude)."""
    z = -_NORMAL.inv_cdf(q)
    guess = z + (z ** 3 + z) / (4.0 * df)
    lo, hi = 0.0, max(guess, 1.0)
    while _t_tail(hi, df) > q:
        lo, hi = hi, hi * 4.0
        if hi > 1e300:
            return math.inf
    t = guess if lo < guess < hi else (lo + hi) / 2.0
    for _ in range(400):
        f = _t_tail(t, df) - q
        if f > 0:
            lo = t
        elif f < 0:
            hi = t
        else:
            return t
        density = math.exp(_t_log_pdf(t, df))
        candidate = t + f / density if density > 0.0 else math.nan
        if not lo < candidate < hi:
            candidate = math.sqrt(lo * hi) if lo > 0 and hi > 4.0 * lo else (lo + hi) / 2.0
        if abs(candidate - t) <= 4e-16 * max(1.0, abs(t)) or hi - lo <= 4e-16 * max(1.0, hi):
            return candidate
        t = candidate
    return t


def t_ppf(p: float, df: float) -> float:
    """The quantile of Student's t: the t with P(T <= t) = p (``-inf``/``inf`` at 0 and 1)."""
    p = _number(p, "p")
    df = _df(df)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], not {p}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    if math.isinf(df):
        return _NORMAL.inv_cdf(p)
    if p > 0.5:
        return _t_upper_quantile(1.0 - p, df)
    return -_t_upper_quantile(p, df)


def norm_cdf(z: float) -> float:
    """P(Z <= z) for the standard normal distribution."""
    z = _not_nan(z, "z")
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def norm_ppf(p: float) -> float:
    """The standard normal quantile (``-inf``/``inf`` at 0 and 1)."""
    p = _number(p, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], not {p}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def _binomial_half_cdf(k: int, m: int) -> float:
    """P(X <= k) for X ~ Binomial(m, 1/2)."""
    if k >= m:
        return 1.0
    if k < 0:
        return 0.0
    if m > _EXACT_BINOMIAL_MAX:
        return _betainc(float(m - k), float(k + 1), 0.5, 0.5, -math.log(2.0), -math.log(2.0))
    term, total = 1, 1
    for i in range(k):
        term = term * (m - i) // (i + 1)
        total += term
    return total / (1 << m)


# ---------------------------------------------------------------------------------------------
# Tests


def _zero_se_result(test: str, estimate: float, scale: float, df: float | None, n: int,
                    note: str | None = None) -> TestResult:
    """Degenerate rules 2 and 3 of the module docstring."""
    prefix = f"{note}; " if note else ""
    if _is_zero(estimate, scale):
        return TestResult(test, 0.0, 1.0, estimate, estimate, estimate, df, n, 0.0,
                          prefix + _NO_DIFFERENCE_NOTE)
    return TestResult(test, math.copysign(math.inf, estimate), 0.0, estimate, estimate, estimate,
                      df, n, 0.0, prefix + _ZERO_VARIANCE_NOTE)


def _t_result(test: str, estimate: float, se: float, df: float, level: float, n: int,
              note: str | None = None) -> TestResult:
    t = estimate / se
    p = min(1.0, 2.0 * _t_tail(abs(t), df))
    q = t_ppf(0.5 + level / 2.0, df)
    return TestResult(test, t, p, estimate, estimate - q * se, estimate + q * se, df, n, se, note)


def paired_t(a: Iterable[float], b: Iterable[float], level: float = 0.95) -> TestResult:
    """Paired t-test on the differences ``a[i] - b[i]`` (as ``scipy.stats.ttest_rel(a, b)``):
    estimate = mean difference, df = pairs - 1, interval at ``level``."""
    xa, xb = _values(a, "a"), _values(b, "b")
    level = _probability(level, "level")
    if len(xa) != len(xb):
        raise ValueError(f"a and b must have the same length (pairs): {len(xa)} != {len(xb)}")
    diffs = [x - y for x, y in zip(xa, xb)]
    n = len(diffs)
    if n == 0:
        return TestResult("paired_t", None, None, None, None, None, None, 0, None,
                          "fewer than two pairs (none): nothing to test")
    estimate = math.fsum(diffs) / n
    if n == 1:
        return TestResult("paired_t", None, None, estimate, None, None, None, 1, None,
                          "fewer than two pairs: no variance can be estimated, so no p-value or interval")
    if _is_constant(diffs):
        scale = max(abs(v) for v in xa + xb)
        return _zero_se_result("paired_t", estimate, scale, float(n - 1), n)
    se = math.sqrt(_variance(diffs) / n)
    return _t_result("paired_t", estimate, se, float(n - 1), level, n)


def welch_t(a: Iterable[float], b: Iterable[float], level: float = 0.95) -> TestResult:
    """Welch's unequal-variance t-test of ``mean(a) - mean(b)`` (as
    ``scipy.stats.ttest_ind(a, b, equal_var=False)``), Welch–Satterthwaite df."""
    xa, xb = _values(a, "a"), _values(b, "b")
    level = _probability(level, "level")
    na, nb = len(xa), len(xb)
    if na == 0 or nb == 0:
        return TestResult("welch_t", None, None, None, None, None, None, na + nb, None,
                          "fewer than two values on a side (a side is empty): nothing to test")
    estimate = math.fsum(xa) / na - math.fsum(xb) / nb
    if na < 2 or nb < 2:
        side = "a" if na < 2 else "b"
        return TestResult("welch_t", None, None, estimate, None, None, None, na + nb, None,
                          f"fewer than two values in {side}: no variance can be estimated, "
                          "so no p-value or interval")
    ea = 0.0 if _is_constant(xa) else _variance(xa) / na
    eb = 0.0 if _is_constant(xb) else _variance(xb) / nb
    se2 = ea + eb
    if se2 == 0.0:
        scale = max(abs(v) for v in xa + xb)
        return _zero_se_result("welch_t", estimate, scale, None, na + nb,
                               "both sides constant: no Welch df")
    df = se2 * se2 / (ea * ea / (na - 1) + eb * eb / (nb - 1))
    return _t_result("welch_t", estimate, math.sqrt(se2), df, level, na + nb)


def _signed_rank_exact_p(doubled_ranks: Sequence[int], observed: int) -> float:
    """Two-sided p of the signed-rank statistic over every sign assignment (each equally
    likely): ``min(1, 2 * min(P(R+ <= r), P(R+ >= r)))``. Ranks are doubled to be integers."""
    total = sum(doubled_ranks)
    counts = [0] * (total + 1)
    counts[0] = 1
    reach = 0
    for r in doubled_ranks:
        for s in range(reach, -1, -1):
            if counts[s]:
                counts[s + r] += counts[s]
        reach += r
    outcomes = 1 << len(doubled_ranks)
    lower = sum(counts[: observed + 1])
    upper = sum(counts[observed:])
    return min(1.0, 2 * min(lower, upper) / outcomes)


def wilcoxon_signed_rank(a: Iterable[float], b: Iterable[float]) -> TestResult:
    """Wilcoxon signed-rank test of the differences ``a[i] - b[i]``, two-sided, matching
    ``scipy.stats.wilcoxon(a - b)`` with its defaults (``zero_method="wilcox"``: zero
    differences are dropped; ``correction=False``; ``method="auto"``).

    The p-value is exact (the distribution of R+ over every sign assignment) with at most 50
    pairs and neither ties nor zeros, and also with at most 13 pairs when there are ties or zeros
    (scipy's permutation test enumerates every sign there, which is the same exact count); else
    the normal approximation with the tie correction. ``statistic`` is ``min(R+, R-)`` as in
    scipy; ``estimate`` is the mean difference (the test itself gives no interval for it:
    ``ci_low``/``ci_high`` are None); ``n`` counts the nonzero differences used.
    """
    xa, xb = _values(a, "a"), _values(b, "b")
    if len(xa) != len(xb):
        raise ValueError(f"a and b must have the same length (pairs): {len(xa)} != {len(xb)}")
    diffs = [x - y for x, y in zip(xa, xb)]
    n_all = len(diffs)
    estimate = math.fsum(diffs) / n_all if diffs else None
    if n_all < 2:
        return TestResult("wilcoxon", None, None, estimate, None, None, None, n_all, None,
                          "fewer than two pairs: nothing to rank")
    nonzero = [d for d in diffs if d != 0.0]
    zeros = n_all - len(nonzero)
    m = len(nonzero)
    if m == 0:
        return TestResult("wilcoxon", 0.0, 1.0, estimate, None, None, None, 0, None,
                          "every difference is zero: p = 1")
    order = sorted(range(m), key=lambda i: abs(nonzero[i]))
    doubled = [0] * m  # 2 x average rank, an integer
    tie_sizes = []
    i = 0
    while i < m:
        j = i
        while j + 1 < m and abs(nonzero[order[j + 1]]) == abs(nonzero[order[i]]):
            j += 1
        for k in range(i, j + 1):
            doubled[order[k]] = (i + 1) + (j + 1)
        tie_sizes.append(j - i + 1)
        i = j + 1
    has_ties = any(size > 1 for size in tie_sizes)
    r_plus2 = sum(r for r, d in zip(doubled, nonzero) if d > 0)
    r_minus2 = sum(r for r, d in zip(doubled, nonzero) if d < 0)
    statistic = min(r_plus2, r_minus2) / 2.0
    notes = []
    if zeros:
        notes.append(f"{zeros} zero difference{'s' if zeros > 1 else ''} dropped")
    exact = (n_all <= _WILCOXON_EXACT_MAX and not has_ties and zeros == 0) or n_all <= _WILCOXON_ENUMERATE_MAX
    if exact:
        p = _signed_rank_exact_p(doubled, r_plus2)
        notes.append("exact p-value")
    else:
        mn = m * (m + 1) / 4.0
        tie_term = sum(t ** 3 - t for t in tie_sizes)
        se = math.sqrt((m * (m + 1) * (2 * m + 1) - tie_term / 2.0) / 24.0)
        z = (r_plus2 / 2.0 - mn) / se
        p = min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))
        notes.append("normal approximation with tie correction, no continuity correction")
    return TestResult("wilcoxon", statistic, p, estimate, None, None, None, m, None, "; ".join(notes))


def mcnemar_exact(b: int, c: int, *, pairs: int | None = None) -> TestResult:
    """Exact McNemar test: ``b`` pairs where only A succeeded, ``c`` where only B did.

    p = min(1, 2 P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2), and 1 when b + c = 0;
    ``statistic`` is min(b, c). ``estimate`` is the difference in success rates
    ``(b - c) / n``: with ``pairs`` (every pair, concordant ones included) n = pairs; without
    it n = b + c, the difference among discordant pairs only (the note says so). No interval.
    """
    b = _count(b, "b")
    c = _count(c, "c")
    m = b + c
    notes = []
    if pairs is not None:
        pairs = _count(pairs, "pairs")
        if pairs < m:
            raise ValueError(f"pairs ({pairs}) cannot be fewer than the discordant pairs b + c ({m})")
        n = pairs
    else:
        n = m
        notes.append("estimate over discordant pairs only (give pairs= for the difference in success rates)")
    estimate = (b - c) / n if n else None
    if m == 0:
        notes.insert(0, "no discordant pairs: p = 1")
        return TestResult("mcnemar_exact", 0.0, 1.0, estimate, None, None, None, n, None, "; ".join(notes))
    p = min(1.0, 2.0 * _binomial_half_cdf(min(b, c), m))
    notes.append("exact binomial test: no interval")
    return TestResult("mcnemar_exact", float(min(b, c)), p, estimate, None, None, None, n, None,
                      "; ".join(notes))


# ---------------------------------------------------------------------------------------------
# Bootstrap and clusters


def _percentile_interval(stats: list[float], level: float) -> tuple[float, float]:
    stats.sort()
    tail = (1.0 - level) / 2.0 * 100.0
    return _percentile_sorted(stats, tail), _percentile_sorted(stats, 100.0 - tail)


def bootstrap_ci(xs: Iterable[float], stat: Callable[[list[float]], Any] = mean, level: float = 0.95,
                 resamples: int = 2000, seed: Any = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` over ``xs``: ``resamples`` resamples of the
    same size drawn with replacement from ``random.Random(seed)``. Raises ValueError with
    fewer than two values (no interval)."""
    values = _values(xs, "xs")
    level = _probability(level, "level")
    resamples = _count(resamples, "resamples", minimum=1)
    n = len(values)
    if n < 2:
        raise ValueError(f"xs has fewer than two values ({n}): no bootstrap interval")
    rng = random.Random(seed)
    if stat is mean:  # the common case, without re-checking every resampled value
        draws = [math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples)]
    else:
        draws = [_stat_value(stat(rng.choices(values, k=n))) for _ in range(resamples)]
    return _percentile_interval(draws, level)


def cluster_bootstrap_ci(clusters: Sequence[Sequence[float]], stat: Callable[[list[float]], Any] = mean,
                         level: float = 0.95, resamples: int = 2000, seed: Any = 0) -> tuple[float, float]:
    """Percentile bootstrap interval that resamples whole clusters (items) with replacement and
    computes ``stat`` over the pooled values of the drawn clusters. Raises ValueError with fewer
    than two clusters."""
    groups = _clusters(clusters, "clusters")
    level = _probability(level, "level")
    resamples = _count(resamples, "resamples", minimum=1)
    g = len(groups)
    if g < 2:
        raise ValueError(f"clusters has fewer than two clusters ({g}): no bootstrap interval")
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        pooled: list[float] = []
        for cluster in rng.choices(groups, k=g):
            pooled.extend(cluster)
        draws.append(math.fsum(pooled) / len(pooled) if stat is mean else _stat_value(stat(pooled)))
    return _percentile_interval(draws, level)


def _clustered_se(groups: list[list[float]]) -> float | None:
    g = len(groups)
    if g < 2:
        return None
    n = sum(len(c) for c in groups)
    grand = math.fsum(v for c in groups for v in c) / n
    if _is_constant([math.fsum(c) / len(c) for c in groups]):
        return 0.0
    sums = [math.fsum(v - grand for v in c) for c in groups]
    return math.sqrt(g / (g - 1) * math.fsum(s * s for s in sums)) / n


def clustered_se(clusters: Sequence[Sequence[float]]) -> float | None:
    """Cluster-robust standard error of the grand mean (Miller 2024, "Adding Error Bars to
    Evals": clusters are the items, the values in a cluster its repeated runs).

    CR1 form: ``sqrt(G / (G - 1) * sum_c (sum_i (x_ci - grand_mean))^2) / N`` with G clusters
    and N values; with one value per cluster it is the classical ``stdev / sqrt(N)``. ``None``
    with fewer than two clusters; 0 when every cluster mean is equal.
    """
    return _clustered_se(_clusters(clusters, "clusters"))


def cluster_paired(diffs_by_cluster: Sequence[Sequence[float]], level: float = 0.95) -> TestResult:
    """t test of paired differences grouped by item (scenario): estimate = mean of all the
    differences, se = :func:`clustered_se`, df = clusters - 1; ``n`` counts the differences."""
    groups = _clusters(diffs_by_cluster, "diffs_by_cluster")
    level = _probability(level, "level")
    g = len(groups)
    n = sum(len(c) for c in groups)
    if g == 0:
        return TestResult("cluster_paired", None, None, None, None, None, None, 0, None,
                          "fewer than two clusters (none): nothing to test")
    everything = [v for c in groups for v in c]
    estimate = math.fsum(everything) / n
    if g == 1:
        return TestResult("cluster_paired", None, None, estimate, None, None, None, n, None,
                          "fewer than two clusters: no clustered standard error, so no p-value or interval")
    se = _clustered_se(groups)
    note = f"{g} clusters, df = clusters - 1"
    if se == 0.0:
        return _zero_se_result("cluster_paired", estimate, max(abs(v) for v in everything),
                               float(g - 1), n, note + "; every cluster mean is equal")
    return _t_result("cluster_paired", estimate, se, float(g - 1), level, n, note)


def icc(clusters: Sequence[Sequence[float]]) -> float:
    """One-way ANOVA intraclass correlation ICC(1) for clusters of any sizes:
    ``(MSB - MSW) / (MSB + (n0 - 1) MSW)`` with ``n0 = (N - sum m_c^2 / N) / (G - 1)``, clipped to
    [0, 1]; 0 when undefined (fewer than two clusters, no within-cluster degrees of freedom, every
    value equal)."""
    groups = _clusters(clusters, "clusters")
    g = len(groups)
    n = sum(len(c) for c in groups)
    if g < 2 or n - g < 1:
        return 0.0
    everything = [v for c in groups for v in c]
    if _is_constant(everything):
        return 0.0
    grand = math.fsum(everything) / n
    means = [math.fsum(c) / len(c) for c in groups]
    ssb = math.fsum(len(c) * (mc - grand) ** 2 for c, mc in zip(groups, means))
    ssw = math.fsum((v - mc) ** 2 for c, mc in zip(groups, means) for v in c)
    msb = ssb / (g - 1)
    msw = ssw / (n - g)
    n0 = (n - sum(len(c) ** 2 for c in groups) / n) / (g - 1)
    denominator = msb + (n0 - 1.0) * msw
    if denominator <= 0.0:
        return 0.0
    return min(1.0, max(0.0, (msb - msw) / denominator))


def design_effect(m: float, icc: float) -> float:
    """Variance inflation of clusters of ``m`` values with intraclass correlation ``icc``:
    ``1 + (m - 1) * icc``."""
    m = _number(m, "m")
    icc = _number(icc, "icc")
    if m < 1.0:
        raise ValueError(f"m (values per cluster) must be at least 1, not {m}")
    if not -1.0 <= icc <= 1.0:
        raise ValueError(f"icc must be in [-1, 1], not {icc}")
    return 1.0 + (m - 1.0) * icc


# ---------------------------------------------------------------------------------------------
# Intervals, effect sizes, power


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a success rate (no continuity correction); ``(0, 1)`` when
    ``n = 0``."""
    k = _count(successes, "successes")
    n = _count(n, "n")
    level = _probability(level, "level")
    if k > n:
        raise ValueError(f"successes ({k}) cannot exceed n ({n})")
    if n == 0:
        return 0.0, 1.0
    z = _NORMAL.inv_cdf(0.5 + level / 2.0)
    z2 = z * z
    phat = k / n
    denominator = 1.0 + z2 / n
    center = (phat + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(phat * (1.0 - phat) / n + z2 / (4.0 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == n else min(1.0, center + half)
    return low, high


def cohens_dz(diffs: Iterable[float]) -> float | None:
    """Cohen's d_z of paired differences: mean / stdev (n - 1). ``None`` with fewer than two
    differences or zero standard deviation."""
    values = _values(diffs, "diffs")
    if len(values) < 2 or _is_constant(values):
        return None
    return (math.fsum(values) / len(values)) / math.sqrt(_variance(values))


def hedges_g(a: Iterable[float], b: Iterable[float]) -> float | None:
    """Hedges' g of ``a - b``: the difference of means over the pooled standard deviation,
    times the exact small-sample correction ``J = Gamma(df/2) / (sqrt(df/2) Gamma((df-1)/2))``,
    df = n_a + n_b - 2. ``None`` with fewer than two values on a side or zero pooled deviation."""
    xa, xb = _values(a, "a"), _values(b, "b")
    na, nb = len(xa), len(xb)
    if na < 2 or nb < 2:
        return None
    if _is_constant(xa) and _is_constant(xb):
        return None
    df = na + nb - 2
    pooled = ((na - 1) * _variance(xa) + (nb - 1) * _variance(xb)) / df
    d = (math.fsum(xa) / na - math.fsum(xb) / nb) / math.sqrt(pooled)
    j = math.exp(math.lgamma(df / 2.0) - 0.5 * math.log(df / 2.0) - math.lgamma((df - 1) / 2.0))
    return j * d


def _z_sum(alpha: float, power: float, df: float | None = None) -> float:
    """z_{1-alpha/2} + z_power; with ``df``, the same quantiles of Student's t at ``df``."""
    if df is None or math.isinf(df):
        z = _NORMAL.inv_cdf(1.0 - alpha / 2.0) + _NORMAL.inv_cdf(power)
    else:
        z = t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df)
    if z <= 0.0:
        raise ValueError(f"power ({power}) is too low for alpha ({alpha}): no detectable effect")
    return z


def _power_args(sd: Any, alpha: Any, power: Any, design_effect: Any) -> tuple[float, float, float, float]:
    """The checked arguments shared by :func:`mde` and :func:`runs_needed`."""
    sd = _number(sd, "sd")
    alpha = _probability(alpha, "alpha")
    power = _probability(power, "power")
    deff = _number(design_effect, "design_effect")
    if sd < 0:
        raise ValueError(f"sd must not be negative, not {sd}")
    if deff <= 0:
        raise ValueError(f"design_effect must be positive, not {deff}")
    return sd, alpha, power, deff


def mde(sd: float, n: int, alpha: float = 0.05, power: float = 0.8, paired: bool = True,
        design_effect: float = 1.0, df: float | None = None) -> float | None:
    """Minimum detectable effect of a two-sided test at ``alpha`` with ``power`` (normal
    approximation): ``(z_{1-alpha/2} + z_power) * sd * sqrt(k * design_effect / n)``, k = 1 for
    ``n`` pairs (sd of the differences), k = 2 for two groups of ``n`` each (sd within a group).
    With ``df`` (the test's degrees of freedom, e.g. clusters - 1 for a clustered test), the
    quantiles are Student's t at ``df``: with few clusters the normal figure is optimistic.
    ``None`` when n < 2."""
    n = _count(n, "n")
    sd, alpha, power, deff = _power_args(sd, alpha, power, design_effect)
    if n < 2:
        return None
    z = _z_sum(alpha, power, None if df is None else _df(df))
    return z * sd * math.sqrt((1.0 if paired else 2.0) * deff / n)


def runs_needed(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8, paired: bool = True,
                design_effect: float = 1.0, per_cluster: float | None = None) -> int | None:
    """Runs per side to detect ``effect`` (the inverse of :func:`mde`):
    ``ceil(k * design_effect * ((z_{1-alpha/2} + z_power) * sd / effect)^2)``, at least 2;
    ``None`` when ``effect`` is 0. A value within 1e-9 (relative) above an integer rounds down,
    so that ``runs_needed(mde(sd, n), sd) == n``. With ``per_cluster`` (runs per cluster, for a
    clustered test with df = clusters - 1) the quantiles are Student's t at the df of the answer,
    found by iteration (the inverse of ``mde(..., df=n / per_cluster - 1)``)."""
    effect = _number(effect, "effect")
    sd, alpha, power, deff = _power_args(sd, alpha, power, design_effect)
    z = _z_sum(alpha, power)
    if effect == 0.0:
        return None

    def count(z: float) -> int:
        try:
            need = (1.0 if paired else 2.0) * deff * (z * sd / effect) ** 2
        except OverflowError:
            need = math.inf
        if math.isinf(need):
            raise ValueError(f"effect ({effect}) is too small relative to sd ({sd}): the run count overflows")
        return max(2, math.ceil(need - 1e-9 * max(1.0, need)))

    n = count(z)
    if per_cluster is None:
        return n
    per_cluster = _number(per_cluster, "per_cluster")
    if per_cluster < 1.0:
        raise ValueError(f"per_cluster must be at least 1, not {per_cluster}")
    k = 1.0 if paired else 2.0
    # The t quantiles shrink towards the normal ones as n grows: step up from the normal answer.
    while _z_sum(alpha, power, max(1.0, n / per_cluster - 1.0)) * sd * math.sqrt(k * deff / n) > \
            abs(effect) * (1.0 + 1e-9):
        n += 1
    return n


# ---------------------------------------------------------------------------------------------
# Multiple comparisons, pass@k


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order of the input: the i-th smallest p times
    (m - i + 1), made monotone by a running maximum and capped at 1."""
    ps = _values(p_values, "p_values")
    for i, p in enumerate(ps):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_values[{i}] must be in [0, 1], not {p}")
    m = len(ps)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: ps[j])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (they control the false discovery rate), in the order
    of the input: the i-th smallest p times m / i, made monotone by a running minimum from the
    largest down and capped at 1. When every null hypothesis holds, rejecting those below alpha
    is wrong at least once with probability at most alpha, as with :func:`holm`."""
    ps = _values(p_values, "p_values")
    for i, p in enumerate(ps):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_values[{i}] must be in [0, 1], not {p}")
    m = len(ps)
    adjusted = [0.0] * m
    running = 1.0
    order = sorted(range(m), key=lambda j: ps[j])
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, ps[i] * m / (rank + 1))
        adjusted[i] = running
    return adjusted


def _pass_counts(n: Any, c: Any, k: Any) -> tuple[int, int, int]:
    n = _count(n, "n", minimum=1)
    c = _count(c, "c")
    k = _count(k, "k", minimum=1)
    if c > n:
        raise ValueError(f"c ({c}) cannot exceed n ({n})")
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed n ({n})")
    return n, c, k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k from ``n`` runs of which ``c`` passed (Chen et al. 2021):
    ``1 - C(n - c, k) / C(n, k)``, the chance that k runs drawn without replacement include a
    pass. Exact rational arithmetic, rounded once."""
    n, c, k = _pass_counts(n, c, k)
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k runs drawn without replacement from ``n`` runs with ``c``
    passes all pass, ``C(c, k) / C(n, k)``."""
    n, c, k = _pass_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)
