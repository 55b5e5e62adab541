"""Coverage of gtog's intervals, computed with gtog's own interval functions.

Win rates: exact. Every record (wins, ties, losses) of n comparisons gets its interval from
`win_rate_interval`; the coverage at true rates (p_win, p_tie) is the multinomial
probability of the records whose interval holds p_win + p_tie / 2. No sampling noise.

Means of fractional scores: seeded simulation. Samples of n scores from each distribution of
`SCORE_DISTRIBUTIONS` (shapes of token and evidence recall: beta curves, masses at 0 and
1, a few discrete levels), each given its interval by `mean_interval`; the coverage is the
share whose interval holds the true mean. A sample without an interval counts as a miss.

Used by tests/unit/eval/test_intervals.py (a fast version) and
benchmarks/interval_coverage.py (the full table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlogy

from gtog.eval.results._statistics import Interval, mean_interval, win_rate_interval

__all__ = [
    "SCORE_DISTRIBUTIONS",
    "Distribution",
    "mean_coverage",
    "rate_grid",
    "records",
    "win_rate_coverage",
]


def records(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (wins, ties, losses) of n comparisons."""
    w, t = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = w + t <= n
    w, t = w[keep], t[keep]
    return w, t, n - w - t


def rate_grid(win_step: float, tie_rates: list[float]) -> list[tuple[float, float]]:
    """(p_win, p_tie) with p_win + p_tie <= 1: each tie rate, win rates every `win_step`."""
    out = []
    for pt in tie_rates:
        steps = round((1 - pt) / win_step)
        out += [(round(i * win_step, 6), pt) for i in range(steps + 1)]
    return out


def win_rate_coverage(
    n: int,
    grid: list[tuple[float, float]],
    interval: Callable[[int, int, int], Interval] = win_rate_interval,
) -> list[tuple[float, float, float]]:
    """(coverage, p_win, p_tie) of `interval(wins, ties, n)` at each true rate of `grid`."""
    w, t, losses = records(n)
    bounds = [interval(int(a), int(b), n) for a, b in zip(w, t, strict=True)]
    low = np.array([np.nan if b.low is None else b.low for b in bounds])
    high = np.array([np.nan if b.high is None else b.high for b in bounds])
    log_count = gammaln(n + 1) - gammaln(w + 1) - gammaln(t + 1) - gammaln(losses + 1)
    out = []
    for p_win, p_tie in grid:
        p_loss = max(0.0, 1.0 - p_win - p_tie)
        pmf = np.exp(log_count + xlogy(w, p_win) + xlogy(t, p_tie) + xlogy(losses, p_loss))
        rate = p_win + p_tie / 2
        holds = (low <= rate + 1e-12) & (rate - 1e-12 <= high)  # NaN (no interval): a miss
        out.append((float(pmf[holds].sum()), p_win, p_tie))
    return out


@dataclass(frozen=True)
class Distribution:
    """Scores in [0, 1]: a name, a sampler (rng, size) -> array, and the true mean."""

    name: str
    sample: Callable[[np.random.Generator, tuple[int, int]], np.ndarray]
    mean: float


def _beta(a: float, b: float) -> Distribution:
    return Distribution(f"beta({a:g}, {b:g})", lambda rng, size: rng.beta(a, b, size), a / (a + b))


def _masses(at0: float, at1: float, a: float = 2, b: float = 2) -> Distribution:
    """`at0` of the scores are 0, `at1` are 1, the rest beta(a, b)."""

    def sample(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        u, x = rng.random(size), rng.beta(a, b, size)
        return np.where(u < at0, 0.0, np.where(u < at0 + at1, 1.0, x))

    mean = at1 + (1 - at0 - at1) * a / (a + b)
    return Distribution(f"{at0:g} at 0, {at1:g} at 1, else beta({a:g}, {b:g})", sample, mean)


def _levels(levels: list[float], probs: list[float]) -> Distribution:
    values, p = np.asarray(levels), np.asarray(probs)
    name = "levels " + ", ".join(f"{v:.2g}: {q:g}" for v, q in zip(levels, probs, strict=True))
    return Distribution(name, lambda rng, size: rng.choice(values, size, p=p), float(values @ p))


_BETAS = [(0.5, 0.5), (1, 1), (2, 2), (5, 5), (2, 5), (5, 2), (0.5, 2), (2, 0.5), (1, 3), (3, 1)]
_ENDS = [(0.3, 0.3), (0.5, 0.2), (0.2, 0.5), (0.1, 0.6), (0.6, 0.1), (0.05, 0.7), (0.7, 0.05)]
SCORE_DISTRIBUTIONS: list[Distribution] = [
    *(_beta(a, b) for a, b in _BETAS),
    *(_masses(a, b) for a, b in _ENDS),
    _masses(0.2, 0.2, 5, 2),
    _levels([0, 1 / 3, 2 / 3, 1], [0.25, 0.25, 0.25, 0.25]),
    _levels([0, 0.5, 1], [0.2, 0.3, 0.5]),
    _levels([0, 0.5, 1], [0.5, 0.3, 0.2]),
    _levels([0, 0.25, 0.5, 0.75, 1], [0.1, 0.1, 0.2, 0.3, 0.3]),
]
"""Shapes of fractional scores: at most 70% of them at 0 or at 1, never all 0/1 (0/1 scores
get Wilson's interval). Beyond this family (80-90% at one end) coverage at small n is lower:
benchmarks/interval_coverage.py reports those too."""

BEYOND = [_masses(0.0, 0.8), _masses(0.05, 0.8), _masses(0.0, 0.9)]
"""Heavier ends than the family: reported, not part of the rule."""


def _seeded(dist: Distribution, n: int, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, n, sum(map(ord, dist.name))])


def mean_coverage(dist: Distribution, n: int, reps: int, seed: int = 31) -> tuple[float, float]:
    """(coverage, share without an interval) of `mean_interval` on `reps` seeded samples."""
    samples = dist.sample(_seeded(dist, n, seed), (reps, n))
    held = missing = 0
    for row in samples:
        ci = mean_interval(row.tolist())
        if ci.low is None or ci.high is None:
            missing += 1
        elif ci.low <= dist.mean <= ci.high:
            held += 1
    return held / reps, missing / reps


def each_sample(dist: Distribution, n: int, reps: int, seed: int = 31) -> Iterator[np.ndarray]:
    """The samples `mean_coverage` draws (for comparing other intervals on the same data)."""
    yield from dist.sample(_seeded(dist, n, seed), (reps, n))
