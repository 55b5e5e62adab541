"""Reference metrics without an LLM judge: exact_match, f1, rouge_l, answer_similarity.

- `exact_match` and `f1` follow the SQuAD evaluation script: both texts are lower-cased,
  punctuation and the articles a/an/the removed and whitespace collapsed; `exact_match` is 1
  when the two normalised texts are equal, `f1` the harmonic mean of the token precision
  and recall (tokens counted with multiplicity).
- `rouge_l` is the F-measure of ROUGE-L (longest common subsequence) from the
  `rouge-score` package, with gtog's Unicode word tokenizer (`lexical.words`, citation
  markers kept; on ASCII text it splits exactly as rouge-score's own, `[3]` included)
  and no stemming.
- With several gold answers (SQuAD, HotpotQA, GraphRAG-Bench lists) each metric takes its
  best match over them.
- `answer_similarity` is the cosine between the answer's and the reference's embeddings,
  made by the index's embedding model (`local_search.embedding_model_id`), clipped to
  [0, 1]; its embedding requests are metered like a judge's calls (its `llm_calls`). A
  failed embedding call is unscored.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import TYPE_CHECKING, Any

from gtog._errors import describe_exception
from gtog.eval.scoring._base import CallBound, Judgement, ScorerBase, register_scorer
from gtog.eval.scoring._lexical import best_match, words
from gtog.llm._errors import fatal_reason
from gtog.llm._usage import metering

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "AnswerSimilarity",
    "ExactMatch",
    "RougeL",
    "TokenF1",
    "cosine_similarity",
    "exact_match",
    "rouge_l",
    "squad_normalize",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def squad_normalize(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, one space."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(reference: str, answer: str) -> int:
    """1 when the normalised answer equals the normalised reference, else 0."""
    return int(squad_normalize(answer) == squad_normalize(reference))


def token_f1(reference: str, answer: str) -> float | None:
    """SQuAD's token F1 of the answer against the reference (None: the reference
    normalises to nothing)."""
    truth, pred = squad_normalize(reference).split(), squad_normalize(answer).split()
    if not truth:
        return None
    common = sum((Counter(truth) & Counter(pred)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(truth)
    return 2 * precision * recall / (precision + recall)


class _Words:
    """rouge-score's tokenizer interface over gtog's Unicode word tokenizer (citation
    markers kept: on ASCII text the tokens are rouge-score's own, `[3]` giving `3`)."""

    def tokenize(self, text: str) -> list[str]:
        return words(text, keep_markers=True)


_ROUGE: Any = None


def rouge_l(reference: str, answer: str) -> float | None:
    """ROUGE-L F-measure (rouge-score) of the answer against the reference (None: the
    reference has no words)."""
    global _ROUGE
    if not words(reference, keep_markers=True):
        return None
    if _ROUGE is None:
        from rouge_score import rouge_scorer

        _ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=_Words())
    return float(_ROUGE.score(reference, answer)["rougeL"].fmeasure)


def cosine_similarity(a: list[float], b: list[float]) -> float | None:
    """Cosine of two vectors clipped to [0, 1] (None: a zero or non-finite vector)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if not norm or not math.isfinite(dot / norm if norm else math.nan):
        return None
    return min(1.0, max(0.0, dot / norm))


# -- as scorers --------------------------------------------------------------------------


def _exact(reference: str, answer: str) -> int | None:
    return exact_match(reference, answer) if squad_normalize(reference) else None


class _AgainstReference(ScorerBase):
    """A judge-free metric of the answer against the reference: `measure(reference,
    answer)`, unscored (`why`) where it gives None."""

    needs = frozenset({"reference", "answer"})
    why = "the reference is empty once normalised"

    @staticmethod
    def measure(reference: str, answer: str) -> float | None:
        raise NotImplementedError

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The metric's value, the best over the gold answers when there are several;
        unscored when no reference gives it anything to compare."""
        value = best_match(self.measure, item.gold, answer)
        return Judgement.unscored(self.why) if value is None else Judgement(score=value)


@register_scorer
class ExactMatch(_AgainstReference):
    """`exact_match` of the answer to the reference (SQuAD normalisation; no LLM)."""

    name = "exact_match"
    binary = True
    measure = staticmethod(_exact)


@register_scorer
class TokenF1(_AgainstReference):
    """SQuAD's token `f1` of the answer against the reference (no LLM)."""

    name = "f1"
    measure = staticmethod(token_f1)


@register_scorer
class RougeL(_AgainstReference):
    """`rouge_l`: ROUGE-L F-measure of the answer against the reference (no LLM)."""

    name = "rouge_l"
    why = "the reference has no words"
    measure = staticmethod(rouge_l)


@register_scorer
class AnswerSimilarity(ScorerBase):
    """`answer_similarity`: embedding cosine of answer and reference (the index's model).

    Each reference is embedded once per index (kept for the other methods' answers).
    """

    name = "answer_similarity"
    needs = frozenset({"reference", "answer"})
    metered = True

    def __init__(self, setup: Any) -> None:
        super().__init__(setup)
        self._references: dict[str, list[float]] = {}

    async def _reference(self, text: str) -> list[float]:
        if text not in self._references:
            [self._references[text]] = await self.setup.embedder.embed([text])
        return self._references[text]

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """The clipped cosine; unscored without an embedding model or when a call fails."""
        if self.setup.embedder is None:
            return Judgement.unscored("no embedding model configured")
        if not answer.strip() or not item.gold:
            return Judgement.unscored("an empty answer or reference has no embedding")
        with metering() as meter:
            try:
                references = [await self._reference(text) for text in item.gold]
                [vector] = await self.setup.embedder.embed([answer])
            except Exception as exc:
                if fatal_reason(exc) is not None:
                    raise
                return Judgement.unscored(describe_exception(exc), **_usage(meter))
        # the closest gold answer, when there are several
        values = [v for r in references if (v := cosine_similarity(vector, r)) is not None]
        value = max(values) if values else None
        if value is None:
            return Judgement.unscored("the embedding model returned an unusable vector")
        return Judgement(score=value, **_usage(meter))

    def bound(self, item: QAItem, answer: int, context: int) -> list[CallBound] | None:
        """One embedding request per gold answer (each embedded once per index) and one
        for the answer of at most `answer` tokens, at most; one at least."""
        embedder = self.setup.embedder
        if embedder is None or not item.gold:
            return []
        tokenizer = getattr(embedder.embedding, "tokenizer", None)
        reference = sum(len(tokenizer.encode(t)) if tokenizer else len(t) for t in item.gold)
        calls = (1, 1 + len(item.gold))
        return [CallBound(embedder.config, calls, (1, reference + answer), embedding=True)]


def _usage(meter: Any) -> dict[str, Any]:
    """The judgement's calls (its embedding requests), tokens and USD, and what the cache
    replayed: counted like a judge's, so the run's cost and the estimate see them."""
    tally = meter.tally
    return {
        "llm_calls": tally.embedding_calls,
        "prompt_tokens": tally.embedding_tokens,
        "cost_usd": tally.cost_usd,
        "cached_calls": tally.cached_calls,
        "usd_saved": tally.cached_usd,
    }
