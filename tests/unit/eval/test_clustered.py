"""Clustered statistics (issue 34): design effect, ICC, degrees of freedom, intervals and
the sign-flip test checked by hand; the omnibus tests; power; and a fast coverage check
(the full table: benchmarks/cluster_coverage.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from gtog.eval.results._clustered import (
    MIN_CLUSTERS,
    ClusterSums,
    bell_mccaffrey_df,
    cluster_codes,
    cluster_sign_flip,
    design_effect,
    effective_n,
    icc,
    newcombe_bounds,
    skew_t_bounds_at,
    wilson_bounds,
)
from gtog.eval.results._omnibus import cochran_q, friedman, omnibus_test
from gtog.eval.results._power import detectable_difference, questions_needed
from gtog.eval.results._statistics import (
    newcombe_paired_interval,
    sample_moments,
    skew_t_bounds,
    wilson_interval,
)
from tests.support.cluster_coverage import Scenario, coverage, false_alarms

Z = stats.norm.ppf(0.975)


def sums(values: list[float], labels: list[str]) -> ClusterSums:
    codes, k = cluster_codes(labels)
    return ClusterSums.of(values, codes, k)


def test_design_effect_icc_and_df_by_hand() -> None:
    # three clusters of two: A right twice, B wrong twice, C split
    c = sums([1, 1, 0, 0, 1, 0], ["A", "A", "B", "B", "C", "C"])
    # residuals +-0.5: sum e_i^2 = 1.5; cluster totals 1, -1, 0; CR2 weights 1 / (1 - 2/6)
    assert float(design_effect(c)) == pytest.approx(1.5 * 2 * 5 / (6 * 1.5))
    # cluster means 1, 0, 0.5: MSB = 2 (0.25 + 0.25) / 2 = 0.5, MSW = 0.5 / 3, n0 = 2
    assert float(icc(c)) == pytest.approx((0.5 - 1 / 6) / (0.5 + 1 / 6))
    assert float(bell_mccaffrey_df(c)) == pytest.approx(2.0)  # equal sizes: k - 1
    assert float(effective_n(c)) == pytest.approx(6 / (5 / 3))
    # every question its own cluster: no design effect
    x = [0.1, 0.5, 0.9, 0.3, 0.7]
    assert float(design_effect(sums(x, list("abcde")))) == pytest.approx(1.0)
    assert math.isnan(float(icc(sums(x, list("abcde")))))
    # no spread: each cluster counts as one question
    flat = sums([1, 1, 1, 1], ["a", "a", "b", "b"])
    assert math.isnan(float(design_effect(flat))) and float(effective_n(flat)) == 2


def test_cr2_and_bell_mccaffrey_match_their_matrix_definitions() -> None:
    """Unequal clusters: CR2's adjusted residuals (I - H_gg)^(-1/2) e_g and the eigenvalues
    of its contrasts' Gram matrix, built as matrices, against the closed forms."""
    rng = np.random.default_rng(5)
    sizes = [1, 3, 7, 2, 5]
    labels = [g for g, n in enumerate(sizes) for _ in range(n)]
    x = rng.random(len(labels))
    n, codes = len(x), np.array(labels)
    e = x - x.mean()
    contrasts, variance = [], 0.0
    for g in range(len(sizes)):
        idx = codes == g
        w, u = np.linalg.eigh(np.eye(idx.sum()) - np.full((idx.sum(),) * 2, 1 / n))
        adjust = u @ np.diag(w**-0.5) @ u.T
        variance += (adjust @ e[idx]).sum() ** 2 / n**2
        column = np.zeros(n)
        column[idx] = adjust @ np.ones(idx.sum()) / n
        contrasts.append((np.eye(n) - 1 / n) @ column)
    lam = np.linalg.eigvalsh(np.array(contrasts) @ np.array(contrasts).T)
    c = sums(list(x), labels)
    assert float(design_effect(c)) == pytest.approx(variance / (e @ e / (n - 1) / n))
    assert float(bell_mccaffrey_df(c)) == pytest.approx(lam.sum() ** 2 / (lam**2).sum())
    assert float(bell_mccaffrey_df(c)) < len(sizes) - 1  # unequal sizes: fewer than k - 1


def test_at_the_full_n_the_formulas_are_the_naive_intervals() -> None:
    for k, n in [(0, 10), (3, 10), (17, 40), (40, 40)]:
        assert [float(b) for b in wilson_bounds(k / n, n, Z)] == pytest.approx(
            wilson_interval(k, n).as_list()
        )
    a = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
    b = [1, 0, 0, 1, 1, 0, 0, 0, 1, 0]
    counts = [
        sum(x == p and y == q for x, y in zip(a, b, strict=True))
        for p, q in ((1, 1), (1, 0), (0, 1), (0, 0))
    ]
    assert [float(v) for v in newcombe_bounds(*counts, 10, Z)] == pytest.approx(
        newcombe_paired_interval(a, b).as_list()
    )
    x = np.array([0.0, 0.2, 0.5, 0.6, 0.7, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    moments = sample_moments(x)
    assert [float(v) for v in skew_t_bounds_at(*moments, 12, 11)] == pytest.approx(
        [float(v) for v in skew_t_bounds(*moments, 12)]
    )
    assert [float(v) for v in sums(list(x), [str(i) for i in range(12)]).moments()] == (
        pytest.approx([float(v) for v in moments])
    )


def test_cluster_sign_flip_by_hand() -> None:
    # cluster totals 2, 1, 1: the 8 sign patterns sum to 4, 2, 2, 0, 0, -2, -2, -4; two
    # reach |4|: p = 2/8
    d = [1, 1, 1, 0, 1]
    assert cluster_sign_flip(d, np.array([0, 0, 1, 1, 2]), 3) == pytest.approx(0.25)
    assert cluster_sign_flip([0, 0, 0], np.array([0, 1, 2]), 3) == 1.0
    # 6 clusters all one way: the smallest p a sign flip of 6 can give, 2/64
    assert cluster_sign_flip([1] * 12, np.repeat(np.arange(6), 2), 6) == pytest.approx(2 / 64)
    assert MIN_CLUSTERS == 6  # the first count of clusters at which p < 0.05 is possible
    assert cluster_sign_flip([1] * 10, np.repeat(np.arange(5), 2), 5) > 0.05


def test_cochran_q_by_hand() -> None:
    x = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 1], [1, 1, 0], [1, 0, 0]])
    # column totals 6, 3, 2 (T = 11); row totals' squares sum to 23
    q = cochran_q(x)
    assert q.statistic == pytest.approx(2 * (3 * (36 + 9 + 4) - 121) / (3 * 11 - 23))
    assert q.p_value == pytest.approx(stats.chi2.sf(5.2, 2)) and q.df == 2
    same = cochran_q(np.array([[1, 1, 1], [0, 0, 0]]))
    assert same.statistic is None and same.p_value == 1.0 and same.reason


def test_friedman_is_scipys_and_its_permutation_uses_the_same_statistic() -> None:
    x = np.random.default_rng(2).random((20, 4)).round(1)  # rounding makes ties
    f = friedman(x)
    ref = stats.friedmanchisquare(*x.T)
    assert (f.statistic, f.p_value) == pytest.approx((ref.statistic, ref.pvalue))
    clustered = omnibus_test(x, binary=False, codes=np.repeat(np.arange(10), 2), k_clusters=10)
    assert clustered.statistic == pytest.approx(ref.statistic)
    assert clustered.test == "friedman_cluster_permutation"
    # one cluster per question: the permutation p is close to the chi-square's
    alone = omnibus_test(x, binary=False, codes=np.arange(20), k_clusters=20)
    assert alone.p_value == pytest.approx(ref.pvalue, abs=0.03)


def test_detectable_difference_solves_the_power_equation() -> None:
    qa, qb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    d = detectable_difference(100, df=None, discordance=0.2)
    assert d.mde is not None
    assert math.sqrt(100) * d.mde == pytest.approx(
        qa * math.sqrt(0.2) + qb * math.sqrt(0.2 - d.mde**2)
    )
    # with Student's t on n - 1 df, the questions that difference needs are the 100 it
    # came from
    t = detectable_difference(100, df=99, discordance=0.2)
    assert t.mde is not None and t.mde > d.mde
    assert questions_needed(t.mde, discordance=0.2).questions == 100
    graded = detectable_difference(64, df=None, sd=0.4)
    assert graded.mde == pytest.approx((qa + qb) * 0.4 / 8)
    assert detectable_difference(50, df=49, discordance=0.0).mde is None
    assert detectable_difference(20, df=19, discordance=0.05).mde is None  # too few disagree
    # clusters of 20 with ICC 0.1: a design effect of 2.9
    need = questions_needed(0.1, discordance=0.3, cluster_size=20, icc=0.1)
    assert need.design_effect == pytest.approx(2.9)
    plain = questions_needed(0.1, discordance=0.3)
    assert need.questions > 2.9 * plain.questions * 0.99 and need.clusters == math.ceil(
        need.questions / 20
    )
    assert questions_needed(0.4, discordance=0.3).questions is None  # more than they disagree


# the hardest cases of the benchmark, at the fewest clusters allowed and at a dozen
HARD = [
    Scenario("mean01", MIN_CLUSTERS, 20, 0.3, 0.9),
    Scenario("mean", MIN_CLUSTERS, 0, 0.3, 0.9, kappa=1),
    Scenario("diff01", 12, 0, 0.2, 0.5, other=0.5),
    Scenario("diff", 12, 20, 0.3, 0.9, other=0.7),
]


@pytest.mark.parametrize("scenario", HARD, ids=lambda s: s.label)
def test_clustered_intervals_hold_where_the_naive_ones_do_not(scenario: Scenario) -> None:
    """1,500 seeded samples each (standard error ~0.007)."""
    naive, clustered = coverage(scenario, 1500)
    assert clustered >= 0.92, (scenario.label, naive, clustered)
    assert naive < 0.85, (scenario.label, naive, clustered)


def test_the_sign_flip_test_does_not_cry_wolf_where_mcnemar_does() -> None:
    """120 seeded pairs of methods that do not differ, in 8 clusters of 1-39 questions."""
    mcnemar, flip = false_alarms(Scenario("diff01", 8, 0, 0.3, 0.5, other=0.5), 120)
    assert mcnemar > 0.15 and flip <= 0.08, (mcnemar, flip)


def test_the_documented_power_figures() -> None:
    """docs/statistics.md, "How small a difference can this study see?"."""
    clustered = detectable_difference(120 / 1.45, df=11, discordance=0.2).mde
    independent = detectable_difference(120, df=119, discordance=0.2).mde
    assert (round(clustered or 0, 2), round(independent or 0, 2)) == (0.15, 0.11)
    assert questions_needed(0.1, discordance=0.3).questions == 236
    need = questions_needed(0.1, discordance=0.3, cluster_size=20, icc=0.1)
    assert (need.questions, need.clusters) == (716, 36)
