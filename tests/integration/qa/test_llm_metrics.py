"""LLM metrics against the scripted judges: values, costs, retries and failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog.qa import JudgeModels, compute_aggregates, run_evaluation
from gtog.qa._llm_metrics import answer_correctness, answer_relevance, cosine, retrieval_metrics
from tests.support.scripted_server import ScriptedServer, hash_embedding

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"
GPT_4O_MINI = (1.5e-7, 6e-7)  # USD per input / output token in LiteLLM's map
EMBEDDING_3_SMALL = 2e-8


def chat_cost(server: ScriptedServer, rule: str) -> float:
    entries = [e for e in server.chat_log() if e.rule == rule]
    return sum(e.prompt_tokens * GPT_4O_MINI[0] + e.output_tokens * GPT_4O_MINI[1] for e in entries)


async def test_answer_correctness_counts_claims(
    judges: JudgeModels, qa_server: ScriptedServer
) -> None:
    result = await answer_correctness(
        judges.chat, "List transformers in OSLO", "OSLO T1, OSLO T2", "OSLO T2\nOSLO T1\nOSLO T3"
    )
    assert result["answer_reference_claims_count"] == 2
    assert result["answer_actual_claims_count"] == 3
    assert result["answer_matching_claims_count"] == 2
    assert result["answer_recall"] == 1.0
    assert result["answer_precision"] == pytest.approx(2 / 3)
    assert result["answer_f1"] == pytest.approx(0.8)
    assert "2 of 2" in result["answer_correctness_reason"]
    assert qa_server.unscripted == []


async def test_answer_relevance_is_mean_cosine_and_costs_chat_plus_embeddings(
    judges: JudgeModels, qa_server: ScriptedServer
) -> None:
    question, answer = "Which transformers are in Oslo substation?", "Transformers OSLO T1 and T2"
    result = await answer_relevance(judges.chat, judges.embedding, question, answer, 3)
    generated = [f"What about {answer}? ({i})" for i in range(3)]
    expected = sum(cosine(hash_embedding(question), hash_embedding(g)) for g in generated) / 3
    assert result["answer_relevance"] == pytest.approx(expected)
    assert 0 < result["answer_relevance"] < 1
    embed_tokens = sum(e.prompt_tokens for e in qa_server.log if e.kind == "embeddings")
    cost = chat_cost(qa_server, "qa-answer-relevance") + embed_tokens * EMBEDDING_3_SMALL
    assert result["answer_relevance_cost"] == pytest.approx(cost)
    assert result["answer_relevance_cost"] > 0


async def test_noncommittal_answer_scores_zero(judges: JudgeModels) -> None:
    result = await answer_relevance(judges.chat, judges.embedding, "Who?", "I don't know.", 3)
    assert result["answer_relevance"] == 0.0
    assert result["answer_relevance_cost"] > 0


async def test_unknown_price_gives_null_cost(unpriced_judges: JudgeModels) -> None:
    result = await answer_relevance(
        unpriced_judges.chat, unpriced_judges.embedding, "Which town?", "The town Kelport", 2
    )
    assert result["answer_relevance"] > 0
    assert result["answer_relevance_cost"] is None
    metrics = await retrieval_metrics(unpriced_judges.chat, "retrieval_answer", "Q", "A", ["A"])
    assert metrics["retrieval_answer_recall_cost"] is None
    assert metrics["retrieval_answer_f1_cost"] is None


async def test_retrieval_metrics(judges: JudgeModels, qa_server: ScriptedServer) -> None:
    contexts = ["Nothing here.", "Transformer OSLO T1 is in Oslo.", "Also OSLO T9."]
    result = await retrieval_metrics(
        judges.chat, "retrieval_answer", "Transformers in OSLO?", "OSLO T1, OSLO T2", contexts
    )
    assert result["retrieval_answer_recall"] == 0.5
    assert result["retrieval_answer_precision"] == 0.5  # the one useful context is at rank 2
    assert result["retrieval_answer_f1"] == 0.5
    assert result["retrieval_answer_recall_reason"]
    assert result["retrieval_answer_precision_reason"]
    recall_cost = chat_cost(qa_server, "qa-retrieval-recall")
    assert result["retrieval_answer_recall_cost"] == pytest.approx(recall_cost)
    assert result["retrieval_answer_f1_cost"] == pytest.approx(
        recall_cost + chat_cost(qa_server, "qa-retrieval-precision")
    )


async def test_unparsable_reply_is_retried_once(
    judges: JudgeModels, qa_server: ScriptedServer
) -> None:
    result = await answer_correctness(judges.chat, "Q", "FLAKY A", "FLAKY A")
    assert result["answer_recall"] == 1.0
    assert len(qa_server.chat_log()) == 2
    garbled = await answer_correctness(judges.chat, "Q", "GARBLED", "A")
    assert "unusable judge reply" in garbled["answer_eval_error"]
    assert len(qa_server.chat_log()) == 4


async def test_judge_outage_is_an_error_not_a_crash(judges: JudgeModels) -> None:
    result = await answer_correctness(judges.chat, "Q", "BROKEN", "A")
    assert result["answer_eval_error"].startswith("judge call failed")
    assert "test-key" not in result["answer_eval_error"]
    retrieval = await retrieval_metrics(judges.chat, "retrieval_context", "Q", "BROKEN", ["x"])
    assert "retrieval_context_recall_error" in retrieval
    assert "retrieval_context_f1" not in retrieval


def test_seed_data_end_to_end(judges: JudgeModels, qa_server: ScriptedServer) -> None:
    reference = yaml.safe_load((FIXTURES / "seed_reference.yaml").read_text())
    responses: list[dict[str, Any]] = json.loads((FIXTURES / "responses.json").read_text())
    results = {
        r["question_id"]: r
        for r in run_evaluation(reference, responses, models=judges, concurrency=3)
    }
    oslo = results["c10bbc8dce98a4b8832d125134a16153"]
    # Reference "OSLO T1, OSLO T2"; the answer's three lines hold both transformers.
    assert (oslo["answer_reference_claims_count"], oslo["answer_actual_claims_count"]) == (2, 3)
    assert oslo["answer_recall"] == 1.0
    assert oslo["answer_relevance"] > 0 and oslo["answer_relevance_cost"] > 0
    retrieval = oslo["actual_steps"][0]
    assert retrieval["retrieval_answer_recall"] == 1.0
    assert retrieval["retrieval_context_recall"] == 1.0  # contexts = reference contexts
    assert retrieval["retrieval_context_precision"] == 1.0
    for key in ("retrieval_answer_f1_cost", "retrieval_context_f1_cost"):
        assert retrieval[key] > 0
    zone = results["d566b1e9da418ac83e520a66cc7af4d7"]
    assert zone["answer_recall"] == 1.0 and zone["steps_score"] == 1.0
    aggregates = compute_aggregates(list(results.values()))
    for key in ("answer_recall", "answer_relevance_cost", "retrieval_context_f1"):
        assert key in aggregates["micro"] and key in aggregates["macro"]
    assert qa_server.unscripted == []


@pytest.mark.parametrize("verdict", ["yes", 1, None])
async def test_a_verdict_that_is_not_a_boolean_is_unscored_never_false(
    judges: JudgeModels, qa_server: ScriptedServer, verdict: object
) -> None:
    from tests.support.scripted_server import Rule

    def reply(r):  # type: ignore[no-untyped-def]
        if "statements" in r.prompt and "attributed" in r.prompt:
            return json.dumps({"statements": [{"statement": "s", "attributed": verdict}]})
        return json.dumps({"verdicts": [{"context": 1, "useful": verdict}]})

    qa_server.rules.insert(
        0, Rule("non-boolean", lambda r: "[gtog-qa:retrieval-" in r.prompt, reply)
    )
    result = await retrieval_metrics(
        judges.chat, "retrieval_answer", "Transformers in OSLO?", "OSLO T1", ["OSLO T1 is here."]
    )
    assert "retrieval_answer_recall" not in result, result
    assert "retrieval_answer_precision" not in result, result
    assert result["retrieval_answer_recall_error"] and result["retrieval_answer_precision_error"]
