"""What a run found, in one line: the best method per metric, whether any difference is
significant, and the caveats that apply. A pure function of the summary JSON, so the
terminal (under its table) and the report (at its top) say the same thing.

    Highest correctness: tog, local and basic tie at 0.67; highest token recall: local
    (0.73). No method is significantly better on these 6 questions (paired tests, Holm
    p < 0.05). Caveats: only 6 questions; a small judge (1.5B); partial run.
"""

from __future__ import annotations

import re
from typing import Any

from gtog.eval.scoring._base import uses_llm

__all__ = ["ALPHA", "FEW_QUESTIONS", "common_counts", "plural", "scale_of", "to_unit", "verdict"]

ALPHA = 0.05
"""Holm-adjusted p below this calls a difference significant (as the table's `*`)."""
FEW_QUESTIONS = 30
"""Below this many compared questions, a run is called few (intervals wider than ±0.15
for a mean near 0.5)."""
SMALL_JUDGE_B = 3.0
"""A judge model whose name states at most this many billion parameters is called small."""
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)b(?![a-z])")
_LABEL = {"token_recall": "token recall", "evidence_recall": "evidence recall"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 question`, `6 questions`."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def _label(metric: str) -> str:
    return _LABEL.get(metric, metric.replace("_", " "))


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _groups(summary: dict[str, Any]) -> dict[str, dict]:
    """method -> its same-question means (a summary of any gtog version: odd shapes skipped)."""
    return {
        str(m): _dict(_dict(g).get("same_questions"))
        for m, g in _dict(summary.get("by_method")).items()
    }


def common_counts(summary: dict[str, Any], metrics: list[str]) -> dict[str, int]:
    """metric -> how many questions its same-question means cover (every method's the same:
    the questions every method answered and the judge scored)."""
    groups = list(_groups(summary).values())
    return {
        m: min((int(_number(_dict(g.get("scored")).get(m)) or 0) for g in groups), default=0)
        for m in metrics
    }


def scale_of(summary: dict[str, Any], metric: str) -> tuple[float, float] | None:
    """A graded metric's scale `(low, high)` from the summary's `metadata.scales` (None:
    the metric is on 0-1)."""
    raw = _dict(_dict(summary.get("metadata")).get("scales")).get(metric)
    if not isinstance(raw, list) or len(raw) != 2:
        return None
    low, high = _number(raw[0]), _number(raw[1])
    return (low, high) if low is not None and high is not None and high > low else None


def to_unit(value: float, scale: tuple[float, float] | None) -> float:
    """A score on its metric's scale as 0-1 (a 0-1 metric's unchanged)."""
    return value if scale is None else (value - scale[0]) / (scale[1] - scale[0])


def _means(summary: dict[str, Any], metric: str) -> dict[str, float]:
    out = {}
    for method, g in _groups(summary).items():
        value = _number(g.get(metric))
        if value is not None:
            out[method] = value
    return out


def _best(summary: dict[str, Any], metric: str) -> str | None:
    scale = scale_of(summary, metric)
    means = {m: to_unit(v, scale) for m, v in _means(summary, metric).items()}
    if not means:
        return None
    top = max(means.values())
    leaders = [m for m, v in means.items() if abs(v - top) < 1e-9]
    note = "" if scale is None else f"its {scale[0]:g}-{scale[1]:g} scale shown as 0-1"
    if len(leaders) == len(means) and len(means) > 1:
        tail = f" ({note})" if note else ""
        return f"{_label(metric)}: {_join(leaders)} tie at {top:.2f}{tail}"
    note = f", {note}" if note else ""
    if len(leaders) > 1:
        return f"{_label(metric)}: {_join(leaders)} ({top:.2f}{note})"
    return f"{_label(metric)}: {leaders[0]} ({top:.2f}{note})"


def _significant(summary: dict[str, Any], metrics: list[str]) -> list[str]:
    """`tog is significantly better than basic on correctness`, per significant pair."""
    wins: dict[tuple[str, str], list[str]] = {}
    for c in summary.get("comparisons") or []:
        c = _dict(c)
        p, diff = _number(c.get("p_holm")), _number(c.get("diff"))
        if c.get("metric") not in metrics or p is None or diff is None or p >= ALPHA or not diff:
            continue
        better, worse = (c["a"], c["b"]) if diff > 0 else (c["b"], c["a"])
        wins.setdefault((better, c["metric"]), []).append(worse)
    return [
        f"{better} is significantly better than {_join(worse)} on {_label(metric)}"
        for (better, metric), worse in wins.items()
    ]


def _small_judge(summary: dict[str, Any], metrics: list[str]) -> str | None:
    if not any(uses_llm(m) for m in metrics):
        return None
    sizes = []
    for name in _dict(_dict(summary.get("metadata")).get("judge_models")).values():
        found = _SIZE.findall(str(name).lower())
        sizes += [float(s) for s in found if float(s) <= SMALL_JUDGE_B]
    if not sizes:
        return None
    return f"a small judge ({max(sizes):g}B parameters)"


def _partial(summary: dict[str, Any]) -> str | None:
    run = _dict(_dict(summary.get("metadata")).get("run"))
    status = run.get("status")
    if not status or status == "complete":
        return None
    done, total = run.get("pairs_done"), run.get("pairs_total")
    count = f": {done} of {total} pairs" if done is not None and total else ""
    return f"partial run{count} ({status})"


def verdict(summary: dict[str, Any], metrics: list[str] | None = None) -> str | None:
    """The run's finding in one line (None when no metric has a score to compare)."""
    metrics = [str(m) for m in metrics or _dict(summary.get("metadata")).get("metrics") or []]
    bests = [b for b in (_best(summary, m) for m in metrics) if b is not None]
    if not bests:
        return None
    counts = common_counts(summary, metrics)
    scored = [k for m, k in counts.items() if _means(summary, m)]
    n = max(scored, default=0)
    methods = len(_groups(summary))
    parts = ["Highest " + "; highest ".join(bests) + "."]
    wins = _significant(summary, metrics)
    where = f"on these {plural(n, 'question')}" if len(set(scored)) == 1 else "on these questions"
    if methods < 2:
        parts.append("One method only: nothing to compare.")
    elif wins:
        said = ", ".join(wins[:-1]) + ", and " + wins[-1] if len(wins) > 1 else wins[0]
        parts.append(f"{where[0].upper()}{where[1:]}, {said} (paired tests, Holm p < {ALPHA:g}).")
    else:
        parts.append(
            f"No method is significantly better {where} (paired tests, Holm p < {ALPHA:g})."
        )
    caveats = []
    if n < FEW_QUESTIONS:
        caveats.append(f"only {plural(n, 'question')} compared")
    caveats += [c for c in (_small_judge(summary, metrics), _partial(summary)) if c is not None]
    if caveats:
        parts.append("Caveats: " + "; ".join(caveats) + ".")
    return " ".join(parts)
