"""The judge against people: calibration, and prediction-powered means (pure functions).

For each 0/1 judge metric and method, from the answers people labelled (gtog.eval.results.
_labels) and the judge's verdicts on every answer:

- **calibration**: agreement, Cohen's kappa, the judge's false-positive rate (it said right,
  people said wrong: FP / (FP + TN)) and false-negative rate, each with a Wilson interval;
  where several people labelled the same answers, their own agreement (Krippendorff's alpha,
  nominal).
- **prediction-powered mean** (Angelopoulos et al., Science 2023): the judge's mean over all
  N answers plus the mean of (label - judge) over the n labelled ones; its 95% interval is
  normal with variance var(judge)/N + var(label - judge)/n (population variances, as
  ppi-python's `ppi_mean_ci` with lambda 1). It stays valid when the judge is biased,
  because the labelled answers are a random sample of the method's answers.
- **paired differences** between methods the same way: the mean over questions both were
  judged on of (judge_a - judge_b) plus each method's mean correction, variance the sum of
  the three parts; a two-sided z test, Holm-adjusted per metric.

With fewer than `MIN_LABELS` labels of a method there is no PPI figure, and the reason says
so. An answer several people labelled counts with their mean label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np

from gtog.eval.results._labels import Label, LabelKey, current_labels, labellable_metrics
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._statistics import holm, wilson_interval

__all__ = [
    "MIN_LABELS",
    "calibration",
    "labels_for_width",
    "ppi_difference",
    "ppi_mean",
]

MIN_LABELS = 10
"""Labels a method needs before its PPI mean is given."""


@cache
def _z() -> float:
    """The normal quantile of a two-sided 95% interval."""
    from scipy import stats

    return float(stats.norm.ppf(0.975))


def _clip(low: float, high: float) -> list[float]:
    return [max(0.0, low), min(1.0, high)]


def ppi_mean(
    labels: np.ndarray, judged_labelled: np.ndarray, judged_all: np.ndarray
) -> tuple[float, list[float], float]:
    """(PPI mean, its 95% interval clipped to [0, 1], its standard error)."""
    n, big_n = len(labels), len(judged_all)
    rectifier = labels - judged_labelled
    mean = float(judged_all.mean() + rectifier.mean())
    se = math.sqrt(judged_all.var() / big_n + rectifier.var() / n)
    return mean, _clip(mean - _z() * se, mean + _z() * se), se


def ppi_difference(
    paired_judge: np.ndarray, rect_a: np.ndarray, rect_b: np.ndarray
) -> tuple[float, list[float], float]:
    """(PPI difference a - b, its 95% interval, two-sided p) from the judge's paired
    differences over every question and each method's (label - judge) on its labels."""
    from scipy import stats

    diff = float(paired_judge.mean() + rect_a.mean() - rect_b.mean())
    se = math.sqrt(
        paired_judge.var() / len(paired_judge)
        + rect_a.var() / len(rect_a)
        + rect_b.var() / len(rect_b)
    )
    p = 1.0 if se == 0 else float(2 * stats.norm.sf(abs(diff) / se))
    if se == 0 and diff != 0:
        p = 0.0
    return diff, [diff - _z() * se, diff + _z() * se], p


def labels_for_width(
    judge_error_var: float, judge_var: float, answers: int, width: float
) -> int | None:
    """Labels needed for a PPI interval `width` wide (full width), given the variance of
    (label - judge) and of the judge's verdicts over `answers` answers; None when even
    infinitely many labels cannot (the judge's own term is wider)."""
    half = width / 2
    room = (half / _z()) ** 2 - judge_var / max(answers, 1)
    if room <= 0:
        return None
    return max(math.ceil(judge_error_var / room), MIN_LABELS)


def _kappa(judge: list[int], people: list[int]) -> float | None:
    n = len(judge)
    if n == 0:
        return None
    agree = sum(a == b for a, b in zip(judge, people, strict=True)) / n
    pj, pp = sum(judge) / n, sum(people) / n
    chance = pj * pp + (1 - pj) * (1 - pp)
    if chance >= 1:
        return None
    return (agree - chance) / (1 - chance)


def _rate(hits: int, total: int) -> dict[str, Any]:
    if total == 0:
        return {"rate": None, "ci95": None, "n": 0}
    ci = wilson_interval(hits, total)
    return {"rate": hits / total, "ci95": [ci.low, ci.high], "n": total}


def _alpha(per_item: Iterable[dict[str, int]]) -> float | None:
    """Krippendorff's alpha (nominal) of the labellers, over answers two or more labelled."""
    items = [v for v in per_item if len(v) > 1]
    if not items:
        return None
    labellers = sorted({p for v in items for p in v})
    data = np.array([[v.get(p, np.nan) for v in items] for p in labellers], dtype=float)
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return 1.0
    import krippendorff

    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def _method_block(
    answers: list[MethodRecord], metric: str, labelled: dict[LabelKey, dict[str, int]]
) -> tuple[dict[str, Any], np.ndarray | None]:
    judged = [
        (r, float(r.judgements[metric].score))  # type: ignore[arg-type]
        for r in answers
        if r.error is None and metric in r.judgements and r.judgements[metric].score is not None
    ]
    all_scores = np.array([s for _, s in judged], dtype=float)
    pairs = []  # (judge verdict, people's mean label)
    for r, s in judged:
        people = labelled.get((r.qid, r.method, r.epoch, metric))
        if people:
            pairs.append((s, sum(people.values()) / len(people)))
    judge_mean = float(all_scores.mean()) if len(all_scores) else None
    block: dict[str, Any] = {
        "n_answers": len(judged),
        "n_labels": len(pairs),
        "mean_judge": judge_mean,
    }
    if judge_mean is not None:
        ci = wilson_interval(round(float(all_scores.sum())), len(all_scores))
        block["ci95_judge"] = [ci.low, ci.high]
    hard = [(round(j), round(p)) for j, p in pairs if p != 0.5]
    judge_bits, people_bits = [j for j, _ in hard], [p for _, p in hard]
    fp = sum(j == 1 and p == 0 for j, p in hard)
    fn = sum(j == 0 and p == 1 for j, p in hard)
    wrong = sum(p == 0 for p in people_bits)
    block["agreement"] = (sum(j == p for j, p in hard) / len(hard)) if hard else None
    block["kappa"] = _kappa(judge_bits, people_bits)
    fpr, fnr = _rate(fp, wrong), _rate(fn, len(hard) - wrong)
    block["fpr"], block["fpr_ci95"] = fpr["rate"], fpr["ci95"]
    block["fnr"], block["fnr_ci95"] = fnr["rate"], fnr["ci95"]
    if len(pairs) < MIN_LABELS:
        block.update(
            mean_ppi=None,
            ci95_ppi=None,
            reason=f"{len(pairs)} labels: at least {MIN_LABELS} needed for a corrected mean",
        )
        return block, None
    labels = np.array([p for _, p in pairs])
    judged_labelled = np.array([j for j, _ in pairs])
    mean, ci, se = ppi_mean(labels, judged_labelled, all_scores)
    block.update(
        mean_ppi=mean,
        ci95_ppi=ci,
        se_ppi=se,
        error_var=float((labels - judged_labelled).var()),
        judge_var=float(all_scores.var()),
        reason=None,
    )
    return block, labels - judged_labelled


def calibration(
    records: list[MethodRecord], labels: list[Label], metrics: list[str], methods: list[str]
) -> dict[str, Any]:
    """`calibration` (metric -> method -> figures), `calibration_comparisons` (PPI paired
    differences, Holm per metric) and `calibration_labels` (counts, labellers, their alpha,
    stale labels) of a run; {} when no live label exists."""
    labelled, stale = current_labels(labels, records)
    if not labelled:
        return {}
    out: dict[str, Any] = {}
    comparisons = []
    alphas: dict[str, float | None] = {}
    for metric in labellable_metrics(metrics):
        mine = {k: v for k, v in labelled.items() if k[3] == metric}
        if not mine:
            continue
        alphas[metric] = _alpha(mine.values())
        blocks, rects = {}, {}
        for method in methods:
            answers = [r for r in records if r.method == method]
            if answers:
                blocks[method], rects[method] = _method_block(answers, metric, mine)
        out[metric] = blocks
        rows = []
        for a, b in combinations([m for m in methods if rects.get(m) is not None], 2):
            sa = {
                (r.qid, r.epoch): r.judgements[metric].score
                for r in records
                if _scored(r, a, metric)
            }
            sb = {
                (r.qid, r.epoch): r.judgements[metric].score
                for r in records
                if _scored(r, b, metric)
            }
            both = sorted(set(sa) & set(sb))
            if not both:
                continue
            paired = np.array([float(sa[k]) - float(sb[k]) for k in both])  # type: ignore[arg-type]
            diff, ci, p = ppi_difference(paired, rects[a], rects[b])  # type: ignore[arg-type]
            rows.append(
                {
                    "metric": metric,
                    "a": a,
                    "b": b,
                    "n": len(both),
                    "diff_ppi": diff,
                    "ci95": ci,
                    "p_value": p,
                }
            )
        for row, adjusted in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
            row["p_holm"] = adjusted
        comparisons += rows
    if not out:
        return {}
    labellers = sorted({p for v in labelled.values() for p in v})
    return {
        "calibration": out,
        "calibration_comparisons": comparisons,
        "calibration_labels": {
            "answers_labelled": len(labelled),
            "labellers": labellers,
            "stale": stale,
            "alpha": alphas,
        },
    }


def _scored(r: MethodRecord, method: str, metric: str) -> bool:
    j = r.judgements.get(metric)
    return r.method == method and r.error is None and j is not None and j.score is not None
