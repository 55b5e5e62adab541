"""Abstentions: answers that decline to answer, detected by a small rule set, and counted.

An answer abstains when, after trimming, it is a placeholder (`PLACEHOLDERS`: empty,
`n/a`, `none`, `unknown`, `no answer`, `-`, `?`, `tbd`, ... alone, in brackets or not), or
when its first sentence matches one of the decline patterns (`DECLINES`: "I do not know",
"I cannot answer", "unable to answer", "the data/context/knowledge graph does not
say/mention/contain ..." at the start of the answer, "there is no information", "not
enough information", ...), case-insensitively. A run adds its own patterns (regular
expressions, searched in the first sentence) with `abstention.patterns` in
eval_config.yaml, and can drop the built-in ones with `abstention.builtin: false`.

Per method the summary gives the abstention rate (over the answers the method gave: failed
searches are not answers) with its Wilson interval, and each metric's mean over the
answers that did not abstain (`answered`) beside the plain mean: a method that says "I do
not know" is not the same as one that is wrong. Pure functions of records.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from gtog.eval.results._inference import mean_stats
from gtog.eval.results._records import MethodRecord

__all__ = [
    "DECLINES",
    "PLACEHOLDERS",
    "AbstentionRules",
    "abstention_summary",
    "first_sentence",
]

PLACEHOLDERS = frozenset(
    {
        "",
        "n/a",
        "na",
        "none",
        "null",
        "nil",
        "nan",
        "unknown",
        "no answer",
        "no response",
        "not available",
        "not applicable",
        "-",
        "--",
        "?",
        "...",
        "tbd",
        "todo",
    }
)
"""Whole answers (lower case, brackets and end punctuation trimmed) that are no answer."""

_SOURCE = (
    r"(?:provided |given |available |above |retrieved )?"
    r"(?:data|data tables?|tables?|context|information|evidence|knowledge graph|graph|"
    r"text|texts|documents?|sources?|reports?|passages?|records?|story|stories)"
)

DECLINES = (
    r"\bi (?:do not|don't|dont|did not|didn't) know\b",
    r"\bi(?: cannot| can't| can ?not| could not| couldn't| am unable to|'m unable to"
    r"| am not able to) (?:answer|find|determine|tell|say|provide|identify)\b",
    r"\b(?:unable|not able) to (?:answer|find|determine|identify)\b",
    rf"^(?:[^,;]*,\s*)?(?:but |however,? )?(?:the |these |this )?{_SOURCE} (?:does|do|did) "
    r"not (?:say|mention|contain|provide|include|specify|state|tell|give|indicate|answer)\b",
    rf"\bno (?:mention|information|data|answer)s? (?:is |was |are )?"
    rf"(?:available|found|given|provided|in the {_SOURCE})\b",
    r"\bthere (?:is|was) no (?:information|data|mention|evidence)\b",
    r"\b(?:not enough|insufficient) (?:information|data|evidence|context)\b",
    r"\bcannot be (?:answered|determined)\b",
)
"""The built-in decline patterns (searched, case-insensitively, in the first sentence)."""

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_TRIM = " \t\r\n.!?:;,\"'()[]<>{}*_`"


def first_sentence(text: str) -> str:
    """The text up to its first sentence end (`.`, `!`, `?` before a space, or a line
    break), with curly apostrophes made straight."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").strip()
    m = _SENTENCE_END.search(text)
    return text[: m.start()] if m else text


@dataclass(frozen=True)
class AbstentionRules:
    """The patterns a run counts an answer as an abstention by."""

    patterns: tuple[str, ...] = ()
    """The run's own regular expressions (`abstention.patterns`)."""
    builtin: bool = True
    """Use `PLACEHOLDERS` and `DECLINES` too."""

    def __post_init__(self) -> None:
        declines = [*(DECLINES if self.builtin else ()), *self.patterns]
        object.__setattr__(self, "_regex", [re.compile(p, re.I) for p in declines])

    def abstains(self, answer: str | None) -> bool:
        """Whether `answer` declines to answer (see the module docstring)."""
        text = answer or ""
        if self.builtin and " ".join(text.strip(_TRIM).lower().split()) in PLACEHOLDERS:
            return True
        head = first_sentence(text)
        return any(r.search(head) for r in self._regex)  # type: ignore[attr-defined]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def abstention_summary(
    records: Iterable[MethodRecord],
    metrics: list[str],
    rules: AbstentionRules,
    labels: dict[tuple[str, str], Hashable] | None = None,
) -> dict[str, Any]:
    """`abstentions` (count), `abstention_rate` and its `abstention_ci95` (Wilson), over the
    answers given (failed searches left out); per metric the mean over the answers that
    did not abstain (`answered`), their count (`answered_n`) and interval
    (`answered_ci95`). The intervals are the summary's (`inference.mean_stats`: clustered
    by `labels` from MIN_CLUSTERS clusters on)."""
    answers = [r for r in records if r.error is None and r.response is not None]
    declined = [r for r in answers if rules.abstains(r.response)]
    kept = [r for r in answers if not rules.abstains(r.response)]

    def clusters(rs: list[MethodRecord]) -> list[Hashable] | None:
        return None if labels is None else [labels[(r.index_key, r.qid)] for r in rs]

    flags = [1.0 if rules.abstains(r.response) else 0.0 for r in answers]
    rate = mean_stats(flags, clusters(answers), binary=True)
    answered: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    intervals: dict[str, list[float] | None] = {}
    for metric in metrics:
        scored = [
            r for r in kept if metric in r.judgements and r.judgements[metric].score is not None
        ]
        values = [float(r.judgements[metric].score) for r in scored]  # type: ignore[arg-type]
        answered[metric] = _mean(values)
        counts[metric] = len(values)
        intervals[metric] = mean_stats(values, clusters(scored))["ci95"]
    return {
        "abstentions": len(declined),
        "abstention_rate": len(declined) / len(answers) if answers else None,
        "abstention_ci95": rate["ci95"],
        "answered": answered,
        "answered_n": counts,
        "answered_ci95": intervals,
    }
