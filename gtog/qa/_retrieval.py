"""Rank metrics over retrieved document ids (pure functions).

Each metric takes `semantics`: the seed's rules (default) or graphrag-eval 6.6.1's
(`"graphrag-eval-6"`: its formulas on lists, raising where it raises).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import Any

from gtog.qa._semantics import GE6, SEED, Semantics, check_semantics

__all__ = [
    "average_precision",
    "average_precision_ge6",
    "f1_score",
    "recall_at_k",
    "recall_at_k_ge6",
]

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
    semantics: Semantics = SEED,
) -> float:
    """Relevant documents among the first `k` retrieved, over the first `k` relevant ones.

    The seed's rule: the denominator is `min(k, number of relevant)`, so
    `recall_at_k({"a", "b"}, ["a"], k=1) == 1.0` and
    `recall_at_k(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7], k=5) == 0.75`.
    No relevant documents (or k = 0) gives 0.0, as in graphrag-eval. Accepts the seed's
    keywords and graphrag-eval 6.x's (`relevant_ids`, `retrieved_ids`, `k=10`).
    `semantics="graphrag-eval-6"`: `recall_at_k_ge6`.
    """
    relevant_any = _pick("relevant_docs", relevant_docs, "relevant_ids", relevant_ids)
    retrieved = _pick("retrieved_docs", retrieved_docs, "retrieved_ids", retrieved_ids)
    if check_semantics(semantics) == GE6:
        return recall_at_k_ge6(relevant_any, retrieved, k)
    relevant = set(relevant_any)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    denominator = min(k, len(relevant))
    if denominator == 0:
        return 0.0
    found = {doc for doc in list(retrieved)[:k] if doc in relevant}
    return len(found) / denominator


def recall_at_k_ge6(relevant: Any, retrieved: Any, k: Any = 10) -> float:
    """graphrag-eval 6.6.1's recall@k: hits among the first `k` relevant ids *in list
    order* found in the first `k` retrieved, over the number of those relevant ids
    (0.0 without any): `(["a", "b"], ["b"], 1) -> 0.0`, where the seed's rule gives 1.0.
    Both must be sliceable (lists); a set raises `TypeError`, as there."""
    retrieved_at_k = retrieved[:k]
    relevant_at_k = relevant[:k]
    hits = len(set(relevant_at_k).intersection(set(retrieved_at_k)))
    return hits / len(relevant_at_k) if len(relevant_at_k) else 0.0


def average_precision_ge6(relevant: Any, retrieved: Any) -> float:
    """graphrag-eval 6.6.1's AP: precision@i summed over the ranks holding a relevant id
    (a repeated id counts again, so AP can exceed 1), over the number of distinct
    relevant ids; 0.0 without any."""
    relevant_set = set(relevant)
    hits = 0
    total = 0.0
    for rank, doc in enumerate(retrieved, start=1):
        if doc in relevant_set:
            hits += 1
            total += hits / rank
    return total / len(relevant_set) if relevant_set else 0.0


def average_precision(
    relevant_docs: Collection[Hashable] = _MISSING,
    retrieved_docs: Sequence[Hashable] = _MISSING,
    *,
    relevant_ids: Collection[Hashable] = _MISSING,
    retrieved_ids: Sequence[Hashable] = _MISSING,
    semantics: Semantics = SEED,
) -> float:
    """Sum of precision@i over the ranks i that hold a relevant document, divided by the
    number of relevant documents (the seed's formula and graphrag-eval 6.x's code).

    `average_precision({1, 3, 5, 6}, [1, 4, 3, 5, 7]) == (1 + 2/3 + 3/4) / 4`; the seed's
    worked example divides by the 3 hits instead (0.8056), which contradicts its formula.
    A document retrieved twice counts once; no relevant documents gives 0.0.
    `semantics="graphrag-eval-6"`: `average_precision_ge6`.
    """
    relevant_any = _pick("relevant_docs", relevant_docs, "relevant_ids", relevant_ids)
    retrieved = _pick("retrieved_docs", retrieved_docs, "retrieved_ids", retrieved_ids)
    if check_semantics(semantics) == GE6:
        return average_precision_ge6(relevant_any, retrieved)
    relevant = set(relevant_any)
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
