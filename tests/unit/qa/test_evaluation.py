"""run_evaluation on the seed data without LLMs, input handling, concurrency, bridge."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog.llm import ChatReply
from gtog.qa import (
    InputError,
    JudgeModels,
    compute_aggregates,
    eval_record_to_response,
    run_evaluation,
    run_evaluation_async,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"
C10 = "c10bbc8dce98a4b8832d125134a16153"


def by_id(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["question_id"]: r for r in results}


def test_seed_example_steps(seed_reference: list[Any], seed_responses: list[Any]) -> None:
    results = by_id(run_evaluation(seed_reference, seed_responses, progress=False))
    expected = yaml.safe_load((FIXTURES / "seed_result.yaml").read_text())[0]
    got = results[C10]
    assert got["steps_score"] == expected["steps_score"] == 1
    assert [s.get("matches") for s in got["reference_steps"][0]] == [
        s["matches"] for s in expected["reference_steps"][0]
    ]
    for key in (
        "template_id",
        "question_text",
        "reference_answer",
        "status",
        "actual_answer",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "elapsed_sec",
    ):
        assert got[key] == expected[key], key
    assert [s["id"] for s in got["actual_steps"]] == [s["id"] for s in expected["actual_steps"]]


def test_llm_metrics_are_skipped_with_errors_without_a_model(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    got = by_id(run_evaluation(seed_reference, seed_responses, progress=False))[C10]
    assert "no judge" in got["answer_eval_error"]
    assert "no judge" in got["answer_relevance_error"]
    retrieval = got["actual_steps"][0]
    for key in ("retrieval_answer_recall_error", "retrieval_context_precision_error"):
        assert "no judge" in retrieval[key]
    assert "answer_recall" not in got


def test_renamed_columns_error_and_missing_responses(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    results = run_evaluation(seed_reference, seed_responses, progress=False)
    assert [r["question_id"] for r in results] == [
        q["id"] for t in seed_reference for q in t["questions"]
    ]
    got = by_id(results)
    renamed = got["d566b1e9da418ac83e520a66cc7af4d7"]
    assert renamed["steps_score"] == 1.0
    assert renamed["reference_steps"][0][0]["matches"] == "call_sparql_2"
    error = got["8bbea9a10876a04ad77a82fd2aedee40"]
    assert (error["status"], error["error"]) == ("error", "Error message")
    missing = got["03d4283773b4387114342518176b128b"]
    assert missing["status"] == "error" and "no response" in missing["error"]
    aggregates = compute_aggregates(results)
    assert aggregates["micro"]["number_of_error_samples"] == 2


def test_dict_responses_and_inputs_are_not_mutated(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    as_dict = {r["question_id"]: r for r in seed_responses}
    ref_before, resp_before = copy.deepcopy(seed_reference), copy.deepcopy(as_dict)
    from_dict = run_evaluation(seed_reference, as_dict, progress=False)
    assert seed_reference == ref_before and as_dict == resp_before
    assert from_dict == run_evaluation(seed_reference, seed_responses, progress=False)


def test_seed_response_example_evaluates() -> None:
    response = json.loads((FIXTURES / "seed_response.json").read_text())
    dagali = {
        "s": {"type": "uri", "value": "urn:uuid:f1769614-9aeb-11e5-91da-b8763fd99c5f"},
        "n": {"type": "literal", "value": "DAGALI"},
    }
    step = {
        "name": "sparql_query",
        "output_media_type": "application/sparql-results+json",
        "required_columns": ["s", "n"],
        "output": json.dumps({"head": {"vars": ["s", "n"]}, "results": {"bindings": [dagali]}}),
    }
    question = {"id": response["question_id"], "question_text": "Connected to STAVANGER?"}
    reference = [{"template_id": "t", "questions": [{**question, "reference_steps": [[step]]}]}]
    [result] = run_evaluation(reference, [response], progress=False)
    assert result["steps_score"] == 0.0  # the actual result has more rows
    step["output"] = response["actual_steps"][3]["output"]
    step["required_columns"] = ["line", "substation2Name"]
    [result] = run_evaluation(reference, [response], progress=False)
    assert result["steps_score"] == 1.0
    assert result["reference_steps"][0][0]["matches"] == "call_Qm1mzX7g5q9SVPrR2QzEMTp3"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda ref, resp: ref[0]["questions"][0].pop("question_text"), "question_text"),
        (
            lambda ref, resp: ref[0]["questions"][0]["reference_steps"][0][0].update(
                output_media_type="text/csv"
            ),
            "output_media_type",
        ),
        (lambda ref, resp: ref[1]["questions"].append(dict(ref[0]["questions"][0])), ".id"),
        (lambda ref, resp: resp[0].pop("question_id"), "question_id"),
        (lambda ref, resp: resp[0]["actual_steps"][0].update(status="done"), "status"),
    ],
)
def test_invalid_input_names_the_field(
    seed_reference: list[Any], seed_responses: list[Any], mutate: Any, field: str
) -> None:
    mutate(seed_reference, seed_responses)
    with pytest.raises(InputError, match=field):
        run_evaluation(seed_reference, seed_responses, progress=False)


class SlowJudge:
    """A duck-typed chat model that records how many calls run at once."""

    def __init__(self) -> None:
        self.active = self.peak = 0

    async def chat(self, prompt: str, **kwargs: Any) -> ChatReply:
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.02)
        self.active -= 1
        return ChatReply("not json", 1, 1, True, None)


async def test_questions_run_concurrently_within_the_bound() -> None:
    reference = [
        {
            "template_id": "t",
            "questions": [
                {"id": f"q{i}", "question_text": "Q?", "reference_answer": "A"} for i in range(6)
            ],
        }
    ]
    responses = [{"question_id": f"q{i}", "actual_answer": "A"} for i in range(6)]
    judge = SlowJudge()
    models = JudgeModels(chat=judge)  # type: ignore[arg-type]
    results = await run_evaluation_async(
        reference, responses, models=models, concurrency=2, progress=True
    )
    assert judge.peak == 2
    assert all("unusable judge reply" in r["answer_eval_error"] for r in results)
    assert all(r["answer_relevance_error"] for r in results)


def test_bridge_builds_a_retrieval_step() -> None:
    response = eval_record_to_response(
        "q1",
        "Maren Holt",
        None,
        100,
        20,
        1.5,
        [{"id": "tu1", "text": "Maren keeps the light."}, {"id": "tu2", "text": "x"}],
        "Who?",
    )
    assert response["total_tokens"] == 120 and response["actual_answer"] == "Maren Holt"
    [step] = response["actual_steps"]
    assert step["name"] == "retrieval" and step["args"] == {"query": "Who?", "k": 2}
    assert [d["id"] for d in json.loads(step["output"])] == ["tu1", "tu2"]
    reference = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "q1",
                    "question_text": "Who?",
                    "reference_steps": [
                        [
                            {
                                "name": "retrieval",
                                "output": json.dumps(
                                    [{"id": "tu1", "text": "Maren keeps the light."}]
                                ),
                            }
                        ]
                    ],
                }
            ],
        }
    ]
    [result] = run_evaluation(reference, [response], progress=False)
    assert result["steps_score"] == 1.0
    error = eval_record_to_response("q2", None, "timeout", 5, 0, 0.1, [], "Why?")
    assert error["status"] == "error" and error["error"] == "timeout"
    assert "actual_steps" not in error
