"""Under a meter, local and basic search make no token estimates of their own: the meter
counts each call's usage, and `run_search` puts that in the result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from graphrag_llm.tokenizer import Tokenizer

from gtog._project import load_project
from gtog.search import build_engine, run_search
from gtog.search._offloop import UncountedUnderMeter, context_threads
from tests.support.scripted_server import ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration


class Counting(Tokenizer):
    """A tokenizer that notes every text it encodes."""

    def __init__(self, inner: Tokenizer, **kwargs: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def encode(self, text: str) -> list[int]:
        self.texts.append(text)
        return self.inner.encode(text)

    def decode(self, tokens: list[int]) -> str:
        return self.inner.decode(tokens)


@pytest.mark.parametrize("method", ["local", "basic"])
def test_a_metered_search_never_encodes_its_prompt_and_a_bare_one_still_does(
    method: str, llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    qa = json.loads(EXAMPLE_QA.read_text())
    question = next(q["question"] for q in qa if q["imdb_key"] == "orchard")

    async def run() -> tuple[Any, list[str], Any, Counting]:
        engine = await build_engine(method, load_project(example_indexes["orchard"]), {})
        own = engine.engine.tokenizer  # type: ignore[attr-defined]
        assert isinstance(own, UncountedUnderMeter)
        counting = Counting(own.inner)
        own.inner = counting
        with context_threads():
            outcome = await run_search(engine, question)
            metered = list(counting.texts)
            bare = await engine.search(question)  # no meter: graphrag's own estimates
        return outcome, metered, bare, counting

    outcome, metered, bare, counting = asyncio.run(run())
    texts = counting.texts
    assert metered == []
    assert outcome.result.prompt_tokens == outcome.usage.total_prompt_tokens > 0
    assert outcome.result.output_tokens == outcome.usage.total_output_tokens > 0
    assert len(texts) == 2 and "---Role---" in texts[0]  # the prompt, then the answer
    assert texts[1] == bare.response
    assert bare.prompt_tokens == len(counting.inner.encode(texts[0])) > 0
