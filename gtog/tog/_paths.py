"""Reasoning paths (the beam) and the evidence text and tables built from them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from graphrag.data_model.text_unit import TextUnit

from gtog.tog._graph import Edge, KnowledgeGraph

__all__ = ["Hop", "ReasoningPath", "evidence_tables", "evidence_text"]


@dataclass(frozen=True)
class Hop:
    """One step of a path with the LLM's relation and entity scores."""

    edge: Edge
    relation_score: float
    entity_score: float


@dataclass(frozen=True)
class ReasoningPath:
    """A topic entity and the hops walked from it; score = product of all hop scores."""

    topic: str
    hops: tuple[Hop, ...] = field(default_factory=tuple)
    score: float = 1.0

    @property
    def end(self) -> str:
        """The entity the path ends at (its frontier)."""
        return self.hops[-1].edge.end if self.hops else self.topic

    @property
    def entities(self) -> list[str]:
        """Entity titles along the path, in order."""
        return [self.topic, *(h.edge.end for h in self.hops)]

    @property
    def relationship_ids(self) -> list[str]:
        """Relationship ids along the path, in order."""
        return [h.edge.relationship.id for h in self.hops]

    def extend(self, edge: Edge, relation_score: float, entity_score: float) -> ReasoningPath:
        """This path one hop longer."""
        return ReasoningPath(
            self.topic,
            (*self.hops, Hop(edge, relation_score, entity_score)),
            self.score * relation_score * entity_score,
        )

    def chain(self) -> str:
        """`A -[description]-> B <-[description]- C`: arrows follow the relationship."""
        parts = [self.topic]
        for hop in self.hops:
            desc = hop.edge.description or "related to"
            arrow = f" -[{desc}]-> " if hop.edge.outgoing else f" <-[{desc}]- "
            parts.append(f"{arrow}{hop.edge.end}")
        return "".join(parts)


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "/")


def _table(df: pd.DataFrame) -> str:
    lines = ["|".join(df.columns)]
    lines += ["|".join(_cell(v) for v in row) for row in df.itertuples(index=False)]
    return "\n".join(lines)


def evidence_tables(
    graph: KnowledgeGraph,
    paths: list[ReasoningPath],
    *,
    text_units: int = 0,
    sources: list[TextUnit] | None = None,
) -> dict[str, pd.DataFrame]:
    """`paths`, `entities`, `relationships` tables, and `sources`: the given text units,
    else (when `text_units` > 0) the first `text_units` that the path relationships cite."""
    path_rows = [
        {
            "id": i,
            "score": round(p.score, 4),
            "topic": p.topic,
            "length": len(p.hops),
            "entities": " -> ".join(p.entities),
            "relationship_ids": ",".join(p.relationship_ids),
            "path": p.chain(),
        }
        for i, p in enumerate(paths, start=1)
    ]
    titles = list(dict.fromkeys(t for p in paths for t in p.entities))
    entity_rows = []
    for title in titles:
        entity = graph.entities[title]
        entity_rows.append(
            {
                "id": entity.short_id or entity.id,
                "entity": title,
                "type": entity.type or "",
                "description": entity.description or "",
                "degree": entity.rank or 0,
            }
        )
    rel_ids = list(dict.fromkeys(r for p in paths for r in p.relationship_ids))
    rel_rows = []
    for rid in rel_ids:
        rel = graph.relationships[rid]
        rel_rows.append(
            {
                "id": rel.short_id or rel.id,
                "source": rel.source,
                "target": rel.target,
                "description": rel.description or "",
                "weight": float(rel.weight or 0.0),
            }
        )
    tables = {
        "paths": pd.DataFrame(
            path_rows,
            columns=["id", "score", "topic", "length", "entities", "relationship_ids", "path"],
        ),
        "entities": pd.DataFrame(
            entity_rows, columns=["id", "entity", "type", "description", "degree"]
        ),
        "relationships": pd.DataFrame(
            rel_rows, columns=["id", "source", "target", "description", "weight"]
        ),
    }
    if sources is not None:
        rows = [{"id": u.short_id or u.id, "text": u.text} for u in sources]
        tables["sources"] = pd.DataFrame(rows, columns=["id", "text"])
    elif text_units > 0:
        unit_ids: list[str] = []
        for rid in rel_ids:
            for uid in graph.relationships[rid].text_unit_ids or []:
                if uid in graph.text_units and uid not in unit_ids:
                    unit_ids.append(uid)
        rows = [
            {"id": graph.text_units[u].short_id or u, "text": graph.text_units[u].text}
            for u in unit_ids[:text_units]
        ]
        tables["sources"] = pd.DataFrame(rows, columns=["id", "text"])
    return tables


def evidence_text(tables: dict[str, pd.DataFrame]) -> str:
    """The evidence the LLM sees: one `|` table per non-empty section."""
    sections = []
    for name, columns in (
        ("Paths", ["id", "score", "path"]),
        ("Entities", ["id", "entity", "type", "description"]),
        ("Relationships", ["id", "source", "target", "description", "weight"]),
        ("Sources", ["id", "text"]),
    ):
        df = tables.get(name.lower())
        if df is not None and not df.empty:
            sections.append(f"-----{name}-----\n{_table(df[columns])}")
    return "\n\n".join(sections)
