"""A scripted server with the gtog.qa judge rules, and judge models pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gtog.qa._models import JudgeModels, models_from_model_configs
from tests.support.qa_rules import qa_rules
from tests.support.scripted_server import ScriptedServer


@pytest.fixture(scope="module")
def _qa_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(qa_rules()).start()
    yield server
    server.stop()


@pytest.fixture
def qa_server(_qa_server: ScriptedServer) -> Iterator[ScriptedServer]:
    """The module's server with an empty log; rules a test adds are undone after it."""
    saved = list(_qa_server.rules)
    _qa_server.clear_log()
    yield _qa_server
    _qa_server.rules[:] = saved


def model_config(server: ScriptedServer, model: str) -> dict[str, str]:
    """A graphrag_llm ModelConfig mapping for `model` served by `server`."""
    return {
        "model_provider": "openai",
        "model": model,
        "api_base": server.base_url,
        "api_key": "test-key",
    }


@pytest.fixture
def judges(qa_server: ScriptedServer) -> JudgeModels:
    """gpt-4o-mini and text-embedding-3-small (both priced in LiteLLM's map)."""
    return models_from_model_configs(
        model_config(qa_server, "gpt-4o-mini"), model_config(qa_server, "text-embedding-3-small")
    )


@pytest.fixture
def unpriced_judges(qa_server: ScriptedServer) -> JudgeModels:
    """Models with names LiteLLM has no price for."""
    return models_from_model_configs(
        model_config(qa_server, "gtog-unpriced-chat"),
        model_config(qa_server, "gtog-unpriced-embed"),
    )


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
