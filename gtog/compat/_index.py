"""One index's layout: which graphrag wrote it, how it is read in memory, what it lacks.

`inspect_index` looks at table schemas and vector-table headers only (a few milliseconds,
no table is loaded), so a run can check every index before its first question and load
each one only when its questions start.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog.compat._tables import TableLayout, detect_tables
from gtog.compat._vectors import VectorTable, find_vector_tables

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_storage.tables import TableProvider
    from graphrag_vectors import IndexSchema

__all__ = ["IndexCompat", "inspect_index", "output_folder", "table_provider"]

MIGRATION = "graphrag's index_migration_to_v1/v2/v3 notebooks"


def output_folder(config: GraphRagConfig, root: Path) -> Path | None:
    """The folder of the index tables when they are files on disk, else None."""
    out = config.output_storage
    if getattr(out, "type", "file") != "file":
        return None
    base = Path(out.base_dir or "output")
    return base if base.is_absolute() else root / base


def table_provider(config: GraphRagConfig) -> TableProvider:
    """graphrag's table provider over the project's output storage."""
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    storage = create_storage(config.output_storage)
    return create_table_provider(config.table_provider, storage=storage)


def _stored_columns(config: GraphRagConfig, root: Path) -> dict[str, frozenset[str]]:
    """Every stored table's columns: from Parquet footers on disk, else by reading it."""
    folder = output_folder(config, root)
    if folder is not None and getattr(config.table_provider, "type", "parquet") == "parquet":
        import pyarrow.parquet as pq

        return {
            p.stem: frozenset(pq.read_schema(p).names) for p in sorted(folder.glob("*.parquet"))
        }

    async def read_all() -> dict[str, frozenset[str]]:
        provider = table_provider(config)
        return {
            name: frozenset((await provider.read_dataframe(name)).columns)
            for name in provider.list()
        }

    with ThreadPoolExecutor(1) as pool:  # callable with or without a running event loop
        return pool.submit(asyncio.run, read_all()).result()


@dataclass
class IndexCompat:
    """How one index is read: its tables' layout and its vector tables."""

    root: Path
    tables: TableLayout
    vectors: dict[str, VectorTable] = field(default_factory=dict)

    @property
    def notes(self) -> list[str]:
        """Everything read otherwise than stored (empty for a graphrag 3.x index)."""
        used = self.vectors.values()
        renamed = sorted(v.legacy for v in used if v.legacy)
        sizes = sorted({v.sized for v in used if v.sized})
        notes = list(self.tables.notes)
        if renamed:
            notes.append(f"vector tables {', '.join(renamed)} (1.x/2.x names)")
        if sizes:
            dims = "/".join(str(d) for d in sizes)
            notes.append(f"vector size {dims} (from the tables; the settings state none)")
        return notes

    @property
    def era(self) -> str:
        """`3.x`, or the older graphrag that wrote it (`2.x`, `1.x`, `0.x`)."""
        if self.tables.era == "3.x" and self.notes:
            return "2.x"
        return self.tables.era

    @property
    def adapted(self) -> bool:
        """Is anything read otherwise than stored?"""
        return bool(self.notes)

    def note(self, label: str) -> str | None:
        """The one line saying what was adapted (None: nothing)."""
        if not self.adapted or self.tables.blocked is not None:
            return None
        return (
            f"{label}: a graphrag {self.era} index, read as 3.x in memory (its files are "
            f"not changed): {'; '.join(self.notes)}"
        )

    def describe(self) -> dict[str, Any]:
        """What was adapted, for a run's spec."""
        return {"layout": self.era, "adapted": self.notes}

    def problems(
        self, tables: tuple[str, ...], vectors: tuple[str, ...] = ()
    ) -> list[tuple[str, str]]:
        """(cause, fix) for each of `tables` and `vectors` this index cannot give."""
        reindex = (
            f"re-index with `gtog index --root {self.root}` (graphrag's cache spares the LLM "
            "calls it made)"
        )
        if self.tables.blocked is not None:
            return [(self.tables.blocked, f"migrate it with {MIGRATION}, or {reindex}")]
        out = []
        for table in tables:
            why = self.tables.missing(table)
            if why is not None:
                out.append((why, f"{reindex}, or migrate it with {MIGRATION}"))
        for embedding in vectors:
            v = self.vectors.get(embedding)
            if v is None:
                out.append(
                    (f"no {embedding} embedding configured", "add it to vector_store.index_schema")
                )
            elif v.missing is not None:
                out.append((v.missing, v.fix or f"{reindex} (embed_text must list {embedding})"))
        return out

    def stored(self, table: str) -> str | None:
        """The stored name of `table` (None: the index has none)."""
        return self.tables.stored.get(table)

    async def adapt(self, table: str, df: pd.DataFrame, read: Any) -> pd.DataFrame:
        """The stored `table` as graphrag 3.3 reads it."""
        return await self.tables.adapt(table, df, read)

    def vector_schema(self, embedding: str, configured: IndexSchema) -> IndexSchema:
        """The schema to connect to `embedding`'s vectors with."""
        v = self.vectors.get(embedding)
        return v.schema if v is not None and v.missing is None else configured


def inspect_index(config: GraphRagConfig, root: Path) -> IndexCompat:
    """Inspect an index's stored tables and vector tables (headers only; nothing written)."""
    return IndexCompat(
        root=root,
        tables=detect_tables(_stored_columns(config, root)),
        vectors=find_vector_tables(config.vector_store),
    )
