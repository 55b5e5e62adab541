"""Which graphrag wrote an index, read from its tables' columns (gtog.compat._tables).

The column sets are those of graphrag's own "Operation Dulce" example outputs in the
graphrag repository: v2.7.2 (2.x), the v2.0.0 inputs (1.x, `create_final_*`), v0.5.0 (0.x).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from graphrag_vectors import IndexSchema, VectorStoreConfig

from gtog.compat._tables import QUERY_COLUMNS, detect_tables
from gtog.compat._vectors import (
    LEGACY_NAMES,
    LEGACY_SUFFIXES,
    _manifest_dims,
    _Unread,
    find_vector_tables,
)

V2 = {
    "communities": "id human_readable_id community level parent children title entity_ids "
    "relationship_ids text_unit_ids period size",
    "community_reports": "id human_readable_id community level parent children title summary "
    "full_content rank rating_explanation findings full_content_json period size",
    "covariates": "id human_readable_id covariate_type type description subject_id object_id "
    "status start_date end_date source_text text_unit_id",
    "documents": "id human_readable_id title text text_unit_ids creation_date metadata",
    "entities": "id human_readable_id title type description text_unit_ids frequency degree x y",
    "relationships": "id human_readable_id source target description weight combined_degree "
    "text_unit_ids",
    "text_units": "id human_readable_id text n_tokens document_ids entity_ids relationship_ids "
    "covariate_ids",
}
V1 = {
    "create_final_communities": "id human_readable_id community parent level title entity_ids "
    "relationship_ids text_unit_ids period size",
    "create_final_community_reports": "id human_readable_id community parent level title "
    "summary full_content rank rank_explanation findings full_content_json period size",
    "create_final_covariates": V2["covariates"],
    "create_final_documents": "id human_readable_id title text text_unit_ids",
    "create_final_entities": "id human_readable_id title type description text_unit_ids",
    "create_final_nodes": "id human_readable_id title community level degree x y",
    "create_final_relationships": V2["relationships"],
    "create_final_text_units": V2["text_units"],
}
V0 = {
    "create_final_communities": "id title level raw_community relationship_ids text_unit_ids",
    "create_final_entities": "id name type description human_readable_id graph_embedding "
    "text_unit_ids description_embedding",
    "create_final_text_units": "id text n_tokens document_ids entity_ids relationship_ids "
    "covariate_ids",
}


def _cols(tables: dict[str, str]) -> dict[str, frozenset[str]]:
    return {name: frozenset(cols.split()) for name, cols in tables.items()}


def test_a_3x_index_needs_nothing() -> None:
    v3 = _cols(V2)
    v3["text_units"] = v3["text_units"] - {"document_ids"} | {"document_id"}
    layout = detect_tables(v3)
    assert layout.era == "3.x" and layout.notes == [] and layout.blocked is None
    assert all(layout.missing(t) is None for t in QUERY_COLUMNS)


def test_a_2x_index_gets_document_id() -> None:
    layout = detect_tables(_cols(V2))
    assert layout.era == "2.x"
    assert layout.notes == ["text_units.document_ids -> document_id"]
    assert all(layout.missing(t) is None for t in QUERY_COLUMNS)


def test_a_1x_index_gets_the_v2_and_v3_migrations() -> None:
    layout = detect_tables(_cols(V1))
    assert layout.era == "1.x"
    assert layout.stored["entities"] == "create_final_entities"
    assert layout.notes == [
        "tables create_final_* -> *",
        "entities.degree from create_final_nodes",
        "entities.frequency from text_unit_ids",
        "communities.children from parent",
        "community_reports.children from create_final_communities",
        "community_reports.rank_explanation -> rating_explanation",
        "text_units.document_ids -> document_id",
    ]
    assert all(layout.missing(t) is None for t in QUERY_COLUMNS)


def test_a_0x_index_is_not_adapted() -> None:
    layout = detect_tables(_cols(V0))
    assert layout.era == "0.x"
    assert layout.blocked == "a graphrag 0.x index (create_final_entities has `name`, not `title`)"


def test_what_cannot_be_adapted_is_named() -> None:
    tables = _cols(V2)
    del tables["community_reports"]
    tables["text_units"] -= {"n_tokens"}
    layout = detect_tables(tables)
    assert layout.missing("community_reports") == "no community_reports table"
    assert layout.missing("text_units") == "text_units has no n_tokens column"
    assert layout.missing("entities") is None


def _read(tables: dict[str, pd.DataFrame]):
    async def read(name: str) -> pd.DataFrame:
        return tables[name]

    return read


def test_the_fixes_give_what_graphrag_3_reads() -> None:
    units = pd.DataFrame(
        {"id": ["u1", "u2"], "document_ids": [["d1", "d2"], []], "n_tokens": [5, 6]}
    )
    entities = pd.DataFrame({"id": ["e1", "e2"], "text_unit_ids": [["u1", "u2"], ["u2"]]})
    nodes = pd.DataFrame({"id": ["e1", "e1", "e2"], "level": [0, 1, 0], "degree": [3, 3, 1]})
    communities = pd.DataFrame({"community": [0, 1, 2, 3], "parent": [-1, 0, 0, 1]})
    layout = detect_tables(
        {
            "create_final_text_units": frozenset(units.columns),
            "create_final_entities": frozenset(entities.columns),
            "create_final_nodes": frozenset(nodes.columns),
            "create_final_communities": frozenset(communities.columns),
        }
    )
    read = _read({"create_final_nodes": nodes})
    got = asyncio.run(layout.adapt("text_units", units.copy(), read))
    assert got["document_id"].tolist() == ["d1", None] and "document_ids" not in got
    got = asyncio.run(layout.adapt("entities", entities.copy(), read))
    assert got["degree"].tolist() == [3, 1] and got["frequency"].tolist() == [2, 1]
    got = asyncio.run(layout.adapt("communities", communities.copy(), read))
    assert got["children"].tolist() == [[1, 2], [3], [], []]


@pytest.mark.parametrize("table", sorted(QUERY_COLUMNS))
def test_the_query_columns_are_graphrags_final_columns(table: str) -> None:
    from graphrag.data_model import schemas

    final = getattr(schemas, f"{table.upper()}_FINAL_COLUMNS")
    assert QUERY_COLUMNS[table] <= set(final)


def test_a_reports_children_come_from_the_communities_table() -> None:
    """graphrag's v2 migration: a child community without a report is still a child."""
    communities = pd.DataFrame({"community": [0, 1, 2, 3], "parent": [-1, 0, 0, 1]})
    reports = pd.DataFrame({"community": [0, 1], "parent": [-1, 0]})  # 2 and 3: no report
    layout = detect_tables(
        {
            "create_final_entities": frozenset({"id", "title"}),
            "create_final_communities": frozenset(communities.columns),
            "create_final_community_reports": frozenset(reports.columns),
        }
    )
    read = _read({"create_final_communities": communities})
    got = asyncio.run(layout.adapt("community_reports", reports.copy(), read))
    assert got["children"].tolist() == [[1, 2], [3]]
    assert "community_reports.children from create_final_communities" in layout.notes
    alone = detect_tables({"community_reports": frozenset(reports.columns)})
    got = asyncio.run(alone.adapt("community_reports", reports.copy(), _read({})))
    assert got["children"].tolist() == [[1], []]  # no communities table: the reports' own


def _lancedb(folder: Path, names: list[str], dims: int = 8) -> None:
    import lancedb

    db = lancedb.connect(str(folder))
    for name in names:
        vectors = pa.array([[0.5] * dims], pa.list_(pa.float32(), dims))
        db.create_table(name, data=pa.table({"id": ["a"], "vector": vectors}))


def _store(folder: Path, **extra: object) -> VectorStoreConfig:
    schemas = {e: IndexSchema(index_name=e, vector_size=8) for e in LEGACY_SUFFIXES}
    return VectorStoreConfig(type="lancedb", db_uri=str(folder), index_schema=schemas, **extra)


@pytest.mark.parametrize("prefix", ["default", "myproject", "team-a"])
def test_old_vector_tables_are_found_under_any_one_prefix(tmp_path: Path, prefix: str) -> None:
    _lancedb(tmp_path, [f"{prefix}-{suffix}" for suffix in LEGACY_SUFFIXES.values()])
    found = find_vector_tables(_store(tmp_path))
    assert {e: v.legacy for e, v in found.items()} == {
        "entity_description": f"{prefix}-entity-description",
        "text_unit_text": f"{prefix}-text_unit-text",
        "community_full_content": f"{prefix}-community-full_content",
    }
    assert all(v.missing is None and v.schema.vector_size == 8 for v in found.values())


def test_several_prefixes_need_the_settings_container_name(tmp_path: Path) -> None:
    _lancedb(tmp_path, ["alpha-entity-description", "beta-entity-description"])
    found = find_vector_tables(_store(tmp_path))["entity_description"]
    assert found.missing is not None and "2 prefixes (alpha, beta)" in found.missing
    chosen = find_vector_tables(_store(tmp_path, container_name="beta"))["entity_description"]
    assert chosen.missing is None and chosen.legacy == "beta-entity-description"
    nested = _store(tmp_path, default_vector_store={"type": "lancedb", "container_name": "alpha"})
    assert find_vector_tables(nested)["entity_description"].legacy == "alpha-entity-description"


def _vector_table(folder: Path, name: str, field: pa.Field, mode: str = "create") -> None:
    import lancedb

    size = field.type.list_size if hasattr(field.type, "list_size") else 3
    values = pa.array([[0.5] * size], field.type)
    data = pa.Table.from_arrays(
        [pa.array(["a"]), values], schema=pa.schema([("id", pa.string()), field])
    )
    lancedb.connect(str(folder)).create_table(name, data=data, mode=mode)


def _lancedb_dims(folder: Path, name: str, field: str) -> int | None:
    import lancedb

    schema = lancedb.connect(str(folder)).open_table(name).schema
    return getattr(schema.field(field).type, "list_size", None) if field in schema.names else None


def test_vector_sizes_are_read_from_the_manifest_as_lancedb_reads_them(tmp_path: Path) -> None:
    """A table's vector size comes from its latest manifest, without lancedb (issue 45):
    the same figure as lancedb's schema for every kind of column, after a rewrite, and
    under Lance's older manifest naming (`_versions/{version}.manifest`)."""
    fields = {
        "f32": pa.field("vector", pa.list_(pa.float32(), 8)),
        "f16": pa.field("vector", pa.list_(pa.float16(), 8)),
        "f64": pa.field("vector", pa.list_(pa.float64(), 1536)),
        "ragged": pa.field("weights", pa.list_(pa.float32())),  # no fixed size
    }
    for name, field in fields.items():
        _vector_table(tmp_path, name, field)
    _vector_table(tmp_path, "rewritten", fields["f32"])
    _vector_table(
        tmp_path, "rewritten", pa.field("vector", pa.list_(pa.float32(), 16)), "overwrite"
    )
    _vector_table(tmp_path, "v1", fields["f32"])
    _vector_table(tmp_path, "v1", pa.field("vector", pa.list_(pa.float32(), 32)), "overwrite")
    versions = tmp_path / "v1.lance" / "_versions"
    for path in versions.glob("*.manifest"):  # V2's u64::MAX - version -> V1's version
        path.rename(versions / f"{(1 << 64) - 1 - int(path.stem)}.manifest")
    assert sorted(p.name for p in versions.glob("*.manifest")) == ["1.manifest", "2.manifest"]
    seen = {}
    for name in [*fields, "rewritten", "v1"]:
        for column in ("vector", "weights", "id", "absent"):
            read = _manifest_dims(tmp_path / f"{name}.lance", column)
            assert read == _lancedb_dims(tmp_path, name, column), (name, column)
            seen[name, column] = read
    assert seen["f64", "vector"] == 1536 and seen["ragged", "weights"] is None
    assert seen["rewritten", "vector"] == 16 and seen["v1", "vector"] == 32


def test_a_rewritten_vector_table_is_read_at_its_new_size(tmp_path: Path) -> None:
    """Settings that state no vector size take the table's: a table re-written with other
    vectors is read at their size (a run's spec records it), without lancedb."""
    _lancedb(tmp_path, list(LEGACY_NAMES.values()))
    schemas = {e: IndexSchema(index_name=e) for e in LEGACY_SUFFIXES}
    store = VectorStoreConfig(type="lancedb", db_uri=str(tmp_path), index_schema=schemas)
    assert {v.sized for v in find_vector_tables(store).values()} == {8}
    _vector_table(
        tmp_path,
        LEGACY_NAMES["text_unit_text"],
        pa.field("vector", pa.list_(pa.float32(), 16)),
        "overwrite",
    )
    found = find_vector_tables(store)
    assert found["text_unit_text"].sized == 16 and found["text_unit_text"].dims == 16
    assert found["entity_description"].sized == 8


def test_a_manifest_the_reader_does_not_know_is_read_with_lancedb(tmp_path: Path) -> None:
    """A vector column with field metadata (an extension type's, perhaps) is left to
    lancedb; so is a table whose manifest is cut."""
    tagged = pa.field("vector", pa.list_(pa.float32(), 8), metadata={"ARROW:extension:name": "x"})
    _vector_table(tmp_path, LEGACY_NAMES["entity_description"], tagged)
    with pytest.raises(_Unread):
        _manifest_dims(tmp_path / f"{LEGACY_NAMES['entity_description']}.lance", "vector")
    schemas = {"entity_description": IndexSchema(index_name=LEGACY_NAMES["entity_description"])}
    store = VectorStoreConfig(type="lancedb", db_uri=str(tmp_path), index_schema=schemas)
    found = find_vector_tables(store)["entity_description"]
    assert found.dims == 8 and found.missing is None
    cut = tmp_path / "cut.lance"
    shutil.copytree(tmp_path / f"{LEGACY_NAMES['entity_description']}.lance", cut)
    (manifest,) = (cut / "_versions").glob("*.manifest")
    manifest.write_bytes(manifest.read_bytes()[:-3])
    with pytest.raises(_Unread):
        _manifest_dims(cut, "vector")


def test_finding_vector_tables_imports_no_lancedb(tmp_path: Path) -> None:
    """Reading the sizes takes no lancedb import (1 s on 2 cores; a finished run needs the
    sizes only for its spec): checked in a fresh interpreter."""
    _lancedb(tmp_path, list(LEGACY_NAMES.values()))
    probe = (
        "import sys\n"
        "from graphrag_vectors import IndexSchema, VectorStoreConfig\n"
        "from gtog.compat._vectors import LEGACY_SUFFIXES, find_vector_tables\n"
        "schemas = {e: IndexSchema(index_name=e) for e in LEGACY_SUFFIXES}\n"
        f"store = VectorStoreConfig(type='lancedb', db_uri={str(tmp_path)!r}, "
        "index_schema=schemas)\n"
        "print(sorted({v.dims for v in find_vector_tables(store).values()}))\n"
        "print('lancedb' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[8]", "False"]
