"""Repeated answers (`epochs: k`): each question's answers reduced to one, and how they vary.

A run with `epochs: k` answers each (question, method) k times. The statistics treat a
question as the unit (its k answers are not independent samples of the method's quality):
`reduce_epochs` turns the k records of a question into one whose score per metric is the
mean of the scored epochs, so the existing means, intervals and paired tests apply as they
are. `epoch_summary` says how the answers vary, per metric, over the questions whose k
answers were all scored: `mean`, and for 0/1 metrics `pass_at_k` (some answer right),
`pass_hat_k` (every answer right) and `flip_rate` (the verdicts differ between answers);
`pass_hat_k <= mean <= pass_at_k` by construction. Pure functions of records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring._base import Judgement, is_binary_metric

__all__ = ["add_epoch_entries", "epoch_summary", "reduce_epochs"]


def _by_question(records: Iterable[MethodRecord]) -> dict[tuple[str, str, str], list[MethodRecord]]:
    out: dict[tuple[str, str, str], list[MethodRecord]] = {}
    for r in records:
        out.setdefault((r.index_key, r.qid, r.method), []).append(r)
    return out


def _reduced_judgement(records: list[MethodRecord], metric: str, strict: bool) -> Judgement | None:
    """The mean of the epochs' scores of `metric` (strict: a failed search or an unscored
    judge call scores the bottom of the metric's scale: 0, or a graded judge's low); an
    unscored judgement (the first error) when no epoch has a score; None when no epoch
    was judged on it. A graded judge's scale is kept."""
    scores: list[float] = []
    first_error = None
    judged = False
    scale = next(
        (j.scale for r in records if (j := r.judgements.get(metric)) is not None and j.scale),
        None,
    )
    low = float(scale[0]) if scale else 0.0
    for r in records:
        if r.error is not None:
            if strict:
                scores.append(low)
            continue
        j = r.judgements.get(metric)
        if j is None:
            continue
        judged = True
        if j.score is not None:
            scores.append(float(j.score))
        elif strict:
            scores.append(low)
        elif first_error is None:
            first_error = j.error
    if scores:
        return Judgement(score=math.fsum(scores) / len(scores), scale=scale)
    if judged:
        return Judgement.unscored(first_error or "no epoch scored")
    return None


def reduce_epochs(records: Iterable[MethodRecord], *, strict: bool = False) -> list[MethodRecord]:
    """One record per (question, method): a question's only record as it is; the k records
    of a question with repeats as one (its first epoch's answer) whose score per metric is
    the mean over the epochs scored (`strict`: a failed search counts as a 0) and whose
    `error` is set only when every epoch's search failed."""
    records = list(records)
    if all(r.epoch == 1 for r in records):
        return records
    out = []
    for group in _by_question(records).values():
        if len(group) == 1:
            out.append(group[0])
            continue
        group.sort(key=lambda r: r.epoch)
        answered = [r for r in group if r.error is None]
        first = (answered or group)[0]
        metrics = list(dict.fromkeys(m for r in group for m in r.judgements))
        judgements = {}
        for metric in metrics:
            j = _reduced_judgement(group, metric, strict)
            if j is not None:
                judgements[metric] = j
        error = None if answered else first.error
        out.append(first.model_copy(update={"judgements": judgements, "error": error}))
    return out


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def epoch_summary(records: Iterable[MethodRecord], metric: str, k: int) -> dict[str, Any]:
    """`{k, n, mean, pass_at_k, pass_hat_k, flip_rate}` of one method's answers on `metric`,
    over the `n` questions whose `k` answers were all scored (the rates are None for a
    metric that is not 0/1, and everything but k and n when no question qualifies)."""
    scores: dict[tuple[str, str], dict[int, float]] = {}
    graded = False
    for r in records:
        j = r.judgements.get(metric) if r.error is None else None
        graded = graded or bool(j is not None and j.scale)
        if j is not None and j.score is not None and r.epoch <= k:
            scores.setdefault((r.index_key, r.qid), {})[r.epoch] = float(j.score)
    full = [list(s.values()) for s in scores.values() if len(s) == k]
    binary = (
        is_binary_metric(metric) and not graded and all(v in (0.0, 1.0) for s in full for v in s)
    )
    out: dict[str, Any] = {
        "k": k,
        "n": len(full),
        "mean": _mean([math.fsum(s) / k for s in full]),
        "pass_at_k": None,
        "pass_hat_k": None,
        "flip_rate": None,
    }
    if full and binary:
        out["pass_at_k"] = _mean([max(s) for s in full])
        out["pass_hat_k"] = _mean([min(s) for s in full])
        out["flip_rate"] = _mean([float(len(set(s)) > 1) for s in full])
    return out


def _answer_failures(records: list[MethodRecord], metrics: list[str]) -> dict[str, Any]:
    """Failed searches and judge errors counted per answer (every epoch), not per question."""
    return {
        "answers": len(records),
        "search_errors": sum(1 for r in records if r.error),
        "judge_errors": {
            m: sum(1 for r in records if m in r.judgements and r.judgements[m].error)
            for m in metrics
        },
    }


def add_epoch_entries(
    scope: dict[str, dict[str, Any]], answers: list[MethodRecord], metrics: list[str], k: int
) -> None:
    """Add `epochs[metric]` (see `epoch_summary`) to each method's entry of a summary scope
    (`by_method`, or one index's), and count its failures per answer (`answers`,
    `search_errors`, `judge_errors`) where the means count questions."""
    for method, entry in scope.items():
        mine = [r for r in answers if r.method == method]
        entry["epochs"] = {m: epoch_summary(mine, m, k) for m in metrics}
        entry.update(_answer_failures(mine, metrics))
