"""A run's engines and judges share one graphrag_llm model per model entry: one rate limiter
and one retry policy per model for every index, method and judge, and no index makes its
models again."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from graphrag_llm.completion.completion_factory import completion_factory
from graphrag_llm.embedding.embedding_factory import embedding_factory

from gtog._project import load_project
from gtog.eval import EvalOptions, prepare
from gtog.eval.run._engines import Engines
from gtog.llm._models import sharing_models
from gtog.search import build_engine
from tests.integration.eval.helpers import make_eval_root
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

KEYS = ("lighthouse", "orchard")
METHODS = ("local", "basic")


def _model(wrapped: Any) -> Any:
    """The graphrag_llm model under gtog's wrappers (metering, shared calls, the query's
    embedding ahead)."""
    inner = wrapped
    while inner is not None:
        wrapped, inner = inner, getattr(inner, "_inner", None) or getattr(inner, "inner", None)
    return wrapped


def _models(engines: list[Any]) -> tuple[set[int], set[int]]:
    chats = {id(_model(e.engine.model)) for e in engines}
    embeddings = {id(_model(e._embedder)) for e in engines}
    return chats, embeddings


def _counting(create: Any, made: Counter[str], kind: str) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        made[kind] += 1
        return create(*args, **kwargs)

    return counted


def _made_on_use(chat: Any) -> Any:
    """A `ChatModel`'s completion (made on first use), made now."""
    made_on_use = chat.completion
    assert made_on_use._made is None
    assert made_on_use.model_config is not None  # (the first use)
    return made_on_use


def _tog_model(engine: Any) -> Any:
    """ToG's chat model (made on first use: ToG's engine uses it as it is built)."""
    made_on_use = engine.model.completion
    assert made_on_use.model_config is not None  # (the first use)
    return _model(made_on_use._made)


def test_alike_entries_make_one_model_in_a_sharing_block_and_one_each_outside(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    async def build() -> list[Any]:
        return [
            await build_engine(m, load_project(example_indexes[k]), {})
            for k in KEYS
            for m in METHODS
        ]

    async def build_tog() -> list[Any]:
        return [await build_engine("tog", load_project(example_indexes[k]), {}) for k in KEYS]

    made: dict[str, Any] = {}
    with sharing_models(made):
        shared = asyncio.run(build())
        shared_tog = asyncio.run(build_tog())
    apart = asyncio.run(build())
    apart_tog = asyncio.run(build_tog())

    chats, embeddings = _models(shared)
    assert len(chats) == 1 and len(embeddings) == 1 and len(made) == 2
    assert type(_model(shared[0].engine.model)).__name__ == "LiteLLMCompletion"
    # ToG's engines, with the models the block kept
    assert _tog_model(shared_tog[0]) is _tog_model(shared_tog[1])
    assert _tog_model(shared_tog[0]) is _model(shared[0].engine.model) and len(made) == 2
    chats, embeddings = _models(apart)
    assert len(chats) == len(embeddings) == 4
    assert _tog_model(apart_tog[0]) is not _tog_model(apart_tog[1])


def test_a_run_s_engines_over_two_indexes_and_its_judges_share_their_models(
    tmp_path: Path,
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = make_eval_root(tmp_path, {k: example_indexes[k] for k in KEYS}, methods=METHODS)
    run = prepare(EvalOptions(root=root))
    engines = Engines(run)
    assert not run.models  # (made on first use, as the engines: a finished run needs none)
    judges = [_made_on_use(run.judges[k]) for k in KEYS]  # (their index's local search model)
    first_judge = _model(judges[0]._made)  # made before any engine, in the run's models

    async def open_both() -> list[Any]:
        for key in KEYS:
            await engines.open(key, METHODS)
        return [engines.get(k, m) for k in KEYS for m in METHODS]

    made: Counter[str] = Counter()  # graphrag_llm's factories asked for a model, by kind
    for kind, factory in (("chat", completion_factory), ("embedding", embedding_factory)):
        monkeypatch.setattr(factory, "create", _counting(factory.create, made, kind))
    try:
        built = asyncio.run(open_both())
    finally:
        engines.close()
        run.close()
    # graphrag's engine factories made no model of their own (gtog's gated ones were given
    # them); the chat model was made for the judge already, the embedding model once
    assert made == {"embedding": 1}
    assert not [e for e in built if isinstance(e, BaseException)]
    chats, embeddings = _models(built)
    assert len(chats) == 1 and len(embeddings) == 1
    # the judges share the engines' model entry: one rate limit for the run's calls to it
    assert chats == {id(first_judge)} == {id(_model(judges[1]._made))}
    assert len(run.models) == 2
