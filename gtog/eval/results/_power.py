"""Power of a paired comparison: the smallest difference a study can detect, and the
questions a chosen difference needs. Pure functions (normal theory, with Student's t on
the comparison's degrees of freedom).

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
from dataclasses import dataclass

from scipy import stats

__all__ = [
    "ALPHA",
    "POWER",
    "Detectable",
    "Needed",
    "detectable_difference",
    "questions_needed",
]

ALPHA = 0.05
"""Two-sided level of the test a detectable difference is computed for."""
POWER = 0.8
"""Power a detectable difference is computed for."""


def _quantiles(df: float | None) -> tuple[float, float]:
    """(q_a, q_b): Student's t (normal when df is None or infinite)."""
    if df is None or not math.isfinite(df):
        return float(stats.norm.ppf(1 - ALPHA / 2)), float(stats.norm.ppf(POWER))
    return float(stats.t.ppf(1 - ALPHA / 2, df)), float(stats.t.ppf(POWER, df))


@dataclass(frozen=True)
class Detectable:
    """The minimum detectable difference (None with the reason when there is none)."""

    mde: float | None
    reason: str | None = None


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
