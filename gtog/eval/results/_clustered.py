"""Clustered statistics: intervals and paired tests when questions come in clusters.

Questions about one index (or sharing a dataset field, `statistics.cluster_by`) succeed or
fail together: if the index is poor, every method's answers to its questions are poor. A
mean over 100 such questions knows less than one over 100 independent questions, and an
interval that treats them as independent is too narrow. Pure functions of the values and
their clusters.

The rule (coverage checked by `benchmarks/cluster_coverage.py`):

- the design effect is the bias-reduced cluster-robust variance of the mean (CR2, Bell &
  McCaffrey 2002) over the naive one (s^2 / n); the effective sample size is n / design
  effect (never more than n; each cluster counts as one question when the values have no
  spread: nothing then shows how alike a cluster's questions are);
- degrees of freedom: Bell & McCaffrey's (k - 1 for clusters of equal size, fewer when
  sizes differ);
- a mean of fractional scores: Hall's skewness-corrected t at the effective n; of 0/1
  scores: the wider, at each end, of that and Wilson's interval at the effective n with
  the t quantile;
- a paired difference of 0/1 scores: Newcombe's interval at the effective n (of the
  differences); of fractional scores: mean ± t * the CR2 standard error;
- a paired test flips the sign of whole clusters' differences (`scipy.stats.
  permutation_test` on the clusters' totals: exact up to 13 clusters);
- below `MIN_CLUSTERS` clusters none of this holds (the caller shows the naive figures and
  says so).

Functions over `ClusterSums` work elementwise on arrays of them (the last axis is the
clusters), so a simulation runs the same code as a summary.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from gtog.eval.results._statistics import CONFIDENCE, N_RESAMPLES, SEED

__all__ = [
    "MIN_CLUSTERS",
    "ClusterSums",
    "bell_mccaffrey_df",
    "cluster_codes",
    "cluster_sign_flip",
    "design_effect",
    "diff_bounds",
    "effective_n",
    "icc",
    "mean_bounds",
    "newcombe_bounds",
    "skew_t_bounds_at",
    "t_quantile",
    "wilson_bounds",
]

MIN_CLUSTERS = 6
"""Fewest clusters for clustered intervals and tests: from 6 on they held >= 93% coverage
in every simulated case (`benchmarks/cluster_coverage.py`), and a sign-flip test of 6
clusters can reach p < 0.05 (2 / 2^6); with fewer it cannot."""


def cluster_codes(labels: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """(code per value in 0..k-1, k) for cluster labels, in order of first appearance."""
    seen: dict[Hashable, int] = {}
    codes = np.array([seen.setdefault(label, len(seen)) for label in labels], dtype=int)
    return codes, len(seen)


@dataclass(frozen=True)
class ClusterSums:
    """Per cluster: size and the sums of x, x^2 and x^3 (arrays, clusters on the last axis;
    an empty cluster has size 0 and counts for nothing)."""

    n: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    s3: np.ndarray

    @classmethod
    def of(cls, values: Sequence[float], codes: np.ndarray, k: int) -> ClusterSums:
        """The sums of one sample: `values[i]` in cluster `codes[i]` of `k`."""
        x = np.asarray(values, dtype=float)
        return cls(
            np.bincount(codes, minlength=k).astype(float),
            np.bincount(codes, x, minlength=k),
            np.bincount(codes, x**2, minlength=k),
            np.bincount(codes, x**3, minlength=k),
        )

    @classmethod
    def of_blocks(cls, x: np.ndarray, mask: np.ndarray | None = None) -> ClusterSums:
        """The sums of samples laid out as (..., clusters, members); `mask` marks the
        members present (clusters of unequal size)."""
        w = np.ones_like(x) if mask is None else mask.astype(float)
        return cls(w.sum(-1), (w * x).sum(-1), (w * x**2).sum(-1), (w * x**3).sum(-1))

    @property
    def total(self) -> np.ndarray:
        """Values in all clusters."""
        return self.n.sum(-1)

    @property
    def clusters(self) -> np.ndarray:
        """Clusters holding at least one value."""
        return (self.n > 0).sum(-1)

    @property
    def mean(self) -> np.ndarray:
        """Mean of all the values."""
        with np.errstate(all="ignore"):
            return self.s1.sum(-1) / self.total

    def moments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, standard deviation (n - 1) and skewness of all the values (as
        `statistics.sample_moments`)."""
        n, mean = self.total, self.mean
        s2 = self.s2.sum(-1)
        with np.errstate(all="ignore"):
            ss = s2 - n * mean**2
            third = (self.s3.sum(-1) - 3 * mean * s2) / n + 2 * mean**3
            sd = np.sqrt(np.maximum(ss, 0.0) / (n - 1))
            skew = np.where(sd > 0, third / sd**3, 0.0)
        return mean, sd, skew


def _weights(c: ClusterSums) -> np.ndarray:
    """CR2's weight of each cluster's squared residual total: 1 / (1 - n_g / n)."""
    with np.errstate(all="ignore"):
        return np.where(c.n > 0, 1.0 / (1.0 - c.n / c.total[..., None]), 0.0)


def design_effect(c: ClusterSums) -> np.ndarray:
    """CR2 variance of the mean over the naive variance s^2 / n:
    [sum_g e_g^2 / (1 - n_g / n)] (n - 1) / (n sum_i e_i^2), with e the residuals and e_g a
    cluster's total of them (1 when every cluster holds one value). NaN when the values
    have no spread or there are fewer than 2 clusters."""
    n, k, mean = c.total, c.clusters, c.mean
    with np.errstate(all="ignore"):
        within = np.maximum(c.s2.sum(-1) - n * mean**2, 0.0)
        between = (_weights(c) * (c.s1 - c.n * mean[..., None]) ** 2).sum(-1)
        deff = between * (n - 1) / (n * within)
    return np.where((within > 1e-12 * np.maximum(n, 1)) & (k >= 2), deff, np.nan)


def bell_mccaffrey_df(c: ClusterSums) -> np.ndarray:
    """Bell & McCaffrey's degrees of freedom of the CR2 variance of a mean (working
    independence): (tr B)^2 / tr(B^2), B = diag(a) - b b' / n with a_g = n_g / (1 - n_g / n)
    and b_g = n_g / sqrt(1 - n_g / n) (the Gram matrix of CR2's cluster contrasts, times
    n^2). k - 1 for clusters of equal size, fewer the more their sizes differ; NaN below
    2 clusters."""
    n, w = c.total, _weights(c)
    a, b2 = w * c.n, w * c.n**2
    with np.errstate(all="ignore"):
        trace = a.sum(-1) - b2.sum(-1) / n
        frob = (a**2).sum(-1) - 2 * (a * b2).sum(-1) / n + b2.sum(-1) ** 2 / n**2
        df = trace**2 / frob
    return np.where(c.clusters >= 2, df, np.nan)


def icc(c: ClusterSums) -> np.ndarray:
    """Intra-cluster correlation, the one-way ANOVA estimator for unequal cluster sizes:
    (MSB - MSW) / (MSB + (n0 - 1) MSW), n0 = (n - sum n_g^2 / n) / (k - 1). NaN when it is
    undefined (fewer than 2 clusters, every cluster of 1, no spread)."""
    n, k, mean = c.total, c.clusters, c.mean
    with np.errstate(all="ignore"):
        by_cluster = np.where(c.n > 0, c.s1**2 / np.where(c.n > 0, c.n, 1.0), 0.0).sum(-1)
        msb = (by_cluster - n * mean**2) / (k - 1)
        msw = (c.s2.sum(-1) - by_cluster) / (n - k)
        n0 = (n - (c.n**2).sum(-1) / n) / (k - 1)
        out = (msb - msw) / (msb + (n0 - 1) * msw)
    return np.where((k >= 2) & (n > k) & np.isfinite(out), out, np.nan)


def effective_n(c: ClusterSums) -> np.ndarray:
    """n / max(1, design effect); k (one per cluster) when the values have no spread."""
    deff = design_effect(c)
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(deff), c.total / np.maximum(deff, 1.0), c.clusters * 1.0)


def t_quantile(df: np.ndarray | float, confidence: float = CONFIDENCE) -> np.ndarray:
    """Student's t quantile of a two-sided interval on `df` degrees of freedom."""
    from scipy import stats

    return np.asarray(stats.t.ppf(0.5 + confidence / 2, df), dtype=float)


def wilson_bounds(
    p: np.ndarray | float, n: np.ndarray | float, q: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds of a proportion `p` of `n` (fractional: an effective n) with the
    quantile `q` in place of z, elementwise; within [0, 1]."""
    p, n, q = (np.asarray(v, dtype=float) for v in (p, n, q))
    with np.errstate(all="ignore"):
        r = q**2 / n
        centre = (p + r / 2) / (1 + r)
        half = q * np.sqrt(p * (1 - p) / n + r / (4 * n)) / (1 + r)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def skew_t_bounds_at(
    mean: np.ndarray | float,
    sd: np.ndarray | float,
    skew: np.ndarray | float,
    n: np.ndarray | float,
    df: np.ndarray | float,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """Hall's skewness-corrected t bounds (`statistics.skew_t_bounds`) at a sample size
    `n` (an effective n) with Student's t on `df` degrees of freedom; within [0, 1]."""
    mean, sd, g, n = (np.asarray(v, dtype=float) for v in (mean, sd, skew, n))
    with np.errstate(all="ignore"):
        q = t_quantile(df, confidence) / np.sqrt(n)
        flat = np.abs(g) < 1e-12
        a = np.where(flat, 1.0, g / 3)

        def inverse(y: np.ndarray) -> np.ndarray:
            corrected = (np.cbrt(1 + 3 * a * (y - g / (6 * n))) - 1) / a
            return np.where(flat, y, corrected)

        low, high = mean - sd * inverse(q), mean - sd * inverse(-q)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def mean_bounds(
    c: ClusterSums, binary: bool, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """The clustered interval of a mean (see the module): the skewness-corrected t at the
    effective n; for 0/1 scores, widened at each end to Wilson's at the effective n."""
    mean, sd, skew = c.moments()
    n_eff, df = effective_n(c), bell_mccaffrey_df(c)
    low, high = skew_t_bounds_at(mean, sd, skew, n_eff, df, confidence)
    if not binary:
        return low, high
    w_low, w_high = wilson_bounds(mean, n_eff, t_quantile(df, confidence))
    return np.fmin(low, w_low), np.fmax(high, w_high)


def newcombe_bounds(
    both: np.ndarray | float,
    only_a: np.ndarray | float,
    only_b: np.ndarray | float,
    neither: np.ndarray | float,
    n_eff: np.ndarray | float,
    q: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's (1998, method 10) interval of p_a - p_b for paired 0/1 scores from the
    four counts, with both Wilson intervals at the sample size `n_eff` and quantile `q`
    (the counts themselves at z and n: `statistics.newcombe_paired_interval`)."""
    both, only_a, only_b, neither = (
        np.asarray(v, dtype=float) for v in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_bounds(p1, n_eff, q)
    l2, u2 = wilson_bounds(p2, n_eff, q)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    with np.errstate(all="ignore"):
        phi = np.where(margins > 0, (both * neither - only_a * only_b) / np.sqrt(margins), 0.0)
    diff = p1 - p2
    lower = np.sqrt(
        np.maximum(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    upper = np.sqrt(
        np.maximum(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return np.maximum(-1.0, diff - lower), np.minimum(1.0, diff + upper)


def diff_bounds(c: ClusterSums, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Interval of the mean of paired differences (in [-1, 1]) summarised by `c`: mean ±
    t(Bell-McCaffrey df) * the CR2 standard error (never below the naive one)."""
    mean, sd, _ = c.moments()
    with np.errstate(all="ignore"):
        half = t_quantile(bell_mccaffrey_df(c), confidence) * sd / np.sqrt(effective_n(c))
    return np.maximum(-1.0, mean - half), np.minimum(1.0, mean + half)


def cluster_sign_flip(d: Sequence[float], codes: np.ndarray, k: int, seed: int = SEED) -> float:
    """Two-sided p-value of a mean paired difference of 0, flipping the sign of whole
    clusters' totals (scipy's paired permutation test over the clusters: exact up to 13
    clusters, else 9,999 seeded resamples); 1 when every difference is 0."""
    from scipy import stats

    x = np.asarray(d, dtype=float)
    if np.all(x == 0):
        return 1.0
    totals = np.bincount(codes, x, minlength=k)[np.bincount(codes, minlength=k) > 0]
    res = stats.permutation_test(
        (totals, np.zeros_like(totals)),
        lambda a, b, axis=-1: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=N_RESAMPLES,
        rng=np.random.default_rng(seed),
    )
    return min(1.0, float(res.pvalue))
