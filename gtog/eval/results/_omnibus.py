"""One test of whether 3 or more methods differ at all, before the pairwise tests.

Over the questions every method has a score for: Cochran's Q for 0/1 scores, Friedman's
chi-square (scipy's, average ranks for ties) for graded ones. Both compare methods within
each question, so they are paired like the pairwise tests. With clusters, the p-value is
a permutation test that reorders the methods within whole clusters (the same order for
every question of a cluster; 9,999 seeded permutations), else the chi-square
approximation. Pure functions.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gtog.eval.results._clustered import MIN_CLUSTERS, cluster_codes
from gtog.eval.results._statistics import N_RESAMPLES, SEED
from gtog.eval.results._verdict import plural

__all__ = ["Omnibus", "cochran_q", "friedman", "omnibus_entry", "omnibus_test"]


@dataclass(frozen=True)
class Omnibus:
    """An omnibus test's statistic and p-value (None with the reason when undefined)."""

    test: str
    statistic: float | None
    df: int
    p_value: float | None
    reason: str | None = None


def _q_statistic(columns: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Cochran's Q from the methods' totals (..., k) and the questions' totals."""
    k = columns.shape[-1]
    total = rows.sum()
    denominator = k * total - np.sum(rows**2)
    return (k - 1) * (k * np.sum(columns**2, axis=-1) - total**2) / denominator


def cochran_q(x: np.ndarray) -> Omnibus:
    """Cochran's Q of an (n questions, k methods) array of 0/1 scores:
    Q = (k - 1) (k sum_j C_j^2 - T^2) / (k T - sum_i R_i^2), chi-square on k - 1 df
    (C: methods' totals, R: questions' totals, T: all). p = 1 when no question separates
    the methods."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    rows = x.sum(axis=1)
    k = x.shape[1]
    if k * rows.sum() - np.sum(rows**2) == 0:
        return Omnibus("cochran_q", None, k - 1, 1.0, "no question on which the methods differ")
    q = float(_q_statistic(x.sum(axis=0), rows))
    return Omnibus("cochran_q", q, k - 1, float(stats.chi2.sf(q, k - 1)))


def _ranks(x: np.ndarray) -> np.ndarray:
    from scipy import stats

    return np.asarray(stats.rankdata(x, axis=1), dtype=float)


def _friedman_statistic(rank_sums: np.ndarray, n: int, k: int, ties: float) -> np.ndarray:
    """Friedman's chi-square from the methods' rank sums (..., k), with the tie correction
    1 - sum(t^3 - t) / (n k (k^2 - 1)) (scipy's)."""
    chi = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2, axis=-1) - 3.0 * n * (k + 1)
    return chi / (1.0 - ties / (n * k * (k * k - 1)))


def _ties(x: np.ndarray) -> float:
    total = 0.0
    for row in x:
        _, counts = np.unique(row, return_counts=True)
        total += float(np.sum(counts**3 - counts))
    return total


def friedman(x: np.ndarray) -> Omnibus:
    """Friedman's test of an (n questions, k methods) array of graded scores
    (`scipy.stats.friedmanchisquare`); p = 1 when every question ties all methods."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    k = x.shape[1]
    if np.all(x == x[:, :1]):
        return Omnibus("friedman", None, k - 1, 1.0, "no question on which the methods differ")
    res = stats.friedmanchisquare(*x.T)
    return Omnibus("friedman", float(res.statistic), k - 1, float(res.pvalue))


def _permuted_totals(
    by_cluster: np.ndarray, rng: np.random.Generator, resamples: int
) -> np.ndarray:
    """Methods' totals (resamples, k) after reordering the methods within each cluster
    (in chunks: memory stays below ~8 MB whatever the clusters)."""
    g, k = by_cluster.shape
    chunk = max(1, 1_000_000 // (g * k))
    out = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        order = np.argsort(rng.random((size, g, k)), axis=-1)
        shuffled = np.take_along_axis(np.broadcast_to(by_cluster, order.shape), order, -1)
        out.append(shuffled.sum(axis=1))
    return np.concatenate(out)


def omnibus_test(
    x: np.ndarray,
    *,
    binary: bool,
    codes: np.ndarray | None = None,
    k_clusters: int = 0,
    seed: int = SEED,
) -> Omnibus:
    """Cochran's Q (`binary`) or Friedman's test of an (n, k) score array; with cluster
    `codes`, the p-value of reordering methods within whole clusters."""
    x = np.asarray(x, dtype=float)
    base = cochran_q(x) if binary else friedman(x)
    if codes is None or base.statistic is None:
        return base
    n, k = x.shape
    values = x if binary else _ranks(x)
    by_cluster = np.stack([np.bincount(codes, values[:, j], k_clusters) for j in range(k)], 1)
    rng = np.random.default_rng(seed)
    totals = _permuted_totals(by_cluster, rng, N_RESAMPLES)
    if binary:
        rows = x.sum(axis=1)
        null = _q_statistic(totals, rows)
        observed = _q_statistic(values.sum(axis=0), rows)
    else:
        ties = _ties(x)
        null = _friedman_statistic(totals, n, k, ties)
        observed = _friedman_statistic(values.sum(axis=0), n, k, ties)
    exceed = int(np.sum(null >= observed - 1e-9 * max(1.0, abs(float(observed)))))
    p = (exceed + 1) / (N_RESAMPLES + 1)
    return Omnibus(f"{base.test}_cluster_permutation", base.statistic, k - 1, min(1.0, p))


def omnibus_entry(
    scores: dict[str, dict[Hashable, float]],
    methods: list[str],
    *,
    binary: bool,
    labels: dict[Hashable, Hashable] | None,
) -> dict[str, Any] | None:
    """The summary's `omnibus[metric]` for 3 or more methods (None for fewer): `test`,
    `statistic`, `df`, `p_value` (the clustered permutation's from MIN_CLUSTERS clusters
    on), `p_value_naive` (chi-square), `methods`, `n` questions every method scored,
    `clusters` and `reason` (when there is no statistic)."""
    if len(methods) < 3:
        return None
    common = sorted(set.intersection(*(set(scores.get(m, {})) for m in methods)))
    out: dict[str, Any] = {
        "test": "cochran_q" if binary else "friedman",
        "statistic": None,
        "df": len(methods) - 1,
        "p_value": None,
        "p_value_naive": None,
        "methods": list(methods),
        "n": len(common),
        "clusters": None,
        "reason": None,
    }
    if len(common) < 2:
        out["reason"] = (
            f"{plural(len(common), 'question')} scored for every method: too few to test"
        )
        return out
    x = np.array([[scores[m][q] for m in methods] for q in common], dtype=float)
    naive = cochran_q(x) if binary else friedman(x)
    out.update(statistic=naive.statistic, p_value=naive.p_value, p_value_naive=naive.p_value)
    out["reason"] = naive.reason
    if labels is not None:
        codes, k = cluster_codes([labels[q] for q in common])
        out["clusters"] = k
        if k >= MIN_CLUSTERS:
            test = omnibus_test(x, binary=binary, codes=codes, k_clusters=k)
            out.update(test=test.test, p_value=test.p_value)
    return out
