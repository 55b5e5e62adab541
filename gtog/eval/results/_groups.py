"""Results by question type: the summary's `by_group`, from the dataset's `group_by` fields.

`by_group[field][value][method][metric] = {mean, n, ci95, ci95_naive}`: per group of
questions (those whose item has `field == value`; `(none)` for those without the field),
the same-question mean of each method (over the group's questions every method answered
and the judge scored), its count and 95% interval — the headline rule, within each group,
clustered as the summary's (`labels`) when the group spans enough clusters.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.results._summary import common_means

__all__ = ["NONE", "by_group", "group_of"]

NONE = "(none)"
"""The group of a question whose item does not have the field."""


def group_of(record: MethodRecord, field: str) -> str:
    """The record's question's value of `field`, or `(none)`."""
    return record.groups.get(field, NONE)


def by_group(
    records: list[MethodRecord],
    methods: list[str],
    metrics: list[str],
    fields: list[str],
    labels: dict[tuple[str, str], Hashable] | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """`by_group[field][value][method][metric] = {mean, n, ci95, ci95_naive}` (see the
    module)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for field in fields:
        out[field] = {}
        for value in sorted({group_of(r, field) for r in records}):
            subset = [r for r in records if group_of(r, field) == value]
            means = common_means(subset, methods, metrics, strict=False, labels=labels)
            out[field][value] = {
                m: {
                    metric: {
                        "mean": means[m][metric],
                        "n": means[m]["scored"][metric],
                        "ci95": means[m]["ci95"][metric],
                        "ci95_naive": means[m]["ci95_naive"][metric],
                    }
                    for metric in metrics
                }
                for m in methods
            }
    return out
