"""A local search context depends on its question only, not on questions run before it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gtog._project import load_project
from gtog.search import build_engine, run_search
from gtog.search._offloop import context_threads
from tests.support.scripted_server import ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration


def test_local_context_does_not_carry_state_between_questions(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    items = json.loads(EXAMPLE_QA.read_text())
    questions = [q["question"] for q in items if q["imdb_key"] == "orchard"]
    options = {"response_type": "Single Paragraph"}

    async def contexts(order: list[str], concurrent: bool) -> dict[str, str]:
        engine = await build_engine("local", load_project(example_indexes["orchard"]), options)
        with context_threads(8):
            if concurrent:
                results = await asyncio.gather(*(run_search(engine, q) for q in order))
            else:
                results = [await run_search(engine, q) for q in order]
        return {q: str(r.result.context_text) for q, r in zip(order, results, strict=True)}

    alone = {}
    for q in questions:  # each question on a fresh engine
        alone.update(asyncio.run(contexts([q], concurrent=False)))
    after_others = asyncio.run(contexts(questions[::-1], concurrent=False))
    at_once = asyncio.run(contexts(questions * 2, concurrent=True))
    assert after_others == alone
    assert at_once == alone
