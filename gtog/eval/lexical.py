"""Deterministic answer metrics that need no LLM (SQuAD-style text normalisation)."""

from __future__ import annotations

import re
import string

__all__ = ["LEXICAL_METRICS", "normalize_tokens", "token_recall"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
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


def normalize_tokens(text: str) -> list[str]:
    """Lower-case words without punctuation, articles or common function words."""
    text = text.lower().translate(str.maketrans(string.punctuation, " " * len(string.punctuation)))
    return [w for w in _ARTICLES.sub(" ", text).split() if w not in _STOPWORDS]


def token_recall(reference: str, answer: str) -> float | None:
    """Share of the reference's content words that the answer contains (None: no words)."""
    wanted = set(normalize_tokens(reference))
    if not wanted:
        return None
    return len(wanted & set(normalize_tokens(answer))) / len(wanted)


LEXICAL_METRICS = {"token_recall": token_recall}
"""metric name -> fn(reference, answer) -> score in [0, 1] or None."""
