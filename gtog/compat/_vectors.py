"""Vector tables written by graphrag 1.x and 2.x, found as graphrag 3.3 looks for them.

graphrag 1.x and 2.x name each LanceDB table `<container_name>-<embedding>`, the embedding's
dotted name with dashes (`default-entity-description`, `default-text_unit-text`,
`default-community-full_content`; `container_name` was a vector-store setting, `default`
unless changed); 3.x names them `entity_description`, ... (graphrag's index_migration_to_v3
notebook: set each `index_schema.<name>.index_name` to the old name, and `vector_size` to
the old model's). Here the old table is used, in memory, when the configured one is absent:
under the prefix the settings name (`vector_store.container_name`, kept from the old
settings), else the one prefix the folder's old tables share. The vector size is taken from
the table when the settings do not state one. Only LanceDB stores on disk are inspected;
others are used as configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_vectors import IndexSchema, VectorStoreConfig

__all__ = ["LEGACY_NAMES", "LEGACY_SUFFIXES", "VectorTable", "find_vector_tables", "old_prefix"]

LEGACY_SUFFIXES = {
    "entity_description": "entity-description",
    "text_unit_text": "text_unit-text",
    "community_full_content": "community-full_content",
}
"""3.x embedding name -> the end of the table graphrag 1.x and 2.x wrote for it."""

LEGACY_NAMES = {embedding: f"default-{suffix}" for embedding, suffix in LEGACY_SUFFIXES.items()}
"""3.x embedding name -> the table graphrag 1.x and 2.x wrote for it under their default
container name."""


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
    fix: str | None = None
    """The fix for `missing` when it is not re-indexing (a setting to change)."""
    dims: int | None = None
    """The size of the vectors the table holds (None: not inspected)."""


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


def _container_name(store: VectorStoreConfig) -> str | None:
    """The old `container_name` setting, if the settings kept it (graphrag 3.3 ignores it):
    `vector_store.container_name`, or inside a 2.x-style `vector_store.<id>` entry."""
    extra: dict[str, Any] = store.model_extra or {}
    named = [extra.get("container_name")]
    named += [v.get("container_name") for v in extra.values() if isinstance(v, dict)]
    return next((str(n) for n in named if n), None)


def old_prefix(store: VectorStoreConfig, present: set[str]) -> tuple[str | None, str | None]:
    """(prefix, None): the container name the old tables were written under; or (None, why)
    when the folder's old tables have several and the settings name none."""
    stated = _container_name(store)
    if stated is not None:
        return stated, None
    found = sorted(
        {
            name.removesuffix(f"-{suffix}")
            for name in present
            for suffix in LEGACY_SUFFIXES.values()
            if name.endswith(f"-{suffix}") and len(name) > len(suffix) + 1
        }
    )
    if len(found) > 1:
        return None, f"older vector tables under {len(found)} prefixes ({', '.join(found)})"
    return (found[0] if found else "default"), None


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
    prefix, ambiguous = old_prefix(store, present)
    db = None
    out = {}
    for embedding, schema in schemas.items():
        name = schema.index_name
        suffix = LEGACY_SUFFIXES.get(embedding)
        legacy = f"{prefix}-{suffix}" if suffix and prefix else None
        used = None
        if name not in present and legacy in present:
            name = used = legacy
        if name not in present:
            if suffix and ambiguous:
                out[embedding] = VectorTable(
                    embedding,
                    schema,
                    missing=f"no vector table {name} in {folder}, and {ambiguous}",
                    fix=(
                        "set vector_store.container_name to the index's prefix (or "
                        f"vector_store.index_schema.{embedding}.index_name to its table)"
                    ),
                )
                continue
            where = f"{name}" + (f" (nor {legacy})" if legacy else "")
            out[embedding] = VectorTable(
                embedding, schema, missing=f"no vector table {where} in {folder}"
            )
            continue
        if db is None:
            import lancedb

            db = lancedb.connect(str(folder))
        dims = _dims(db, name, schema.vector_field)
        missing, sized, fix = None, None, None
        if dims is None:
            missing = f"vector table {name} has no `{schema.vector_field}` vectors"
        elif dims != schema.vector_size:
            if _stated_size(store, schema):
                missing = (
                    f"vector table {name} holds {dims}-d vectors but the settings say "
                    f"vector_size: {schema.vector_size}"
                )
                fix = (
                    "set vector_store.vector_size to the index's (the embedding model must be "
                    "the one the index was built with)"
                )
            else:
                sized = dims
        update = {"index_name": name} | ({"vector_size": dims} if missing is None and dims else {})
        out[embedding] = VectorTable(
            embedding, schema.model_copy(update=update), used, sized, missing, fix, dims
        )
    return out
