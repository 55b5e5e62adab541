"""Win rates of head-to-head comparisons: pure functions of `PairRecord`s.

Per criterion and pair of methods (a, b), over the questions whose comparison was scored:
`wins_a`, `wins_b`, `ties`; `win_rate_a` counts a tie as half a win; `ci95` is the 95%
interval of that rate (Clopper-Pearson at the fractional count wins + ties / 2, the same
rule at every tie count: `statistics.win_rate_interval`); `p_value` is a two-sided sign
test on the decisive questions; `p_holm` is Holm-adjusted over every (pair, criterion) of the run;
`position_consistency` is the share of questions on which both orders gave the same
verdict (a judge that follows the position scores 0). A/A checks (a method against itself)
are reported apart: a fair judge gives a win rate of 0.5, not significantly different, and
the same verdict in both orders. With one answer in both slots, the two orders can differ
only by where the judge read it, so an A/A check fails on either (`fails` names which):
`win_rate` (its sign test below SIGNIFICANCE) or `position_consistency` (both orders agreed
on fewer than POSITION_CONSISTENCY of its questions: the judge picks a slot, not an answer;
at temperature 0 the two orders send one prompt, and only a tie agrees with itself).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from gtog.eval.results._groups import NONE
from gtog.eval.results._records import PairRecord
from gtog.eval.results._statistics import holm, sign_test, win_rate_interval

__all__ = [
    "POSITION_CONSISTENCY",
    "SIGNIFICANCE",
    "aa_failures",
    "pairwise_entries",
    "pairwise_summary",
    "pairwise_usage",
]

SIGNIFICANCE = 0.05
"""An A/A check fails when its sign test is below this."""
POSITION_CONSISTENCY = 0.5
"""An A/A check fails when both orders agreed on fewer than this share of its questions."""


def aa_failures(entry: dict[str, Any]) -> list[str] | None:
    """What an A/A check's entry fails: `win_rate`, `position_consistency` (empty: it
    passes); None when nothing was scored (not tested)."""
    if not entry.get("n"):
        return None
    fails = []
    p = entry.get("p_value")
    if p is not None and p < SIGNIFICANCE:
        fails.append("win_rate")
    consistency = entry.get("position_consistency")
    if consistency is not None and consistency < POSITION_CONSISTENCY:
        fails.append("position_consistency")
    return fails


def _cost(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else math.fsum(v for v in values if v)


def _entry(records: list[PairRecord]) -> dict[str, Any]:
    scored = [r for r in records if r.judgement.winner is not None]
    wins_a = sum(1 for r in scored if r.judgement.winner == "a")
    wins_b = sum(1 for r in scored if r.judgement.winner == "b")
    ties = len(scored) - wins_a - wins_b
    n = len(scored)
    ci = win_rate_interval(wins_a, ties, n)
    agree = [r.judgement.orders_agree for r in scored if r.judgement.orders_agree is not None]
    return {
        "n": n,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "ties": ties,
        "unscored": len(records) - n,
        "win_rate_a": (wins_a + ties / 2) / n if n else None,
        "ci95": ci.as_list(),
        "ci95_method": ci.method,
        "ci95_reason": ci.reason,
        "p_value": sign_test(wins_a, wins_b) if n else None,
        "p_holm": None,
        "position_consistency": sum(agree) / len(agree) if agree else None,
    }


def pairwise_entries(
    records: Iterable[PairRecord], pairs: list[tuple[str, str]], criteria: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(comparisons, A/A checks) over `records`, one entry per criterion and pair.

    `pairs` lists the (a, b) compared; a pair (m, m) is an A/A check. Holm runs over the
    comparisons (A/A checks are tests of the judge, not of the methods).
    """
    by_key: dict[tuple[str, str, str], list[PairRecord]] = {}
    for r in records:
        by_key.setdefault((r.criterion, r.a, r.b), []).append(r)
    comparisons, checks = [], []
    for criterion in criteria:
        for a, b in pairs:
            entry = {"criterion": criterion, "a": a, "b": b}
            entry.update(_entry(by_key.get((criterion, a, b), [])))
            if a == b:
                fails = aa_failures(entry)
                entry["passes"] = None if fails is None else not fails
                entry["fails"] = fails
                checks.append(entry)
            else:
                comparisons.append(entry)
    for entry, adjusted in zip(comparisons, holm([e["p_value"] for e in comparisons]), strict=True):
        entry["p_holm"] = adjusted
    return comparisons, checks


def pairwise_usage(records: Iterable[PairRecord]) -> dict[str, Any]:
    """Calls, tokens and USD of the pairwise judge (apart from the per-answer judges)."""
    js = [r.judgement for r in records]
    return {
        "comparisons": len(js),
        "llm_calls": sum(j.llm_calls for j in js),
        "prompt_tokens": sum(j.prompt_tokens for j in js),
        "output_tokens": sum(j.output_tokens for j in js),
        "usd_total": _cost([j.cost_usd for j in js]),
    }


def pairwise_summary(
    records: list[PairRecord],
    pairs: list[tuple[str, str]],
    criteria: list[str],
    group_by: list[str] | None = None,
) -> dict[str, Any]:
    """The summary's `pairwise`, `pairwise_aa`, `pairwise_usage` and `pairwise_by_group`."""
    comparisons, checks = pairwise_entries(records, pairs, criteria)
    out: dict[str, Any] = {
        "pairwise": comparisons,
        "pairwise_aa": checks,
        "pairwise_usage": pairwise_usage(records),
    }
    if group_by:
        groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for field in group_by:
            values = sorted({r.groups.get(field, NONE) for r in records})
            groups[field] = {}
            for value in values:
                subset = [r for r in records if r.groups.get(field, NONE) == value]
                groups[field][value] = pairwise_entries(subset, pairs, criteria)[0]
        out["pairwise_by_group"] = groups
    return out
