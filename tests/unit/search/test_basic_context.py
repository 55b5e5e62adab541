"""`TextUnitContext`: graphrag's basic search context, the same text and table, built
without pandas; and its quick build, on the event loop, only when it waits on nothing."""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd
import pytest
from graphrag.data_model.text_unit import TextUnit
from graphrag.query.structured_search.basic_search.basic_context import BasicSearchContext
from graphrag.tokenizer.get_tokenizer import get_tokenizer
from graphrag_llm.types import LLMEmbeddingResponse
from graphrag_vectors.lancedb import LanceDBVectorStore
from graphrag_vectors.vector_store import VectorStoreDocument

from gtog.search._basic_context import TextUnitContext
from gtog.search._offloop import RememberedCounts
from gtog.search._vectors import MemoryVectors, in_memory

DIMS = 16

# what a CSV writer must quote or escape, in ids and texts alike
TEXTS = [
    "The keeper trims the wick.",
    'She said "no" | and left.',
    "A back\\slash, a\nnew line and a\r\nWindows one.",
    "  leading spaces, trailing too  ",
    "Unicode: naïve café — 灯台",
    '"quoted from the start"',
    "",
    "|",
]


def _vector(text: str) -> list[float]:
    """A fixed vector for any text (its hash's bytes)."""
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255 - 0.5 for b in digest[:DIMS]]


class Embedder:
    """A text embedding model of fixed vectors, answering as graphrag_llm's models do."""

    def embedding(self, *, input: list[str], **kwargs: Any) -> LLMEmbeddingResponse:
        return _response(input[0])


def _response(text: str) -> LLMEmbeddingResponse:
    return LLMEmbeddingResponse(
        object="list",
        model="e",
        data=[{"object": "embedding", "index": 0, "embedding": _vector(text)}],
        usage={"prompt_tokens": 1, "total_tokens": 1},
    )


def _units() -> list[TextUnit]:
    units = [
        TextUnit(id=f"u{i}", short_id=str(i), text=f"{TEXTS[i % len(TEXTS)]} ({i})" * (1 + i % 5))
        for i in range(60)
    ]
    units[7].short_id = "7|a"  # an id the writer quotes
    units.append(TextUnit(id="u3", short_id="3b", text="the same id again"))  # both kept
    return units


@pytest.fixture(scope="module")
def lance(tmp_path_factory: pytest.TempPathFactory) -> LanceDBVectorStore:
    store = LanceDBVectorStore(
        db_uri=str(tmp_path_factory.mktemp("units")), index_name="units", vector_size=DIMS
    )
    store.connect()
    store.create_index()
    store.load_documents(  # (u60: a stored vector with no text unit)
        [VectorStoreDocument(id=f"u{i}", vector=_vector(f"u{i}")) for i in range(61)]
    )
    return store


def _builders(store: Any) -> tuple[BasicSearchContext, TextUnitContext]:
    tokenizer = get_tokenizer()
    graphrag = BasicSearchContext(Embedder(), store, _units(), tokenizer)
    ours = TextUnitContext(BasicSearchContext(Embedder(), store, _units(), tokenizer))
    ours.tokenizer = RememberedCounts(tokenizer)  # (as `OffLoopSearch` gives it)
    return graphrag, ours


QUERIES = [f"u{i}" for i in range(0, 61, 4)] + ["who keeps the light?", "a | b", '"x"']


@pytest.mark.parametrize("k", [1, 10, 40])
@pytest.mark.parametrize("budget", [12_000, 60, 5])
def test_the_same_context_as_graphrag(lance: LanceDBVectorStore, k: int, budget: int) -> None:
    memory = in_memory(lance)
    assert isinstance(memory, MemoryVectors)
    for store in (lance, memory):
        graphrag, ours = _builders(store)
        for query in QUERIES:
            params = {"k": k, "max_context_tokens": budget}
            want = graphrag.build_context(query, **params)
            got = ours.build_context(query, **params)
            assert got.context_chunks == want.context_chunks, (query, k, budget)
            assert list(got.context_records) == list(want.context_records) == ["sources"]
            pd.testing.assert_frame_equal(
                got.context_records["sources"], want.context_records["sources"]
            )
            quick = ours.quick_context(query, _response(query), params)
            if store is memory and len(want.context_records["sources"]):
                assert quick is not None  # (counted by the build above)
                assert quick.context_chunks == want.context_chunks
                pd.testing.assert_frame_equal(
                    quick.context_records["sources"], want.context_records["sources"]
                )
            else:  # (LanceDB's search waits on its thread; an empty table is graphrag's)
                assert quick is None


def test_other_names_and_delimiters_and_no_question(lance: LanceDBVectorStore) -> None:
    graphrag, ours = _builders(in_memory(lance))
    params = {"context_name": "Texts", "column_delimiter": ";", "text_id_col": "n", "text_col": "t"}
    for query in ["u9", "u12", ""]:
        want = graphrag.build_context(query, **params)
        got = ours.build_context(query, **params)
        assert got.context_chunks == want.context_chunks
        assert list(got.context_records) == ["texts"]
        pd.testing.assert_frame_equal(got.context_records["texts"], want.context_records["texts"])
    assert ours.quick_context("", _response(""), params) is None


def test_a_quick_build_counts_nothing_and_waits_for_the_thread_s(
    lance: LanceDBVectorStore,
) -> None:
    _, ours = _builders(in_memory(lance))
    assert ours.quick_context("u30", _response("u30"), {}) is None  # nothing counted yet
    assert not ours.tokenizer._counts
    built = ours.build_context("u30")
    quick = ours.quick_context("u30", _response("u30"), {})
    assert quick is not None and quick.context_chunks == built.context_chunks


def test_a_unit_without_text_is_graphrag_s_to_build(lance: LanceDBVectorStore) -> None:
    graphrag, ours = _builders(in_memory(lance))
    for builder in (graphrag, ours):
        for unit in builder.text_units:
            unit.text = None  # type: ignore[assignment]
    with pytest.raises(TypeError):
        graphrag.build_context("u4")
    with pytest.raises(TypeError):
        ours.build_context("u4")
    assert ours.quick_context("u4", _response("u4"), {}) is None


def test_it_pickles_for_the_context_process(lance: LanceDBVectorStore) -> None:
    import pickle

    from gtog.search._offloop import portable_builder

    _, ours = _builders(in_memory(lance))
    copy = pickle.loads(portable_builder(ours))
    assert isinstance(copy, TextUnitContext) and copy._positions == ours._positions
    assert len(copy.text_units) == len(ours.text_units)
