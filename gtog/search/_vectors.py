"""An in-memory copy of a small LanceDB vector table, searched with numpy at query time.

graphrag's LanceDB store answers each query through LanceDB's background event loop
(another Python thread) and its query engine: about 6 ms of CPU per query even for a
table of a few hundred rows, and per question it is one of the largest costs of local
and basic search. The vectors do not change between questions, so `in_memory` reads
them once and `MemoryVectors` ranks by the same measure LanceDB's default uses (squared
Euclidean distance, score `1 - |distance|`, like graphrag's store), exactly, in float32.

Tables above `MAX_BYTES` of vectors, and searches with filters, stay with the store.

Pickled (the context process's copy), it keeps the store's settings but not the store
(`DetachedStore`): unpickling it needs no LanceDB, whose import had held up the context
process's first build by 1.2-2.6 s.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from graphrag_vectors.vector_store import (
    VectorStore,
    VectorStoreDocument,
    VectorStoreSearchResult,
)

from gtog._internals import vector_row_data

__all__ = ["MAX_BYTES", "DetachedStore", "MemoryVectors", "in_memory"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

MAX_BYTES = 64 * 2**20
"""Largest vector table (rows x dimensions x 4 bytes) copied into memory."""


class MemoryVectors(VectorStore):
    """A read-only store answering vector searches from an in-memory matrix.

    Everything but `similarity_search_by_vector` (without filters) goes to the wrapped
    store, so writes and id lookups behave as they did.
    """

    def __init__(self, inner: VectorStore, rows: list[dict[str, Any]], matrix: np.ndarray):
        # no super().__init__: the settings (field names, index name) are the inner store's
        self.inner = inner
        self._rows = rows
        self._matrix = matrix
        self._data: list[dict[str, Any]] | None = None  # (the pickled copy's: rows' data)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # (not set yet: an object being unpickled)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (the context process's copy): the rows, the matrix, each row's
        data as an unfiltered search returns it, and the store's settings, not the store
        (filtered searches, writes: none there)."""
        data = self._data
        if data is None:
            data = [vector_row_data(self.inner, row, None) for row in self._rows]
        inner = self.inner if isinstance(self.inner, DetachedStore) else DetachedStore(self.inner)
        return {"inner": inner, "_rows": self._rows, "_matrix": self._matrix, "_data": data}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The pickled copy's state."""
        self.__dict__.update({"_data": None, **state})

    def similarity_search_by_vector(
        self,
        query_embedding: list[float] | np.ndarray,
        k: int = 10,
        select: list[str] | None = None,
        filters: Any = None,
        include_vectors: bool = True,
    ) -> list[VectorStoreSearchResult]:
        """The `k` nearest rows by squared Euclidean distance (ties: table order)."""
        if filters is not None:
            return self.inner.similarity_search_by_vector(
                query_embedding, k, select, filters, include_vectors
            )
        query = np.asarray(query_embedding, dtype=np.float32)
        distance = np.square(self._matrix - query).sum(axis=1, dtype=np.float32)
        nearest = np.argsort(distance, kind="stable")[: max(k, 0)]
        inner = self.inner
        out = []
        for i in nearest:
            row = self._rows[i]
            out.append(
                VectorStoreSearchResult(
                    document=VectorStoreDocument(
                        id=row[inner.id_field],
                        vector=self._matrix[i].tolist() if include_vectors else None,
                        data=(
                            dict(self._data[i])
                            if select is None and self._data is not None
                            else vector_row_data(inner, row, select)
                        ),
                        create_date=row.get(inner.create_date_field),
                        update_date=row.get(inner.update_date_field),
                    ),
                    score=1 - abs(float(distance[i])),
                )
            )
        return out

    def vector_rows(self) -> tuple[list[str], np.ndarray]:
        """The copy's document ids and their vectors (one float32 row each, table order)."""
        return [str(row[self.inner.id_field]) for row in self._rows], self._matrix

    def connect(self) -> None:
        """The wrapped store's."""
        self.inner.connect()

    def create_index(self) -> None:
        """The wrapped store's."""
        self.inner.create_index()

    def load_documents(self, documents: list[VectorStoreDocument]) -> None:
        """The wrapped store's."""
        self.inner.load_documents(documents)

    def search_by_id(
        self, id: str, select: list[str] | None = None, include_vectors: bool = True
    ) -> VectorStoreDocument:
        """The wrapped store's."""
        return self.inner.search_by_id(id, select, include_vectors)

    def count(self) -> int:
        """Rows in the copy."""
        return len(self._rows)

    def remove(self, ids: list[str]) -> None:
        """The wrapped store's."""
        self.inner.remove(ids)

    def update(self, document: VectorStoreDocument) -> None:
        """The wrapped store's."""
        self.inner.update(document)


class DetachedStore:
    """A vector store's settings without the store: what a pickled `MemoryVectors` holds.

    Its fields (`id_field`, `fields`, the index name, ...) are there to read; anything else
    the store does raises `AttributeError` (in the context process, a build that needs it
    fails there and is made in the run's thread instead).
    """

    _CONNECTIONS = ("db_connection", "document_collection")

    def __init__(self, store: Any) -> None:
        settings = {k: v for k, v in vars(store).items() if k not in self._CONNECTIONS}
        self.__dict__.update(settings, _store_type=type(store).__name__)

    def __getattr__(self, name: str) -> Any:
        kind = self.__dict__.get("_store_type", "vector")
        raise AttributeError(f"{name!r}: the {kind} store itself is not in this process")


def in_memory(store: VectorStore, max_bytes: int = MAX_BYTES) -> VectorStore:
    """`store` with its vectors in memory, if it is a LanceDB table of at most `max_bytes`.

    Anything else (another store type, a bigger table, a table that cannot be read) is
    returned unchanged.
    """
    from graphrag_vectors.lancedb import LanceDBVectorStore

    table = getattr(store, "document_collection", None)
    if type(store) is not LanceDBVectorStore or table is None:
        return store
    try:
        field = store.vector_field
        dims = table.schema.field(field).type.list_size
        if table.count_rows() * max(dims, 1) * 4 > max_bytes:
            return store
        data = table.to_arrow()
        vectors = data.column(field).combine_chunks()
        matrix = vectors.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        matrix = matrix.reshape(len(data), dims)
        rows = data.drop_columns([field]).to_pylist()
    except Exception:  # an unexpected table layout: LanceDB answers, as before
        logger.warning("vector table %s not copied into memory", store.index_name, exc_info=True)
        return store
    return MemoryVectors(store, rows, matrix)
