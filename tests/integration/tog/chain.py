"""A hand-built graphrag project: a two-hop chain that answers one question, plus distractors."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
from graphrag.config.load_config import load_config
from graphrag.config.models.graph_rag_config import GraphRagConfig

from gtog.tog import ToGSearch, ToGSettings, get_tog_search_engine
from tests.support.projects import SETTINGS
from tests.support.world import Fact

__all__ = [
    "CHAIN_ENTITIES",
    "CHAIN_FACT",
    "CHAIN_RELATIONSHIPS",
    "chain_engine",
    "load_chain_config",
    "read_chain",
    "write_chain_project",
]

# title -> (type, description)
CHAIN_ENTITIES: dict[str, tuple[str, str]] = {
    "ALDER VOSS": ("PERSON", "Alder Voss is a carpenter of Teal Ford."),
    "BRIGHTWATER MILL": ("ORGANIZATION", "Brightwater Mill is a water mill on the Teal river."),
    "CORVIN HALE": ("PERSON", "Corvin Hale is a grain merchant."),
    "ELNA VOSS": ("PERSON", "Elna Voss is a weaver."),
    "MARIGOLD": ("ORGANIZATION", "The Marigold is a river barge."),
    "FEN ROOK": ("PERSON", "Fen Rook is a schoolteacher."),
    "TEAL RIVER": ("GEO", "The Teal river runs past Teal Ford."),
    "MARTA QUELL": ("PERSON", "Marta Quell sells cloth."),
    "DUNMERE": ("GEO", "Dunmere is a hill town."),
}

# (source, target, description, weight): the answer path is the "founded" then "bought" edges
CHAIN_RELATIONSHIPS: list[tuple[str, str, str, float]] = [
    ("ALDER VOSS", "ELNA VOSS", "Alder Voss married Elna Voss", 9),
    ("ALDER VOSS", "MARIGOLD", "Alder Voss sailed on the Marigold", 7),
    ("ALDER VOSS", "BRIGHTWATER MILL", "Alder Voss founded Brightwater Mill", 5),
    ("ALDER VOSS", "FEN ROOK", "Alder Voss plays chess with Fen Rook", 2),
    ("BRIGHTWATER MILL", "TEAL RIVER", "Brightwater Mill stands on the Teal river", 8),
    ("CORVIN HALE", "BRIGHTWATER MILL", "Corvin Hale bought Brightwater Mill", 6),
    ("ELNA VOSS", "MARTA QUELL", "Elna Voss weaves for Marta Quell", 4),
    ("CORVIN HALE", "DUNMERE", "Corvin Hale lives in Dunmere", 5),
]

CHAIN_FACT = Fact(
    "Who bought the mill that Alder Voss founded?", "Corvin Hale bought it", ("Corvin Hale",)
)


def _frames() -> dict[str, pd.DataFrame]:
    titles = list(CHAIN_ENTITIES)
    degree = {t: 0 for t in titles}
    for s, t, _, _ in CHAIN_RELATIONSHIPS:
        degree[s] += 1
        degree[t] += 1
    entities = pd.DataFrame(
        [
            {
                "id": f"e{i}",
                "human_readable_id": i,
                "title": t,
                "type": CHAIN_ENTITIES[t][0],
                "description": CHAIN_ENTITIES[t][1],
                "text_unit_ids": [f"t{i}"],
                "frequency": 1,
                "degree": degree[t],
            }
            for i, t in enumerate(titles)
        ]
    )
    relationships = pd.DataFrame(
        [
            {
                "id": f"r{i}",
                "human_readable_id": i,
                "source": s,
                "target": t,
                "description": d,
                "weight": float(w),
                "combined_degree": degree[s] + degree[t],
                "text_unit_ids": [f"t{i}"],
            }
            for i, (s, t, d, w) in enumerate(CHAIN_RELATIONSHIPS)
        ]
    )
    text_units = pd.DataFrame(
        [
            {
                "id": f"t{i}",
                "human_readable_id": i,
                "text": f"Chronicle {i}: {d}.",
                "n_tokens": 8,
                "document_id": "doc",
                "entity_ids": [],
                "relationship_ids": [f"r{i}"],
            }
            for i, (_, _, d, _) in enumerate(CHAIN_RELATIONSHIPS)
        ]
    )
    return {"entities": entities, "relationships": relationships, "text_units": text_units}


def write_chain_project(root: Path, api_base: str, tog_block: str = "") -> Path:
    """settings.yaml (pointing at `api_base`) and the three parquet tables under output/."""
    (root / "output").mkdir(parents=True, exist_ok=True)
    (root / "settings.yaml").write_text(SETTINGS.format(api_base=api_base, dims=64) + tog_block)
    for name, df in _frames().items():
        df.to_parquet(root / "output" / f"{name}.parquet")
    return root


def read_chain(root: Path) -> dict[str, pd.DataFrame]:
    """The parquet tables written by `write_chain_project`."""
    return {
        n: pd.read_parquet(root / "output" / f"{n}.parquet")
        for n in ("entities", "relationships", "text_units")
    }


def load_chain_config(root: Path) -> GraphRagConfig:
    """graphrag's config of the project (cwd restored: load_config changes it)."""
    cwd = os.getcwd()
    try:
        return load_config(root_dir=root)
    finally:
        os.chdir(cwd)


def chain_engine(root: Path, **settings: object) -> ToGSearch:
    """A ToG engine over the chain project (no vector store) with `settings`."""
    tables = read_chain(root)
    return get_tog_search_engine(
        load_chain_config(root),
        tables["entities"],
        tables["relationships"],
        tables["text_units"],
        None,
        settings=ToGSettings(**settings),  # type: ignore[arg-type]
        root=root,
    )
