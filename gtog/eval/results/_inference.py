"""The summary's intervals and paired comparisons, clustered when the questions are.

`Clusters` says how a summary groups questions (`statistics.cluster_by`: the index key, a
dataset field, or none). With at least `MIN_CLUSTERS` clusters among the scores, a mean's
`ci95` and a comparison's `ci95` and `p_value` are the clustered ones
(`gtog.eval.results._clustered`), with the naive ones beside them (`ci95_naive`,
`p_value_naive`); with fewer, they are the naive ones and `statistics.reason` says why.
Each block also carries the intra-cluster correlation (`icc`) and the design effect, and
each comparison the smallest difference it could detect (`mde`, `gtog.eval.results._power`).
Pure functions of values and their cluster labels.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gtog.eval.results._clustered import (
    MIN_CLUSTERS,
    ClusterSums,
    bell_mccaffrey_df,
    cluster_codes,
    cluster_sign_flip,
    design_effect,
    diff_bounds,
    effective_n,
    icc,
    mean_bounds,
    newcombe_bounds,
    t_quantile,
)
from gtog.eval.results._power import detectable
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._statistics import Interval, mean_interval, paired_comparison

__all__ = [
    "INDEX_KEY",
    "NO_CLUSTERS",
    "Clusters",
    "compare",
    "mean_stats",
    "statistics_block",
    "with_mde",
]

INDEX_KEY = "index_key"
"""`statistics.cluster_by` default: questions of one index are one cluster."""
NO_CLUSTERS = "none"
"""`statistics.cluster_by: none`: every question is its own cluster (no clustering)."""

QKey = tuple[str, str]


@dataclass(frozen=True)
class Clusters:
    """How questions are clustered: by `INDEX_KEY`, by a dataset field, or not (None)."""

    by: str | None = INDEX_KEY

    @classmethod
    def of(cls, cluster_by: str | None) -> Clusters:
        """From a `statistics.cluster_by` value (`none` or None: no clustering)."""
        return cls(None if cluster_by in (None, NO_CLUSTERS) else cluster_by)

    def label(self, record: MethodRecord) -> Hashable:
        """The record's question's cluster; a question without the field is its own."""
        if self.by == INDEX_KEY:
            return ("index", record.index_key)
        if self.by is not None and self.by in record.groups:
            return ("field", record.groups[self.by])
        return ("question", record.index_key, record.qid)

    def labels(self, records: Iterable[MethodRecord]) -> dict[QKey, Hashable] | None:
        """(index key, question id) -> cluster, or None without clustering."""
        if self.by is None:
            return None
        return {(r.index_key, r.qid): self.label(r) for r in records}


def _float(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _design(values: Sequence[float], labels: Sequence[Hashable]) -> tuple[ClusterSums, int]:
    codes, k = cluster_codes(labels)
    return ClusterSums.of(values, codes, k), k


def mean_stats(
    values: Sequence[float], labels: Sequence[Hashable] | None, *, binary: bool | None = None
) -> dict[str, Any]:
    """`ci95` (clustered from MIN_CLUSTERS clusters on, else naive), `ci95_method`,
    `ci95_reason`, `ci95_naive`, `icc`, `design_effect` and `clusters` of a mean."""
    naive = mean_interval(values, binary=binary)
    out: dict[str, Any] = {
        "ci95": naive,
        "ci95_naive": naive.as_list(),
        "icc": None,
        "design_effect": None,
        "clusters": None,
    }
    if labels is not None and len(values) > 0:
        binary = naive.method == "wilson" if binary is None else binary
        sums, k = _design(values, labels)
        out.update(clusters=k, icc=_float(icc(sums)), design_effect=_float(design_effect(sums)))
        if k >= MIN_CLUSTERS and naive.low is not None:
            low, high = mean_bounds(sums, binary)
            method = "wilson_skew_t_clustered" if binary else "skew_t_clustered"
            out["ci95"] = Interval(float(low), float(high), method)
    ci: Interval = out.pop("ci95")
    out.update(ci95=ci.as_list(), ci95_method=ci.method, ci95_reason=ci.reason)
    return out


def _discordance(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int]:
    both = int(np.sum((x == 1) & (y == 1)))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    return both, only_a, only_b, int(x.size) - both - only_a - only_b


def compare(
    a: Sequence[float],
    b: Sequence[float],
    labels: Sequence[Hashable] | None,
    *,
    binary: bool,
    tests: int | None = 1,
) -> dict[str, Any]:
    """A paired comparison of a's and b's scores on the same questions: the naive test
    and interval (`statistics.paired_comparison`), clustered ones from MIN_CLUSTERS
    clusters on, the differences' `icc` and `design_effect`, and the minimum detectable
    difference `mde` at 80% power for the test it ran after Holm over `tests` tests
    (`mde_tests`; None: left out, see `with_mde`)."""
    c = paired_comparison(a, b, binary=binary)
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out: dict[str, Any] = {
        "n": c.n,
        "a_mean": c.a_mean,
        "b_mean": c.b_mean,
        "diff": c.diff,
        "ci95": c.ci95.as_list(),
        "ci95_method": c.ci95.method,
        "ci95_reason": c.ci95.reason,
        "ci95_naive": c.ci95.as_list(),
        "p_value": c.p_value,
        "p_value_naive": c.p_value,
        "test": c.test,
        "test_naive": c.test,
        "clusters": None,
        "icc": None,
        "design_effect": None,
    }
    counts = _discordance(x, y) if binary and c.n else None
    if binary:
        out["discordance"] = (counts[1] + counts[2]) / c.n if counts else None
    else:
        out["sd_diff"] = float(np.std(x - y, ddof=1)) if c.n > 1 else None
    if labels is not None and c.n:
        sums, k = _design(x - y, labels)
        deff = _float(design_effect(sums))
        out.update(clusters=k, icc=_float(icc(sums)), design_effect=deff)
        if k >= MIN_CLUSTERS:
            n_eff, df = float(effective_n(sums)), float(bell_mccaffrey_df(sums))
            codes, _ = cluster_codes(labels)
            out.update(p_value=cluster_sign_flip(x - y, codes, k), test="cluster_sign_flip")
            if binary and counts is not None:
                low, high = newcombe_bounds(*counts, n_eff, t_quantile(df))
                out.update(ci95=[float(low), float(high)], ci95_method="newcombe_clustered")
            elif out["ci95"] is not None:
                low, high = diff_bounds(sums)
                out.update(ci95=[float(low), float(high)], ci95_method="t_clustered")
    if tests is not None:
        out.update(with_mde(a, b, labels, binary=binary, tests=tests, icc=out["icc"]))
    return out


def with_mde(
    a: Sequence[float],
    b: Sequence[float],
    labels: Sequence[Hashable] | None,
    *,
    binary: bool,
    tests: int,
    icc: float | None,
) -> dict[str, Any]:
    """`mde`, `mde_reason` and `mde_tests` of a comparison (`compare`): the smallest
    difference its test detects with 80% power at p < 0.05 after Holm over `tests` tests
    (`gtog.eval.results._power.detectable`)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    codes = None
    if labels is not None and d.size:
        codes, k = cluster_codes(labels)
        if k < MIN_CLUSTERS:
            codes = None
    power = detectable(d, codes, binary=binary, tests=tests, icc=icc if codes is not None else None)
    return {"mde": power.mde, "mde_reason": power.reason, "mde_tests": power.tests}


def statistics_block(records: Sequence[MethodRecord], clusters: Clusters) -> dict[str, Any]:
    """The summary's `statistics`: `cluster_by`, `clusters` and `questions` of the run, whether
    its intervals and tests are `clustered`, and the `reason` when they are not."""
    questions = {(r.index_key, r.qid): r for r in records}
    out: dict[str, Any] = {
        "cluster_by": clusters.by,
        "clusters": None,
        "questions": len(questions),
        "clustered": False,
        "min_clusters": MIN_CLUSTERS,
        "reason": None,
    }
    if clusters.by is None:
        out["reason"] = "statistics.cluster_by is none: questions are taken as independent"
        return out
    k = len({clusters.label(r) for r in questions.values()})
    out["clusters"] = k
    if clusters.by not in (INDEX_KEY,):
        out["without_field"] = sum(1 for r in questions.values() if clusters.by not in r.groups)
    if k >= MIN_CLUSTERS:
        out["clustered"] = True
    elif k <= 1:
        out["reason"] = (
            f"1 cluster ({clusters.by}): the intervals hold for these questions' cluster only"
        )
    else:
        out["reason"] = (
            f"{k} clusters ({clusters.by}): too few to allow for clustering ({MIN_CLUSTERS} "
            f"needed); intervals and tests take the {len(questions)} questions as "
            "independent: too narrow if a cluster's questions fail together."
        )
    return out
