"""Rank metrics over retrieved document ids (pure functions)."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence

__all__ = ["average_precision", "f1_score", "recall_at_k"]


def recall_at_k(
    relevant_docs: Collection[Hashable], retrieved_docs: Sequence[Hashable], k: int
) -> float:
    """Fraction of the relevant documents found among the first `k` retrieved.

    `recall_at_k({1, 3, 5, 6}, [1, 4, 3, 5, 7], k=5) == 0.75`. With no relevant
    documents there is nothing to miss, so the recall is 1.0.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    relevant = set(relevant_docs)
    if not relevant:
        return 1.0
    found = {doc for doc in retrieved_docs[:k] if doc in relevant}
    return len(found) / len(relevant)


def average_precision(
    relevant_docs: Collection[Hashable], retrieved_docs: Sequence[Hashable]
) -> float:
    """Mean of precision@i over the ranks i that hold a relevant document.

    `average_precision({1, 3, 5, 6}, [1, 4, 3, 5, 7]) == (1 + 2/3 + 3/4) / 3`.
    A document retrieved twice counts once; no relevant hit gives 0.0.
    """
    relevant = set(relevant_docs)
    seen: set[Hashable] = set()
    precisions: list[float] = []
    for rank, doc in enumerate(retrieved_docs, start=1):
        if doc in relevant and doc not in seen:
            seen.add(doc)
            precisions.append(len(seen) / rank)
    return sum(precisions) / len(precisions) if precisions else 0.0


def f1_score(recall: float | None, precision: float | None) -> float | None:
    """Harmonic mean of recall and precision; None when either is unknown."""
    if recall is None or precision is None:
        return None
    if recall + precision == 0:
        return 0.0
    return 2 * recall * precision / (recall + precision)
