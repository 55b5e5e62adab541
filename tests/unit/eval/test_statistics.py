"""gtog.eval.results._statistics: hand-computed and scipy-checked values, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gtog.eval.results._statistics import (
    cohen_kappa,
    holm,
    mean_interval,
    newcombe_paired_interval,
    paired_comparison,
    percentile,
    wilson_interval,
)

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    """The closed-form Wilson score interval (no scipy)."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(7, 10), (10, 10), (0, 10), (1, 1), (0, 1), (13, 50)])
def test_wilson_matches_the_closed_form(k: int, n: int) -> None:
    ci = wilson_interval(k, n)
    lo, hi = wilson_by_hand(k, n)
    assert ci.method == "wilson" and ci.reason is None
    assert ci.low == pytest.approx(max(0.0, lo), abs=1e-12)
    assert ci.high == pytest.approx(min(1.0, hi), abs=1e-12)


def test_wilson_all_1_all_0_and_n1_by_hand() -> None:
    # all k = n: lower = n / (n + z^2); all 0: upper = z^2 / (n + z^2)
    assert wilson_interval(10, 10).as_list() == pytest.approx([10 / (10 + Z * Z), 1.0])
    assert wilson_interval(10, 10).low == pytest.approx(0.7224672, abs=1e-7)
    assert wilson_interval(0, 10).as_list() == pytest.approx([0.0, Z * Z / (10 + Z * Z)])
    # n = 1: 1/(1 + z^2) = 0.2065
    assert wilson_interval(1, 1).as_list() == pytest.approx([1 / (1 + Z * Z), 1.0])


def test_no_scores_is_no_interval_with_a_reason_never_nan() -> None:
    for ci in (wilson_interval(0, 0), mean_interval([]), mean_interval([], binary=False)):
        assert ci.as_list() is None and ci.low is None and ci.reason


def test_mean_interval_picks_wilson_for_0_1_and_the_skew_t_otherwise() -> None:
    assert mean_interval([1, 0, 1, 1]).method == "wilson"
    assert mean_interval([1.0, 0.0] * 5, binary=False).method == "skew_t"
    assert mean_interval([0.2, 0.5, 0.9] * 4).method == "skew_t"


def test_mcnemar_exact_by_hand() -> None:
    # 9 questions only a got right, 2 only b: p = 2 * P(X >= 9 | n=11, 1/2) = 134/2048
    a = [1] * 9 + [0] * 2 + [1] * 5 + [0] * 3
    b = [0] * 9 + [1] * 2 + [1] * 5 + [0] * 3
    c = paired_comparison(a, b)
    assert c.test == "mcnemar_exact" and c.n == 19
    assert c.p_value == pytest.approx(134 / 2048)
    assert c.p_value == pytest.approx(stats.binomtest(9, 11).pvalue)
    assert c.diff == pytest.approx(7 / 19)
    assert c.a_mean == pytest.approx(14 / 19) and c.b_mean == pytest.approx(7 / 19)


def test_no_discordant_pairs_is_p_1_and_diff_0_with_an_interval() -> None:
    c = paired_comparison([1] * 8 + [0] * 4, [1] * 8 + [0] * 4)
    assert c.diff == 0.0 and c.p_value == 1.0
    lo, hi = c.ci95.as_list() or [None, None]
    assert lo is not None and hi is not None and lo < 0 < hi  # no discordance != certainty


def test_one_sided_discordance_on_12_questions() -> None:
    c = paired_comparison([1] * 14, [0] * 12 + [1] * 2)
    assert c.p_value == pytest.approx(2 * 0.5**12)
    assert c.diff == pytest.approx(12 / 14)


def test_newcombe_by_hand() -> None:
    # both right 5, only a 3, only b 1, neither 1 (n = 10): Newcombe (1998) method 10
    a = [1] * 5 + [1] * 3 + [0] * 1 + [0]
    b = [1] * 5 + [0] * 3 + [1] * 1 + [0]
    l1, u1 = wilson_by_hand(8, 10)
    l2, u2 = wilson_by_hand(6, 10)
    phi = (5 * 1 - 3 * 1) / math.sqrt(8 * 2 * 6 * 4)
    d = 0.8 - 0.6
    lower = d - math.sqrt((0.8 - l1) ** 2 - 2 * phi * (0.8 - l1) * (u2 - 0.6) + (u2 - 0.6) ** 2)
    upper = d + math.sqrt((u1 - 0.8) ** 2 - 2 * phi * (u1 - 0.8) * (0.6 - l2) + (0.6 - l2) ** 2)
    ci = newcombe_paired_interval(a, b)
    assert ci.as_list() == pytest.approx([lower, upper])
    assert ci.low < d < ci.high


def test_paired_permutation_exact_by_hand() -> None:
    # differences 0.5, 0.25, 0.25: of the 8 sign flips, 2 reach |sum| >= 1 -> p = 2/8
    c = paired_comparison([0.75, 0.5, 0.5], [0.25, 0.25, 0.25])
    assert c.test == "paired_permutation"
    assert c.p_value == pytest.approx(0.25)
    assert c.diff == pytest.approx(1 / 3)


def test_paired_continuous_all_equal_differences() -> None:
    c = paired_comparison([0.5, 0.2, 0.9], [0.5, 0.2, 0.9], binary=False)
    assert c.diff == 0.0 and c.p_value == 1.0
    assert c.ci95.as_list() is None and "all 3 paired differences are 0" in (c.ci95.reason or "")


def test_no_shared_questions() -> None:
    c = paired_comparison([], [])
    assert c.n == 0 and c.p_value is None and c.diff is None and c.ci95.as_list() is None


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.01, 0.04, 0.03, None, 0.5]) == [
        pytest.approx(0.04),
        pytest.approx(0.09),
        pytest.approx(0.09),
        None,
        pytest.approx(0.5),
    ]
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []


def test_percentile_is_numpy_linear() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([1, 2, 3, 4, 100], 95) == pytest.approx(80.8)
    assert percentile([], 50) is None


def test_cohen_kappa_by_hand() -> None:
    # 50 cases: label 1 judged 1: 20, label 1 judged 0: 5, label 0 judged 1: 10, 0/0: 15
    labels = [1] * 25 + [0] * 25
    judged = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    k = cohen_kappa(labels, judged)
    # po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4, SE = sqrt(.21 / (50 * .25))
    assert k.accuracy == pytest.approx(0.7) and k.kappa == pytest.approx(0.4)
    se = math.sqrt(0.21 / 12.5)
    assert k.ci95.as_list() == pytest.approx([0.4 - Z * se, 0.4 + Z * se])
    assert k.ci95.method == "analytic_se"


def test_cohen_kappa_undefined_cases() -> None:
    k = cohen_kappa([1, 1, 1], [1, 1, 1])
    assert k.kappa is None and k.accuracy == 1.0 and k.ci95.reason
    assert cohen_kappa([], []).accuracy is None
    perfect = cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0])
    assert perfect.kappa == 1.0 and perfect.ci95.as_list() is None


# -- properties ----------------------------------------------------------------------------
binary_lists = st.lists(st.integers(0, 1), min_size=1, max_size=80)
score_lists = st.lists(
    st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 3)), min_size=2, max_size=40
)


@given(binary_lists)
def test_wilson_holds_the_mean(values: list[int]) -> None:
    ci = mean_interval(values)
    mean = sum(values) / len(values)
    assert ci.low is not None and ci.high is not None
    assert 0.0 <= ci.low <= mean <= ci.high <= 1.0


@settings(max_examples=60, deadline=None)
@given(score_lists)
def test_the_fractional_interval_holds_the_mean(values: list[float]) -> None:
    ci = mean_interval(values, binary=False)
    mean = float(np.mean(values))
    if ci.as_list() is None:
        assert ci.reason and (len(set(values)) == 1 or len(values) < 10)
    else:
        assert ci.low <= mean + 1e-12 and mean - 1e-12 <= ci.high


@given(st.lists(st.floats(0, 1, allow_nan=False) | st.none(), max_size=30))
def test_holm_never_lowers_a_p_value(ps: list[float | None]) -> None:
    for p, adjusted in zip(ps, holm(ps), strict=True):
        assert (p is None) == (adjusted is None)
        if p is not None:
            assert p <= adjusted <= 1.0


pairs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60)


@given(pairs)
def test_swapping_binary_methods_flips_diff_and_keeps_p(rows: list[tuple[int, int]]) -> None:
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    ab, ba = paired_comparison(a, b), paired_comparison(b, a)
    assert ab.diff == pytest.approx(-ba.diff)
    assert ab.p_value == pytest.approx(ba.p_value)
    assert 0.0 <= ab.p_value <= 1.0
    lo, hi = ab.ci95.as_list() or [0, 0]
    assert ba.ci95.as_list() == pytest.approx([-hi, -lo])
    assert lo <= ab.diff <= hi


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=25))
def test_swapping_scored_methods_flips_diff_and_keeps_p(rows: list[tuple[float, float]]) -> None:
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    ab = paired_comparison(a, b, binary=False)
    ba = paired_comparison(b, a, binary=False)
    assert ab.diff == pytest.approx(-ba.diff)
    assert ab.p_value == pytest.approx(ba.p_value)
    assert 0.0 < ab.p_value <= 1.0


def test_a_single_non_binary_pair_has_no_p_value() -> None:
    from gtog.eval.results._statistics import paired_comparison

    c = paired_comparison([0.5], [0.25], binary=False)
    assert c.n == 1 and c.diff == 0.25 and c.p_value is None and c.reason
