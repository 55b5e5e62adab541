"""The report's view of how much a run can tell apart: its clusters, the omnibus tests
before the pairwise ones, and the smallest detectable differences (the summary's
`statistics`, `omnibus` and `comparisons[].mde`; absent in older summaries: nothing shown).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gtog.eval.report._readers import as_dict, as_int, as_num, as_str
from gtog.eval.results._noise import clusters_line, power_line

__all__ = ["Noise", "OmnibusRow", "noise_view"]

_TESTS = {
    "cochran_q": "Cochran's Q",
    "friedman": "Friedman",
    "cochran_q_cluster_permutation": "Cochran's Q, within-cluster permutation",
    "friedman_cluster_permutation": "Friedman, within-cluster permutation",
}


@dataclass(frozen=True)
class OmnibusRow:
    """One metric's omnibus test over 3 or more methods."""

    metric: str
    test: str
    statistic: float | None
    df: int | None
    p_value: float | None
    p_value_naive: float | None
    n: int | None
    methods: int
    reason: str | None


@dataclass(frozen=True)
class Noise:
    """The clusters note, the omnibus rows and the power note (each may be missing)."""

    clusters: str | None = None
    clustered: bool = False
    too_few: bool = False
    """There are clusters, but too few to allow for: the intervals are the naive ones."""
    omnibus: list[OmnibusRow] = field(default_factory=list)
    power: str | None = None


def noise_view(summary: dict[str, Any]) -> Noise:
    """The page's `Noise` from a summary (tolerant of older ones)."""
    st = as_dict(summary.get("statistics"))
    rows = []
    for metric, raw in as_dict(summary.get("omnibus")).items():
        e = as_dict(raw)
        if not e:
            continue
        test = as_str(e.get("test")) or "?"
        rows.append(
            OmnibusRow(
                metric=str(metric),
                test=_TESTS.get(test, test),
                statistic=as_num(e.get("statistic")),
                df=as_int(e.get("df")),
                p_value=as_num(e.get("p_value")),
                p_value_naive=as_num(e.get("p_value_naive")),
                n=as_int(e.get("n")),
                methods=len(e.get("methods") or []),
                reason=as_str(e.get("reason")),
            )
        )
    clustered = bool(st.get("clustered"))
    return Noise(
        clusters=clusters_line(summary),
        clustered=clustered,
        too_few=not clustered and (as_int(st.get("clusters")) or 0) >= 2,
        omnibus=rows,
        power=power_line(summary),
    )
