"""harness.stats checked against scipy (a test-only dependency)."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats as sps
from scipy import special

from harness import stats

SAMPLES = [
    ([0.2, 0.4, 0.3, 0.5, 0.35], [0.6, 0.7, 0.65, 0.9, 0.55]),
    ([0.9, 0.8, 0.85], [0.7, 0.75, 0.9]),
    ([0.1, 0.9], [0.5, 0.6]),
    ([0.5, 0.52, 0.48, 0.51, 0.49, 0.5, 0.47, 0.53], [0.51, 0.53, 0.47, 0.52, 0.5, 0.52, 0.49, 0.55]),
]


@pytest.mark.parametrize("a,b,x", [(0.5, 0.5, 0.3), (2.0, 3.0, 0.7), (10.5, 0.5, 0.99), (0.5, 0.5, 1e-6),
                                   (50.0, 0.5, 0.5), (1.0, 1.0, 0.25), (3.7, 0.5, 0.001)])
def test_regularized_incomplete_beta_matches_scipy(a, b, x):
    assert stats.regularized_incomplete_beta(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("df", [1, 2, 3.5, 7, 30, 200])
@pytest.mark.parametrize("t", [-5.0, -1.2, 0.0, 0.3, 2.1, 12.0])
def test_t_cdf_matches_scipy(t, df):
    assert stats.t_cdf(t, df) == pytest.approx(sps.t.cdf(t, df), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize("df", [1, 2, 2.7, 4, 10, 57.3, 1000])
@pytest.mark.parametrize("p", [0.975, 0.995, 0.6, 0.025])
def test_t_ppf_matches_scipy(p, df):
    assert stats.t_ppf(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-8)


@pytest.mark.parametrize("baseline,specialist", SAMPLES)
def test_paired_t_test_matches_scipy_ttest_rel(baseline, specialist):
    ours = stats.paired_t_test(baseline, specialist)
    ref = sps.ttest_rel(specialist, baseline)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    assert ours.df == len(baseline) - 1
    ci = ref.confidence_interval(0.95)
    assert ours.ci_low == pytest.approx(ci.low, rel=1e-8)
    assert ours.ci_high == pytest.approx(ci.high, rel=1e-8)


@pytest.mark.parametrize("baseline,specialist", SAMPLES + [([0.1, 0.2, 0.15, 0.3, 0.12, 0.4], [0.8, 0.9])])
def test_welch_t_test_matches_scipy_ttest_ind_unequal_var(baseline, specialist):
    ours = stats.welch_t_test(baseline, specialist)
    ref = sps.ttest_ind(specialist, baseline, equal_var=False)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    ci = ref.confidence_interval(0.95)
    assert ours.ci_low == pytest.approx(ci.low, rel=1e-8)
    assert ours.ci_high == pytest.approx(ci.high, rel=1e-8)


def test_random_samples_agree_with_scipy():
    rng = random.Random(7)
    for _ in range(25):
        n = rng.randint(2, 12)
        base = [rng.random() for _ in range(n)]
        spec = [min(1.0, b + rng.gauss(0.1, 0.2)) for b in base]
        ours = stats.welch_t_test(base, spec)
        ref = sps.ttest_ind(spec, base, equal_var=False)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-7)
        ours_p = stats.paired_t_test(base, spec)
        ref_p = sps.ttest_rel(spec, base)
        assert ours_p.p_value == pytest.approx(ref_p.pvalue, rel=1e-7)


def test_mean_of_empty_is_none_and_variance_needs_two_values():
    assert stats.mean([]) is None
    assert stats.mean([0.25, 0.75]) == 0.5
    assert stats.sample_variance([0.3]) is None
    assert stats.sample_variance([1.0, 3.0]) == pytest.approx(2.0)


def test_one_pair_gives_no_interval_and_not_enough_evidence():
    r = stats.paired_t_test([0.2], [0.9])
    assert r.difference == pytest.approx(0.7)
    assert r.p_value is None and r.ci_low is None and r.ci_high is None
    assert stats.verdict(r) == "not enough evidence"


def test_welch_with_single_value_side_is_not_enough_evidence():
    r = stats.welch_t_test([0.2, 0.3, 0.25], [0.9])
    assert r.p_value is None
    assert stats.verdict(r) == "not enough evidence"


def test_zero_variance_with_real_difference_is_infinite_t_and_zero_width_interval():
    r = stats.paired_t_test([0.2, 0.2, 0.2], [1.0, 1.0, 1.0])
    assert math.isinf(r.statistic) and r.statistic > 0
    assert r.p_value == 0.0
    assert r.ci_low == pytest.approx(0.8) and r.ci_high == pytest.approx(0.8)
    assert r.notes
    assert stats.verdict(r) == "better"
    w = stats.welch_t_test([1.0, 1.0], [0.2, 0.2])
    assert w.p_value == 0.0 and stats.verdict(w) == "worse"


def test_zero_variance_without_difference_is_not_enough_evidence():
    r = stats.welch_t_test([0.5, 0.5], [0.5, 0.5])
    assert r.p_value == 1.0
    assert stats.verdict(r) == "not enough evidence"


def test_verdict_follows_the_p_value_and_sign():
    better = stats.welch_t_test([0.1, 0.2, 0.15, 0.12], [0.8, 0.85, 0.9, 0.82])
    assert stats.verdict(better) == "better"
    assert better.ci_low > 0
    worse = stats.welch_t_test([0.8, 0.85, 0.9, 0.82], [0.1, 0.2, 0.15, 0.12])
    assert stats.verdict(worse) == "worse"
    noisy = stats.welch_t_test([0.1, 0.9, 0.5], [0.2, 0.95, 0.4])
    assert stats.verdict(noisy) == "not enough evidence"
    assert noisy.ci_low < 0 < noisy.ci_high


def test_improvement_pct_refuses_a_zero_baseline():
    assert stats.improvement_pct(0.0, 0.5) is None
    assert stats.improvement_pct(0.5, 0.75) == pytest.approx(50.0)
