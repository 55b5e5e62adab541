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

A table's vector size is read from its latest manifest (`_versions/*.manifest`, the Lance
table format's own description of the table: its schema), without lancedb, whose import
takes a second on 2 cores and which a run with nothing left to do would import only for
this; a manifest this reader does not know is read with lancedb, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
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


class _Unread(Exception):
    """A manifest this reader does not know (lancedb reads the table instead)."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]  # IndexError at the end: a cut message
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise _Unread("varint too long")


def _message(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field of a protobuf message: an int (varint) or the
    bytes of a length-delimited field; fixed-width fields are skipped."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise _Unread("field past the message end")
            yield number, buf[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise _Unread(f"wire type {wire}")
    if i != len(buf):
        raise _Unread("field past the message end")


def _latest_manifest(table: Path) -> Path:
    """The manifest of the table's latest version: `_versions/{version}.manifest` (Lance's
    V1 naming) or `_versions/{u64::MAX - version:020}.manifest` (V2)."""
    versions: dict[int, Path] = {}
    for path in (table / "_versions").glob("*.manifest"):
        if path.stem.isdigit():  # not `_latest.manifest` (a copy, older Lance) or a detached one
            n = int(path.stem)
            versions[(1 << 64) - 1 - n if len(path.stem) == 20 else n] = path
    if not versions or len({len(p.stem) == 20 for p in versions.values()}) != 1:
        raise _Unread("no manifest, or both namings")
    return versions[max(versions)]


def _manifest_dims(table: Path, field: str) -> int | None:
    """The list size of the table's top-level `field` as its latest manifest states it
    (`fixed_size_list:<type>:<size>`; None: no such field, or not a fixed-size list), read
    as Lance's table format lays it out: the file ends with the manifest's position (i64)
    and versions and `LANC`; there a u32 length and the `lance.table.Manifest` message,
    whose `fields` (1) are `lance.file.Field`s: name (2), parent_id (4; -1 at the top),
    logical_type (5), extension_name (9), metadata (10)."""
    buf = _latest_manifest(table).read_bytes()
    if len(buf) < 20 or buf[-4:] != b"LANC":
        raise _Unread("no LANC footer")
    position = int.from_bytes(buf[-16:-8], "little", signed=True)
    if not 0 <= position <= len(buf) - 20:
        raise _Unread("manifest position outside the file")
    size = int.from_bytes(buf[position : position + 4], "little")
    if position + 4 + size > len(buf) - 16:
        raise _Unread("manifest past its footer")
    top = (1 << 64) - 1  # parent_id -1 (an int32 varint): a top-level column
    found: list[dict[int, int | bytes]] = []
    tops = 0
    for number, value in _message(buf[position + 4 : position + 4 + size]):
        if number != 1 or not isinstance(value, bytes):
            continue
        entry = dict(_message(value))
        tops += entry.get(4, 0) == top
        if entry.get(2) == field.encode():
            found.append(entry)
    if not tops or len(found) > 1 or (found and found[0].get(4, 0) != top):
        raise _Unread("no top-level fields, or the field twice or nested")
    if not found:
        return None  # (as lancedb's schema says: no such column)
    entry = found[0]
    if 9 in entry or 10 in entry:  # an extension type: its Arrow type is lancedb's to say
        raise _Unread("extension type")
    kind = entry.get(5, b"")
    if not isinstance(kind, bytes):
        raise _Unread("logical type not a string")
    text = kind.decode()
    if "fixed_size_list" not in text:
        return None  # (a column of another type has no list size)
    head, _, size_text = text.rpartition(":")
    if not head.startswith("fixed_size_list:") or not size_text.isdigit():
        raise _Unread(f"logical type {text!r}")
    return int(size_text)


def _dims(folder: Path, name: str, field: str, db: list[Any]) -> int | None:
    """The size of the vectors in `field` of table `name` (None: no such fixed-size
    vectors): from its manifest, else with lancedb (connected once, kept in `db`)."""
    try:
        return _manifest_dims(folder / f"{name}.lance", field)
    except (_Unread, OSError, IndexError, UnicodeDecodeError):
        pass
    if not db:
        import lancedb

        db.append(lancedb.connect(str(folder)))
    table = db[0].open_table(name)
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
    db: list[Any] = []  # lancedb's connection, made only if a manifest is not read
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
        dims = _dims(folder, name, schema.vector_field, db)
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
