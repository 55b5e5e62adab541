"""Text ranking of `text_guided` ToG: entity relevance from text units, the evidence text
units, and their fallbacks (ties, entities without text units, missing vectors or tables)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from graphrag.data_model.entity import Entity
from graphrag.data_model.text_unit import TextUnit
from graphrag_vectors import VectorStoreDocument
from graphrag_vectors.lancedb import LanceDBVectorStore

from gtog.tog._graph import KnowledgeGraph
from gtog.tog._ranking import QuestionRanker
from gtog.tog._similarity import VectorLookup, unit_vector
from tests.unit.tog.test_stages import StageModel, run_for
from tests.unit.tog.test_variants import HashEmbedder

QUESTION = "q"
E = np.eye(4, dtype=np.float32)
Q = E[0]
"""The question's vector: similarity to a unit vector v is v[0]."""


def _v(first: float) -> np.ndarray:
    """A unit vector whose similarity to the question is `first`."""
    return np.array([first, np.sqrt(1 - first**2), 0, 0], dtype=np.float32)


class FixedEmbedder(HashEmbedder):
    """Embeds every text as `Q`."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [Q.tolist() for _ in texts]


def _graph() -> KnowledgeGraph:
    """A (units a1, a2), B (unit b1), C (no text units), D (unit d1)."""
    entities = [
        Entity(id="eA", short_id="eA", title="A", text_unit_ids=["a1", "a2"]),
        Entity(id="eB", short_id="eB", title="B", text_unit_ids=["b1"]),
        Entity(id="eC", short_id="eC", title="C", text_unit_ids=None),
        Entity(id="eD", short_id="eD", title="D", text_unit_ids=["d1", "gone"]),
    ]
    units = [
        TextUnit(id=u, short_id=u, text=f"text of {u}", n_tokens=n)
        for u, n in (("a1", 100), ("a2", 50), ("b1", 100), ("d1", 30))
    ]
    return KnowledgeGraph(entities, [], units)


def _run(**settings: object):
    run = run_for(StageModel(), QUESTION, text_guided=True, **settings)
    run.embedder = FixedEmbedder()
    return run


UNITS = {"a1": _v(0.2), "a2": _v(0.6), "b1": _v(0.6), "d1": _v(0.1)}
DESCRIPTIONS = {"eA": _v(0.3), "eB": _v(0.4), "eC": _v(0.9), "eD": _v(0.5)}


def _ranker(units: dict | None = UNITS, descriptions: dict | None = DESCRIPTIONS):
    g = _graph()
    u = VectorLookup("text_unit_text", units) if units is not None else None
    d = VectorLookup("entity_description", descriptions) if descriptions is not None else None
    return QuestionRanker(
        g,
        d or VectorLookup.from_store("entity_description", None),
        u or VectorLookup.from_store("text_unit_text", None),
    )


async def test_relevance_is_the_best_text_unit_of_each_entity() -> None:
    run = _run()
    relevance = await _ranker().entity_relevance(run, 1, ["A", "B", "D"])
    assert relevance.source == "text_units"
    assert {t: round(s, 3) for t, s in relevance.scores.items()} == {"A": 0.6, "B": 0.6, "D": 0.1}
    assert not run.fallbacks and run.embedder.texts == [QUESTION]


async def test_an_entity_without_text_units_moves_the_depth_to_descriptions() -> None:
    run = _run()
    relevance = await _ranker().entity_relevance(run, 2, ["A", "C"])
    assert relevance.source == "entity_description"  # like with like: both by description
    assert {t: round(s, 3) for t, s in relevance.scores.items()} == {"A": 0.3, "C": 0.9}
    [fallback] = run.fallbacks
    assert (fallback.depth, fallback.stage, fallback.entity) == (2, "ranking", "C")
    assert "description vectors" in fallback.reason


async def test_missing_table_and_missing_vectors_degrade_without_inventing_scores() -> None:
    run = _run()
    relevance = await _ranker(units=None).entity_relevance(run, 1, ["A", "B"])
    assert relevance.source == "entity_description"
    assert "no text_unit_text vector store" in run.fallbacks[0].reason

    run = _run()
    partial = {k: v for k, v in DESCRIPTIONS.items() if k != "eC"}
    relevance = await _ranker(descriptions=partial).entity_relevance(run, 1, ["A", "C"])
    assert (relevance.source, relevance.scores) == ("none", {})
    assert "edge scores alone" in run.fallbacks[-1].reason

    run = _run()
    run.embedder = None
    relevance = await _ranker().entity_relevance(run, 1, ["A"])
    assert (relevance.source, relevance.scores) == ("none", {})
    assert "question not embedded (no embedding model)" in run.fallbacks[0].reason


async def test_evidence_units_most_similar_first_ties_in_path_order() -> None:
    run = _run(max_text_units=3)
    used, table = await _ranker().text_units(run, ["B", "A", "C", "D"])
    # a2 and b1 tie at 0.6: b1 came first on the paths; "gone" is not in the index
    assert [u.id for u in used] == ["b1", "a2", "a1"]
    assert list(table["id"]) == ["b1", "a2", "a1"]
    assert list(table["similarity"]) == [0.6, 0.6, 0.2]
    assert set(table["reason"]) == {"most similar to the question"}
    assert list(table["entities"]) == ["B", "A", "A"]


async def test_units_without_vectors_follow_and_the_token_budget_holds() -> None:
    run = _run(max_text_units=5, text_unit_max_tokens=120)
    units = {k: v for k, v in UNITS.items() if k != "d1"}
    used, table = await _ranker(units=units).text_units(run, ["A", "B", "D"])
    assert [u.id for u in used] == ["a2", "d1"]  # 50 + 30 tokens; the 100-token ones skipped
    assert list(table["id"]) == ["a2", "b1", "a1", "d1"]
    rows = table.set_index("id")
    assert not rows.loc["b1", "used"] and "over the token budget" in rows.loc["b1", "reason"]
    assert rows.loc["d1", "used"] and pd.isna(rows.loc["d1", "similarity"])
    assert rows.loc["d1", "reason"].startswith("no vector for this unit")


async def test_without_the_questions_vector_units_come_in_path_order() -> None:
    run = _run(max_text_units=2)
    run.embedder = None
    used, table = await _ranker().text_units(run, ["D", "A"])
    assert [u.id for u in used] == ["d1", "a1"]
    assert set(table["reason"]) == {"question not embedded: path order"}


@pytest.mark.parametrize("vector", [[0.0, 0.0], [float("nan"), 1.0], [], None])
def test_unusable_vectors_are_absent(vector: list[float] | None) -> None:
    assert unit_vector(vector) is None


async def test_a_store_asked_per_id_gives_the_rows_it_has(tmp_path: Path) -> None:
    store = LanceDBVectorStore(db_uri=str(tmp_path / "db"), index_name="text_unit_text")
    store.vector_size = 4
    store.connect()
    store.create_index()
    store.load_documents(
        [
            VectorStoreDocument(id="a1", vector=_v(0.2).tolist()),
            VectorStoreDocument(id="b1", vector=[0.0, 0.0, 0.0, 0.0]),
        ]
    )
    lookup = VectorLookup.from_store("text_unit_text", store, max_bytes=0)  # not copied
    found = await lookup.vectors(["a1", "b1", "zz"])
    assert list(found) == ["a1"] and round(float(found["a1"][0]), 3) == 0.2
    assert await lookup.vectors(["zz"]) == {}  # asked once, remembered
    memory = VectorLookup.from_store("text_unit_text", store)
    assert list(await memory.vectors(["b1", "a1"])) == ["a1"]
    missing = LanceDBVectorStore(db_uri=str(tmp_path / "db"), index_name="absent")
    missing.connect()
    lookup = VectorLookup.from_store("text_unit_text", missing)
    assert not lookup.available and "no text_unit_text table" in lookup.reason
