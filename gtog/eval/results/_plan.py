"""`gtog eval --plan`: how many questions a chosen detectable difference needs.

From a run's summary, one row per comparison (metric, pair): its questions and clusters
now, the difference it can detect now (`mde`), and the questions and clusters it would need
to detect `delta` with 80% power, keeping its clusters' size, discordance (0/1 metrics) or
spread of differences (graded ones) and the differences' intra-cluster correlation
(`power.questions_needed`); with two or more methods, a row for the routing headroom (the
oracle against the best single method: how many questions show a headroom of `delta`).
Without a run, one row from stated assumptions. Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gtog.eval.results._clustered import MIN_CLUSTERS
from gtog.eval.results._power import questions_needed

__all__ = ["DEFAULT_DISCORDANCE", "DEFAULT_ICC", "Assumptions", "PlanRow", "plan_rows"]

DEFAULT_DISCORDANCE = 0.3
"""Assumed share of questions two methods disagree on, without a run."""
DEFAULT_ICC = 0.1
"""Assumed intra-cluster correlation of the paired differences, without a run."""


@dataclass(frozen=True)
class Assumptions:
    """What the user states (None: take the run's, else the default)."""

    discordance: float | None = None
    icc: float | None = None
    cluster_size: float | None = None


@dataclass(frozen=True)
class PlanRow:
    """One comparison's plan."""

    metric: str
    pair: str
    n: int | None
    clusters: int | None
    mde: float | None
    spread: str
    """The discordance (`0.30`) or the differences' spread (`sd 0.21`): what sizes the
    test."""
    icc: float
    cluster_size: float
    questions: int | None
    clusters_needed: int | None
    note: str | None


def _row(
    delta: float,
    *,
    metric: str,
    pair: str,
    n: int | None,
    clusters: int | None,
    mde: float | None,
    discordance: float | None,
    sd: float | None,
    icc: float,
    size: float,
) -> PlanRow:
    need = questions_needed(delta, discordance=discordance, sd=sd, cluster_size=size, icc=icc)
    note = need.reason
    if note is None and need.clusters is not None and size > 1 and need.clusters < MIN_CLUSTERS:
        note = (
            f"{need.clusters} clusters: fewer than {MIN_CLUSTERS}, so intervals and tests "
            "would not allow for clustering"
        )
    spread = f"{discordance:.2f}" if discordance is not None else f"sd {sd or 0:.2f}"
    return PlanRow(
        metric, pair, n, clusters, mde, spread, icc, size, need.questions, need.clusters, note
    )


def plan_rows(
    delta: float, summary: dict[str, Any] | None, stated: Assumptions
) -> tuple[list[PlanRow], str]:
    """The plan's rows, and where their figures come from (one line)."""
    comparisons = [c for c in (summary or {}).get("comparisons") or [] if isinstance(c, dict)]
    if not comparisons:
        discordance = stated.discordance if stated.discordance is not None else DEFAULT_DISCORDANCE
        icc = stated.icc if stated.icc is not None else DEFAULT_ICC
        size = stated.cluster_size or 1.0
        row = _row(
            delta, metric="0/1 metric", pair="any pair", n=None, clusters=None,
            mde=None, discordance=discordance, sd=None, icc=icc, size=size,
        )  # fmt: skip
        source = (
            f"no run to learn from: assumed discordance {discordance:.2f} (the share of "
            f"questions two methods disagree on), ICC {icc:.2f}, {size:g} questions per cluster"
        )
        return [row], source
    st = (summary or {}).get("statistics") or {}
    rows = []
    routing = (summary or {}).get("routing")
    if isinstance(routing, dict) and isinstance(routing.get("headroom"), dict):
        # the headroom (oracle - best single): a paired comparison like the others
        best = (routing.get("best_single") or {}).get("method")
        comparisons = [
            {
                **routing["headroom"],
                "metric": f"{routing.get('metric')} headroom",
                "a": "oracle",
                "b": best,
            },
            *comparisons,
        ]
    for c in comparisons:
        n, k = c.get("n") or 0, c.get("clusters")
        size = stated.cluster_size or (n / k if k else 1.0)
        icc = stated.icc if stated.icc is not None else max(0.0, c.get("icc") or 0.0)
        discordance = c.get("discordance")
        if stated.discordance is not None and discordance is not None:
            discordance = stated.discordance
        row = _row(
            delta, metric=str(c.get("metric")), pair=f"{c.get('a')} vs {c.get('b')}",
            n=n, clusters=k, mde=c.get("mde"), discordance=discordance,
            sd=c.get("sd_diff"), icc=icc, size=size,
        )  # fmt: skip
        rows.append(row)
    by = st.get("cluster_by")
    source = f"from the run: {st.get('questions', '?')} questions" + (
        f" in {st.get('clusters')} clusters ({by})" if by else " (not clustered)"
    )
    if not st.get("clustered") and (st.get("clusters") or 0) >= 2:
        source += f"; too few clusters to estimate their ICC well (fewer than {MIN_CLUSTERS})"
    return rows, source
