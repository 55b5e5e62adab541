"""LLM pruning of one path's candidates: relations first, then the entities they reach.

Fallback rules (a reply that cannot be parsed, or scores no candidate above 0):
- relation pruning keeps the `width` highest-weight candidates (they arrive sorted by
  weight), scored in proportion to their weights (uniformly when all weights are 0);
- entity pruning scores every reached entity 1/k, so the relation scores decide.
Each fallback is recorded on the run and reported in `context_data["fallbacks"]`.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, model_validator

from gtog.llm._replies import parse_json_reply
from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._run import QueryRun

__all__ = [
    "EdgeScores",
    "EntityScores",
    "RelationScores",
    "absolute_scores",
    "parse_scores",
    "prune_entities",
    "prune_relations",
    "scores_of",
    "weight_order",
]


class _Scores(BaseModel):
    """`{key: [{"id": n, "score": s}, ...]}`, `{key: {n: s}}`, a bare list or mapping."""

    scores: list[Any] | dict[str, Any]
    key: str = ""

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        key = cls.model_fields["key"].default
        if isinstance(data, dict) and key in data:
            data = data[key]
        return {"scores": data}


class RelationScores(_Scores):
    """The relation-pruning reply."""

    key: str = "relations"


class EntityScores(_Scores):
    """The entity-pruning reply."""

    key: str = "entities"


class EdgeScores(_Scores):
    """The edge-pruning reply (`pruning: edges`, `text_guided`): absolute scores."""

    key: str = "edges"


_SCHEMAS: dict[str, type[_Scores]] = {
    "relations": RelationScores,
    "entities": EntityScores,
    "edges": EdgeScores,
}


def parse_scores(text: str, key: str, count: int) -> dict[int, float] | None:
    """0-based candidate index -> score from `{key: [{"id": n, "score": s}, ...]}`.

    Numbers are the 1-based ids shown in the prompt; unknown ids and non-positive scores
    are dropped, scores are clipped to 1. None when nothing usable is left.
    """
    value, _ = parse_json_reply(text, _SCHEMAS[key])
    return scores_of(value, count) if value is not None else None


def _entries(reply: _Scores, count: int) -> list[tuple[int, float] | None]:
    """Each entry of a reply as (0-based index, score), or None where it cannot be read
    (not an entry, no number, an id that was not shown)."""
    value = reply.scores
    items: list[tuple[object, object]] = []
    if _positional(value, count):  # `[8, 3, 6]`: a score per candidate, in order (1-10 or 0-1)
        scale = 10.0 if any(float(v) > 1 for v in value) else 1.0
        return [(i, float(v) / scale) for i, v in enumerate(value)]
    if isinstance(value, list):
        items = [(v.get("id"), v.get("score")) if isinstance(v, dict) else (v, None) for v in value]
    elif isinstance(value, dict):
        items = list(value.items())
    entries: list[tuple[int, float] | None] = []
    for raw_id, raw_score in items:
        try:
            index = int(str(raw_id).strip().strip("[]")) - 1
            score = float(str(raw_score))
        except (TypeError, ValueError):
            entries.append(None)
            continue
        entries.append((index, score) if 0 <= index < count and math.isfinite(score) else None)
    return entries


def _positional(value: object, count: int) -> bool:
    """A bare list of one number per candidate (the graphrag fork's prompts ask for it)."""
    return (
        isinstance(value, list)
        and len(value) == count
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and all(math.isfinite(float(v)) for v in value)
    )


def _positive(entries: list[tuple[int, float] | None]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for entry in entries:
        if entry is not None and entry[1] > 0:
            index, score = entry
            scores[index] = max(scores.get(index, 0.0), min(score, 1.0))
    return scores


def scores_of(reply: _Scores, count: int) -> dict[int, float] | None:
    """The usable scores of a validated pruning reply (see `parse_scores`)."""
    return _positive(_entries(reply, count)) or None


def absolute_scores(reply: _Scores, count: int) -> dict[int, float] | None:
    """Scores of an absolute-scoring reply: like `scores_of`, but a reply that lists no
    candidate, or scores the ones it lists 0, says "nothing here helps" (an empty mapping).
    None only when the reply lists entries and none of them can be read."""
    entries = _entries(reply, count)
    if entries and all(e is None for e in entries):
        return None
    return _positive(entries)


def _normalised(scores: dict[int, float]) -> dict[int, float]:
    total = sum(scores.values())
    return {i: s / total for i, s in scores.items()}


def _relation_lines(edges: list[Edge]) -> str:
    lines = []
    for i, e in enumerate(edges, start=1):
        rel = e.relationship
        lines.append(f"[{i}] {rel.source} -> {rel.target}: {e.description} (weight {e.weight:g})")
    return "\n".join(lines)


def _entity_lines(graph: KnowledgeGraph, edges: list[Edge]) -> str:
    lines = []
    for i, e in enumerate(edges, start=1):
        entity = graph.entities[e.end]
        kind = f" ({entity.type})" if entity.type else ""
        desc = " ".join((entity.description or "").split())
        lines.append(f'[{i}] {e.end}{kind}, via "{e.description}": {desc}')
    return "\n".join(lines)


async def prune_relations(
    run: QueryRun, depth: int, path: ReasoningPath, edges: list[Edge]
) -> list[tuple[Edge, float]]:
    """Up to `width` of `edges` with scores summing to 1 (no LLM call for a single edge;
    none at all with `prune_strategy` semantic or bm25: `gtog.tog._free`)."""
    if run.scorer is not None:
        return await run.scorer.relations(run, depth, path, edges)
    width = run.settings.width
    if len(edges) <= 1:
        return [(e, 1.0) for e in edges]
    reply = await run.ask(
        "relation_pruning",
        RelationScores,
        path=path.chain(),
        entity=path.end,
        candidates=_relation_lines(edges),
        width=width,
    )
    scores = scores_of(reply.value, len(edges)) if reply.value is not None else None
    if scores is None:
        run.fallback(depth, "relation_pruning", path.end, "unusable reply: weight order")
        return weight_order(edges, width)
    top = sorted(scores, key=lambda i: (-scores[i], i))[:width]
    kept = _normalised({i: scores[i] for i in top})
    return [(edges[i], kept[i]) for i in top]


def weight_order(edges: list[Edge], width: int) -> list[tuple[Edge, float]]:
    """The fallback of an unusable pruning reply: the `width` highest-weight edges (ties:
    rank, id), scored in proportion to their weights (uniformly when all weights are 0)."""
    top = sorted(edges, key=lambda e: (-e.weight, -(e.relationship.rank or 0), e.relationship.id))
    top = top[:width]
    total = sum(e.weight for e in top)
    return [(e, e.weight / total if total > 0 else 1 / len(top)) for e in top]


async def prune_entities(
    run: QueryRun,
    graph: KnowledgeGraph,
    depth: int,
    path: ReasoningPath,
    relations: list[tuple[Edge, float]],
) -> list[ReasoningPath]:
    """`path` extended by each kept relation, scored by the LLM's entity scores (or the
    LLM-free scorer's)."""
    if run.scorer is not None:
        return await run.scorer.entities(run, depth, path, relations)
    if len(relations) <= 1:
        return [path.extend(e, r, 1.0) for e, r in relations]
    edges = [e for e, _ in relations]
    reply = await run.ask(
        "entity_pruning",
        EntityScores,
        path=path.chain(),
        entity=path.end,
        candidates=_entity_lines(graph, edges),
        width=run.settings.width,
    )
    scores = scores_of(reply.value, len(edges)) if reply.value is not None else None
    if scores is None:
        run.fallback(depth, "entity_pruning", path.end, "unusable reply: uniform scores")
        scores = dict.fromkeys(range(len(edges)), 1.0)
    scores = _normalised(scores)
    return [
        path.extend(edge, rel_score, scores[i])
        for i, (edge, rel_score) in enumerate(relations)
        if i in scores
    ]
