"""Results by question type for the page: the summary's `by_group` and `pairwise_by_group`.

One table per `group_by` field: its values (`(none)`, the questions without the field,
last) against the methods, each cell the same-question mean of a metric within that group
(its interval and n), and, when the run judged head to head, each pair's win rate per
criterion within the group. Pure functions of the JSON, tolerant as the rest of the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gtog.eval.report._models import Mean, Question
from gtog.eval.report._pairs import WinRate
from gtog.eval.report._readers import as_dict, as_int, as_interval, as_num
from gtog.eval.report._versus import win_rates
from gtog.eval.results._groups import NONE

__all__ = ["NONE", "GroupTable", "group_tables"]


@dataclass(frozen=True)
class GroupTable:
    """Results within each value of one dataset field."""

    field: str
    values: list[str]
    """The field's values, `(none)` last."""
    questions: dict[str, int]
    """value -> questions in the group (all of them, scored or not)."""
    methods: list[str]
    metrics: list[str]
    means: dict[tuple[str, str, str], Mean]
    """(value, method, metric) -> same-question mean within the group."""
    pairs: list[tuple[str, str, str]]
    """(criterion, a, b) of the win rates by group, in the summary's order."""
    rates: dict[tuple[str, str, str, str], WinRate]
    """(value, criterion, a, b) -> a's win rate against b within the group."""

    def mean(self, value: str, method: str, metric: str) -> Mean | None:
        """The group's mean, None when the summary has none."""
        return self.means.get((value, method, metric))

    def rate(self, value: str, criterion: str, a: str, b: str) -> WinRate | None:
        """The group's win rate, None when the pair was not compared there."""
        return self.rates.get((value, criterion, a, b))


def _values(*groups: dict[str, Any]) -> list[str]:
    keys = list(dict.fromkeys(str(k) for g in groups for k in g))
    return [k for k in keys if k != NONE] + [k for k in keys if k == NONE]


def _table(
    field: str,
    means_raw: dict[str, Any],
    pairs_raw: dict[str, Any],
    questions: list[Question],
    methods: list[str],
    metrics: list[str],
) -> GroupTable:
    values = _values(means_raw, pairs_raw)
    means = {}
    for value in values:
        for method, by_metric in as_dict(means_raw.get(value)).items():
            for metric, cell in as_dict(by_metric).items():
                c = as_dict(cell)
                means[value, str(method), str(metric)] = Mean(
                    as_num(c.get("mean")), as_interval(c.get("ci95")), as_int(c.get("n")) or 0
                )
    rates = {(v, r.criterion, r.a, r.b): r for v in values for r in win_rates(pairs_raw.get(v))}
    seen = {m for (_, m, _) in means}
    return GroupTable(
        field=field,
        values=values,
        questions={v: sum(1 for q in questions if q.groups.get(field, NONE) == v) for v in values},
        methods=[m for m in methods if m in seen] + sorted(seen - set(methods)),
        metrics=[m for m in metrics if any(k[2] == m for k in means)],
        means=means,
        pairs=list(dict.fromkeys((c, a, b) for (_, c, a, b) in rates)),
        rates=rates,
    )


def group_tables(
    summary: dict[str, Any],
    spec: dict[str, Any],
    questions: list[Question],
    methods: list[str],
    metrics: list[str],
) -> list[GroupTable]:
    """One table per `group_by` field of the spec (or of the summary, when it has no spec)."""
    by_group, pairwise = as_dict(summary.get("by_group")), as_dict(summary.get("pairwise_by_group"))
    fields = spec.get("group_by")
    if not isinstance(fields, list):
        fields = list(dict.fromkeys([*by_group, *pairwise]))
    return [
        _table(
            str(f), as_dict(by_group.get(f)), as_dict(pairwise.get(f)), questions, methods, metrics
        )
        for f in fields
        if isinstance(f, str) and (f in by_group or f in pairwise)
    ]
