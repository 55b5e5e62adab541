"""Win-rate and fractional-mean intervals (issue 31): hand-checked bounds, the review's
reproductions, monotonicity over every small record, and a fast coverage check (the full
table: benchmarks/interval_coverage.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from gtog.eval.results._statistics import (
    MIN_FRACTIONAL_N,
    mean_interval,
    skew_t_bounds,
    win_rate_interval,
)
from tests.support.coverage import (
    SCORE_DISTRIBUTIONS,
    mean_coverage,
    rate_grid,
    records,
    win_rate_coverage,
)


def test_win_rate_bounds_solve_the_clopper_pearson_equations() -> None:
    # all won: lower = (alpha/2)^(1/n); all lost: upper = 1 - (alpha/2)^(1/n)
    assert win_rate_interval(10, 0, 10).as_list() == pytest.approx([0.025**0.1, 1.0])
    assert win_rate_interval(10, 0, 10).low == pytest.approx(0.69150, abs=1e-5)
    assert win_rate_interval(0, 0, 10).as_list() == pytest.approx([0.0, 1 - 0.025**0.1])
    # a fractional count x = wins + ties / 2: the regularised incomplete beta at the bounds
    # is alpha/2 (lower: I_lo(x, n - x + 1); upper: 1 - I_hi(x + 1, n - x))
    for wins, ties, n in [(9, 1, 10), (1, 9, 10), (3, 4, 12), (0, 1, 5), (20, 15, 50)]:
        x = wins + ties / 2
        ci = win_rate_interval(wins, ties, n)
        assert ci.method == "clopper_pearson" and ci.low < x / n < ci.high
        if x > 0:
            assert special.betainc(x, n - x + 1, ci.low) == pytest.approx(0.025, abs=1e-9)
        assert 1 - special.betainc(x + 1, n - x, ci.high) == pytest.approx(0.025, abs=1e-9)
    assert win_rate_interval(0, 0, 0).as_list() is None
    assert win_rate_interval(0, 0, 0).reason == "no scored comparisons"


def test_one_tie_no_longer_changes_the_method_or_lifts_the_bound() -> None:
    """The review: 10 wins gave [0.72, 1.00] (Wilson), 9 wins + 1 tie [0.80, 1.00] and
    1 win + 9 ties [0.50, 0.75] (a bootstrap that cannot reach what it never saw)."""
    ten = win_rate_interval(10, 0, 10)
    nine_and_tie = win_rate_interval(9, 1, 10)
    assert ten.method == nine_and_tie.method == "clopper_pearson"
    assert nine_and_tie.low < ten.low
    one_and_ties = win_rate_interval(1, 9, 10)
    assert one_and_ties.low < 0.5 < 0.55 < one_and_ties.high  # holds 0.5 and above 0.75
    assert one_and_ties.high > 0.75


def test_a_worse_record_never_has_a_higher_bound() -> None:
    """Every record of up to 40 comparisons: one more loss, a win turned into a tie, or a tie
    turned into a loss lowers (never raises) both bounds."""
    for n in range(1, 41):
        w, t, _ = records(n)
        ci = {
            (a, b): win_rate_interval(a, b, n) for a, b in zip(w.tolist(), t.tolist(), strict=True)
        }
        more = {(a, b): win_rate_interval(a, b, n + 1) for a, b in ci}
        for (a, b), c in ci.items():
            worse = [more[(a, b)]]  # one more loss
            if a > 0:
                worse.append(ci[(a - 1, b + 1)])  # a win became a tie
            if b > 0:
                worse.append(ci[(a, b - 1)])  # a tie became a loss
            for other in worse:
                assert other.low <= c.low + 1e-12 and other.high <= c.high + 1e-12, (n, a, b)


@pytest.mark.parametrize("n", [10, 20, 50])
def test_win_rate_coverage_is_at_least_93_percent_at_any_win_and_tie_rate(n: int) -> None:
    grid = rate_grid(0.05, [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0])
    coverage = win_rate_coverage(n, grid)
    assert min(coverage)[0] >= 0.93, min(coverage)
    # ties make it conservative: a record of 1 / 0.5 / 0 spreads less than one of 1 / 0
    with_ties = [c for c, _, pt in coverage if pt >= 0.5]
    assert min(with_ties) >= 0.97


def test_fractional_means_need_ten_scores() -> None:
    """The review: `[0.2, 0.8]` had the interval [0.2, 0.8]; two scores cannot say that."""
    ci = mean_interval([0.2, 0.8])
    assert ci.as_list() is None and ci.method is None
    assert ci.reason == (
        "n too small: 2 fractional score(s); an interval needs 10 "
        "(fewer cover the mean less than 93% of the time)"
    )
    assert MIN_FRACTIONAL_N == 10
    assert mean_interval([0.1 * i for i in range(9)]).as_list() is None
    assert mean_interval([0.1 * i for i in range(10)]).method == "skew_t"
    assert mean_interval([0.4] * 12).reason == "all 12 scores are 0.4; no spread to estimate"
    assert mean_interval([1, 0, 1, 1]).method == "wilson"  # 0/1 scores: Wilson, any n


def test_skew_t_by_hand() -> None:
    values = np.array([0.0, 0.2, 0.5, 0.6, 0.7, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    n = values.size
    mean = values.mean()
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    skew = sum((v - mean) ** 3 for v in values) / n / sd**3
    ci = mean_interval(values.tolist())
    assert ci.method == "skew_t"
    # each bound solves sqrt(n) (t + g t^2/3 + g^2 t^3/27 + g/(6n)) = -+q for t = (mean - b)/sd
    q = stats.t.ppf(0.975, n - 1)
    for bound, target in ((ci.low, q), (ci.high, -q)):
        t = (mean - bound) / sd
        forward = math.sqrt(n) * (t + skew * t**2 / 3 + skew**2 * t**3 / 27 + skew / (6 * n))
        assert forward == pytest.approx(target, abs=1e-9)
    # left-skewed scores: the interval reaches further below the mean than above it
    assert mean - ci.low > ci.high - mean
    # no skew: Student's t exactly
    lo, hi = skew_t_bounds(0.5, 0.2, 0.0, 16)
    half = stats.t.ppf(0.975, 15) * 0.2 / 4
    assert (float(lo), float(hi)) == pytest.approx((0.5 - half, 0.5 + half))


WORST = ("0.05 at 0, 0.7 at 1", "0.7 at 0, 0.05 at 1", "beta(2, 5)", "beta(5, 5)")


@pytest.mark.parametrize("n", [10, 30])
def test_fractional_mean_coverage_on_the_hardest_shapes(n: int) -> None:
    """A seeded simulation (2,000 samples each: standard error ~0.005) on the shapes where
    the benchmark finds the lowest coverage; the full family: benchmarks/interval_coverage.py."""
    for dist in SCORE_DISTRIBUTIONS:
        if dist.name.startswith(WORST):
            covered, missing = mean_coverage(dist, n, 2000)
            assert covered >= 0.925, (dist.name, n, covered, missing)
