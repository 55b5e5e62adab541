"""run_evaluation on the seed data without LLMs, input handling, concurrency, bridge."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog.llm._usage import ChatReply
from gtog.qa import (
    ConfigError,
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
        (lambda ref, resp: ref[1]["questions"].append(dict(ref[0]["questions"][0])), ".id"),
        (lambda ref, resp: resp[0].pop("question_id"), "question_id"),
        (lambda ref, resp: ref[0].pop("questions"), "questions"),
    ],
)
def test_malformed_structure_refuses_the_run(
    seed_reference: list[Any], seed_responses: list[Any], mutate: Any, field: str
) -> None:
    mutate(seed_reference, seed_responses)
    with pytest.raises(InputError, match=field):
        run_evaluation(seed_reference, seed_responses, progress=False)


@pytest.mark.parametrize(
    ("mutate", "qid", "field"),
    [
        (
            lambda ref, resp: ref[0]["questions"][0].pop("question_text"),
            C10,
            "reference: [0].questions[0].question_text: required string",
        ),
        (
            lambda ref, resp: ref[1]["questions"][0]["reference_steps"][0][0].update(
                required_columns="substation"
            ),
            "d566b1e9da418ac83e520a66cc7af4d7",
            "reference_steps[0][0].required_columns: must be a list of strings",
        ),
        (
            lambda ref, resp: resp[0].update(actual_steps="none"),
            C10,
            "responses: [0].actual_steps: must be a list",
        ),
        (
            lambda ref, resp: resp[0]["actual_steps"][1].pop("name"),
            C10,
            "responses: [0].actual_steps[1].name: required string",
        ),
    ],
)
def test_a_malformed_item_becomes_that_items_error(
    seed_reference: list[Any], seed_responses: list[Any], mutate: Any, qid: str, field: str
) -> None:
    mutate(seed_reference, seed_responses)
    results = by_id(run_evaluation(seed_reference, seed_responses, progress=False))
    assert results[qid]["status"] == "error"
    assert field in results[qid]["error"]
    others = [r for q, r in results.items() if q != qid and r["status"] == "success"]
    assert others and all(r["steps_score"] == 1.0 for r in others)


def test_other_media_types_statuses_and_steps_without_output_are_accepted(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    steps = seed_reference[0]["questions"][0]["reference_steps"]
    steps.insert(0, [{"name": "iri_discovery", "output_media_type": "text/uri"}])
    seed_responses[0]["actual_steps"][1]["status"] = "cancelled"
    [got] = [
        r
        for r in run_evaluation(seed_reference, seed_responses, progress=False)
        if r["question_id"] == C10
    ]
    # accepted; the new first group (no output to compare) matches nothing: half the mean
    assert got["status"] == "success" and got["steps_score"] == 0.5


def test_run_evaluation_inside_a_running_event_loop(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    expected = run_evaluation(seed_reference, seed_responses, progress=False)

    async def notebook_cell() -> list[dict[str, Any]]:  # a loop runs, as in Jupyter
        return run_evaluation(seed_reference, seed_responses, progress=False)

    results = asyncio.run(notebook_cell())
    assert type(results) is list and results == expected


async def test_aio_run_evaluation_is_awaitable(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    from gtog.qa import aio

    results = await aio.run_evaluation(seed_reference, seed_responses, None, progress=False)
    assert type(results) is list
    assert by_id(results)[C10]["steps_score"] == 1
    both = await asyncio.gather(
        aio.run_evaluation(seed_reference, seed_responses, progress=False),
        aio.run_evaluation(seed_reference, seed_responses, progress=False),
    )
    assert both[0] == both[1] == results
    assert aio.compute_aggregates(results, None) == compute_aggregates(results)


def test_aio_run_evaluation_under_asyncio_run(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    from gtog.qa import aio

    results = asyncio.run(aio.run_evaluation(seed_reference, seed_responses, progress=False))
    assert results == run_evaluation(seed_reference, seed_responses, progress=False)


def test_graphrag_eval_6_config_file_path(
    seed_reference: list[Any], seed_responses: list[Any], tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("answer_correctness:\n  enabled: false\n")
    positional = run_evaluation(seed_reference, seed_responses, config, progress=False)
    keyword = run_evaluation(
        seed_reference, seed_responses, config_file_path=str(config), progress=False
    )
    assert positional == keyword
    got = by_id(positional)[C10]
    assert "answer_eval_error" not in got and "answer_relevance_error" not in got
    assert compute_aggregates(positional, str(config)) == compute_aggregates(positional)
    with pytest.raises(TypeError, match="either"):
        run_evaluation(seed_reference, seed_responses, config, config=config, progress=False)


def test_unsupported_graphrag_eval_6_config_is_refused(
    seed_reference: list[Any], seed_responses: list[Any], tmp_path: Path
) -> None:
    custom = tmp_path / "custom.yaml"
    custom.write_text("custom_evaluations:\n- name: tone\n")
    with pytest.raises(ConfigError, match="custom_evaluations"):
        run_evaluation(seed_reference, seed_responses, custom, progress=False)
    with pytest.raises(ConfigError, match="custom_evaluations"):
        compute_aggregates([], custom)
    prompt = tmp_path / "prompt.yaml"
    prompt.write_text("answer_correctness:\n  prompt: 'Q: {question}'\n")
    with pytest.raises(ConfigError, match=r"answer_correctness\.prompt"):
        run_evaluation(seed_reference, seed_responses, prompt, progress=False)


def test_unknown_semantics_is_refused(seed_reference: list[Any], seed_responses: list[Any]) -> None:
    with pytest.raises(ValueError, match="graphrag-eval-6"):
        run_evaluation(seed_reference, seed_responses, semantics="v5", progress=False)  # type: ignore[arg-type]


def test_ge6_rules_score_error_responses(
    seed_reference: list[Any], seed_responses: list[Any]
) -> None:
    error = next(r for r in seed_responses if r.get("status") == "error")
    error["actual_steps"] = []
    seed = by_id(run_evaluation(seed_reference, seed_responses, progress=False))
    ge6 = by_id(
        run_evaluation(seed_reference, seed_responses, semantics="graphrag-eval-6", progress=False)
    )
    qid = error["question_id"]
    assert "steps_score" not in seed[qid]
    assert (ge6[qid]["status"], ge6[qid]["steps_score"]) == ("error", 0.0)


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
