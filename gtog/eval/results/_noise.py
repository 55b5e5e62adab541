"""How much a summary can tell apart, in words: the clusters, the omnibus tests and the
smallest detectable differences. The terminal prints these lines under the scores table;
the report shows the same figures. Pure functions of a summary (older summaries without
these keys give no line).
"""

from __future__ import annotations

from typing import Any

from gtog.eval.results._verdict import plural

__all__ = ["clusters_line", "mde_by_metric", "noise_lines", "omnibus_lines", "power_line"]

_TESTS = {"cochran_q": "Cochran's Q", "friedman": "Friedman's chi-square"}


def clusters_line(summary: dict[str, Any]) -> str | None:
    """`60 questions in 12 clusters (index_key): intervals and tests allow for them.`, or
    why they do not."""
    st = summary.get("statistics")
    if not isinstance(st, dict):
        return None
    if st.get("clustered"):
        return (
            f"{st.get('questions')} questions in {st.get('clusters')} clusters "
            f"({st.get('cluster_by')}): intervals and tests allow for questions of one "
            "cluster succeeding or failing together."
        )
    return st.get("reason")


def omnibus_lines(summary: dict[str, Any], short: dict[str, str] | None = None) -> list[str]:
    """One line per metric with an omnibus test: do the methods differ at all?"""
    out = []
    for metric, e in (summary.get("omnibus") or {}).items():
        if not isinstance(e, dict):
            continue
        name = (short or {}).get(metric, metric)
        test = str(e.get("test") or "")
        label = _TESTS.get(test.removesuffix("_cluster_permutation"), test)
        methods = len(e.get("methods") or [])
        if e.get("statistic") is None or e.get("p_value") is None:
            why = e.get("reason") or "no statistic"
            out.append(f"Do the {methods} methods differ at all? {name}: {why}.")
            continue
        how = ", within-cluster permutation" if test.endswith("_cluster_permutation") else ""
        out.append(
            f"Do the {methods} methods differ at all? {name}: {label} {e['statistic']:.2f}, "
            f"p {e['p_value']:.3g} (n {e.get('n')}{how})."
        )
    return out


def mde_by_metric(summary: dict[str, Any]) -> dict[str, tuple[float, float, int, int | None]]:
    """metric -> (smallest mde, largest mde, questions, clusters) over its comparisons."""
    out: dict[str, tuple[float, float, int, int | None]] = {}
    for c in summary.get("comparisons") or []:
        mde = c.get("mde") if isinstance(c, dict) else None
        if mde is None:
            continue
        low, high, n, k = out.get(c["metric"], (mde, mde, c.get("n") or 0, c.get("clusters")))
        out[c["metric"]] = (min(low, mde), max(high, mde), max(n, c.get("n") or 0), k)
    return out


def undetectable(summary: dict[str, Any]) -> dict[str, int]:
    """metric -> questions, for metrics whose comparisons all have no detectable difference
    (`mde` null: too few questions, or no disagreement to size a test by)."""
    seen: dict[str, int] = {}
    for c in summary.get("comparisons") or []:
        if isinstance(c, dict) and "mde" in c:
            seen[c["metric"]] = max(seen.get(c["metric"], 0), c.get("n") or 0)
    found = mde_by_metric(summary)
    return {m: n for m, n in seen.items() if m not in found and n}


def _holm(summary: dict[str, Any]) -> str:
    """`p < 0.05 after Holm over 12 tests` (the family the table's mde allows for)."""
    tests = max(
        [c.get("mde_tests") or 1 for c in summary.get("comparisons") or [] if isinstance(c, dict)]
        or [1]
    )
    return f"p < 0.05 after Holm over {tests} tests" if tests > 1 else "p < 0.05"


def _why_none(summary: dict[str, Any], metrics: dict[str, int]) -> str:
    """`: with 6 clusters the smallest p the test can give is ...` when that is why."""
    for c in summary.get("comparisons") or []:
        why = c.get("mde_reason") if isinstance(c, dict) else None
        if why and c["metric"] in metrics and why.startswith("no difference is detectable"):
            return ": " + why.removeprefix("no difference is detectable: ")
    return ""


def power_line(summary: dict[str, Any], short: dict[str, str] | None = None) -> str | None:
    """`With these 60 questions (12 clusters), differences under 0.44 (correct) cannot be
    told apart (80% power, p < 0.05 after Holm over 4 tests).`; metrics where no
    difference could be detected are named too (`nor any difference (correct)`), and why
    when the test cannot reach the bar at all."""
    found = mde_by_metric(summary)
    none = undetectable(summary)
    if not found and not none:
        return None
    names = short or {}
    parts = []
    for metric, (low, high, _, _) in found.items():
        span = f"{low:.2f}" if round(low, 2) == round(high, 2) else f"{low:.2f}-{high:.2f}"
        parts.append(f"{span} ({names.get(metric, metric)})")
    missed = ", ".join(names.get(m, m) for m in none)
    n = max([v[2] for v in found.values()] + list(none.values()))
    ks = {v[3] for v in found.values() if v[3] is not None}
    st = summary.get("statistics") or {}
    where = plural(n, "question") + (
        f" in {max(ks)} clusters" if ks and st.get("clustered") else ""
    )
    if not ks and st.get("clustered") and st.get("clusters"):
        where += f" in {st['clusters']} clusters"
    these = "this" if n == 1 else "these"
    bar = f"(80% power, {_holm(summary)})"
    if not parts:
        return (
            f"With {these} {where}, no difference ({missed}) can be told apart {bar}"
            f"{_why_none(summary, none)}."
        )
    nor = f", nor any difference ({missed})" if missed else ""
    return (
        f"With {these} {where}, differences under {', '.join(parts)} cannot be told apart{nor} "
        f"{bar}{_why_none(summary, none)}."
    )


def noise_lines(summary: dict[str, Any], short: dict[str, str] | None = None) -> list[str]:
    """The clusters line, the omnibus lines and the power line that apply."""
    lines = [clusters_line(summary), *omnibus_lines(summary, short), power_line(summary, short)]
    return [line for line in lines if line]
