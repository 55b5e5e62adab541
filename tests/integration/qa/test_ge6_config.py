"""graphrag-eval 6.x's config file (`llm: generation/embedding`) against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtog.qa import aio, run_evaluation
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"
C10 = "c10bbc8dce98a4b8832d125134a16153"


def ge6_config(tmp_path: Path, server: ScriptedServer, **sections: Any) -> Path:
    """A config file in graphrag-eval 6.x's format with models served by `server`."""
    llm = {
        "generation": {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "temperature": 0.0,
            "api_base": server.base_url,
            "api_key": "test-key",
        },
        "embedding": {
            "provider": "openai",
            "model": "text-embedding-3-small",
            "api_base": server.base_url,
            "api_key": "test-key",
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"llm": llm, **sections}))
    return path


@pytest.fixture
def seed_data() -> tuple[list[Any], list[Any]]:
    reference = yaml.safe_load((FIXTURES / "seed_reference.yaml").read_text())
    return reference, json.loads((FIXTURES / "responses.json").read_text())


def test_ge6_config_file_runs_the_llm_metrics(
    qa_server: ScriptedServer, tmp_path: Path, seed_data: tuple[list[Any], list[Any]]
) -> None:
    config = ge6_config(tmp_path, qa_server)
    got = {r["question_id"]: r for r in run_evaluation(*seed_data, config, progress=False)}[C10]
    assert got["answer_recall"] == 1.0 and 0.0 <= got["answer_relevance"] <= 1.0
    assert "retrieval_answer_recall" in got["actual_steps"][0]
    kinds = {e.kind for e in qa_server.log}
    assert kinds == {"chat", "embeddings"}


async def test_ge6_config_toggles_with_await(
    qa_server: ScriptedServer, tmp_path: Path, seed_data: tuple[list[Any], list[Any]]
) -> None:
    config = ge6_config(tmp_path, qa_server, answer_relevance={"enabled": False})
    results = await aio.run_evaluation(*seed_data, config_file_path=config, progress=False)
    got = {r["question_id"]: r for r in results}[C10]
    assert got["answer_recall"] == 1.0
    assert not any(k.startswith("answer_relevance") for k in got)


def test_graphrag_eval_6_mode_writes_graphrag_eval_6_keys(
    qa_server: ScriptedServer, tmp_path: Path
) -> None:
    """Judged by gtog's judges, keyed as graphrag-eval 6.6.1 keys its metrics: no
    `*_cost` or `*_reason` keys but `answer_correctness_reason`, in its record order."""
    docs = json.dumps([{"id": "d1", "text": "Oslo is the capital of Norway."}])
    retrieval = {"name": "retrieval", "args": {"query": "capital", "k": 1}, "output": docs}
    reference = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "q",
                    "question_text": "What is the capital of Norway?",
                    "reference_answer": "Oslo",
                    "reference_steps": [[retrieval]],
                }
            ],
        }
    ]
    responses = {
        "q": {
            "question_id": "q",
            "actual_answer": "Oslo",
            "actual_steps": [{**retrieval, "id": "r1", "status": "success"}],
        }
    }
    config = ge6_config(tmp_path, qa_server)
    [record] = run_evaluation(reference, responses, config, semantics="graphrag-eval-6")
    assert list(record) == [
        "template_id",
        "question_id",
        "question_text",
        "actual_answer",
        "reference_answer",
        "reference_steps",
        "status",
        "actual_steps",
        "steps_score",
        "answer_relevance",
        "answer_reference_claims_count",
        "answer_actual_claims_count",
        "answer_matching_claims_count",
        "answer_correctness_reason",
        "answer_recall",
        "answer_precision",
        "answer_f1",
    ]
    step = record["actual_steps"][0]
    metrics = [k for k in step if k.startswith("retrieval_")]
    assert metrics == [
        f"retrieval_{p}_{m}" for p in ("answer", "context") for m in ("recall", "precision", "f1")
    ]
    assert record["steps_score"] == 1.0 and record["reference_steps"][0][0]["matches"] == "r1"
    assert "retrieval_answer_recall" not in responses["q"]["actual_steps"][0]  # not modified
