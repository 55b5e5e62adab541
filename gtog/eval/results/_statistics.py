"""Intervals, paired tests, multiple-comparison adjustment and agreement: pure functions.

scipy does the statistics: Wilson intervals from `binomtest(...).proportion_ci`, the exact
McNemar test as `binomtest` on the discordant pairs, beta quantiles for Clopper-Pearson
bounds, t quantiles, seeded paired `bootstrap` (BCa) intervals and `permutation_test`s, and
normal quantiles for Cohen's kappa. Every result is JSON-safe: floats or None, never NaN.
Where there is no interval, `reason` says why.

Which interval, and why (coverage checked by `benchmarks/interval_coverage.py`, results in
`benchmarks/results/interval_coverage.json`):

- a mean of 0/1 scores: Wilson;
- a win rate (a tie counts half): Clopper-Pearson at the fractional count wins + ties/2 of
  n, one rule at every tie count, monotone in the record, >= 95% coverage at n = 10 to 200;
- a mean of fractional scores: Student's t with Hall's (1992) skewness correction, from
  MIN_FRACTIONAL_N scores on (below, no interval: "n too small").

Each is a function of the values (or counts) alone, with the bounds computed elementwise
(`clopper_pearson_bounds`, `skew_t_bounds`), so a simulation runs the same code on arrays.
When questions come in clusters, `gtog.eval.results._clustered` gives the clustered
versions and `gtog.eval.results._inference` picks between them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CONFIDENCE",
    "MIN_FRACTIONAL_N",
    "SEED",
    "Comparison",
    "Interval",
    "Kappa",
    "clopper_pearson_bounds",
    "cohen_kappa",
    "holm",
    "is_binary",
    "mean_interval",
    "newcombe_paired_interval",
    "paired_comparison",
    "percentile",
    "sample_moments",
    "skew_t_bounds",
    "skew_t_interval",
    "wilson_interval",
    "win_rate_interval",
]

CONFIDENCE = 0.95
SEED = 20240613
"""Fixed seed of every bootstrap and permutation test: the same records give the same numbers."""
N_RESAMPLES = 9999
MIN_FRACTIONAL_N = 10
"""Fewest fractional scores whose mean gets an interval: below it the skewness-corrected t
interval covers less than 93% of the time on the simulated score distributions."""


@dataclass(frozen=True)
class Interval:
    """A confidence interval, or None bounds and the reason there is none."""

    low: float | None
    high: float | None
    method: str | None = None
    reason: str | None = None

    @classmethod
    def none(cls, reason: str) -> Interval:
        """No interval, because `reason`."""
        return cls(None, None, None, reason)

    def as_list(self) -> list[float] | None:
        """`[low, high]`, or None."""
        if self.low is None or self.high is None:
            return None
        return [self.low, self.high]


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def is_binary(values: Sequence[float]) -> bool:
    """True when every value is 0 or 1."""
    return all(v in (0, 1) for v in values)


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval of a proportion (defined from n = 1 on)."""
    from scipy import stats

    if n < 1:
        return Interval.none("no scored answers")
    ci = stats.binomtest(int(successes), int(n)).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    return Interval(max(0.0, float(ci.low)), min(1.0, float(ci.high)), "wilson")


def _bootstrap(
    data: tuple[np.ndarray, ...], statistic: Any, confidence: float, seed: int, paired: bool
) -> Interval:
    from scipy import stats

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                data,
                statistic,
                n_resamples=N_RESAMPLES,
                confidence_level=confidence,
                method=method,
                paired=paired,
                vectorized=True,
                rng=np.random.default_rng(seed),
            )
        low, high = _finite(res.confidence_interval.low), _finite(res.confidence_interval.high)
        if low is not None and high is not None:
            return Interval(low, high, f"bootstrap_{method.lower()}")
    return Interval.none("the bootstrap interval is undefined for these scores")


def clopper_pearson_bounds(
    x: np.ndarray | float, n: np.ndarray | int, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds for `x` successes of `n`, elementwise; `x` may be fractional
    (the beta quantiles are defined for any 0 <= x <= n): 0 at x = 0, 1 at x = n."""
    from scipy import stats

    x, n = np.asarray(x, dtype=float), np.asarray(n, dtype=float)
    alpha = 1.0 - confidence
    with np.errstate(all="ignore"):
        low = stats.beta.ppf(alpha / 2, np.maximum(x, 1e-300), n - x + 1)
        high = stats.beta.ppf(1 - alpha / 2, x + 1, np.maximum(n - x, 1e-300))
    return np.where(x <= 0, 0.0, low), np.where(x >= n, 1.0, high)


def win_rate_interval(wins: int, ties: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """Interval of a win rate (wins + ties / 2) / n: Clopper-Pearson at the fractional count.

    One rule whatever the number of ties; it treats each comparison as a 0/1 outcome with
    the record's mean (the most spread a score of 1, 0.5 or 0 can have), so it never
    narrows as the record worsens: one more loss, or a win turned into a tie, lowers both
    bounds. Coverage >= 95% at n = 10, 20, 50, 200 over every win and tie rate simulated
    (higher with ties: conservative).
    """
    if n < 1:
        return Interval.none("no scored comparisons")
    low, high = clopper_pearson_bounds(wins + ties / 2, n, confidence)
    return Interval(float(low), float(high), "clopper_pearson")


def skew_t_bounds(
    mean: np.ndarray | float,
    sd: np.ndarray | float,
    skew: np.ndarray | float,
    n: int,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """Hall's (1992) skewness-corrected t interval of a mean, elementwise.

    With t = (mean - mu) / sd and the sample skewness g, the statistic
    sqrt(n) * (t + g t^2 / 3 + g^2 t^3 / 27 + g / (6 n)) is closer to Student's t(n - 1)
    than sqrt(n) * t is; the transformation is monotone, so its inverse,
    t = ((1 + g (y - g / (6 n)))^(1/3) - 1) / (g / 3), gives the bounds
    mean - sd * t(+-q / sqrt(n)). Clipped to [0, 1] (scores are in [0, 1]).
    """
    from scipy import stats

    mean, sd, g = (np.asarray(v, dtype=float) for v in (mean, sd, skew))
    q = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) / math.sqrt(n)
    flat = np.abs(g) < 1e-12
    a = np.where(flat, 1.0, g / 3)

    def inverse(y: float) -> np.ndarray:
        corrected = (np.cbrt(1 + 3 * a * (y - g / (6 * n))) - 1) / a
        return np.where(flat, y, corrected)

    low, high = mean - sd * inverse(q), mean - sd * inverse(-q)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def sample_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation (n - 1) and skewness (third central moment / sd^3; 0 without
    spread) of `x` along its last axis: what `skew_t_bounds` takes."""
    mean = x.mean(axis=-1)
    sd = x.std(axis=-1, ddof=1)
    third = np.mean((x - mean[..., None]) ** 3, axis=-1)
    with np.errstate(all="ignore"):
        skew = np.where(sd > 0, third / sd**3, 0.0)
    return mean, sd, skew


def skew_t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """Skewness-corrected t interval (`skew_t_bounds`) of the mean of fractional scores.

    None below MIN_FRACTIONAL_N scores ("n too small") and when every score is the same.
    """
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n == 0:
        return Interval.none("no scored answers")
    if n < MIN_FRACTIONAL_N:
        return Interval.none(
            f"n too small: {n} fractional score(s); an interval needs {MIN_FRACTIONAL_N} "
            "(fewer cover the mean less than 93% of the time)"
        )
    if np.all(x == x[0]):
        return Interval.none(f"all {n} scores are {x[0]:g}; no spread to estimate")
    low, high = skew_t_bounds(*sample_moments(x), n, confidence)
    return Interval(float(low), float(high), "skew_t")


def mean_interval(
    values: Sequence[float], *, binary: bool | None = None, confidence: float = CONFIDENCE
) -> Interval:
    """Wilson for 0/1 scores, the skewness-corrected t otherwise (`binary=None`: decide by
    the values)."""
    binary = is_binary(values) if binary is None else binary
    if binary:
        return wilson_interval(int(sum(values)), len(values), confidence)
    return skew_t_interval(values, confidence)


def newcombe_paired_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> Interval:
    """Interval of mean(a) - mean(b) for paired 0/1 scores (Newcombe 1998, method 10).

    Combines the Wilson intervals of both proportions with the correlation of the pairs;
    unlike a bootstrap it has width when no pair disagrees.
    """
    x, y = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    n = x.size
    if n < 1:
        return Interval.none("no question scored for both methods")
    both = int(np.sum((x == 1) & (y == 1)))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    neither = n - both - only_a - only_b
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    w1, w2 = (
        wilson_interval(both + only_a, n, confidence),
        wilson_interval(both + only_b, n, confidence),
    )
    l1, u1, l2, u2 = w1.low, w1.high, w2.low, w2.high
    assert l1 is not None and u1 is not None and l2 is not None and u2 is not None
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins else 0.0
    diff = p1 - p2
    lower = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    upper = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return Interval(max(-1.0, diff - lower), min(1.0, diff + upper), "newcombe")


@dataclass(frozen=True)
class Comparison:
    """Two methods on the questions both scored: means, difference, interval and p-value."""

    n: int
    a_mean: float | None
    b_mean: float | None
    diff: float | None
    ci95: Interval
    p_value: float | None
    test: str | None
    reason: str | None = None


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def paired_comparison(
    a: Sequence[float],
    b: Sequence[float],
    *,
    binary: bool | None = None,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Comparison:
    """Compare paired scores `a[i]`, `b[i]` (the same question) of two methods.

    0/1 scores: exact McNemar test (two-sided binomial test of the discordant pairs
    against 1/2; p = 1 when no pair disagrees) and a Newcombe interval. Other scores: a
    seeded paired permutation test of the mean difference (exact up to 13 pairs) and a
    seeded bootstrap interval of the mean difference.
    """
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired scores need the same length")
    n = int(x.size)
    if n == 0:
        return Comparison(
            0, None, None, None, Interval.none("no question scored for both methods"), None, None,
            "no question scored for both methods",
        )  # fmt: skip
    binary = is_binary([*x, *y]) if binary is None else binary
    a_mean, b_mean = float(x.mean()), float(y.mean())
    diff = float(np.mean(x - y))
    if binary:
        only_a = int(np.sum((x == 1) & (y == 0)))
        only_b = int(np.sum((x == 0) & (y == 1)))
        discordant = only_a + only_b
        p = 1.0 if discordant == 0 else float(stats.binomtest(only_a, discordant, 0.5).pvalue)
        ci = newcombe_paired_interval(x, y, confidence)
        return Comparison(n, a_mean, b_mean, diff, ci, min(1.0, p), "mcnemar_exact")
    d = x - y
    if np.all(d == d[0]):
        ci = Interval.none(f"all {n} paired differences are {d[0]:g}; a bootstrap has no spread")
    elif n < 2:
        ci = Interval.none("1 pair; a bootstrap needs at least 2")
    else:
        ci = _bootstrap((x, y), _mean_diff, confidence, seed, paired=True)
    if np.all(d == 0):
        p = 1.0
    elif n < 2:
        return Comparison(
            n, a_mean, b_mean, diff, ci, None, "paired_permutation",
            "1 pair: too few to test",
        )  # fmt: skip
    else:
        res = stats.permutation_test(
            (x, y),
            _mean_diff,
            permutation_type="samples",
            vectorized=True,
            n_resamples=N_RESAMPLES,
            rng=np.random.default_rng(seed),
        )
        p = float(res.pvalue)
    return Comparison(n, a_mean, b_mean, diff, ci, min(1.0, p), "paired_permutation")


def sign_test(wins_a: int, wins_b: int) -> float:
    """Two-sided sign test of a's and b's decisive wins (exact binomial, p = 0.5); 1 when
    there is no decisive comparison (ties say nothing about which is better)."""
    from scipy import stats

    n = int(wins_a) + int(wins_b)
    return 1.0 if n == 0 else float(stats.binomtest(int(wins_a), n, 0.5).pvalue)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over one family of tests (None stays None)."""
    present = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if not present:
        return out
    p = np.array([p_values[i] for i in present], dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    for rank, idx in enumerate(order):
        out[present[idx]] = float(adjusted[rank])
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation), None for no values."""
    if len(values) == 0:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q))


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of two raters with its interval (analytic standard error)."""

    n: int
    accuracy: float | None
    kappa: float | None
    ci95: Interval


def cohen_kappa(
    labels: Sequence[int], ratings: Sequence[int], confidence: float = CONFIDENCE
) -> Kappa:
    """Cohen's kappa of 0/1 `ratings` against 0/1 `labels`.

    The interval is kappa ± z·SE with Cohen's (1960) large-sample standard error
    SE = sqrt(po (1 - po) / (n (1 - pe)^2)), clipped to [-1, 1].
    """
    from scipy import stats

    x, y = np.asarray(labels, dtype=int), np.asarray(ratings, dtype=int)
    n = int(x.size)
    if n == 0:
        return Kappa(0, None, None, Interval.none("no scored cases"))
    po = float(np.mean(x == y))
    pe = float(np.mean(x) * np.mean(y) + (1 - np.mean(x)) * (1 - np.mean(y)))
    if pe >= 1.0:
        return Kappa(
            n, po, None, Interval.none("labels and judge both give one class only: kappa undefined")
        )
    kappa = (po - pe) / (1 - pe)
    se = math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))
    if se == 0:
        return Kappa(
            n, po, float(kappa), Interval.none("perfect agreement: the standard error is 0")
        )
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    ci = Interval(max(-1.0, kappa - z * se), min(1.0, kappa + z * se), "analytic_se")
    return Kappa(n, po, float(kappa), ci)
