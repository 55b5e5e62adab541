"""How well each judge-free metric agrees with the correctness judge, where both ran.

Over every answer (all methods pooled) that has both a correctness verdict and the
metric's score: `auc`, the probability that an answer the judge called right scores
higher on the metric than one it called wrong (ties count half; the Mann-Whitney U over
the two groups' sizes; None unless both verdicts occur), and, with the metric cut at
`CUT` (0.5), `accuracy` and Cohen's `kappa` with its 95% interval against the verdicts.
Pure functions of records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.results._statistics import cohen_kappa

__all__ = ["CUT", "REFERENCE_METRICS", "metric_agreement"]

CUT = 0.5
REFERENCE_METRICS = ("exact_match", "f1", "rouge_l", "answer_similarity", "token_recall")
"""The judge-free answer metrics compared with the correctness judge."""


def _auc(right: list[float], wrong: list[float]) -> float | None:
    from scipy import stats

    if not right or not wrong:
        return None
    u = stats.mannwhitneyu(right, wrong, alternative="two-sided").statistic
    return float(u) / (len(right) * len(wrong))


def metric_agreement(records: Iterable[MethodRecord], metrics: list[str]) -> dict[str, Any]:
    """metric -> `{n, auc, cut, accuracy, kappa, kappa_ci95}` for each reference metric of
    the run (needs `correctness` among the metrics; else empty)."""
    if "correctness" not in metrics:
        return {}
    records = [r for r in records if r.error is None]
    out: dict[str, Any] = {}
    for metric in (m for m in metrics if m in REFERENCE_METRICS):
        pairs = [
            (float(j.score), int(v.score))  # type: ignore[arg-type]
            for r in records
            if (j := r.judgements.get(metric)) is not None
            and j.score is not None
            and (v := r.judgements.get("correctness")) is not None
            and v.score is not None
        ]
        verdicts = [v for _, v in pairs]
        cut = [int(s >= CUT) for s, _ in pairs]
        kappa = cohen_kappa(verdicts, cut)
        out[metric] = {
            "n": len(pairs),
            "auc": _auc([s for s, v in pairs if v == 1], [s for s, v in pairs if v == 0]),
            "cut": CUT,
            "accuracy": kappa.accuracy,
            "kappa": kappa.kappa,
            "kappa_ci95": kappa.ci95.as_list(),
            "kappa_reason": kappa.ci95.reason,
        }
    return out
