"""graphrag-eval 6.x's test-data shapes under both rule sets (issue 16, points 1 and 5).

The expected graphrag-eval-6 numbers were checked against graphrag-eval 6.6.1 itself
(run outside the repository) on these fixtures, which were written for gtog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog.qa import compute_aggregates, run_evaluation

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"


@pytest.fixture(scope="module")
def shapes() -> tuple[list[Any], dict[str, Any]]:
    reference = yaml.safe_load((FIXTURES / "ge6_shapes_reference.yaml").read_text())
    responses = yaml.safe_load((FIXTURES / "ge6_shapes_responses.yaml").read_text())
    return reference, responses


def scores(results: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    return {r["question_id"]: (r["status"], r.get("steps_score")) for r in results}


def test_accepted_and_scored_by_the_seed_rules(shapes: tuple[list[Any], dict[str, Any]]) -> None:
    results = run_evaluation(*shapes, progress=False)
    assert scores(results) == {
        "ge6-q1": ("success", 0.0),  # the last group's step has no output to compare
        "ge6-q2": ("success", 0.25),  # SPARQL 1.50 == 1.5 matches, data points and IRI cannot
        "ge6-q3": ("error", None),  # an error response is not scored
        "ge6-q4": ("success", 0.0),  # a step of another name does not match
        "ge6-q5": ("success", 1.0),  # recall@1: d3 over min(1, 3)
    }
    micro = compute_aggregates(results)["micro"]
    assert micro["steps_score"]["sum"] == 1.25 and micro["input_tokens"]["sum"] == 400
    assert "steps" not in micro


def test_graphrag_eval_6_rules_give_graphrag_eval_6_numbers(
    shapes: tuple[list[Any], dict[str, Any]],
) -> None:
    results = run_evaluation(*shapes, semantics="graphrag-eval-6", progress=False)
    assert scores(results) == {
        "ge6-q1": ("success", 1.0),  # iri_discovery by autocomplete_search, time series by args
        "ge6-q2": ("success", 1.0),  # iri in a SPARQL output; data points 30 s from "2h-ago"
        "ge6-q3": ("error", 1.0),  # error responses are scored too
        "ge6-q4": ("success", 1.0),  # other name, equal output
        "ge6-q5": ("success", 0.0),  # recall@1 over the first relevant id, d1
    }
    by_id = {r["question_id"]: r for r in results}
    assert by_id["ge6-q1"]["reference_steps"][1][0]["matches"] == "call_3"  # not the timeout
    aggregates = compute_aggregates(results, semantics="graphrag-eval-6")
    micro = aggregates["micro"]
    assert (micro["number_of_error_samples"], micro["number_of_success_samples"]) == (1, 4)
    assert micro["steps_score"] == {"sum": 4.0, "mean": 0.8, "median": 1.0, "min": 0.0, "max": 1.0}
    assert micro["input_tokens"]["sum"] == 450  # the error sample's tokens count
    assert micro["steps"]["total"] == {
        "autocomplete_search": 1,
        "retrieve_time_series": 2,
        "sparql_query": 2,
        "retrieve_data_points": 1,
        "calc": 1,
        "search": 1,
        "retrieval": 1,
    }
    assert micro["steps"]["once_per_sample"]["retrieve_time_series"] == 1
    assert aggregates["macro"]["steps_score"] == {"mean": 0.5}
    assert aggregates["macro"]["elapsed_sec"]["mean"] == pytest.approx(4.5375)
