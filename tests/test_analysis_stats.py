"""worker.analysis.stats against scipy and numpy (test-only dependencies) on seeded random
inputs, against direct numpy formulas where scipy has no equivalent, and on hand-checked edge
cases (ties, zeros, zero variance, one pair, all equal, NaN refused)."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from scipy import special
from scipy import stats as ss

from worker.analysis import stats as S

CASES = 200
TOL = 1e-6


def close(x, y, tol=TOL):
    return x is not None and y is not None and abs(x - y) <= tol * max(1.0, abs(y))


def sample(rng: np.random.Generator, n: int) -> np.ndarray:
    """A sample of one of several shapes: continuous, integer (ties), rounded (ties), skewed."""
    kind = rng.integers(0, 4)
    if kind == 0:
        return rng.normal(rng.normal(), rng.uniform(0.1, 3), size=n)
    if kind == 1:
        return rng.integers(0, 5, size=n).astype(float)
    if kind == 2:
        return np.round(rng.normal(size=n), 1)
    return rng.exponential(rng.uniform(0.5, 2), size=n)


def sizes(rng: np.random.Generator) -> int:
    """Sample sizes biased towards small n."""
    return int(rng.choice([2, 3, 4, 5, int(rng.integers(6, 15)), int(rng.integers(15, 60)), int(rng.integers(60, 120))]))


def pairs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Paired samples; some share values with each other (zero differences)."""
    rng = np.random.default_rng(seed)
    n = sizes(rng)
    a = sample(rng, n)
    b = a + rng.normal(rng.normal() * 0.5, rng.uniform(0.1, 2), size=n)
    if rng.uniform() < 0.3:
        b = np.round(b)
        a = np.round(a)
    if rng.uniform() < 0.3:  # some identical pairs
        k = int(rng.integers(1, n + 1))
        b[:k] = a[:k]
    return a, b


def clusters_of(seed: int, effect_sd: float = 1.0, noise_sd: float = 0.5) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    g = int(rng.integers(2, 25))
    out = []
    for _ in range(g):
        m = int(rng.integers(1, 8))
        centre = rng.normal(0.3, effect_sd)
        out.append((centre + rng.normal(0, noise_sd, size=m)).tolist())
    return out


# --------------------------------------------------------------------------------------------
# Descriptive statistics


def test_mean_variance_stdev_match_numpy():
    rng = np.random.default_rng(1)
    for _ in range(CASES):
        xs = sample(rng, sizes(rng)).tolist()
        assert close(S.mean(xs), float(np.mean(xs)), 1e-12)
        assert close(S.variance(xs), float(np.var(xs, ddof=1)), 1e-12)
        assert close(S.stdev(xs), float(np.std(xs, ddof=1)), 1e-12)
    assert S.mean([]) is None and S.variance([3.0]) is None and S.stdev([3.0]) is None
    assert S.variance([2.0, 2.0]) == 0.0 and S.mean((1, 2)) == 1.5


def test_percentiles_equal_percentile_at_each_level():
    rng = random.Random(11)
    for n in (0, 1, 2, 7, 50):
        xs = [rng.uniform(-5, 5) for _ in range(n)] + [rng.randint(-3, 3) for _ in range(n // 2)]
        levels = (0, 12.5, 50, 95, 99, 100)
        assert S.percentiles(xs, levels) == [S.percentile(xs, q) for q in levels]
    assert S.percentiles([], (50, 95)) == [None, None]
    with pytest.raises(ValueError, match="q must be in"):
        S.percentiles([1.0], (50, 101))


def test_samples_are_checked_the_same_with_or_without_the_quick_path():
    # plain floats and ints take the quick path; the rest is checked value by value
    assert S.mean([1, 2.5, True]) == pytest.approx(4.5 / 3)
    assert S.percentile([1e308, 1e308], 50) == 1e308  # finite values whose sum overflows
    for bad, message in (([1.0, float("nan")], r"xs\[1\] is NaN"), ([float("inf"), 1], r"xs\[0\] is infinite"),
                         ([1.0, "2"], r"xs\[1\] is not a number"), ([None], r"xs\[0\] is not a number")):
        with pytest.raises(ValueError, match=message):
            S.percentile(bad, 50)


def test_percentile_matches_numpy_linear_interpolation():
    rng = np.random.default_rng(2)
    for _ in range(CASES):
        xs = sample(rng, int(rng.integers(1, 40))).tolist()
        for q in (0.0, 100.0, 50.0, float(rng.uniform(0, 100)), float(rng.uniform(0, 5))):
            assert close(S.percentile(xs, q), float(np.percentile(xs, q)), 1e-12), (xs, q)
    assert S.percentile([], 50) is None
    assert S.percentile([1, 2, 3, 4], 25) == 1.75
    with pytest.raises(ValueError, match="q must be in"):
        S.percentile([1, 2], 101)


# --------------------------------------------------------------------------------------------
# Distributions


def test_t_cdf_matches_scipy():
    rng = np.random.default_rng(3)
    for _ in range(CASES):
        df = float(10 ** rng.uniform(-0.5, 7))
        for t in (float(rng.normal() * 10 ** rng.uniform(-3, 1.5)), float(rng.normal() * 3)):
            assert abs(S.t_cdf(t, df) - ss.t.cdf(t, df)) <= TOL * 1e-3, (t, df)
    for df in (1, 2, 2.5, 9, 30, 1e3, 1e5, 1e6, 1e9):
        for t in (-40.0, -8.0, -3.0, 0.0, 1e-9, 1.96, 5.0):
            expected = ss.t.cdf(t, df)
            got = S.t_cdf(t, df)
            assert abs(got - expected) <= 1e-9 and (expected > 1e-3 or abs(got - expected) <= 1e-8 * expected)
    for t in (1e-9, 1e-4, 0.3, 7.0, 1e6):  # Cauchy: exact in closed form (scipy loses digits near 0)
        assert close(S.t_cdf(t, 1) - 0.5, math.atan(t) / math.pi, 1e-12)
    assert S.t_cdf(math.inf, 3) == 1.0 and S.t_cdf(-math.inf, 3) == 0.0
    assert close(S.t_cdf(1.3, math.inf), ss.norm.cdf(1.3), 1e-14)


def test_t_ppf_matches_scipy_and_inverts_the_cdf():
    rng = np.random.default_rng(4)
    for _ in range(CASES):
        df = float(10 ** rng.uniform(-0.5, 7))
        p = float(rng.uniform(1e-6, 1 - 1e-6)) if rng.uniform() < 0.8 else float(10 ** rng.uniform(-12, -2))
        got = S.t_ppf(p, df)
        assert close(got, ss.t.ppf(p, df), 1e-9), (p, df)
        assert abs(S.t_cdf(got, df) - p) <= 1e-12 * max(1.0, p / 1e-3)
    assert S.t_ppf(0.5, 7) == 0.0
    assert S.t_ppf(0.0, 4) == -math.inf and S.t_ppf(1.0, 4) == math.inf
    assert close(S.t_ppf(0.975, 1), math.tan(math.pi * 0.475), 1e-12)  # Cauchy
    assert close(S.t_ppf(0.975, math.inf), 1.959963984540054, 1e-12)


def test_normal_cdf_and_ppf_match_scipy():
    rng = np.random.default_rng(5)
    for _ in range(CASES):
        z = float(rng.normal() * 4)
        p = float(rng.uniform())
        assert close(S.norm_cdf(z), ss.norm.cdf(z), 1e-12)
        assert close(S.norm_ppf(p), ss.norm.ppf(p), 1e-12)
    assert S.norm_ppf(0) == -math.inf and S.norm_ppf(1) == math.inf and S.norm_cdf(math.inf) == 1.0


# --------------------------------------------------------------------------------------------
# Tests


def test_paired_t_matches_scipy_ttest_rel():
    checked = 0
    for seed in range(CASES):
        a, b = pairs(seed)
        d = a - b
        if np.ptp(d) <= 1e-12 * max(1.0, np.abs(d).max()):
            continue  # zero variance: the degenerate rule, tested below
        level = [0.95, 0.9, 0.99, 0.5][seed % 4]
        got = S.paired_t(a.tolist(), b.tolist(), level=level)
        ref = ss.ttest_rel(a, b)
        ci = ref.confidence_interval(confidence_level=level)
        assert got.test == "paired_t" and got.n == len(a) and got.df == len(a) - 1 and got.note is None
        assert close(got.estimate, float(np.mean(d)))
        assert close(got.statistic, float(ref.statistic))
        assert close(got.p_value, float(ref.pvalue))
        assert close(got.ci_low, float(ci.low)) and close(got.ci_high, float(ci.high))
        assert close(got.se, float(ss.sem(d)))
        checked += 1
    assert checked > 150


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_welch_t_matches_scipy_ttest_ind():
    rng = np.random.default_rng(6)
    for i in range(CASES):
        a = sample(rng, sizes(rng))
        b = sample(rng, sizes(rng)) + rng.normal()
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            continue
        level = [0.95, 0.9, 0.99][i % 3]
        got = S.welch_t(a.tolist(), b.tolist(), level=level)
        ref = ss.ttest_ind(a, b, equal_var=False)
        ci = ref.confidence_interval(confidence_level=level)
        assert got.test == "welch_t" and got.n == len(a) + len(b)
        assert close(got.estimate, float(a.mean() - b.mean()))
        assert close(got.statistic, float(ref.statistic))
        assert close(got.df, float(ref.df))
        assert close(got.p_value, float(ref.pvalue))
        assert close(got.ci_low, float(ci.low)) and close(got.ci_high, float(ci.high))


def test_wilcoxon_matches_scipy_defaults():
    paths = {"exact": 0, "approx": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(CASES):
            a, b = pairs(seed)
            d = a - b
            got = S.wilcoxon_signed_rank(a.tolist(), b.tolist())
            if np.all(d == 0):
                assert got.p_value == 1.0 and got.statistic == 0.0
                continue
            ref = ss.wilcoxon(d)
            assert got.test == "wilcoxon" and got.n == int(np.count_nonzero(d))
            assert close(got.statistic, float(ref.statistic)), seed
            assert close(got.p_value, float(ref.pvalue)), (seed, got, ref)
            assert close(got.estimate, float(np.mean(d)))
            assert got.ci_low is None and got.ci_high is None
            paths["exact" if "exact" in got.note else "approx"] += 1
    assert paths["exact"] > 40 and paths["approx"] > 20, paths


@pytest.mark.parametrize("d", [
    [1.0, 2.0, 3.0, 4.0, 5.0, -6.0],                       # exact, no ties
    [1.0, 1.0, 2.0, -2.0, 3.0, 0.0, 4.0],                  # ties and a zero, n <= 13: every sign
    [1.5, -1.5, 2.0, 2.0, 2.0, -3.0, 4.0, 5.0, 0.0, 0.0],  # more ties and zeros
    list(range(1, 30)) + [-30.0],                          # exact up to 50 pairs
    [float(v) for v in range(-3, 17)],                     # a zero, n > 13: normal approximation
    [1.0, 1.0, 2.0, 2.0, -3.0] * 4,                        # ties, n > 13: normal approximation
    [float(v) for v in range(1, 61)],                      # n > 50: normal approximation
    [0.0, 0.5],                                            # one nonzero difference
])
def test_wilcoxon_paths_hand_picked(d):
    got = S.wilcoxon_signed_rank(d, [0.0] * len(d))
    ref = ss.wilcoxon(d)
    assert close(got.statistic, float(ref.statistic)) and close(got.p_value, float(ref.pvalue))


def test_wilcoxon_small_exact_value_by_hand():
    # n = 4, no ties, all positive: R+ = 10 is the most extreme of 16 sign patterns.
    got = S.wilcoxon_signed_rank([1, 2, 3, 4], [0, 0, 0, 0])
    assert got.statistic == 0.0 and got.p_value == pytest.approx(2 / 16)


def test_mcnemar_exact_matches_the_binomial():
    rng = np.random.default_rng(7)
    for _ in range(CASES):
        b, c = int(rng.integers(0, 60)), int(rng.integers(0, 60))
        got = S.mcnemar_exact(b, c)
        m = b + c
        expected = 1.0 if m == 0 else min(1.0, 2 * ss.binom.cdf(min(b, c), m, 0.5))
        assert close(got.p_value, expected, 1e-12)
        if m:
            assert close(got.p_value, ss.binomtest(b, m, 0.5).pvalue, 1e-9)
            assert got.estimate == pytest.approx((b - c) / m) and got.n == m
        assert got.statistic == min(b, c)
    big = S.mcnemar_exact(15_000, 15_400)  # the incomplete-beta path
    assert close(big.p_value, 2 * ss.binom.cdf(15_000, 30_400, 0.5), 1e-9)
    with_pairs = S.mcnemar_exact(7, 2, pairs=40)
    assert with_pairs.estimate == pytest.approx(5 / 40) and with_pairs.n == 40
    none = S.mcnemar_exact(0, 0, pairs=10)
    assert none.p_value == 1.0 and none.estimate == 0.0 and "no discordant" in none.note
    assert S.mcnemar_exact(0, 0).estimate is None
    with pytest.raises(ValueError, match="pairs"):
        S.mcnemar_exact(5, 5, pairs=9)
    with pytest.raises(ValueError, match="b must be"):
        S.mcnemar_exact(-1, 2)


# --------------------------------------------------------------------------------------------
# Bootstrap


def test_bootstrap_is_deterministic_with_a_seed():
    xs = np.random.default_rng(8).normal(size=40).tolist()
    assert S.bootstrap_ci(xs, seed=3) == S.bootstrap_ci(xs, seed=3)
    assert S.bootstrap_ci(xs, seed=3) != S.bootstrap_ci(xs, seed=4)
    lo, hi = S.bootstrap_ci(xs, stat=S.stdev, resamples=300, seed=1)
    assert 0 < lo < float(np.std(xs, ddof=1)) < hi
    # Against the normal-theory interval of the mean on a large sample.
    big = np.random.default_rng(9).normal(2.0, 1.0, size=400).tolist()
    lo, hi = S.bootstrap_ci(big, resamples=4000, seed=0)
    half = 1.959964 * float(np.std(big, ddof=1)) / math.sqrt(400)
    assert abs(lo - (np.mean(big) - half)) < 0.1 * half and abs(hi - (np.mean(big) + half)) < 0.1 * half


def test_bootstrap_covers_the_true_mean_about_95_percent_of_the_time():
    covered = 0
    for seed in range(300):
        rng = random.Random(1000 + seed)
        xs = [rng.gauss(5.0, 2.0) for _ in range(40)]
        lo, hi = S.bootstrap_ci(xs, resamples=400, seed=seed)
        covered += lo <= 5.0 <= hi
    # Fixed seeds: the count is the same on every run; the percentile bootstrap of a mean of 40
    # normal values covers a little under 95%.
    assert 0.90 <= covered / 300 <= 0.98, covered


def test_cluster_bootstrap_resamples_whole_clusters():
    xs = np.random.default_rng(10).normal(size=30).tolist()
    # One value per cluster: the same draws as the plain bootstrap.
    assert S.cluster_bootstrap_ci([[x] for x in xs], seed=5, resamples=500) == S.bootstrap_ci(xs, seed=5, resamples=500)
    rng = np.random.default_rng(12)
    correlated = [(rng.normal(0, 1.0) + rng.normal(0, 0.2, size=6)).tolist() for _ in range(30)]
    pooled = [v for c in correlated for v in c]
    naive = S.bootstrap_ci(pooled, seed=0)
    clustered = S.cluster_bootstrap_ci(correlated, seed=0)
    ratio = (clustered[1] - clustered[0]) / (naive[1] - naive[0])
    assert ratio > 1.8
    # about the square root of the design effect of 6 runs per cluster
    assert ratio == pytest.approx(math.sqrt(S.design_effect(6, S.icc(correlated))), rel=0.25)
    assert S.cluster_bootstrap_ci(correlated, seed=0) == clustered
    lo, hi = S.cluster_bootstrap_ci(correlated, stat=S.stdev, resamples=200, seed=1)
    assert lo < hi


# --------------------------------------------------------------------------------------------
# Clusters


def clustered_se_numpy(clusters):
    values = np.concatenate([np.asarray(c, float) for c in clusters])
    g, n = len(clusters), len(values)
    grand = values.mean()
    sums = np.array([np.sum(np.asarray(c) - grand) for c in clusters])
    return math.sqrt(g / (g - 1) * np.sum(sums ** 2)) / n


def icc_numpy(clusters):
    arrays = [np.asarray(c, float) for c in clusters]
    values = np.concatenate(arrays)
    g, n = len(arrays), len(values)
    sizes_ = np.array([len(c) for c in arrays])
    means = np.array([c.mean() for c in arrays])
    msb = np.sum(sizes_ * (means - values.mean()) ** 2) / (g - 1)
    msw = sum(np.sum((c - c.mean()) ** 2) for c in arrays) / (n - g)
    n0 = (n - np.sum(sizes_ ** 2) / n) / (g - 1)
    return float(np.clip((msb - msw) / (msb + (n0 - 1) * msw), 0, 1))


def test_clustered_se_matches_a_numpy_formula_and_the_hand_example():
    for seed in range(CASES):
        clusters = clusters_of(seed)
        assert close(S.clustered_se(clusters), clustered_se_numpy(clusters), 1e-10)
    # [[1, 2], [3, 5]]: grand mean 2.75, cluster residual sums -2.5 and 2.5,
    # variance 2/1 * 12.5 / 16 = 25/16.
    assert S.clustered_se([[1, 2], [3, 5]]) == pytest.approx(1.25)
    assert S.clustered_se([[1, 2, 3]]) is None and S.clustered_se([]) is None
    assert S.clustered_se([[1, 3], [2, 2], [0, 4]]) == 0.0  # every cluster mean equal


def test_clustered_se_of_singletons_is_the_classical_standard_error():
    rng = np.random.default_rng(13)
    for _ in range(50):
        xs = sample(rng, int(rng.integers(2, 50)))
        if np.ptp(xs) == 0:
            continue
        assert close(S.clustered_se([[x] for x in xs.tolist()]), float(ss.sem(xs)), 1e-10)


def test_cluster_paired_matches_the_clustered_t_test():
    for seed in range(CASES):
        clusters = clusters_of(seed)
        got = S.cluster_paired(clusters, level=0.9)
        values = np.concatenate([np.asarray(c) for c in clusters])
        se = clustered_se_numpy(clusters)
        df = len(clusters) - 1
        t = values.mean() / se
        q = ss.t.ppf(0.95, df)
        assert got.test == "cluster_paired" and got.df == df and got.n == len(values)
        assert close(got.estimate, float(values.mean())) and close(got.se, se)
        assert close(got.statistic, t) and close(got.p_value, float(2 * ss.t.sf(abs(t), df)))
        assert close(got.ci_low, values.mean() - q * se) and close(got.ci_high, values.mean() + q * se)
    hand = S.cluster_paired([[1, 2], [3, 5]])
    assert hand.estimate == 2.75 and hand.se == pytest.approx(1.25) and hand.statistic == pytest.approx(2.2)
    assert hand.p_value == pytest.approx(2 * ss.t.sf(2.2, 1))


def test_cluster_paired_with_one_value_per_cluster_is_the_paired_t_test():
    a, b = pairs(3)
    d = (a - b).tolist()
    clustered = S.cluster_paired([[x] for x in d])
    paired = S.paired_t(a.tolist(), b.tolist())
    for field in ("statistic", "p_value", "estimate", "ci_low", "ci_high", "df", "se"):
        assert close(getattr(clustered, field), getattr(paired, field), 1e-9), field


def test_icc_matches_a_numpy_formula_and_hand_examples():
    for seed in range(CASES):
        clusters = clusters_of(seed, effect_sd=float(np.random.default_rng(seed).uniform(0, 2)))
        if sum(len(c) for c in clusters) - len(clusters) < 1:
            assert S.icc(clusters) == 0.0
            continue
        assert close(S.icc(clusters), icc_numpy(clusters), 1e-10)
    # [[1, 2], [3, 5]]: MSB = 6.25, MSW = 1.25, n0 = 2 -> (6.25 - 1.25) / (6.25 + 1.25) = 2/3.
    assert S.icc([[1, 2], [3, 5]]) == pytest.approx(2 / 3)
    assert S.icc([[1, 1, 1], [4, 4, 4]]) == 1.0           # all the variance between clusters
    assert S.icc([[1, 3], [1, 3], [3, 1]]) == 0.0         # none (negative, clipped)
    assert S.icc([[2, 2], [2, 2]]) == 0.0                 # undefined: every value equal
    assert S.icc([[1], [2], [3]]) == 0.0 and S.icc([[1, 2, 3]]) == 0.0


def test_design_effect():
    assert S.design_effect(5, 0.25) == 2.0 and S.design_effect(1, 0.9) == 1.0
    with pytest.raises(ValueError, match="m"):
        S.design_effect(0.5, 0.1)
    with pytest.raises(ValueError, match="icc is NaN"):
        S.design_effect(3, math.nan)


# --------------------------------------------------------------------------------------------
# Intervals, effect sizes, power


def test_wilson_interval_matches_scipy():
    rng = np.random.default_rng(14)
    for i in range(CASES):
        n = int(rng.integers(1, 200))
        k = int(rng.integers(0, n + 1)) if i % 5 else int(rng.choice([0, n]))
        level = [0.95, 0.9, 0.99][i % 3]
        ci = ss.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
        lo, hi = S.wilson_interval(k, n, level)
        assert close(lo, ci.low, 1e-9) and close(hi, ci.high, 1e-9), (k, n)
    assert S.wilson_interval(0, 0) == (0.0, 1.0)
    assert S.wilson_interval(0, 10)[0] == 0.0 and S.wilson_interval(10, 10)[1] == 1.0
    with pytest.raises(ValueError, match="successes"):
        S.wilson_interval(11, 10)


def test_cohens_dz_and_hedges_g_match_numpy():
    rng = np.random.default_rng(15)
    for _ in range(CASES):
        a, b = sample(rng, sizes(rng)), sample(rng, sizes(rng)) + rng.normal()
        if np.ptp(a) > 0:
            assert close(S.cohens_dz(a.tolist()), float(a.mean() / a.std(ddof=1)), 1e-10)
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            continue
        na, nb = len(a), len(b)
        df = na + nb - 2
        pooled = math.sqrt(((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / df)
        j = special.gamma(df / 2) / (math.sqrt(df / 2) * special.gamma((df - 1) / 2)) if df < 300 else \
            math.exp(special.gammaln(df / 2) - special.gammaln((df - 1) / 2)) / math.sqrt(df / 2)
        expected = j * (a.mean() - b.mean()) / pooled
        got = S.hedges_g(a.tolist(), b.tolist())
        assert close(got, float(expected), 1e-10)
        # The usual approximation of J agrees closely once df is not tiny.
        assert df < 4 or abs(got - (1 - 3 / (4 * df - 1)) * (a.mean() - b.mean()) / pooled) <= 0.01 * abs(got) + 1e-12
    assert S.cohens_dz([0.5]) is None and S.cohens_dz([0.2, 0.2]) is None
    assert S.hedges_g([1.0], [2.0, 3.0]) is None and S.hedges_g([1, 1], [2, 2]) is None


def test_mde_and_runs_needed_closed_forms_and_round_trip():
    rng = np.random.default_rng(16)
    for _ in range(CASES):
        sd = float(rng.uniform(0.01, 3))
        n = int(rng.integers(2, 500))
        alpha = float(rng.choice([0.01, 0.05, 0.1]))
        power = float(rng.choice([0.5, 0.8, 0.9, 0.95]))
        deff = float(rng.uniform(1, 4))
        z = ss.norm.ppf(1 - alpha / 2) + ss.norm.ppf(power)
        for paired, k in ((True, 1), (False, 2)):
            got = S.mde(sd, n, alpha=alpha, power=power, paired=paired, design_effect=deff)
            assert close(got, z * sd * math.sqrt(k * deff / n), 1e-12)
            assert S.runs_needed(got, sd, alpha=alpha, power=power, paired=paired, design_effect=deff) == n
            effect = float(rng.uniform(0.01, 2)) * sd
            need = S.runs_needed(effect, sd, alpha=alpha, power=power, paired=paired, design_effect=deff)
            assert need == max(2, math.ceil(k * deff * (z * sd / effect) ** 2 - 1e-9))
            # the smallest count whose minimum detectable effect is at most `effect`
            assert S.mde(sd, need, alpha, power, paired, deff) <= effect * (1 + 1e-12)
            if need > 2:
                assert S.mde(sd, need - 1, alpha, power, paired, deff) > effect
    assert S.mde(1.0, 1) is None and S.runs_needed(0.0, 1.0) is None
    assert S.runs_needed(0.1, 0.0) == 2
    assert S.mde(0.5, 100) == pytest.approx((1.959964 + 0.841621) * 0.05, rel=1e-6)


def test_holm_matches_a_reference_and_the_hand_example():
    def reference(p):
        p = np.asarray(p, float)
        m = len(p)
        order = np.argsort(p, kind="stable")
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
        out = np.empty(m)
        out[order] = adjusted
        return out.tolist()

    rng = np.random.default_rng(17)
    for _ in range(CASES):
        ps = rng.uniform(0, 1, size=int(rng.integers(1, 20))) ** 3
        if rng.uniform() < 0.3:
            ps[: len(ps) // 2] = ps[0]  # ties
        got = S.holm(ps.tolist())
        assert all(close(x, y, 1e-12) for x, y in zip(got, reference(ps)))
    assert S.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert S.holm([]) == [] and S.holm([0.9, 0.8]) == [1.0, 1.0] and S.holm([0.2]) == [0.2]
    with pytest.raises(ValueError, match=r"p_values\[1\]"):
        S.holm([0.1, 1.5])


def test_pass_at_k_and_pass_hat_k_match_combinatorics():
    rng = np.random.default_rng(18)
    for _ in range(CASES):
        n = int(rng.integers(1, 60))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        expected = 1.0 if n - c < k else 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
        assert close(S.pass_at_k(n, c, k), expected, 1e-10)
        assert close(S.pass_at_k(n, c, k), 1 - special.comb(n - c, k, exact=True) / special.comb(n, k, exact=True), 1e-12)
        assert close(S.pass_hat_k(n, c, k), special.comb(c, k, exact=True) / special.comb(n, k, exact=True), 1e-12)
    assert S.pass_at_k(10, 3, 1) == pytest.approx(0.3) and S.pass_at_k(5, 0, 3) == 0.0
    assert S.pass_at_k(5, 3, 3) == 1.0 and S.pass_hat_k(5, 3, 3) == pytest.approx(1 / 10)
    assert S.pass_hat_k(5, 2, 3) == 0.0 and S.pass_hat_k(4, 4, 2) == 1.0
    with pytest.raises(ValueError, match="k"):
        S.pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="c"):
        S.pass_hat_k(3, 4, 1)


# --------------------------------------------------------------------------------------------
# Degenerate cases


@pytest.mark.parametrize("test", [S.paired_t, S.welch_t, S.wilcoxon_signed_rank])
def test_fewer_than_two_values_has_no_p_value_and_no_interval(test):
    one = test([0.7], [0.4])
    assert one.p_value is None and one.statistic is None and one.ci_low is None and one.ci_high is None
    assert one.estimate == pytest.approx(0.3) and "fewer than two" in one.note and S.is_degenerate(one)
    empty = test([], [])
    assert empty.p_value is None and empty.estimate is None and "fewer than two" in empty.note


def test_welch_with_one_value_on_a_side_and_cluster_test_with_one_cluster():
    r = S.welch_t([0.5], [0.1, 0.2, 0.3])
    assert r.p_value is None and r.estimate == pytest.approx(0.3) and "fewer than two values in a" in r.note
    c = S.cluster_paired([[0.1, 0.2, 0.3]])
    assert c.p_value is None and c.estimate == pytest.approx(0.2) and "fewer than two clusters" in c.note
    assert S.cluster_paired([]).estimate is None
    with pytest.raises(ValueError, match="fewer than two"):
        S.bootstrap_ci([1.0])
    with pytest.raises(ValueError, match="fewer than two clusters"):
        S.cluster_bootstrap_ci([[1.0, 2.0]])


def test_zero_variance_with_a_difference_is_infinite_and_flagged():
    a, b = [0.9, 0.9, 0.9], [0.5, 0.5, 0.5]
    for r in (S.paired_t(a, b), S.welch_t(a, b), S.cluster_paired([[0.4, 0.4], [0.4]])):
        assert r.statistic == math.inf and r.p_value == 0.0 and r.se == 0.0
        assert r.ci_low == r.ci_high == pytest.approx(0.4)
        assert "assumptions fail" in r.note and "verdict must not rely" in r.note
        assert S.is_degenerate(r)
    worse = S.paired_t(b, a)
    assert worse.statistic == -math.inf and worse.p_value == 0.0
    # Equal up to float rounding counts as constant: 0.8 - 0.6 and 0.5 - 0.3 differ in the last bit.
    rounded = S.paired_t([0.8, 0.5, 1.0], [0.6, 0.3, 0.8])
    assert rounded.statistic == math.inf and rounded.estimate == pytest.approx(0.2)


def test_all_equal_gives_p_one():
    for r in (S.paired_t([0.5, 0.7, 0.9], [0.5, 0.7, 0.9]), S.welch_t([0.3, 0.3], [0.3, 0.3, 0.3]),
              S.cluster_paired([[0.0, 0.0], [0.0]]), S.wilcoxon_signed_rank([1, 2, 3], [1, 2, 3]),
              S.mcnemar_exact(0, 0)):
        assert r.p_value == 1.0 and r.statistic == 0.0 and not S.is_degenerate(r)
    r = S.paired_t([0.5, 0.7], [0.5, 0.7])
    assert r.ci_low == r.ci_high == 0.0 and "no difference" in r.note


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_one_side_constant_welch_is_still_a_test():
    got = S.welch_t([1.0, 1.0, 1.0], [0.2, 0.5, 0.4, 0.9])
    ref = ss.ttest_ind([1.0, 1.0, 1.0], [0.2, 0.5, 0.4, 0.9], equal_var=False)
    assert close(got.p_value, float(ref.pvalue)) and close(got.df, float(ref.df))


@pytest.mark.parametrize("call", [
    lambda bad: S.mean([1.0, bad]),
    lambda bad: S.variance([1.0, bad]),
    lambda bad: S.stdev([1.0, bad]),
    lambda bad: S.percentile([1.0, bad], 50),
    lambda bad: S.paired_t([1.0, bad], [1.0, 2.0]),
    lambda bad: S.welch_t([1.0, bad], [1.0, 2.0]),
    lambda bad: S.wilcoxon_signed_rank([1.0, bad], [1.0, 2.0]),
    lambda bad: S.bootstrap_ci([1.0, bad]),
    lambda bad: S.cluster_bootstrap_ci([[1.0], [bad]]),
    lambda bad: S.clustered_se([[1.0], [bad]]),
    lambda bad: S.cluster_paired([[1.0], [bad]]),
    lambda bad: S.icc([[1.0], [bad]]),
    lambda bad: S.cohens_dz([1.0, bad]),
    lambda bad: S.hedges_g([1.0, bad], [1.0, 2.0]),
    lambda bad: S.holm([0.1, bad]),
])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinite_values_are_refused_naming_the_argument(call, bad):
    with pytest.raises(ValueError, match=r"\[1\](\[0\])? is (NaN|infinite)"):
        call(bad)


@pytest.mark.parametrize("call, name", [
    (lambda: S.t_cdf(math.nan, 3), "t"),
    (lambda: S.t_cdf(1.0, math.nan), "df"),
    (lambda: S.t_ppf(math.nan, 3), "p"),
    (lambda: S.norm_cdf(math.nan), "z"),
    (lambda: S.norm_ppf(math.nan), "p"),
    (lambda: S.paired_t([1, 2], [1, 2], level=math.nan), "level"),
    (lambda: S.mde(math.inf, 10), "sd"),
    (lambda: S.runs_needed(math.nan, 1.0), "effect"),
    (lambda: S.design_effect(math.inf, 0.1), "m"),
    (lambda: S.wilson_interval(1, 2, level=math.nan), "level"),
    (lambda: S.mcnemar_exact(math.nan, 1), "b"),
])
def test_nan_scalars_are_refused_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        S.paired_t([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="not a number"):
        S.mean([1, "2"])
    with pytest.raises(ValueError, match="sequence"):
        S.mean("12")
    with pytest.raises(ValueError, match=r"clusters\[1\] is empty"):
        S.clustered_se([[1.0], []])
    with pytest.raises(ValueError, match="level"):
        S.welch_t([1, 2], [3, 4], level=1.0)
    with pytest.raises(ValueError, match="df"):
        S.t_cdf(1.0, 0)


def test_results_are_frozen_plain_values():
    r = S.paired_t([1.0, 2.0, 4.0], [0.5, 1.0, 1.0])
    with pytest.raises(AttributeError):
        r.p_value = 0.5  # type: ignore[misc]
    assert isinstance(r.p_value, float) and isinstance(r.statistic, float) and isinstance(r.n, int)


def test_benjamini_hochberg_matches_scipy():
    from scipy.stats import false_discovery_control

    rng = random.Random(11)
    for size in (1, 2, 5, 40):
        ps = [rng.random() ** 3 for _ in range(size)]
        expected = false_discovery_control(ps)
        assert S.benjamini_hochberg(ps) == pytest.approx(list(expected), abs=1e-12)
    assert S.benjamini_hochberg([]) == []
    with pytest.raises(ValueError):
        S.benjamini_hochberg([0.1, float("nan")])


def test_mde_with_degrees_of_freedom_uses_t_quantiles_and_runs_needed_inverts_it():
    from scipy.stats import t as student

    z = student.ppf(0.975, 9) + student.ppf(0.8, 9)
    assert S.mde(0.3, 30, df=9) == pytest.approx(z * 0.3 * (1 / 30) ** 0.5, rel=1e-6)
    assert S.mde(0.3, 30, df=9) > S.mde(0.3, 30)  # few clusters: the normal figure is optimistic
    n = S.runs_needed(0.1, 0.3, per_cluster=3)
    assert n >= S.runs_needed(0.1, 0.3)
    assert S.mde(0.3, n, df=n / 3 - 1) <= 0.1 * (1 + 1e-9) < S.mde(0.3, n - 1, df=(n - 1) / 3 - 1)
