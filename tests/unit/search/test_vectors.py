"""The in-memory copy of a LanceDB table ranks exactly as LanceDB does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphrag_vectors.filtering import Condition, Operator
from graphrag_vectors.lancedb import LanceDBVectorStore
from graphrag_vectors.vector_store import VectorStoreDocument

from gtog.search._vectors import MemoryVectors, in_memory

DIMS = 48


def _store(path: Path, vectors: np.ndarray) -> LanceDBVectorStore:
    store = LanceDBVectorStore(
        db_uri=str(path), index_name="docs", vector_size=DIMS, fields={"kind": "str"}
    )
    store.connect()
    store.create_index()
    store.load_documents(
        [
            VectorStoreDocument(id=f"d{i}", vector=v.tolist(), data={"kind": "ab"[i % 2]})
            for i, v in enumerate(vectors)
        ]
    )
    return store


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[LanceDBVectorStore, MemoryVectors]:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(1500, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    lance = _store(tmp_path_factory.mktemp("lance"), vectors)
    memory = in_memory(lance)
    assert isinstance(memory, MemoryVectors)
    return lance, memory


def test_same_ids_scores_and_data_as_lancedb(
    stores: tuple[LanceDBVectorStore, MemoryVectors],
) -> None:
    lance, memory = stores
    rng = np.random.default_rng(4)
    assert memory.count() == lance.count() == 1500
    for t in range(60):
        query = rng.normal(size=DIMS)
        if t % 2:  # near a stored vector, as a real query near an entity is
            query = memory._matrix[rng.integers(1500)] + rng.normal(scale=0.1, size=DIMS)
        for k in (1, 10, 40):
            want = lance.similarity_search_by_vector(query.tolist(), k=k)
            got = memory.similarity_search_by_vector(query.tolist(), k=k)
            assert [r.document.id for r in got] == [r.document.id for r in want]
            assert [r.document.data for r in got] == [r.document.data for r in want]
            np.testing.assert_allclose(
                [r.score for r in got], [r.score for r in want], rtol=1e-4, atol=1e-4
            )
            np.testing.assert_allclose(got[0].document.vector, want[0].document.vector, rtol=1e-6)
    without = memory.similarity_search_by_vector(query.tolist(), k=3, include_vectors=False)
    assert all(r.document.vector is None for r in without)


def test_text_search_embeds_then_ranks_in_memory(
    stores: tuple[LanceDBVectorStore, MemoryVectors],
) -> None:
    _, memory = stores
    vector = memory._matrix[7].tolist()
    got = memory.similarity_search_by_text("anything", lambda _: vector, k=1)
    assert got[0].document.id == "d7"
    assert got[0].score == pytest.approx(1.0, abs=1e-5)


def test_filtered_searches_stay_with_lancedb(
    stores: tuple[LanceDBVectorStore, MemoryVectors],
) -> None:
    lance, memory = stores
    only_b = Condition(field="kind", operator=Operator.eq, value="b")
    got = memory.similarity_search_by_vector(memory._matrix[0].tolist(), k=5, filters=only_b)
    want = lance.similarity_search_by_vector(memory._matrix[0].tolist(), k=5, filters=only_b)
    assert [r.document.id for r in got] == [r.document.id for r in want]
    assert {r.document.data["kind"] for r in got} == {"b"}


def test_large_tables_and_other_stores_are_left_alone(
    stores: tuple[LanceDBVectorStore, MemoryVectors], tmp_path: Path
) -> None:
    lance, memory = stores
    assert in_memory(lance, max_bytes=1500 * DIMS * 4 - 1) is lance
    assert in_memory(memory) is memory  # not a LanceDB store
    empty = LanceDBVectorStore(db_uri=str(tmp_path), index_name="missing", vector_size=DIMS)
    empty.connect()  # no such table: nothing to copy
    assert in_memory(empty) is empty


_UNPICKLE = """
import json, pickle, sys
import gtog.search._vectors  # noqa: F401  (what the context process has imported)
memory = pickle.loads(sys.stdin.buffer.read())
found = [
    [r.document.id, r.document.data, r.score]
    for q in json.loads(sys.argv[1])
    for r in memory.similarity_search_by_vector(q, k=5, include_vectors=False)
]
try:
    memory.similarity_search_by_vector(json.loads(sys.argv[1])[0], k=5, select=["kind"])
    refused = ""
except AttributeError as exc:
    refused = str(exc)
print(json.dumps({"found": found, "refused": refused, "lancedb": "lancedb" in sys.modules}))
"""


def test_a_pickled_copy_searches_alike_without_lancedb(
    stores: tuple[LanceDBVectorStore, MemoryVectors],
) -> None:
    """The context process's copy: unpickled without importing LanceDB (seconds), the same
    unfiltered results; what needs the store itself (a select, a filter) raises there."""
    import json
    import pickle
    import subprocess
    import sys

    _, memory = stores
    queries = [memory._matrix[i].tolist() for i in (0, 7, 1499)]
    want = [
        [r.document.id, r.document.data, r.score]
        for q in queries
        for r in memory.similarity_search_by_vector(q, k=5, include_vectors=False)
    ]
    blob = pickle.dumps(memory, protocol=pickle.HIGHEST_PROTOCOL)
    child = subprocess.run(
        [sys.executable, "-c", _UNPICKLE, json.dumps(queries)],
        input=blob,
        capture_output=True,
        check=True,
    )
    got = json.loads(child.stdout)
    assert got["lancedb"] is False
    assert [(i, d) for i, d, _ in got["found"]] == [(i, d) for i, d, _ in want]
    np.testing.assert_allclose([s for *_, s in got["found"]], [s for *_, s in want], rtol=1e-6)
    assert "LanceDBVectorStore store itself is not in this process" in got["refused"]
    assert isinstance(memory.inner, LanceDBVectorStore)  # (the original keeps its store)
