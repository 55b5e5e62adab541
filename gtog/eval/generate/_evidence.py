"""Find a generated question's evidence in the index's text units.

A model asked to quote sentences word for word mostly does, but may change a quote mark, a
space or a word. A quote counts as found in a text unit when its normalised text (NFKC,
case-folded, one space) is part of the unit's; failing that, when one of the unit's
sentences shares at least `MIN_OVERLAP` of the content words of the longer of the two (then that
sentence, as the unit writes it, is the evidence). A quote found nowhere is dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from gtog.eval.generate._sources import Unit
from gtog.eval.scoring._lexical import normalize_tokens

__all__ = ["MIN_OVERLAP", "Evidence", "locate", "sentences"]

MIN_OVERLAP = 0.6
"""Words shared with a text unit's sentence, over the longer one's, for a loose quote."""

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n\s*\n")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "´": "'", "`": "'"})


@dataclass(frozen=True)
class Evidence:
    """A quote found in a text unit: the unit's id and the text as found."""

    unit_id: str
    text: str


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(text.split()).strip(" \"'")


def sentences(text: str) -> list[str]:
    """A text's sentences (split after `.`, `!`, `?` and at blank lines), stripped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


def locate(quote: str, units: Sequence[Unit]) -> Evidence | None:
    """Where `quote` is among `units` (the first unit that holds it), else None."""
    wanted = _norm(quote)
    if len(wanted) < 3:
        return None
    for unit in units:
        if wanted in _norm(unit.text):
            return Evidence(unit.id, " ".join(quote.split()))
    quote_words = set(normalize_tokens(quote))
    best: tuple[float, str, str] | None = None
    for unit in units:
        for sentence in sentences(unit.text):
            score = _overlap(quote_words, set(normalize_tokens(sentence)))
            if score >= MIN_OVERLAP and (best is None or score > best[0]):
                best = (score, unit.id, " ".join(sentence.split()))
    return Evidence(best[1], best[2]) if best is not None else None
