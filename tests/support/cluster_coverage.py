"""Coverage of gtog's clustered intervals, and false alarms of its paired tests, when
questions come in clusters with a known intra-cluster correlation (ICC).

Each scenario draws seeded samples of `clusters` clusters of questions: `size` questions
each, or (size 0) between 1 and 39 (mean 20: clusters of very unequal size). A cluster's
own level is drawn from a beta distribution around the true mean whose spread gives the
ICC; its questions then vary around it:

- 0/1 scores: a question is right with its cluster's probability (a beta-binomial; the ICC
  of the scores is `icc` exactly);
- fractional scores: beta(mu_g kappa, (1 - mu_g) kappa) around the cluster's mean mu_g,
  the cluster spread chosen so that the ICC of the scores is `icc`;
- paired scores of two methods: each cluster has method a's level p_g and method b's
  w p_g + (1 - w) q_g (q_g independent, of the same ICC): the methods share part of what
  makes a cluster easy or hard. The true difference is (1 - w)(mean_a - mean_q).

Clustered intervals are the summary's own vectorised functions (`clustered.mean_bounds`,
`newcombe_bounds` at the effective n, `diff_bounds`); the naive ones are the same formulas
at the full n (Wilson; Hall's t; Newcombe; Student's t of the differences, which is what
gtog's bootstrap interval approximates). Used by tests/unit/eval/test_clustered.py (fast)
and benchmarks/cluster_coverage.py (the full table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from gtog.eval.results._clustered import (
    ClusterSums,
    bell_mccaffrey_df,
    cluster_sign_flip,
    diff_bounds,
    effective_n,
    mean_bounds,
    newcombe_bounds,
    skew_t_bounds_at,
    t_quantile,
    wilson_bounds,
)

__all__ = ["Scenario", "coverage", "false_alarms"]

Z = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class Scenario:
    """One simulated design: what is scored, the clusters, the ICC and the true means."""

    kind: str
    """`mean01`, `mean` (fractional), `diff01` or `diff` (fractional)."""
    clusters: int
    size: int
    """Questions per cluster; 0: 1 to 39 at random (mean 20)."""
    icc: float
    mean: float
    """The mean (means), or method a's mean (differences)."""
    other: float = 0.0
    """Differences: the mean of the independent part q_g of method b's level."""
    shared: float = 0.5
    """Differences: w, how much of method b's cluster level is method a's."""
    kappa: float = 4.0
    """Fractional scores: how tightly a question's score sits around its cluster's mean."""

    @property
    def truth(self) -> float:
        if self.kind.startswith("diff"):
            return (1 - self.shared) * (self.mean - self.other)
        return self.mean

    @property
    def label(self) -> str:
        size = "1-39" if self.size == 0 else str(self.size)
        return f"{self.kind} k={self.clusters} m={size} icc={self.icc:g} mean={self.mean:g}"


def _cluster_levels(
    rng: np.random.Generator, mean: float, rho: float, shape: tuple[int, ...]
) -> np.ndarray:
    """Beta draws of mean `mean` whose variance is rho mean (1 - mean)."""
    if rho <= 0:
        return np.full(shape, mean)
    s = (1 - rho) / rho
    return np.clip(rng.beta(mean * s, (1 - mean) * s, shape), 1e-9, 1 - 1e-9)


def _level_rho(sc: Scenario) -> float:
    """The cluster-level spread that gives fractional scores the scenario's ICC."""
    if not sc.kind.endswith("01") and sc.icc > 0:
        inner = sc.icc / (sc.kappa + 1)
        return inner / ((1 - sc.icc) + inner)
    return sc.icc


def _mask(rng: np.random.Generator, sc: Scenario, reps: int) -> tuple[np.ndarray, int]:
    width = 39 if sc.size == 0 else sc.size
    sizes = (
        rng.integers(1, 40, (reps, sc.clusters))
        if sc.size == 0
        else np.full((reps, sc.clusters), sc.size)
    )
    return np.arange(width) < sizes[..., None], width


def _scores(rng: np.random.Generator, sc: Scenario, level: np.ndarray, width: int) -> np.ndarray:
    shape = (*level.shape, width)
    if sc.kind.endswith("01"):
        return (rng.random(shape) < level[..., None]).astype(float)
    g = level[..., None]
    return rng.beta(g * sc.kappa, (1 - g) * sc.kappa, shape)


def draw(sc: Scenario, reps: int, seed: int = 34) -> tuple[np.ndarray, ...]:
    """(mask, scores) for means, (mask, a, b) for differences: arrays (reps, clusters, 39
    or size)."""
    rng = np.random.default_rng([seed, *map(ord, sc.label), round(sc.shared * 10), round(sc.kappa)])
    mask, width = _mask(rng, sc, reps)
    rho = _level_rho(sc)
    level = _cluster_levels(rng, sc.mean, rho, (reps, sc.clusters))
    if not sc.kind.startswith("diff"):
        return mask, _scores(rng, sc, level, width)
    other = _cluster_levels(rng, sc.other, rho, (reps, sc.clusters))
    b_level = sc.shared * level + (1 - sc.shared) * other
    return mask, _scores(rng, sc, level, width), _scores(rng, sc, b_level, width)


def _held(low: np.ndarray, high: np.ndarray, truth: float) -> float:
    return float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))


def coverage(sc: Scenario, reps: int, seed: int = 34) -> tuple[float, float]:
    """(naive, clustered) share of `reps` seeded samples whose interval holds the truth."""
    drawn = draw(sc, reps, seed)
    mask = drawn[0]
    if sc.kind.startswith("mean"):
        c = ClusterSums.of_blocks(drawn[1], mask)
        binary = sc.kind == "mean01"
        n = c.total
        mean, sd, skew = c.moments()
        naive = wilson_bounds(mean, n, Z) if binary else skew_t_bounds_at(mean, sd, skew, n, n - 1)
        return _held(*naive, sc.truth), _held(*mean_bounds(c, binary), sc.truth)
    a, b = drawn[1], drawn[2]
    c = ClusterSums.of_blocks(a - b, mask)
    n = c.total
    if sc.kind == "diff01":
        w = mask.astype(float)
        counts = [
            (w * p * q).sum((-1, -2)) for p, q in ((a, b), (a, 1 - b), (1 - a, b), (1 - a, 1 - b))
        ]
        naive = newcombe_bounds(*counts, n, Z)
        clustered = newcombe_bounds(*counts, effective_n(c), t_quantile(bell_mccaffrey_df(c)))
        return _held(*naive, sc.truth), _held(*clustered, sc.truth)
    mean, sd, _ = c.moments()
    half = t_quantile(n - 1) * sd / np.sqrt(n)
    return _held(mean - half, mean + half, sc.truth), _held(*diff_bounds(c), sc.truth)


def false_alarms(sc: Scenario, reps: int, seed: int = 34) -> tuple[float, float]:
    """(McNemar's, the cluster sign-flip test's) share of p < 0.05 on 0/1 scores of two
    methods that do not differ (the scenario's `other` should equal its `mean`)."""
    mask, a, b = draw(sc, reps, seed)
    naive = clustered = 0
    codes = np.repeat(np.arange(sc.clusters), mask.shape[-1])
    for m, x, y in zip(mask, a, b, strict=True):
        keep = m.ravel()
        d = (x - y).ravel()[keep]
        only_a, only_b = int(np.sum(d > 0)), int(np.sum(d < 0))
        if only_a + only_b and stats.binomtest(only_a, only_a + only_b).pvalue < 0.05:
            naive += 1
        if cluster_sign_flip(d, codes[keep], sc.clusters) < 0.05:
            clustered += 1
    return naive / reps, clustered / reps
