"""compute_aggregates: every key, error handling and skipped missing values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gtog.qa import compute_aggregates

EMPTY = json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": []}})
ONE = json.dumps(
    {"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "1"}}]}}
)


def sample(template: str, **values: Any) -> dict[str, Any]:
    return {"template_id": template, "question_id": f"q{id(values)}", "status": "success", **values}


SAMPLES = [
    sample(
        "t1",
        input_tokens=10,
        output_tokens=2,
        total_tokens=12,
        elapsed_sec=1.0,
        answer_recall=1.0,
        answer_precision=0.5,
        answer_f1=2 / 3,
        answer_relevance=0.9,
        answer_relevance_cost=0.001,
        steps_score=1.0,
        actual_steps=[
            {"name": "sparql", "status": "success", "output": ONE},
            {"name": "sparql", "status": "error", "error": "boom"},
            {"name": "auto", "status": "success", "output": EMPTY},
            {
                "name": "retrieval",
                "status": "success",
                "output": "[]",
                "retrieval_answer_recall": 0.5,
                "retrieval_answer_recall_cost": 0.01,
                "retrieval_context_precision": 1.0,
            },
        ],
    ),
    sample(
        "t1",
        input_tokens=30,
        output_tokens=4,
        total_tokens=34,
        elapsed_sec=3.0,
        answer_recall=0.0,
        answer_relevance=None,
        steps_score=0.0,
        actual_steps=[{"name": "sparql", "status": "success", "output": EMPTY}],
    ),
    {
        "template_id": "t1",
        "question_id": "e1",
        "status": "error",
        "error": "x",
        "input_tokens": 999,
    },
    sample(
        "t2", input_tokens=100, output_tokens=10, total_tokens=110, elapsed_sec=5.0, steps_score=0.5
    ),
]


@pytest.fixture(scope="module")
def aggregates() -> dict[str, Any]:
    return compute_aggregates(SAMPLES)


def test_top_level_keys(aggregates: dict[str, Any]) -> None:
    assert set(aggregates) == {"per_template", "micro", "macro"}
    assert set(aggregates["per_template"]) == {"t1", "t2"}


def test_sample_counts(aggregates: dict[str, Any]) -> None:
    t1 = aggregates["per_template"]["t1"]
    assert (t1["number_of_success_samples"], t1["number_of_error_samples"]) == (2, 1)
    micro = aggregates["micro"]
    assert (micro["number_of_success_samples"], micro["number_of_error_samples"]) == (3, 1)


def test_statistics_skip_error_samples(aggregates: dict[str, Any]) -> None:
    assert aggregates["per_template"]["t1"]["input_tokens"] == {
        "sum": 40,
        "mean": 20.0,
        "median": 20.0,
        "min": 10,
        "max": 30,
    }
    assert aggregates["micro"]["input_tokens"]["sum"] == 140
    for key in ("output_tokens", "total_tokens", "elapsed_sec", "steps_score"):
        assert set(aggregates["micro"][key]) == {"sum", "mean", "median", "min", "max"}


def test_missing_values_are_skipped_not_zero(aggregates: dict[str, Any]) -> None:
    t1 = aggregates["per_template"]["t1"]
    assert t1["answer_relevance"]["mean"] == 0.9  # the None is not counted as 0
    assert t1["answer_precision"]["sum"] == 0.5 and t1["answer_precision"]["min"] == 0.5
    assert "answer_recall" not in aggregates["per_template"]["t2"]
    assert aggregates["micro"]["answer_recall"]["mean"] == 0.5


def test_answer_and_retrieval_metrics(aggregates: dict[str, Any]) -> None:
    t1 = aggregates["per_template"]["t1"]
    for key in (
        "answer_recall",
        "answer_precision",
        "answer_f1",
        "answer_relevance",
        "answer_relevance_cost",
        "retrieval_answer_recall",
        "retrieval_context_precision",
        "retrieval_answer_recall_cost",
    ):
        assert key in t1 and key in aggregates["micro"] and key in aggregates["macro"]
    assert t1["retrieval_answer_recall"]["max"] == 0.5


def test_step_counts(aggregates: dict[str, Any]) -> None:
    steps = aggregates["per_template"]["t1"]["steps"]
    assert steps["total"] == {"sparql": 3, "auto": 1, "retrieval": 1}
    assert steps["once_per_sample"] == {"sparql": 2, "auto": 1, "retrieval": 1}
    # graphrag-eval's rule: only SPARQL-shaped results count as empty, not "[]"
    assert steps["empty_results"] == {"sparql": 1, "auto": 1}
    assert steps["errors"] == {"sparql": 1}
    assert aggregates["per_template"]["t2"]["steps"] == {
        "total": {},
        "once_per_sample": {},
        "empty_results": {},
        "errors": {},
    }


def test_macro_is_the_mean_of_template_means(aggregates: dict[str, Any]) -> None:
    assert aggregates["macro"]["steps_score"]["mean"] == pytest.approx((0.5 + 0.5) / 2)
    assert aggregates["macro"]["input_tokens"]["mean"] == pytest.approx((20 + 100) / 2)
    assert aggregates["macro"]["answer_relevance"]["mean"] == 0.9  # t2 has none: skipped
    assert set(aggregates["macro"]["steps_score"]) == {"mean"}


def test_error_only_template_and_empty_input() -> None:
    result = compute_aggregates(
        [{"template_id": "t", "question_id": "q", "status": "error", "error": "e"}]
    )
    assert result["per_template"]["t"]["number_of_error_samples"] == 1
    assert "input_tokens" not in result["micro"]
    assert compute_aggregates([]) == {
        "per_template": {},
        "macro": {},
        "micro": {"number_of_error_samples": 0, "number_of_success_samples": 0},
    }


def test_input_is_not_mutated() -> None:
    before = json.dumps(SAMPLES, sort_keys=True)
    compute_aggregates(SAMPLES)
    assert json.dumps(SAMPLES, sort_keys=True) == before


def test_aggregates_accept_graphrag_eval_config_file_path() -> None:
    assert compute_aggregates(SAMPLES, None) == compute_aggregates(SAMPLES)


@pytest.fixture(scope="module")
def ge6() -> dict[str, Any]:
    return compute_aggregates(SAMPLES, semantics="graphrag-eval-6")


def test_ge6_error_samples_enter_the_statistics(ge6: dict[str, Any]) -> None:
    t1 = ge6["per_template"]["t1"]
    assert (t1["number_of_success_samples"], t1["number_of_error_samples"]) == (2, 1)
    assert t1["input_tokens"]["sum"] == 10 + 30 + 999
    assert ge6["micro"]["input_tokens"]["sum"] == 10 + 30 + 999 + 100


def test_ge6_micro_gains_step_counts_and_templates_nest_step_metrics(
    ge6: dict[str, Any],
) -> None:
    assert ge6["micro"]["steps"] == {
        "total": {"sparql": 3, "auto": 1, "retrieval": 1},
        "once_per_sample": {"sparql": 2, "auto": 1, "retrieval": 1},
        "empty_results": {"sparql": 1, "auto": 1},
        "errors": {"sparql": 1},
    }
    t1 = ge6["per_template"]["t1"]
    assert "retrieval_answer_recall" not in t1
    assert t1["steps"]["retrieval_answer_recall"]["mean"] == 0.5
    assert ge6["micro"]["retrieval_answer_recall"]["mean"] == 0.5
    assert ge6["macro"]["retrieval_answer_recall"] == {"mean": 0.5}
    assert "steps" not in ge6["per_template"]["t2"]  # no steps: no counts, as graphrag-eval


def test_ge6_error_sample_steps_are_counted() -> None:
    samples = [
        {
            "template_id": "t",
            "question_id": "q",
            "status": "error",
            "error": "x",
            "actual_steps": [{"name": "calc", "status": "success", "output": "1"}],
        }
    ]
    assert "steps" not in compute_aggregates(samples)["micro"]
    ge6 = compute_aggregates(samples, semantics="graphrag-eval-6")
    assert ge6["per_template"]["t"]["steps"] == {
        "total": {"calc": 1},
        "once_per_sample": {"calc": 1},
    }
