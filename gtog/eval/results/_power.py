"""Power of a paired comparison: the smallest difference a study can detect, and the
questions a chosen difference needs. Pure functions.

The summary's `mde` (`detectable`) is for the test the summary runs and the adjustment its
table applies: Holm over the table's N tests, so a comparison is sure to count only at p <
0.05 / N (Holm's first step; the bar this comparison must pass whatever the others say):

- 0/1 scores, questions independent: the exact McNemar test, its power summed exactly
  over the number of discordant questions (binomial with the observed discordance) and
  the split of them (binomial with (1 + delta / discordance) / 2);
- clustered (the cluster sign-flip test), and fractional scores (the paired permutation
  test: a sign flip of each question): by simulation when there are at most
  `SIMULATE_UP_TO` clusters (or questions), seeded, each simulated study tested by the
  same sign flip (every sign pattern up to 11 clusters, 1,023 or more seeded ones beyond)
  and the 80% point found by bisection on common random numbers. Fractional scores:
  normal cluster totals n_g delta + sd sqrt(n_g (1 + (n_g - 1) icc)) z. 0/1 scores: each
  cluster's difference delta + tau z (tau^2 = icc (discordance - delta^2), clipped to the
  discordance), each question a gain or a loss with the probabilities that gives, so the
  totals are integers and their ties count as the test counts them. Beyond
  `SIMULATE_UP_TO`, the noncentral t on clusters - 1 degrees of freedom. The smallest p
  a sign flip of k clusters can give is 2 / 2^k (an exact test): when that is above
  0.05 / N no difference is detectable, and `reason` says so. Results are cached (the
  same clusters, discordance and correlation to 2 decimals give the same answer).

Achieved power at the reported `mde` is checked by `benchmarks/power.py` (the summary's
own tests run on simulated data; results in benchmarks/results/power.json).

`questions_needed` (`gtog eval --plan`) and `detectable_difference` are the normal-theory
formulas below, with Student's t on the comparison's degrees of freedom.

0/1 scores (McNemar's setting, Connor 1987): with a share `d` of questions on which the
two methods disagree (the discordance), a true difference delta is detected with power
1 - beta when sqrt(n) delta = q_a sqrt(d) + q_b sqrt(d - delta^2), q_a and q_b the
quantiles of 1 - alpha/2 and 1 - beta. Solved for delta:

    delta = sqrt(d) (q_a sqrt(n) + q_b sqrt(n - q_a^2 + q_b^2)) / (n + q_b^2)

and for n: n = (q_a sqrt(d) + q_b sqrt(d - delta^2))^2 / delta^2. Fractional scores: with
s the standard deviation of the per-question differences, delta = (q_a + q_b) s / sqrt(n).
With clusters, n is the effective sample size (n / design effect) and the quantiles are
Student's t on the clustered degrees of freedom; a plan for more questions keeps the
clusters' size m and the differences' intra-cluster correlation rho, so its design effect
is 1 + (m - 1) rho.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "ALPHA",
    "POWER",
    "SIMULATE_UP_TO",
    "Detectable",
    "Needed",
    "binary_sign_flip_power",
    "detectable",
    "detectable_difference",
    "detectable_for",
    "mcnemar_power",
    "questions_needed",
    "sign_flip_power",
    "smallest_sign_flip_p",
]

ALPHA = 0.05
"""Two-sided level of the test a detectable difference is computed for."""
POWER = 0.8
"""Power a detectable difference is computed for."""


def _quantiles(df: float | None) -> tuple[float, float]:
    """(q_a, q_b): Student's t (normal when df is None or infinite)."""
    from scipy import stats

    if df is None or not math.isfinite(df):
        return float(stats.norm.ppf(1 - ALPHA / 2)), float(stats.norm.ppf(POWER))
    return float(stats.t.ppf(1 - ALPHA / 2, df)), float(stats.t.ppf(POWER, df))


@dataclass(frozen=True)
class Detectable:
    """The minimum detectable difference (None with the reason when there is none)."""

    mde: float | None
    reason: str | None = None
    tests: int = 1
    """The Holm family it allows for (the summary's table: its N tests)."""


SIMULATE_UP_TO = 30
"""Clusters (or independent questions of fractional scores) up to which the power of the
sign-flip test is simulated; beyond, the noncentral t."""
SIMULATIONS = 2000
"""Simulated studies per power point (seeded; one set of random numbers for every delta)."""
EXACT_PATTERNS_UP_TO = 11
"""Clusters up to which the simulated sign flip uses every sign pattern (2^k of them)."""
SAMPLED_PATTERNS = 2047
SEED = 20240613


def _level(tests: int) -> float:
    return ALPHA / max(1, int(tests))


def _after(tests: int) -> str:
    return f"after Holm over {tests} tests" if tests > 1 else "with no other test"


def _bar(tests: int) -> str:
    """`0.05` or `0.05/40 = 0.00125 (Holm over 40 tests)`: the p a comparison must reach."""
    if tests <= 1:
        return f"{ALPHA:g}"
    return f"{ALPHA:g}/{tests} = {_level(tests):.3g} (Holm over {tests} tests)"


def smallest_sign_flip_p(k: int) -> float:
    """The smallest two-sided p a sign-flip test of `k` clusters can give: 2 / 2^k exactly
    (every sign pattern); 2 / 10,000 once scipy draws 9,999 patterns (14 clusters on)."""
    return 2.0 / 2**k if 2**k <= 9999 else 2.0 / 10_000


@lru_cache(maxsize=64)
def _patterns(k: int, sampled: int = SAMPLED_PATTERNS) -> np.ndarray:
    """Sign patterns (rows; the first all +1): every one up to EXACT_PATTERNS_UP_TO
    clusters, else `sampled` seeded ones besides."""
    if k <= EXACT_PATTERNS_UP_TO:
        bits = (np.arange(2**k)[:, None] >> np.arange(k)) & 1
        out = 1.0 - 2.0 * bits  # row 0: all +1
    else:
        rng = np.random.default_rng(SEED + k)
        out = np.vstack([np.ones(k), rng.choice([-1.0, 1.0], size=(sampled, k))])
    return out


@lru_cache(maxsize=256)
def _flip_setup(sizes: tuple[int, ...], icc: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(A, B, N) of the simulated studies: a pattern's statistic for a standardised
    difference r is |r A_p + B_sp| (s: the simulation), the observed one pattern 0's."""
    n = np.asarray(sizes, dtype=float)
    signs = _patterns(len(sizes))
    sd = np.sqrt(n * (1.0 + (n - 1.0) * max(0.0, icc)))
    z = np.random.default_rng(SEED).standard_normal((SIMULATIONS, len(sizes)))
    a, b = signs @ n, (z * sd) @ signs.T
    return a.astype(np.float32), b.astype(np.float32), float(n.sum())


def sign_flip_power(r: float, sizes: tuple[int, ...], icc: float, tests: int = 1) -> float:
    """Simulated power of the sign-flip test at p <= 0.05 / `tests` for clusters of
    `sizes` whose differences have mean `r` standard deviations and intra-cluster
    correlation `icc` (normal cluster totals; see the module docstring)."""
    a, b, _ = _flip_setup(sizes, round(icc, 3))
    stat = np.abs(np.float32(r) * a[None, :] + b)
    observed = stat[:, :1]
    p = (stat >= observed * np.float32(1 - 1e-6)).sum(axis=1) / stat.shape[1]
    return float(np.mean(p <= _level(tests) * (1 + 1e-9)))


def _nct_power(r: float, sizes: tuple[int, ...], icc: float, tests: int) -> float:
    from scipy import stats

    n = np.asarray(sizes, dtype=float)
    var = float(np.sum(n * (1.0 + (n - 1.0) * max(0.0, icc))))
    ncp, df = r * n.sum() / math.sqrt(var), len(sizes) - 1
    q = float(stats.t.ppf(1 - _level(tests) / 2, df))
    power = float(stats.nct.sf(q, df, ncp) + stats.nct.cdf(-q, df, ncp))
    return power if math.isfinite(power) else float(ncp > q)  # scipy's nct: NaN far out


def _bisect(power: Callable[[float], float], low: float, high: float, tolerance: float) -> float:
    """The smallest difference in [low, high] whose (simulated, noisy) `power` reaches
    POWER, halving at most 30 times, to within `tolerance` of it; `high` has that power."""
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (mid, high) if power(mid) < POWER else (low, mid)
        if high - low < tolerance * high:
            break
    return high


@lru_cache(maxsize=1024)
def _standardised(sizes: tuple[int, ...], icc: float, tests: int) -> float | None:
    """The difference, in standard deviations of a question's difference, detected with
    POWER (None: none is, however large)."""
    from scipy import optimize

    simulate = len(sizes) <= SIMULATE_UP_TO
    if simulate:

        def power(r: float) -> float:
            return sign_flip_power(r, sizes, icc, tests)
    else:

        def power(r: float) -> float:
            return _nct_power(r, sizes, icc, tests)

    high = 1.0
    while power(high) < POWER:
        high *= 2
        if high > 1e4:
            return None
    low = 0.0
    if not simulate:
        return float(optimize.brentq(lambda r: power(r) - POWER, low, high, xtol=1e-6))
    return _bisect(power, low, high, 5e-3)


def _flipped_sums(totals: np.ndarray, tests: int) -> np.ndarray:
    """Each row's sum under every sign pattern (column 0: all +1), built by doubling up
    to EXACT_PATTERNS_UP_TO clusters; else under seeded sampled patterns (1,023, or 4,095
    past 20 tests: the p resolution stays under 0.05 / tests)."""
    k = totals.shape[1]
    if k > EXACT_PATTERNS_UP_TO:
        signs = _patterns(k, 1023 if tests <= 20 else 4095).astype(np.float32)
        return totals @ np.ascontiguousarray(signs.T)
    out = totals[:, :1]
    for j in range(1, k):
        col = totals[:, j : j + 1]
        out = np.concatenate([out + col, out - col], axis=1)
    return np.concatenate([out, -out], axis=1)


@lru_cache(maxsize=16)
def _binary_draws(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded draws of the 0/1 simulation (one set for every delta): a uniform per
    question, a normal per cluster, and where each cluster's questions start."""
    rng = np.random.default_rng(SEED)
    runs = max(200, min(SIMULATIONS // 2, 2_000_000 // max(1, sum(sizes))))
    u = rng.random((runs, sum(sizes)), dtype=np.float32)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return u, rng.standard_normal((runs, len(sizes))), starts


def binary_sign_flip_power(
    delta: float, sizes: tuple[int, ...], disc: float, icc: float, tests: int = 1
) -> float:
    """Simulated power of the sign-flip test at p <= 0.05 / `tests` for 0/1 scores in
    clusters of `sizes`: per cluster a true difference delta + tau z (clipped to the
    discordance; tau^2 = icc (disc - delta^2)), each question a gain with probability
    (disc + that) / 2 and a loss with (disc - that) / 2, so the cluster totals are
    integers, as the data's are (ties count against the observed sum, as in the test)."""
    u, z, starts = _binary_draws(sizes)
    tau = math.sqrt(max(0.0, icc * (disc - delta * delta)))
    shift = np.clip(delta + tau * z, -disc, disc)
    up = np.repeat(((disc + shift) / 2).astype(np.float32), sizes, axis=1)
    d = (u < up).astype(np.float32) - ((u >= up) & (u < np.float32(disc)))
    totals = np.add.reduceat(d, starts, axis=1)
    stat = np.abs(_flipped_sums(totals, tests))
    p = (stat >= stat[:, :1] - 0.5).sum(axis=1) / stat.shape[1]  # integer sums
    return float(np.mean(p <= _level(tests) * (1 + 1e-9)))


@lru_cache(maxsize=1024)
def _binary_delta(sizes: tuple[int, ...], disc: float, icc: float, tests: int) -> float | None:
    """The difference of 0/1 scores in clusters of `sizes` detected with POWER by the
    sign-flip test (simulated, `binary_sign_flip_power`; None: not even delta = disc)."""

    def power(delta: float) -> float:
        return binary_sign_flip_power(delta, sizes, disc, icc, tests)

    if power(disc) < POWER:
        return None
    return _bisect(power, 0.0, disc, 1e-2)


def mcnemar_power(delta: float, n: int, discordance: float, tests: int = 1) -> float:
    """Exact power of the two-sided exact McNemar test at p <= 0.05 / `tests` for `n`
    independent questions, a share `discordance` of them discordant, and a true difference
    `delta` (summed over the discordant count and its split; no simulation)."""
    from scipy import stats

    level = _level(tests)
    d = np.arange(n + 1)
    # the largest c with 2 P(X <= c) <= level, X ~ Bin(D, 1/2): reject at x <= c or x >= D - c
    c = stats.binom.ppf(level / 2, d, 0.5)
    c = np.where(2 * stats.binom.cdf(c, d, 0.5) <= level * (1 + 1e-12), c, c - 1)
    q = min(1.0, max(0.0, (1 + delta / discordance) / 2))
    # c < D / 2 at any level below 1: the two tails never overlap
    reject = np.where(c >= 0, stats.binom.cdf(c, d, q) + stats.binom.sf(d - c - 1, d, q), 0.0)
    return float(np.sum(stats.binom.pmf(d, n, discordance) * np.minimum(reject, 1.0)))


def detectable(
    differences: np.ndarray,
    codes: np.ndarray | None,
    *,
    binary: bool,
    tests: int,
    icc: float | None = None,
) -> Detectable:
    """The summary's `mde`: the smallest true difference the test it runs detects with
    POWER at p <= 0.05 / `tests` (Holm over the table's `tests` tests), from the paired
    `differences` and, when the test is clustered, their cluster `codes` and `icc` (see
    the module docstring)."""
    d = np.asarray(differences, dtype=float)
    n, tests = int(d.size), max(1, int(tests))
    if n == 0:
        return Detectable(None, "no question scored for both methods", tests)
    if binary:
        disc = float(np.mean(d != 0))
        if disc <= 0:
            return Detectable(
                None, "the methods agree on every question: no discordance to size a test by",
                tests,
            )  # fmt: skip
    else:
        sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
        if sd <= 0:
            return Detectable(None, "the paired differences have no spread", tests)
    sizes = None if codes is None else tuple(int(x) for x in np.bincount(codes) if x > 0)
    spread = disc if binary else sd
    return detectable_for(n, sizes, binary=binary, spread=spread, icc=icc, tests=tests)


def detectable_for(
    n: int,
    sizes: tuple[int, ...] | None,
    *,
    binary: bool,
    spread: float,
    icc: float | None,
    tests: int,
) -> Detectable:
    """`detectable` from the figures it reads: `n` questions, in clusters of `sizes` (None:
    the test is not clustered), the discordance (0/1 scores) or the standard deviation of
    the differences (`spread`), their intra-cluster correlation, the Holm family."""
    from scipy import optimize

    tests = max(1, int(tests))
    after = _after(tests)
    disc = sd = spread
    clustered = sizes is not None
    if sizes is not None:
        sizes = tuple(sorted(sizes))
        what = f"{len(sizes)} clusters"
        rho = 0.0 if icc is None or not math.isfinite(icc) else max(0.0, float(icc))
        smallest = smallest_sign_flip_p(len(sizes))
    else:
        sizes, rho, what = (1,) * n, 0.0, f"{n} question" + ("" if n == 1 else "s")
        # McNemar: 2 / 2^D over D <= n discordant questions; a permutation: as a sign flip
        smallest = (2.0 / 2 ** min(n, 1000)) if binary else smallest_sign_flip_p(n)
    if smallest > _level(tests) * (1 + 1e-9):
        return Detectable(
            None,
            f"no difference is detectable: with {what} the smallest p the test can give is "
            f"{smallest:.3g}, above {_bar(tests)}",
            tests,
        )
    if binary and not clustered:
        if mcnemar_power(disc, n, disc, tests) < POWER:
            return Detectable(
                None,
                f"too few questions: the methods disagree on {disc:.0%} of them, and even a "
                f"difference that large would be missed ({after})",
                tests,
            )
        delta = optimize.brentq(
            lambda x: mcnemar_power(x, n, disc, tests) - POWER, 1e-9, disc, xtol=1e-6
        )
        return Detectable(float(delta), None, tests)
    if binary and len(sizes) <= SIMULATE_UP_TO:  # clustered 0/1 scores: integer totals
        found = _binary_delta(sizes, round(disc, 2), round(rho, 2), tests)
        if found is None:
            return Detectable(
                None,
                f"too few questions: the methods disagree on {disc:.0%} of them, and even a "
                f"difference that large would be missed ({after})",
                tests,
            )
        return Detectable(found, None, tests)
    r = _standardised(sizes, round(rho, 3), tests)
    if r is None:
        return Detectable(None, f"no difference is detectable ({after})", tests)
    if not binary:
        return Detectable(r * sd, None, tests)
    delta = r * math.sqrt(disc / (1 + r * r))  # delta = r sd, sd^2 = disc - delta^2
    if r * r / (1 + r * r) > disc:
        return Detectable(
            None,
            f"too few questions: the methods disagree on {disc:.0%} of them, and even a "
            f"difference that large would be missed ({after})",
            tests,
        )
    return Detectable(delta, None, tests)


def detectable_difference(
    n_eff: float, *, df: float | None, discordance: float | None = None, sd: float | None = None
) -> Detectable:
    """The smallest true difference a paired test at ALPHA detects with POWER, from the
    effective sample size and the discordance (0/1 scores) or the standard deviation of
    the differences (fractional scores)."""
    if n_eff <= 0:
        return Detectable(None, "no question scored for both methods")
    qa, qb = _quantiles(df)
    if discordance is not None:
        if discordance <= 0:
            return Detectable(
                None, "the methods agree on every question: no discordance to size a test by"
            )
        if n_eff <= qa**2 - qb**2:
            return Detectable(None, "too few questions for any difference to be detected")
        root = qa * math.sqrt(n_eff) + qb * math.sqrt(n_eff - qa**2 + qb**2)
        delta = math.sqrt(discordance) * root / (n_eff + qb**2)
        if delta > discordance:
            return Detectable(
                None,
                f"too few questions: the methods disagree on {discordance:.0%} of them, and "
                "even a difference that large would be missed",
            )
        return Detectable(delta)
    if sd is None or sd <= 0:
        return Detectable(None, "the paired differences have no spread")
    return Detectable((qa + qb) * sd / math.sqrt(n_eff))


@dataclass(frozen=True)
class Needed:
    """Questions (and clusters of the given size) a chosen difference needs."""

    questions: int | None
    clusters: int | None
    design_effect: float
    reason: str | None = None


def questions_needed(
    delta: float,
    *,
    discordance: float | None = None,
    sd: float | None = None,
    cluster_size: float = 1.0,
    icc: float = 0.0,
) -> Needed:
    """Questions a paired comparison needs to detect `delta` with POWER at ALPHA, in
    clusters of `cluster_size` questions whose differences have intra-cluster correlation
    `icc` (negative read as 0); Student's t on clusters - 1 degrees of freedom."""
    m = max(1.0, float(cluster_size))
    deff = 1.0 + (m - 1.0) * max(0.0, float(icc))
    if delta <= 0:
        return Needed(None, None, deff, "the difference to detect must be above 0")
    if discordance is not None:
        if delta > discordance:
            return Needed(
                None,
                None,
                deff,
                f"a difference of {delta:g} needs the methods to disagree on at least that "
                f"share of the questions (discordance {discordance:.2f})",
            )
        spread = None
    elif sd is None or sd <= 0:
        return Needed(None, None, deff, "no spread of the differences to size a test by")
    else:
        spread = sd
    df: float | None = None
    n = 0.0
    for _ in range(50):  # the t quantiles depend on the clusters, which depend on n
        qa, qb = _quantiles(df)
        if spread is None:
            assert discordance is not None
            base = (qa * math.sqrt(discordance) + qb * math.sqrt(discordance - delta**2)) ** 2
            base /= delta**2
        else:
            base = ((qa + qb) * spread / delta) ** 2
        n_new = base * deff
        clusters = max(2.0, math.ceil(n_new / m))
        if abs(n_new - n) < 1e-9:
            break
        n, df = n_new, clusters - 1.0
    questions = math.ceil(n - 1e-9)
    return Needed(questions, math.ceil(questions / m), deff)
