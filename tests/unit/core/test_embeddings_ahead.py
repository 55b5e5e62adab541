"""The vector-size check's embedding is the search's own: taken once, counted where used.

Real HTTP to the scripted server; the models are built from a settings.yaml as every gtog
command builds them.
"""

from __future__ import annotations

from pathlib import Path

from gtog._project import load_graphrag_config
from gtog.llm._ahead import EmbeddingsAhead, embeddings_ahead, model_identity
from gtog.llm._models import embedding_model_from_config, run_sync
from gtog.llm._usage import metering
from tests.support.projects import write_project
from tests.support.scripted_server import ScriptedServer


def test_a_response_fetched_ahead_is_taken_once_and_counted_by_its_taker(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = embedding_model_from_config(config, "default_embedding_model")
        text = "Who keeps the light?"
        ahead = EmbeddingsAhead()  # what the preflight keeps: the model's own response
        ahead.keep(model.config, text, run_sync(model.embedding.embedding_async(input=[text])))
        assert len(server.log) == 1

        async def search() -> tuple[list[list[float]], list[list[float]], int]:
            with embeddings_ahead(ahead), metering() as meter:
                first = await model.embed([text])  # taken: no call
                again = await model.embed([text])  # used up: a call
            return first, again, meter.tally.embedding_calls

        first, again, counted = run_sync(search())
        assert first == again and len(first[0]) == 64
        assert len(server.log) == 2 and counted == 2  # both counted, one sent
        assert len(ahead) == 0
        outside = run_sync(model.embed([text]))  # no run: nothing to take
        assert outside == first and len(server.log) == 3


def test_the_identity_is_the_vectors_not_the_key_or_the_retries(tmp_path: Path) -> None:
    config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", "http://x:1/v1"))
    model = config.get_embedding_model_config("default_embedding_model")
    same = model.model_copy(update={"api_key": "other", "retry": None})
    assert model_identity(same) == model_identity(model)
    for change in ({"model": "text-embedding-3-large"}, {"call_args": {"dimensions": 32}}):
        assert model_identity(model.model_copy(update=change)) != model_identity(model)
