"""Generated graphrag 3.3 indexes of any size, for memory and scale benchmarks and tests.

`synthetic_index(root, api_base)` writes a project folder whose `output/` holds the
tables graphrag 3.3 writes (its column sets, `graphrag.data_model.schemas`), and LanceDB
vector tables written by graphrag's own `LanceDBVectorStore`, embedded with the scripted
server's `hash_embedding` (so its query embeddings land near the right rows). The default
size is a screenplay's: 2,000 entities, 4,000 relationships, 300 text units.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pandas as pd

from tests.support.projects import SETTINGS
from tests.support.scripted_server import hash_embedding

__all__ = ["synthetic_index", "synthetic_question"]

_WORDS = [
    "harbor",
    "storm",
    "letter",
    "ledger",
    "captain",
    "signal",
    "archive",
    "orchard",
    "bridge",
    "lantern",
    "river",
    "market",
    "council",
    "winter",
    "garden",
    "tower",
    "cellar",
    "engine",
    "compass",
    "journal",
    "mill",
    "quarry",
    "chapel",
    "forge",
]
_GIVEN = "Ada Bram Cora Dax Eli Fen Gus Hana Ivo Jun Kai Lia Moe Nia Oda Pim Quin Rae Sol Tam"


def _name(i: int) -> str:
    given = _GIVEN.split()
    return f"{given[i % len(given)].upper()} {_WORDS[(i // len(given)) % len(_WORDS)].upper()} {i}"


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def synthetic_question(i: int = 0) -> str:
    """A question naming entity `i` of a synthetic index."""
    return f"Who did {_name(i).title()} meet at the harbor?"


def _vectors(folder: Path, name: str, rows: list[tuple[str, str]], dims: int) -> None:
    from graphrag_vectors.lancedb import LanceDBVectorStore
    from graphrag_vectors.vector_store import VectorStoreDocument

    store = LanceDBVectorStore(db_uri=str(folder), index_name=name, vector_size=dims)
    store.connect()
    store.create_index()
    store.load_documents(
        [VectorStoreDocument(id=i, vector=hash_embedding(t, dims)) for i, t in rows]
    )


def synthetic_index(
    root: Path,
    api_base: str,
    *,
    entities: int = 2000,
    relationships: int = 4000,
    text_units: int = 300,
    communities: int = 60,
    dims: int = 64,
    seed: int = 0,
) -> Path:
    """A graphrag 3.3 project at `root` with a generated index of the given size."""
    rng = random.Random(seed)
    out = root / "output"
    out.mkdir(parents=True, exist_ok=True)
    (root / "settings.yaml").write_text(SETTINGS.format(api_base=api_base, dims=dims))
    ids = lambda n: [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(n)]  # noqa: E731
    doc_id = ids(1)[0]
    unit_ids, entity_ids, rel_ids = ids(text_units), ids(entities), ids(relationships)
    titles = [_name(i) for i in range(entities)]
    units_of = [[unit_ids[rng.randrange(text_units)] for _ in range(3)] for _ in titles]
    ents = pd.DataFrame(
        {
            "id": entity_ids,
            "human_readable_id": range(entities),
            "title": titles,
            "type": [rng.choice(["PERSON", "GEO", "ORGANIZATION", "EVENT"]) for _ in titles],
            "description": [f"{t.title()} {_sentence(rng, 40)}" for t in titles],
            "text_unit_ids": units_of,
            "frequency": [3] * entities,
            "degree": [0] * entities,
        }
    )
    pairs = [(rng.randrange(entities), rng.randrange(entities)) for _ in range(relationships)]
    degree = [0] * entities
    for a, b in pairs:
        degree[a] += 1
        degree[b] += 1
    ents["degree"] = degree
    rels = pd.DataFrame(
        {
            "id": rel_ids,
            "human_readable_id": range(relationships),
            "source": [titles[a] for a, _ in pairs],
            "target": [titles[b] for _, b in pairs],
            "description": [
                f"{titles[a].title()} met {titles[b].title()} {_sentence(rng, 12)}"
                for a, b in pairs
            ],
            "weight": [1.0] * relationships,
            "combined_degree": [degree[a] + degree[b] for a, b in pairs],
            "text_unit_ids": [[unit_ids[rng.randrange(text_units)]] for _ in pairs],
        }
    )
    texts = [
        " ".join(f"{rng.choice(titles).title()} {_sentence(rng, 30)}." for _ in range(25))
        for _ in unit_ids
    ]
    units = pd.DataFrame(
        {
            "id": unit_ids,
            "human_readable_id": range(text_units),
            "text": texts,
            "n_tokens": [len(t.split()) for t in texts],
            "document_id": [doc_id] * text_units,
            "entity_ids": [[entity_ids[rng.randrange(entities)] for _ in range(8)] for _ in texts],
            "relationship_ids": [[rel_ids[rng.randrange(relationships)]] for _ in texts],
            "covariate_ids": [[] for _ in texts],
        }
    )
    comm_ids = ids(communities)
    members = [entity_ids[c::communities] for c in range(communities)]
    comm = pd.DataFrame(
        {
            "id": comm_ids,
            "human_readable_id": range(communities),
            "community": range(communities),
            "level": [0] * communities,
            "parent": [-1] * communities,
            "children": [[] for _ in comm_ids],
            "title": [f"Community {c}" for c in range(communities)],
            "entity_ids": members,
            "relationship_ids": [rel_ids[c::communities] for c in range(communities)],
            "text_unit_ids": [unit_ids[c::communities] for c in range(communities)],
            "period": ["2024-01-01"] * communities,
            "size": [len(m) for m in members],
        }
    )
    content = [f"# Community {c}\n\n{_sentence(rng, 300)}" for c in range(communities)]
    reports = comm.loc[:, ["human_readable_id", "community", "level", "parent", "children"]]
    reports.insert(0, "id", ids(communities))
    reports = reports.assign(
        title=comm["title"],
        summary=[c[:200] for c in content],
        full_content=content,
        rank=[5.0] * communities,
        rating_explanation=["generated"] * communities,
        findings=[[{"summary": "finding", "explanation": c[:300]}] for c in content],
        full_content_json=["{}"] * communities,
        period=comm["period"],
        size=comm["size"],
    )
    documents = pd.DataFrame(
        {
            "id": [doc_id],
            "human_readable_id": [0],
            "title": ["screenplay.txt"],
            "text": ["\n".join(texts)],
            "text_unit_ids": [unit_ids],
            "creation_date": ["2024-01-01"],
            "metadata": [None],
        }
    )
    for name, df in (
        ("entities", ents),
        ("relationships", rels),
        ("text_units", units),
        ("communities", comm),
        ("community_reports", reports),
        ("documents", documents),
    ):
        df.to_parquet(out / f"{name}.parquet")
    lance = out / "lancedb"
    _vectors(
        lance,
        "entity_description",
        list(zip(ents["id"], ents["title"] + ":" + ents["description"], strict=True)),
        dims,
    )
    _vectors(lance, "text_unit_text", list(zip(unit_ids, texts, strict=True)), dims)
    _vectors(
        lance,
        "community_full_content",
        list(zip(reports["id"], reports["full_content"], strict=True)),
        dims,
    )
    return root
