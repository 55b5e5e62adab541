"""`semantics="graphrag-eval-6"` behaviours, one readable example each (issue 26).

Broad equality with graphrag-eval 6.6.1 is test_ge6_parity.py's job; these pin the
behaviours the differential test found, in words.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gtog.qa import compare_sparql_results, compute_aggregates, recall_at_k, run_evaluation
from gtog.qa._ge6_aggregation import python312_sum
from gtog.qa._retrieval import average_precision

GE6 = "graphrag-eval-6"
SPARQL = "application/sparql-results+json"


def result(columns: list[str], *rows: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "head": {"vars": columns},
        "results": {"bindings": [dict(zip(columns, r, strict=True)) for r in rows]},
    }


def lit(value: str, datatype: str = "") -> dict[str, str]:
    term = {"type": "literal", "value": value}
    return (
        {**term, "datatype": f"http://www.w3.org/2001/XMLSchema#{datatype}"} if datatype else term
    )


def test_sparql_values_compare_as_text() -> None:
    iri = result(["x"], [{"type": "uri", "value": "urn:a"}])
    assert compare_sparql_results(iri, result(["x"], [lit("urn:a")]), ["x"], semantics=GE6) == 1.0
    bnodes = (
        result(["x"], [{"type": "bnode", "value": "b0"}]),
        result(["x"], [{"type": "bnode", "value": "b1"}]),
    )
    assert compare_sparql_results(*bnodes, ["x"], semantics=GE6) == 0.0
    assert compare_sparql_results(*bnodes, ["x"]) == 1.0  # default: blank nodes are equal
    ab_c = result(["x", "y"], [lit("ab"), lit("c")])
    a_bc = result(["p", "q"], [lit("a"), lit("bc")])
    assert compare_sparql_results(ab_c, a_bc, ["x", "y"], semantics=GE6) == 1.0  # "abc" == "abc"
    one, one_dec = result(["x"], [lit("1", "integer")]), result(["x"], [lit("1.0", "decimal")])
    assert compare_sparql_results(one, one_dec, ["x"], semantics=GE6) == 0.0  # "1" != "1.0"
    truncated = result(["x"], [lit("1.0000001", "double")])
    assert compare_sparql_results(one_dec, truncated, ["x"], semantics=GE6) == 1.0  # 5 decimals
    assert (
        compare_sparql_results(one, json.dumps(one), ["x"], semantics=GE6) == 0.0
    )  # text: DESCRIBE


def test_retrieval_metrics_take_the_switch() -> None:
    assert recall_at_k(["a", "b"], ["b"], 1, semantics=GE6) == 0.0
    assert recall_at_k(["a", "b"], ["b"], 1) == 1.0
    assert average_precision(["a"], ["a", "a"], semantics=GE6) == 2.0
    assert average_precision(["a"], ["a", "a"]) == 1.0
    with pytest.raises(TypeError):  # graphrag-eval slices: a set raises there too
        recall_at_k({"a"}, ["a"], 1, semantics=GE6)


def test_records_are_graphrag_eval_6_6_1s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")  # 6.x reads no environment
    reference = [
        {
            "template_id": "t",
            "questions": [
                {"id": "q1", "question_text": "Which?", "reference_answer": "Oslo"},
                {
                    "id": "q2",
                    "question_text": "Sum?",
                    "reference_steps": [[{"name": "calc", "output": "7"}]],
                },
            ],
        }
    ]
    responses = {
        "q1": {
            "question_id": "q1",
            "input_tokens": 10,
            "output_tokens": None,
            "actual_answer": "Oslo",
        },
        "q2": {
            "question_id": "q2",
            "status": "success",
            "error": {"code": 503},
            "actual_steps": [{"name": "calc", "output": "7", "id": "c", "status": "success"}],
        },
    }
    before = copy.deepcopy((reference, responses))
    q1, q2 = run_evaluation(reference, responses, semantics=GE6)
    assert (reference, responses) == before  # inputs never change
    assert q1 == {
        "template_id": "t",
        "question_id": "q1",
        "question_text": "Which?",
        "input_tokens": 10,
        "output_tokens": None,  # copied as given; no total_tokens derived
        "actual_answer": "Oslo",
        "reference_answer": "Oslo",
        "status": "success",
        "actual_steps": [],  # none given
    }  # no LLM keys: no judge model configured
    assert list(q1) == list(q1.keys())
    assert q2["status"] == "error" and q2["error"] == {"code": 503}  # the `error` key decides
    assert q2["steps_score"] == 1.0 and q2["reference_steps"][0][0]["matches"] == "c"


def test_a_question_graphrag_eval_raises_on_is_that_questions_error() -> None:
    reference = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "bad",
                    "question_text": "A?",
                    "reference_steps": [[{"name": "c", "output": "1"}]],
                },
                {
                    "id": "ok",
                    "question_text": "B?",
                    "reference_steps": [[{"name": "c", "output": "1"}]],
                },
                {"id": "missing", "question_text": "C?"},
            ],
        }
    ]
    step = {"name": "c", "output": "1", "id": "s"}
    responses = {
        "bad": {"question_id": "bad", "actual_steps": [step]},  # no `status`: KeyError there
        "ok": {"question_id": "ok", "actual_steps": [{**step, "status": "success"}]},
    }
    bad, ok, missing = run_evaluation(reference, responses, semantics=GE6)
    assert bad["status"] == "error" and "KeyError: 'status'" in bad["error"]
    assert ok["steps_score"] == 1.0
    assert missing["status"] == "error" and "no response" in missing["error"]


def test_shared_reference_steps_show_the_last_match_as_graphrag_eval_writes_it() -> None:
    groups = [[{"name": "c", "output": "1"}]]  # one object in both questions
    reference = [
        {
            "template_id": "t",
            "questions": [
                {"id": "a", "question_text": "A?", "reference_steps": groups},
                {"id": "b", "question_text": "B?", "reference_steps": groups},
            ],
        }
    ]
    step = {"name": "c", "output": "1", "status": "success"}
    responses = {
        "a": {"question_id": "a", "actual_steps": [{**step, "id": "from-a"}]},
        "b": {"question_id": "b", "actual_steps": [{**step, "id": "from-b"}]},
    }
    a, b = run_evaluation(reference, responses, semantics=GE6)
    assert (
        a["reference_steps"][0][0]["matches"] == b["reference_steps"][0][0]["matches"] == "from-b"
    )
    assert "matches" not in groups[0][0]


def test_aggregates_are_graphrag_eval_6_6_1s() -> None:
    samples = [
        {
            "template_id": "a",
            "status": "success",
            "steps_score": True,
            "answer_relevance_cost": 0.1,
        },
        {"template_id": "b", "status": "error", "input_tokens": 100, "steps_score": 0.5},
        {"template_id": "b", "status": "success", "error": "x", "input_tokens": 50},
    ]
    aggregates = compute_aggregates(samples, semantics=GE6)
    a, b = aggregates["per_template"]["a"], aggregates["per_template"]["b"]
    assert a["steps_score"] == {"sum": 1, "mean": True, "median": True, "min": True, "max": True}
    assert a["input_tokens"] == {"sum": 0, "mean": 0, "median": 0, "min": 0, "max": 0}
    assert (b["number_of_error_samples"], b["number_of_success_samples"]) == (1, 1)  # `error` key
    assert b["input_tokens"]["mean"] == 75 and isinstance(b["input_tokens"]["mean"], int)
    assert aggregates["macro"]["input_tokens"] == {"mean": 37.5}  # (0 + 75) / 2
    assert "answer_relevance_cost" not in aggregates["micro"]


def test_custom_evaluation_outputs_are_aggregated(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "llm: {generation: {provider: openai, model: m}}\n"
        "custom_evaluations:\n"
        "- {name: tone, inputs: [actual_answer], instructions: x, outputs: {tone_score: s}}\n"
    )
    samples = [{"template_id": "t", "tone_score": 0.5}, {"template_id": "t", "tone_score": 1}]
    aggregates = compute_aggregates(samples, config, semantics=GE6)
    assert aggregates["micro"]["tone_score"]["sum"] == 1.5


def test_sums_are_python_3_12s() -> None:
    assert python312_sum([0.1, 0.2, 0.3]) == 0.6  # 3.11's plain sum: 0.6000000000000001
    assert python312_sum([1e16, 1.0, -1e16]) == 1.0
    assert python312_sum([1, True, 2**70, 0.5]) == 2**70 + 2.5
    assert python312_sum([]) == 0 and isinstance(python312_sum([1, 2]), int)
