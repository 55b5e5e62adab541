"""A judge panel's results (`judge.models`): each model's means, and how far they agree.

With a panel every LLM judge metric is asked of each model; the record's score is their
strict majority and `Judgement.panel` keeps each model's own judgement. From those:
`judges_summary` gives each model's mean per metric and method (over questions, repeats
reduced as everywhere) and `judge_agreement` Krippendorff's alpha per metric (nominal;
interval for a graded judge; the `krippendorff` package) over every answer at least two
models scored, with how many of them split. Pure functions of records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from gtog.eval.results._epochs import reduce_epochs
from gtog.eval.results._records import MethodRecord

__all__ = ["add_panel_entries", "judge_agreement", "judges_summary", "panel_models", "panel_view"]


def panel_models(records: Iterable[MethodRecord]) -> list[str]:
    """The panel's model ids in the order the records name them (empty: no panel)."""
    seen: dict[str, None] = {}
    for r in records:
        for j in r.judgements.values():
            seen.update(dict.fromkeys(j.panel or {}))
    return list(seen)


def panel_view(records: Iterable[MethodRecord], model: str) -> list[MethodRecord]:
    """The records as if `model` alone had judged them (its own judgement per metric)."""
    out = []
    for r in records:
        own = {m: j.panel[model] for m, j in r.judgements.items() if j.panel and model in j.panel}
        out.append(r.model_copy(update={"judgements": own}))
    return out


def judges_summary(
    records: list[MethodRecord], methods: list[str], metrics: list[str], models: list[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """method -> model -> `{metric: mean, "scored": {metric: n}}`: each model's mean over
    the questions it scored (None where it scored none)."""
    out: dict[str, dict[str, dict[str, Any]]] = {m: {} for m in methods}
    for model in models:
        view = reduce_epochs(panel_view(records, model))
        for method in methods:
            entry: dict[str, Any] = {"scored": {}}
            for metric in metrics:
                values = [
                    float(j.score)
                    for r in view
                    if r.method == method
                    and (j := r.judgements.get(metric)) is not None
                    and j.score is not None
                ]
                entry[metric] = math.fsum(values) / len(values) if values else None
                entry["scored"][metric] = len(values)
            out[method][model] = entry
    return out


def _alpha(data: np.ndarray, level: str = "nominal") -> tuple[float | None, str | None]:
    """Krippendorff's alpha (`level`: nominal for 0/1 verdicts, interval for a graded
    judge's scores) of a models x answers array (NaN: not scored)."""
    import krippendorff

    values = data[~np.isnan(data)]
    if values.size == 0:
        return None, "no answer scored by two models"
    if np.unique(values).size < 2:
        return None, "every verdict was the same (alpha is undefined)"
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return (alpha, None) if math.isfinite(alpha) else (None, "undefined")


def judge_agreement(
    records: list[MethodRecord], metrics: list[str], models: list[str]
) -> dict[str, dict[str, Any]]:
    """metric -> `{krippendorff_alpha, models, n, split, reason}` over every answer (all
    methods and epochs) that at least two models scored: `n` such answers, `split` how many
    of them the models did not all score alike; `reason` says why alpha is None."""
    out: dict[str, dict[str, Any]] = {}
    for metric in metrics:
        rows = []
        graded = False
        for r in records:
            j = r.judgements.get(metric)
            if j is None or not j.panel:
                continue
            graded = graded or any(v.scale for v in j.panel.values())
            row = [j.panel[m].score if m in j.panel else None for m in models]
            if sum(v is not None for v in row) >= 2:
                rows.append([np.nan if v is None else float(v) for v in row])
        if not rows:
            continue
        data = np.array(rows, dtype=float).T
        level = "interval" if graded else "nominal"
        alpha, reason = _alpha(data, level)
        split = sum(1 for row in rows if len({v for v in row if not math.isnan(v)}) > 1)
        out[metric] = {
            "krippendorff_alpha": alpha,
            "level": level,
            "models": list(models),
            "n": len(rows),
            "split": split,
            "reason": reason,
        }
    return out


def add_panel_entries(
    summary: dict[str, Any], records: list[MethodRecord], metrics: list[str], models: list[str]
) -> None:
    """With a panel: `by_method[m].judges[model][metric]` and `judge_agreement[metric]`."""
    from gtog.eval.scoring._base import uses_llm

    models = models or panel_models(records)
    if not models:
        return
    # (a metric no model of the panel judged, such as `assertions`, has no per-model means)
    judged = [
        m
        for m in metrics
        if uses_llm(m) and any((j := r.judgements.get(m)) is not None and j.panel for r in records)
    ]
    by_method = summary.get("by_method") or {}
    means = judges_summary(records, list(by_method), judged, models)
    for method, entry in by_method.items():
        entry["judges"] = means[method]
    summary["judge_agreement"] = judge_agreement(records, judged, models)
