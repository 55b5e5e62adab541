"""recall@k and average precision: the seed's rules, worked examples and call shapes."""

from __future__ import annotations

import pytest

from gtog.qa import average_precision, recall_at_k
from gtog.qa._retrieval import f1_score, recall_at_k_ge6


def test_recall_at_k_seed_example() -> None:
    assert recall_at_k(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7], k=5) == 0.75


def test_recall_at_k_divides_by_the_first_k_relevant_items() -> None:
    # The seed: "divide that by the first 'k' relevant items", i.e. min(k, relevant).
    assert recall_at_k(["a", "b"], ["a"], k=1) == 1.0
    assert recall_at_k({1, 2, 3, 4}, [9, 2, 3], k=2) == 0.5
    assert recall_at_k({1, 2}, [1, 2, 3], k=5) == 1.0


def test_recall_at_k_call_shapes_of_graphrag_eval() -> None:
    assert recall_at_k(["a", "b"], ["a", "c"]) == 0.5  # positional, k defaults to 10
    assert recall_at_k(relevant_ids=["a"], retrieved_ids=["x", "a"], k=2) == 1.0
    with pytest.raises(TypeError, match="either"):
        recall_at_k(["a"], ["a"], relevant_ids=["a"])


def test_graphrag_eval_6_recall_takes_relevant_ids_in_list_order() -> None:
    assert recall_at_k_ge6(["a", "b"], ["b"], 1) == 0.0
    assert recall_at_k_ge6(["a", "b"], ["b", "a"], 2) == 1.0
    assert recall_at_k_ge6([], ["a"], 3) == 0.0


def test_average_precision_divides_by_the_relevant_items() -> None:
    # The seed's formula (and graphrag-eval 6.6.1's code) divides by the 4 relevant
    # items; its worked example divides by the 3 hits (0.8056) and is not followed.
    value = average_precision(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7])
    assert value == pytest.approx((1.0 + 2 / 3 + 3 / 4) / 4)
    assert round(value, 4) == 0.6042
    assert average_precision(relevant_ids={1, 3, 5, 6}, retrieved_ids=[1, 4, 3, 5, 7]) == value


def test_recall_at_k_cuts_at_k() -> None:
    assert recall_at_k({1, 3}, [4, 1, 3], k=2) == 0.5
    assert recall_at_k({1, 3}, [4, 1, 3], k=0) == 0.0
    assert recall_at_k({"a"}, ["a", "a"], k=2) == 1.0


def test_recall_at_k_without_relevant_docs_is_zero_as_in_graphrag_eval() -> None:
    assert recall_at_k(set(), [1, 2], k=2) == 0.0


def test_recall_at_k_rejects_negative_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k({1}, [1], k=-1)


def test_average_precision_edge_cases() -> None:
    assert average_precision({1}, [2, 3]) == 0.0
    assert average_precision({1, 2}, [2, 1]) == 1.0
    assert average_precision({1, 2}, [2]) == 0.5  # a missed relevant item counts
    assert average_precision({1}, [3, 1, 1]) == 0.5  # a repeated hit counts once
    assert average_precision(set(), [1]) == 0.0


def test_f1() -> None:
    assert f1_score(1.0, 0.5) == pytest.approx(2 / 3)
    assert f1_score(0.0, 0.0) == 0.0
    assert f1_score(None, 1.0) is None
