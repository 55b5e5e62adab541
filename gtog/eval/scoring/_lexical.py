"""Deterministic metrics that need no LLM: token_recall (answer) and evidence_recall (context)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from gtog.eval.scoring._base import Judgement, ScorerBase, register_scorer

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "CONTEXT_METRICS",
    "LEXICAL_METRICS",
    "EvidenceRecall",
    "TokenRecall",
    "best_match",
    "content_tokens",
    "evidence_recall",
    "normalize_tokens",
    "token_recall",
    "words",
]

_MARKER = re.compile(r"\[\s*\d+(?:\s*[-\u2013,;]\s*\d+)*\s*\]")
_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "and",
        "or",
        "but",
        "is",
        "was",
        "are",
        "were",
        "be",
        "been",
        "it",
        "its",
        "his",
        "her",
        "their",
        "this",
        "that",
        "these",
        "those",
        "as",
        "from",
        "who",
        "whom",
        "which",
        "what",
        "where",
        "when",
    }
)


def words(text: str, *, keep_markers: bool = False) -> list[str]:
    """The one tokenizer of both metrics: NFKC-normalised, case-folded runs of Unicode
    letters and digits (any punctuation, straight or curly quotes, apostrophes and dashes
    separate words), citation markers like `[3]` removed (`keep_markers`: kept, their
    numbers words like any other, as rouge-score's own tokenizer has them)."""
    if not keep_markers:
        text = _MARKER.sub(" ", text)
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_tokens(text: str) -> list[str]:
    """token_recall's words: `words` without articles or common function words."""
    return [w for w in words(text) if w not in _STOPWORDS]


def token_recall(reference: str, answer: str) -> float | None:
    """Share of the reference's content words that the answer contains (None: no words)."""
    wanted = set(normalize_tokens(reference))
    if not wanted:
        return None
    return len(wanted & set(normalize_tokens(answer))) / len(wanted)


def best_match(
    measure: Callable[[str, str], float | None], gold: Iterable[str], answer: str
) -> float | None:
    """`measure(reference, answer)` at its best over the gold answers (a question with
    several right answers: SQuAD's, HotpotQA's), None when no gold answer gives a value."""
    values = [v for ref in gold if (v := measure(ref, answer)) is not None]
    return max(values) if values else None


LEXICAL_METRICS = {"token_recall": token_recall}
"""metric name -> fn(reference, answer) -> score in [0, 1] or None."""


_MORE_FUNCTION_WORDS = """
    i me my mine we us our ours you your yours he him she hers they them theirs itself
    himself herself themselves myself yourself ourselves one ones there here then than
    so if not no nor into onto out up down off over under about above below after before
    again also just only very too can could will would shall should may might must do
    does did doing done have has had having am being
    s t d ll re ve m
"""
FUNCTION_WORDS = _STOPWORDS | frozenset(_MORE_FUNCTION_WORDS.split())
"""Words evidence_recall ignores: token_recall's list plus pronouns, auxiliaries,
common prepositions and the clitics an apostrophe leaves (`'s`, `n't`, `'ll`, ...)."""


def content_tokens(text: str) -> list[str]:
    """The content words of a text, as evidence_recall compares them.

    NFKC-normalised and case-folded; citation markers like `[3]`, `[3, 4]` or `[3-5]`
    removed; split into runs of Unicode letters and digits (so punctuation, straight or curly
    quotes and apostrophes separate words); function words dropped.
    """
    return [w for w in words(text) if w not in FUNCTION_WORDS]


def evidence_recall(evidence: str, context: str) -> float | None:
    """Share of the evidence's distinct content words that occur in the context.

    None when there is nothing to compare: the evidence has no content words or the
    context is empty (never 0 for a missing context).
    """
    wanted = set(content_tokens(evidence))
    if not wanted or not context.strip():
        return None
    return len(wanted & set(content_tokens(context))) / len(wanted)


CONTEXT_METRICS = {"evidence_recall": evidence_recall}
"""metric name -> fn(gold evidence, retrieved context text) -> score in [0, 1] or None."""


# -- as scorers --------------------------------------------------------------------------


@register_scorer
class TokenRecall(ScorerBase):
    """`token_recall` of the reference in the answer (no LLM)."""

    name = "token_recall"
    needs = frozenset({"reference", "answer"})

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The share of the reference's words in the answer (the best over several gold
        answers); unscored without any."""
        value = best_match(token_recall, item.gold, answer)
        if value is None:
            return Judgement.unscored("the reference has no content words")
        return Judgement(score=value)


@register_scorer
class EvidenceRecall(ScorerBase):
    """`evidence_recall` of the gold evidence in the context the method answered from."""

    name = "evidence_recall"
    needs = frozenset({"evidence", "context"})

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The share of the evidence's words in the context; unscored without either."""
        if not (context or "").strip():
            return Judgement.unscored("no retrieved context to look for the evidence in")
        value = evidence_recall(item.evidence or "", context or "")
        if value is None:
            return Judgement.unscored("the evidence has no content words")
        return Judgement(score=value)
