"""Edge pruning (`pruning: edges`, `text_guided`): one LLM call scores candidate edges.

In a graphrag index every relationship is one edge to one entity with its own description,
so one call can judge the edge and where it leads. The call shows, per beam path, the path
so far and the entity's candidate edges, each with its description and weight and (with
`pruning: edges`) the entity it reaches, with its type and description; numbering runs on
across paths, so `text_guided` scores the candidates of all beam paths in a single call.

Scores are absolute (0 to 1, each candidate on its own, never renormalised): a candidate
scored below `min_relevance` (or left out of the reply) is not followed, so a reply can say
that nothing from an entity is relevant (`{"edges": []}` is such a reply, not a failure).
A path keeps at most `width` edges. A candidate is scored even when it is the only one.
An unreadable reply falls back, for every path in the call, to the `width` highest-weight
candidates scored in proportion to their weights (as the paper's relation pruning does),
and is recorded as an `edge_pruning` fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._pruning import EdgeScores, absolute_scores, weight_order
from gtog.tog._run import QueryRun

__all__ = ["Frontier", "edge_lines", "kept_edges", "score_edges"]


@dataclass(frozen=True)
class Frontier:
    """A beam path to expand (its 1-based position) and its candidate edges, in order."""

    index: int
    path: ReasoningPath
    edges: list[Edge]


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def edge_lines(graph: KnowledgeGraph, frontiers: list[Frontier], with_entity: bool) -> str:
    """The numbered candidates of `frontiers`, grouped by path (numbers run on)."""
    blocks, number = [], 0
    for f in frontiers:
        lines = [f"Path {f.index}: {f.path.chain()}", f'Edges from "{f.path.end}":']
        for edge in f.edges:
            number += 1
            rel = edge.relationship
            line = f"[{number}] {rel.source} -> {rel.target}: {edge.description}"
            line += f" (weight {edge.weight:g})"
            if with_entity:
                entity = graph.entities[edge.end]
                kind = f" ({entity.type})" if entity.type else ""
                line += f"; reaches {edge.end}{kind}: {_one_line(entity.description)}"
            lines.append(line)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def kept_edges(
    edges: list[Edge], scores: dict[int, float], width: int, floor: float
) -> list[tuple[Edge, float]]:
    """The at most `width` edges scored at least `floor` (and above 0), best first
    (ties: candidate order); `scores` maps positions in `edges` to scores."""
    good = [i for i, s in scores.items() if 0 <= i < len(edges) and s > 0 and s >= floor]
    top = sorted(good, key=lambda i: (-scores[i], i))[:width]
    return [(edges[i], scores[i]) for i in top]


async def score_edges(
    run: QueryRun,
    graph: KnowledgeGraph,
    depth: int,
    frontiers: list[Frontier],
    with_entity: bool,
) -> list[list[tuple[Edge, float]]]:
    """The kept edges of each of `frontiers` (one LLM call for all; none without candidates)."""
    flat = [(k, i) for k, f in enumerate(frontiers) for i in range(len(f.edges))]
    if not flat:
        return [[] for _ in frontiers]
    s = run.settings
    reply = await run.ask(
        "edge_pruning",
        EdgeScores,
        candidates=edge_lines(graph, frontiers, with_entity),
        width=s.width,
    )
    scores = absolute_scores(reply.value, len(flat)) if reply.value is not None else None
    if scores is None:
        for f in frontiers:
            run.fallback(depth, "edge_pruning", f.path.end, "unusable reply: weight order")
        return [weight_order(f.edges, s.width) if f.edges else [] for f in frontiers]
    per_path: list[dict[int, float]] = [{} for _ in frontiers]
    for n, (k, i) in enumerate(flat):
        if n in scores:
            per_path[k][i] = scores[n]
    return [
        kept_edges(f.edges, per_path[k], s.width, s.min_relevance) for k, f in enumerate(frontiers)
    ]
