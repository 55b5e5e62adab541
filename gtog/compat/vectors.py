"""Vector tables written by graphrag 1.x and 2.x, found as graphrag 3.3 looks for them.

graphrag 1.x and 2.x name their LanceDB tables `default-entity-description`,
`default-text_unit-text` and `default-community-full_content` (a container prefix and the
embedding's dotted name); 3.x names them `entity_description`, ... (graphrag's
index_migration_to_v3 notebook: set each `index_schema.<name>.index_name` to the old name,
and `vector_size` to the old model's). Here the old table is used, in memory, when the
configured one is absent, and the vector size is taken from the table when the settings
do not state one. Only LanceDB stores on disk are inspected; others are used as configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphrag_vectors import IndexSchema, VectorStoreConfig

__all__ = ["LEGACY_NAMES", "VectorTable", "find_vector_tables"]

LEGACY_NAMES = {
    "entity_description": "default-entity-description",
    "text_unit_text": "default-text_unit-text",
    "community_full_content": "default-community-full_content",
}
"""3.x embedding name -> the table graphrag 1.x and 2.x wrote for it."""


@dataclass(frozen=True)
class VectorTable:
    """Where one embedding's vectors are, as they will be read."""

    embedding: str
    schema: IndexSchema
    """The schema to connect with (the configured one, or adapted: name and size)."""
    legacy: str | None = None
    """The 1.x/2.x table read for it (None: the configured table)."""
    sized: int | None = None
    """The vector size taken from the table (None: the configured size is right)."""
    missing: str | None = None
    """What is wrong with it (None: usable, or not a LanceDB store on disk)."""
    size_conflict: bool = False
    """`missing` is a vector size the settings state otherwise than the table holds."""


def _stated_size(store: VectorStoreConfig, schema: IndexSchema) -> bool:
    """Do the settings state this embedding's vector size (vs graphrag's default)?

    graphrag fills absent schemas with the store's `vector_size`; a schema whose size
    differs from it was written by the user.
    """
    return "vector_size" in store.model_fields_set or schema.vector_size != store.vector_size


def _dims(db: object, name: str, field: str) -> int | None:
    table = db.open_table(name)  # type: ignore[attr-defined]
    try:
        return int(table.schema.field(field).type.list_size)
    except (KeyError, AttributeError, TypeError):
        return None


def find_vector_tables(store: VectorStoreConfig) -> dict[str, VectorTable]:
    """Each configured embedding's table, adapted to a 1.x/2.x index where needed.

    Nothing is created: a LanceDB folder that does not exist is reported, not connected to
    (connecting would create it).
    """
    from graphrag_vectors.vector_store_type import VectorStoreType

    schemas = dict(store.index_schema or {})
    if store.type != VectorStoreType.LanceDB or not store.db_uri or "://" in store.db_uri:
        return {e: VectorTable(e, s) for e, s in schemas.items()}
    folder = Path(store.db_uri)
    present = {p.name.removesuffix(".lance") for p in folder.glob("*.lance")}
    db = None
    out = {}
    for embedding, schema in schemas.items():
        name = schema.index_name
        legacy = LEGACY_NAMES.get(embedding)
        used = None
        if name not in present and legacy in present:
            name = used = legacy
        if name not in present:
            where = f"{name}" + (f" (nor {legacy})" if legacy else "")
            out[embedding] = VectorTable(
                embedding, schema, missing=f"no vector table {where} in {folder}"
            )
            continue
        if db is None:
            import lancedb

            db = lancedb.connect(str(folder))
        dims = _dims(db, name, schema.vector_field)
        missing, sized, conflict = None, None, False
        if dims is None:
            missing = f"vector table {name} has no `{schema.vector_field}` vectors"
        elif dims != schema.vector_size:
            if _stated_size(store, schema):
                conflict = True
                missing = (
                    f"vector table {name} holds {dims}-d vectors but the settings say "
                    f"vector_size: {schema.vector_size}"
                )
            else:
                sized = dims
        update = {"index_name": name} | ({"vector_size": dims} if missing is None and dims else {})
        out[embedding] = VectorTable(
            embedding, schema.model_copy(update=update), used, sized, missing, conflict
        )
    return out
