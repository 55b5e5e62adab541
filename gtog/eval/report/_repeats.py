"""The report's repeated answers and judge panel sections, from the detailed and summary JSON.

Repeated answers (`epochs: k`): per method and metric the summary's `epochs` entry (mean,
pass@k, pass^k, flip rate), and the questions whose verdicts flipped between answers, each
answer's verdict in order. A judge panel (`judge.models`): each model's mean per method and
metric, Krippendorff's alpha per metric, and every answer on which the models split, with
each model's verdict and reason. Tolerant of missing or malformed fields (`readers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gtog.eval.report._readers import as_dict, as_int, as_num, as_str

__all__ = [
    "PanelSection",
    "RepeatsSection",
    "Split",
    "panel_section",
    "repeats_section",
]

MAX_LISTED = 200
"""Flipped or split answers listed at most (the counts say how many there are)."""


@dataclass(frozen=True)
class RepeatRow:
    """One method's repeats on one metric (the summary's `by_method[m].epochs[metric]`)."""

    method: str
    metric: str
    n: int | None
    mean: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    flip_rate: float | None


@dataclass(frozen=True)
class Flip:
    """A question whose answers got different verdicts on a metric."""

    qid: str
    question: str
    method: str
    metric: str
    scores: list[float | None]
    """Each answer's score, epoch 1 first (None: unscored or failed)."""


@dataclass(frozen=True)
class RepeatsSection:
    """Repeated answers: the table and the flipped questions."""

    k: int
    rows: list[RepeatRow]
    flips: list[Flip] = field(default_factory=list)
    flipped: int = 0
    """All flipped (question, method, metric), also those not listed."""


@dataclass(frozen=True)
class Vote:
    """One panel model's verdict on one answer."""

    model: str
    score: float | None
    reason: str | None
    error: str | None


@dataclass(frozen=True)
class Split:
    """An answer on which the panel's models did not all say the same."""

    qid: str
    question: str
    method: str
    epoch: int
    metric: str
    score: float | None
    """The majority's score (None: no majority)."""
    votes: list[Vote]


@dataclass(frozen=True)
class Agreement:
    """The panel's agreement on one metric (the summary's `judge_agreement`)."""

    metric: str
    alpha: float | None
    n: int | None
    split: int | None
    reason: str | None


@dataclass(frozen=True)
class PanelSection:
    """A judge panel: models, their means, agreement, and where they split."""

    models: list[str]
    means: list[tuple[str, str, list[float | None]]]
    """(method, metric, each model's mean in `models` order)."""
    agreement: list[Agreement]
    splits: list[Split] = field(default_factory=list)
    split_count: int = 0


def _answers(q: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(epoch, methods) of a question's entry: its answers, then its repeats."""
    out = [(1, as_dict(q.get("methods")))]
    for epoch, methods in as_dict(q.get("repeats")).items():
        number = int(epoch) if str(epoch).isdigit() else None
        if number is not None:
            out.append((number, as_dict(methods)))
    return sorted(out, key=lambda pair: pair[0])


def repeats_section(detailed: dict[str, Any], summary: dict[str, Any]) -> RepeatsSection | None:
    """The repeated answers section (None: the run has no repeats)."""
    rows, k = [], None
    for method, group in as_dict(summary.get("by_method")).items():
        for metric, e in as_dict(as_dict(group).get("epochs")).items():
            e = as_dict(e)
            k = k or as_int(e.get("k"))
            rows.append(
                RepeatRow(
                    str(method),
                    str(metric),
                    as_int(e.get("n")),
                    as_num(e.get("mean")),
                    as_num(e.get("pass_at_k")),
                    as_num(e.get("pass_hat_k")),
                    as_num(e.get("flip_rate")),
                )
            )
    if not rows or k is None:
        return None
    metrics = list(dict.fromkeys(r.metric for r in rows))
    flips: list[Flip] = []
    for q in detailed.get("results") or []:
        q = as_dict(q)
        scores: dict[tuple[str, str], list[float | None]] = {}
        for _, methods in _answers(q):
            for method, entry in methods.items():
                got = as_dict(as_dict(entry).get("scores"))
                for metric in metrics:
                    scores.setdefault((str(method), metric), []).append(as_num(got.get(metric)))
        for (method, metric), values in scores.items():
            if len({v for v in values if v is not None}) > 1:
                qid, text = str(q.get("question_id")), as_str(q.get("question")) or ""
                flips.append(Flip(qid, text, method, metric, values))
    return RepeatsSection(k, rows, flips[:MAX_LISTED], len(flips))


def _splits(detailed: dict[str, Any], models: list[str]) -> list[Split]:
    out = []
    for q in detailed.get("results") or []:
        q = as_dict(q)
        for epoch, methods in _answers(q):
            for method, entry in methods.items():
                entry = as_dict(entry)
                scores = as_dict(entry.get("scores"))
                for metric, panel in as_dict(entry.get("panel")).items():
                    panel = as_dict(panel)
                    votes = [
                        Vote(
                            m,
                            as_num(as_dict(panel.get(m)).get("score")),
                            as_str(as_dict(panel.get(m)).get("reason")),
                            as_str(as_dict(panel.get(m)).get("error")),
                        )
                        for m in models
                    ]
                    if len({v.score for v in votes if v.score is not None}) > 1:
                        out.append(
                            Split(
                                str(q.get("question_id")),
                                as_str(q.get("question")) or "",
                                str(method),
                                epoch,
                                str(metric),
                                as_num(scores.get(metric)),
                                votes,
                            )
                        )
    return out


def panel_section(detailed: dict[str, Any], summary: dict[str, Any]) -> PanelSection | None:
    """The judge panel section (None: the run had one judge)."""
    agreement = as_dict(summary.get("judge_agreement"))
    if not agreement:
        return None
    first = as_dict(next(iter(agreement.values())))
    models = [str(m) for m in first.get("models") or [] if isinstance(m, str)]
    means = []
    for method, group in as_dict(summary.get("by_method")).items():
        judges = as_dict(as_dict(group).get("judges"))
        for metric in agreement:
            means.append(
                (
                    str(method),
                    str(metric),
                    [as_num(as_dict(judges.get(m)).get(metric)) for m in models],
                )
            )
    rows = [
        Agreement(
            str(metric),
            as_num(as_dict(a).get("krippendorff_alpha")),
            as_int(as_dict(a).get("n")),
            as_int(as_dict(a).get("split")),
            as_str(as_dict(a).get("reason")),
        )
        for metric, a in agreement.items()
    ]
    splits = _splits(detailed, models)
    return PanelSection(models, means, rows, splits[:MAX_LISTED], len(splits))
