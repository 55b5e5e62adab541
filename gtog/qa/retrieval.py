"""Rank metrics over retrieved document ids (pure functions)."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import Any

__all__ = ["average_precision", "f1_score", "recall_at_k", "recall_at_k_ge6"]

_MISSING: Any = object()


def _pick(name: str, value: Any, alias: str, alias_value: Any) -> Any:
    if value is not _MISSING and alias_value is not _MISSING:
        raise TypeError(f"pass either {name} or {alias}, not both")
    if value is _MISSING and alias_value is _MISSING:
        raise TypeError(f"missing argument {name}")
    return value if value is not _MISSING else alias_value


def recall_at_k(
    relevant_docs: Collection[Hashable] = _MISSING,
    retrieved_docs: Sequence[Hashable] = _MISSING,
    k: int = 10,
    *,
    relevant_ids: Collection[Hashable] = _MISSING,
    retrieved_ids: Sequence[Hashable] = _MISSING,
) -> float:
    """Relevant documents among the first `k` retrieved, over the first `k` relevant ones.

    The seed's rule: the denominator is `min(k, number of relevant)`, so
    `recall_at_k({"a", "b"}, ["a"], k=1) == 1.0` and
    `recall_at_k(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7], k=5) == 0.75`.
    No relevant documents (or k = 0) gives 0.0, as in graphrag-eval. Accepts the seed's
    keywords and graphrag-eval 6.x's (`relevant_ids`, `retrieved_ids`, `k=10`).
    """
    relevant = set(_pick("relevant_docs", relevant_docs, "relevant_ids", relevant_ids))
    retrieved = _pick("retrieved_docs", retrieved_docs, "retrieved_ids", retrieved_ids)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    denominator = min(k, len(relevant))
    if denominator == 0:
        return 0.0
    found = {doc for doc in list(retrieved)[:k] if doc in relevant}
    return len(found) / denominator


def recall_at_k_ge6(relevant: Sequence[Hashable], retrieved: Sequence[Hashable], k: int) -> float:
    """graphrag-eval 6.x's recall@k: hits among the first `k` relevant ids *in list order*.

    Used by `semantics="graphrag-eval-6"`: `(["a", "b"], ["b"], 1) -> 0.0`, where the
    seed's rule gives 1.0.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    relevant_at_k = list(relevant)[:k]
    if not relevant_at_k:
        return 0.0
    return len(set(relevant_at_k) & set(list(retrieved)[:k])) / len(relevant_at_k)


def average_precision(
    relevant_docs: Collection[Hashable] = _MISSING,
    retrieved_docs: Sequence[Hashable] = _MISSING,
    *,
    relevant_ids: Collection[Hashable] = _MISSING,
    retrieved_ids: Sequence[Hashable] = _MISSING,
) -> float:
    """Sum of precision@i over the ranks i that hold a relevant document, divided by the
    number of relevant documents (the seed's formula and graphrag-eval 6.x's code).

    `average_precision({1, 3, 5, 6}, [1, 4, 3, 5, 7]) == (1 + 2/3 + 3/4) / 4`; the seed's
    worked example divides by the 3 hits instead (0.8056), which contradicts its formula.
    A document retrieved twice counts once; no relevant documents gives 0.0.
    """
    relevant = set(_pick("relevant_docs", relevant_docs, "relevant_ids", relevant_ids))
    retrieved = _pick("retrieved_docs", retrieved_docs, "retrieved_ids", retrieved_ids)
    if not relevant:
        return 0.0
    seen: set[Hashable] = set()
    total = 0.0
    for rank, doc in enumerate(retrieved, start=1):
        if doc in relevant and doc not in seen:
            seen.add(doc)
            total += len(seen) / rank
    return total / len(relevant)


def f1_score(recall: float | None, precision: float | None) -> float | None:
    """Harmonic mean of recall and precision; None when either is unknown."""
    if recall is None or precision is None:
        return None
    if recall + precision == 0:
        return 0.0
    return 2 * recall * precision / (recall + precision)
