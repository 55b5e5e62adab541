"""Local and basic search fetch the query embedding asynchronously; the context is unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gtog._project import load_project
from gtog.search import SearchFailed, build_engine, run_search
from gtog.search._offloop import context_threads
from tests.support.scripted_server import Faults, ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

OPTIONS = {"response_type": "Single Paragraph"}


def _questions(key: str) -> list[str]:
    return [q["question"] for q in json.loads(EXAMPLE_QA.read_text()) if q["imdb_key"] == key]


@pytest.mark.parametrize("method", ["local", "basic"])
def test_one_embedding_per_question_and_the_same_context_as_graphrag(
    method: str, llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    questions = _questions("orchard")

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        engine = await build_engine(method, load_project(example_indexes["orchard"]), OPTIONS)
        with context_threads():
            outcomes = await asyncio.gather(*(run_search(engine, q) for q in questions))
        ours = {q: str(o.result.context_text) for q, o in zip(questions, outcomes, strict=True)}
        llm_server.clear_log()
        # graphrag's own synchronous path, the builder embedding the query itself (a fresh
        # engine per question: graphrag's builder keeps state between questions)
        theirs = {}
        for q in questions:
            fresh = await build_engine(method, load_project(example_indexes["orchard"]), OPTIONS)
            builder = fresh.engine.context_builder.inner  # type: ignore[attr-defined]
            params = fresh.engine.context_builder_params  # type: ignore[attr-defined]
            theirs[q] = str(builder.build_context(query=q, **params).context_chunks)
        return ours, theirs

    ours, theirs = asyncio.run(run())
    embedded = [e.prompt for e in llm_server.log if e.kind == "embeddings"]
    assert sorted(embedded) == sorted(questions)  # graphrag's path embedded each question
    assert ours == theirs


def test_prefetch_calls_embeddings_once_per_question(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    questions = _questions("orchard")

    async def run() -> None:
        engine = await build_engine("local", load_project(example_indexes["orchard"]), OPTIONS)
        llm_server.clear_log()
        with context_threads():
            await asyncio.gather(*(run_search(engine, q) for q in questions))

    asyncio.run(run())
    embedded = [e.prompt for e in llm_server.log if e.kind == "embeddings"]
    assert sorted(embedded) == sorted(questions)


@pytest.mark.parametrize("method", ["local", "basic"])
def test_a_failed_query_embedding_fails_the_search(
    method: str, llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    async def run() -> BaseException | None:
        engine = await build_engine(method, load_project(example_indexes["orchard"]), OPTIONS)
        llm_server.faults = Faults(rate=1.0, statuses=(400,), kinds=("embeddings",))
        try:
            await run_search(engine, _questions("orchard")[0])
        except SearchFailed as exc:
            return exc
        return None

    failure = asyncio.run(run())
    assert failure is not None, "a search whose query embedding failed must not succeed"
    assert "400" in str(failure) or "injected" in str(failure)
    assert not [e for e in llm_server.log if e.kind == "chat"]  # no answer without a context
