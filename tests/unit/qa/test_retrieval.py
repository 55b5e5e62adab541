"""recall@k and average precision, including graphrag-eval's worked examples."""

from __future__ import annotations

import pytest

from gtog.qa import average_precision, recall_at_k
from gtog.qa.retrieval import f1_score


def test_recall_at_k_seed_example() -> None:
    assert recall_at_k(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7], k=5) == 0.75


def test_average_precision_seed_example() -> None:
    value = average_precision(relevant_docs={1, 3, 5, 6}, retrieved_docs=[1, 4, 3, 5, 7])
    assert value == pytest.approx((1.0 + 2 / 3 + 3 / 4) / 3)
    assert round(value, 4) == 0.8056


def test_recall_at_k_cuts_at_k() -> None:
    assert recall_at_k({1, 3}, [4, 1, 3], k=2) == 0.5
    assert recall_at_k({1, 3}, [4, 1, 3], k=0) == 0.0
    assert recall_at_k({"a"}, ["a", "a"], k=2) == 1.0


def test_recall_at_k_without_relevant_docs_is_vacuous() -> None:
    assert recall_at_k(set(), [1, 2], k=2) == 1.0


def test_recall_at_k_rejects_negative_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k({1}, [1], k=-1)


def test_average_precision_edge_cases() -> None:
    assert average_precision({1}, [2, 3]) == 0.0
    assert average_precision({1, 2}, [2, 1]) == 1.0
    assert average_precision({1}, [3, 1, 1]) == 0.5  # a repeated hit counts once


def test_f1() -> None:
    assert f1_score(1.0, 0.5) == pytest.approx(2 / 3)
    assert f1_score(0.0, 0.0) == 0.0
    assert f1_score(None, 1.0) is None
