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
