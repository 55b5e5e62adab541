"""Index layouts older graphrag versions write, made from a graphrag 3.3 index.

The column sets, table names and vector tables are those of graphrag's own "Operation
Dulce" example outputs at v2.7.2 (2.x), v2.0.0's inputs (1.x, `create_final_*`) and
v0.5.0 (0.x): `legacy_index(src, dst, "2.x")` copies the project at `src` to `dst` with
its output rewritten in that layout (same rows, same vectors).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import yaml

__all__ = ["LEGACY_TABLES", "folder_digest", "legacy_index"]

LEGACY_TABLES = {
    "entity_description": "default-entity-description",
    "text_unit_text": "default-text_unit-text",
    "community_full_content": "default-community-full_content",
}
"""3.x vector table -> the name graphrag 1.x and 2.x gave it."""


def folder_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under `root`, and every folder (by relative path)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_dir():
            out[rel + "/"] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _texts(output: Path) -> dict[str, dict[str, str]]:
    """The text each 3.x vector row was embedded from (2.x stores it next to the vector)."""
    entities = pd.read_parquet(output / "entities.parquet")
    units = pd.read_parquet(output / "text_units.parquet")
    reports = pd.read_parquet(output / "community_reports.parquet")
    return {
        "entity_description": dict(
            zip(entities["id"], entities["title"] + ":" + entities["description"], strict=True)
        ),
        "text_unit_text": dict(zip(units["id"], units["text"], strict=True)),
        "community_full_content": dict(zip(reports["id"], reports["full_content"], strict=True)),
    }


def _legacy_vectors(output: Path, prefix: str) -> None:
    """Rewrite the LanceDB tables as 2.x wrote them: `<prefix>-*` (`container_name`, `default`
    unless changed), id/text/vector/attributes."""
    import lancedb

    folder = output / "lancedb"
    db = lancedb.connect(str(folder))
    texts = _texts(output)
    for new, default in LEGACY_TABLES.items():
        old = default.replace("default-", f"{prefix}-", 1)
        data = db.open_table(new).to_arrow()
        text = [texts[new].get(i, "") for i in data.column("id").to_pylist()]
        table = pa.table(
            {
                "id": data.column("id"),
                "text": pa.array(text, pa.string()),
                "vector": data.column("vector"),
                "attributes": pa.array([json.dumps({"title": t[:200]}) for t in text], pa.string()),
            }
        )
        db.create_table(old, data=table)
        shutil.rmtree(folder / f"{new}.lance")


def _v2_tables(output: Path) -> None:
    units = pd.read_parquet(output / "text_units.parquet")
    units.insert(4, "document_ids", units.pop("document_id").map(lambda d: [d]))
    units.to_parquet(output / "text_units.parquet")
    entities = pd.read_parquet(output / "entities.parquet")
    entities["x"], entities["y"] = 0, 0
    entities.to_parquet(output / "entities.parquet")


def _v1_tables(output: Path) -> None:
    _v2_tables(output)
    entities = pd.read_parquet(output / "entities.parquet")
    communities = pd.read_parquet(output / "communities.parquet")
    membership = communities.loc[:, ["community", "level", "entity_ids"]].explode("entity_ids")
    nodes = entities.loc[:, ["id", "human_readable_id", "title", "degree", "x", "y"]].merge(
        membership, left_on="id", right_on="entity_ids", how="left"
    )
    nodes["community"] = nodes["community"].fillna(-1).astype(int)
    nodes["level"] = nodes["level"].fillna(0).astype(int)
    nodes = nodes.loc[:, ["id", "human_readable_id", "title", "community", "level", "degree"]]
    nodes.to_parquet(output / "create_final_nodes.parquet")
    entities.drop(columns=["degree", "frequency", "x", "y"]).to_parquet(
        output / "create_final_entities.parquet"
    )
    communities.drop(columns=["children"]).to_parquet(output / "create_final_communities.parquet")
    reports = pd.read_parquet(output / "community_reports.parquet")
    reports = reports.drop(columns=["children"]).rename(
        columns={"rating_explanation": "rank_explanation"}
    )
    reports.to_parquet(output / "create_final_community_reports.parquet")
    for name in ("relationships", "text_units", "documents"):
        (output / f"{name}.parquet").rename(output / f"create_final_{name}.parquet")
    for name in ("entities", "communities", "community_reports"):
        (output / f"{name}.parquet").unlink()


def _v0_tables(output: Path) -> None:
    _v1_tables(output)
    entities = pd.read_parquet(output / "create_final_entities.parquet")
    entities.rename(columns={"title": "name"}).to_parquet(output / "create_final_entities.parquet")
    communities = pd.read_parquet(output / "create_final_communities.parquet")
    communities.drop(columns=["community", "parent"]).to_parquet(
        output / "create_final_communities.parquet"
    )


def legacy_index(
    src: Path, dst: Path, era: str, *, state_vector_size: bool = False, prefix: str = "default"
) -> Path:
    """A copy of the project at `src` whose index is laid out as graphrag `era` wrote it,
    its vector tables under `prefix` (the old `container_name`).

    The settings stay graphrag 3.3's (as `gtog init` writes them, the way graphrag's upgrade
    notes advise), without `vector_size` unless `state_vector_size`.
    """
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("logs", "cache"))
    output = dst / "output"
    _legacy_vectors(output, prefix)
    {"2.x": _v2_tables, "1.x": _v1_tables, "0.x": _v0_tables}[era](output)
    for extra in ("context.json", "stats.json"):
        (output / extra).unlink(missing_ok=True)
    settings = yaml.safe_load((dst / "settings.yaml").read_text())
    if not state_vector_size:
        settings["vector_store"].pop("vector_size", None)
    (dst / "settings.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return dst
