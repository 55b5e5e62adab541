"""Vectors of one graphrag embedding table by document id, and cosine similarity to a question.

The graphrag-fitted ToG variants rank by the question's embedding against vectors the index
already holds: entity descriptions (`entity_description`, id = entity id) and text units
(`text_unit_text`, id = text unit id). A missing table, a missing row, or a vector that is
empty, all zero, not finite or of another dimension is simply absent: nothing is made up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence

import numpy as np
from graphrag_vectors import VectorStore

__all__ = ["VectorLookup", "cosine", "unit_vector"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


def unit_vector(vector: Sequence[float] | np.ndarray | None) -> np.ndarray | None:
    """`vector` scaled to length 1 (float32), or None if it is empty, zero or not finite."""
    if vector is None:
        return None
    v = np.asarray(vector, dtype=np.float32)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        return None
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else None


def cosine(question: np.ndarray, vectors: dict[str, np.ndarray]) -> dict[str, float]:
    """Cosine similarity of the unit vector `question` to each unit vector of the same size."""
    return {
        key: float(np.dot(question, v)) for key, v in vectors.items() if v.shape == question.shape
    }


class VectorLookup:
    """Unit vectors of one embedding table by id.

    From an in-memory copy (`gtog.search._vectors.in_memory`) all vectors are read at once;
    another kind of store is asked per id in a worker thread (never on the event loop), and
    each answer, found or not, is kept.
    """

    def __init__(
        self,
        name: str,
        vectors: dict[str, np.ndarray] | None = None,
        store: VectorStore | None = None,
        reason: str = "",
    ) -> None:
        self.name = name
        self._vectors = dict(vectors or {})
        self._store = store
        self._asked: set[str] = set()
        self.reason = reason
        """Why the table gives no vectors at all (empty when it does)."""

    @property
    def available(self) -> bool:
        """Whether any vector can come from this table."""
        return bool(self._vectors) or self._store is not None

    @classmethod
    def from_store(
        cls, name: str, store: VectorStore | None, max_bytes: int | None = None
    ) -> VectorLookup:
        """The lookup of `store` (None, or a LanceDB store without the table: no vectors).

        A LanceDB table of at most `max_bytes` of vectors (default `MAX_BYTES`) is read
        into memory now; a bigger one is asked per id.
        """
        from gtog.search._vectors import MAX_BYTES, MemoryVectors, in_memory

        if store is None:
            return cls(name, reason=f"no {name} vector store")
        from graphrag_vectors.lancedb import LanceDBVectorStore

        if (
            isinstance(store, LanceDBVectorStore)
            and getattr(store, "document_collection", None) is None
        ):
            return cls(name, reason=f"no {name} table in the vector store")
        limit = MAX_BYTES if max_bytes is None else max_bytes
        memory = store if isinstance(store, MemoryVectors) else in_memory(store, limit)
        if isinstance(memory, MemoryVectors):
            ids, matrix = memory.vector_rows()
            vectors = {}
            for key, row in zip(ids, matrix, strict=True):
                unit = unit_vector(row)
                if unit is not None:
                    vectors[key] = unit
            return cls(name, vectors, reason="" if vectors else f"the {name} table is empty")
        return cls(name, store=store)

    async def vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The vectors of those `ids` the table has (order of `ids`)."""
        wanted = list(dict.fromkeys(str(i) for i in ids))
        if self._store is not None:
            missing = [i for i in wanted if i not in self._vectors and i not in self._asked]
            if missing:
                found = await asyncio.to_thread(self._fetch, missing)
                self._asked.update(missing)
                self._vectors.update(found)
        return {i: self._vectors[i] for i in wanted if i in self._vectors}

    def _fetch(self, ids: list[str]) -> dict[str, np.ndarray]:
        assert self._store is not None
        found: dict[str, np.ndarray] = {}
        for key in ids:
            try:
                document = self._store.search_by_id(key, include_vectors=True)
            except Exception:  # not in the table (or the store cannot say): no vector
                logger.debug("%s: no vector for %s", self.name, key, exc_info=True)
                continue
            unit = unit_vector(document.vector)
            if unit is not None:
                found[key] = unit
        return found
