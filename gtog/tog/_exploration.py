"""One depth of ToG beam search: expand every path, prune with the LLM, keep the top N."""

from __future__ import annotations

import asyncio

from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._pruning import prune_entities, prune_relations
from gtog.tog._run import QueryRun
from gtog.tog._trace import Candidate

__all__ = ["explore_depth"]


async def _expand(
    run: QueryRun,
    graph: KnowledgeGraph,
    depth: int,
    index: int,
    path: ReasoningPath,
    used: set[str],
) -> tuple[list[ReasoningPath], list[Candidate]]:
    """`path` extended by its pruned candidates (at most one call per pruning stage), and
    the candidates it was shown (traced after every path is done, in path order: the
    record's tree does not depend on which reply came first)."""
    before = len(run.fallbacks)
    edges = graph.candidate_edges(path.end, used, set(path.entities), run.settings.max_candidates)
    relations = await prune_relations(run, depth, path, edges)
    extended = await prune_entities(run, graph, depth, path, relations)
    shown = _candidates(edges, relations, extended)
    stages = {f.stage for f in run.fallbacks[before:] if f.depth == depth and f.entity == path.end}
    run.exploration.append(
        {
            "depth": depth,
            "path": index,
            "entity": path.end,
            "candidates": len(edges),
            "relations_kept": len(relations),
            "reached": ", ".join(p.end for p in extended),
            "relation_fallback": "relation_pruning" in stages,
            "entity_fallback": "entity_pruning" in stages,
            "ranked_by": "weight",
            "text_source": "",
            "finished": False,
        }
    )
    return extended, shown


def _candidates(
    edges: list[Edge], relations: list[tuple[Edge, float]], extended: list[ReasoningPath]
) -> list[Candidate]:
    """Each shown edge: the path it grew into, or the stage that pruned it."""
    rel_score = {id(e): s for e, s in relations}
    grown = {id(p.hops[-1].edge): p for p in extended}
    out = []
    for edge in edges:
        path = grown.get(id(edge))
        if path is not None:
            hop = path.hops[-1]
            out.append(Candidate(edge, hop.relation_score * hop.entity_score, path, None))
        elif id(edge) in rel_score:
            out.append(Candidate(edge, 0.0, None, "entity_pruning"))  # entity score 0
        else:
            out.append(Candidate(edge, None, None, "relation_pruning"))
    return out


async def explore_depth(
    run: QueryRun, graph: KnowledgeGraph, depth: int, beam: list[ReasoningPath]
) -> tuple[list[ReasoningPath], bool]:
    """The next beam and whether any path grew.

    Candidate edges exclude every edge already on a beam path and edges back to the
    path's own entities. Paths that cannot grow stay in the beam with their score;
    the global top `width` by path score (ties: earlier path, then candidate order) is kept.
    """
    used = {rid for p in beam for rid in p.relationship_ids}
    results = await asyncio.gather(
        *(_expand(run, graph, depth, i, p, used) for i, p in enumerate(beam, start=1))
    )
    run.exploration.sort(key=lambda r: (r["depth"], r["path"]))
    pool: list[ReasoningPath] = []
    grew = False
    for path, (extended, shown) in zip(beam, results, strict=True):
        run.trace.frontier(depth, path, shown)
        if extended:
            grew = True
            pool.extend(extended)
        else:
            pool.append(path)
    ranked = sorted(range(len(pool)), key=lambda i: (-pool[i].score, i))
    beam_out = [pool[i] for i in ranked[: run.settings.width]]
    run.trace.beam(depth, beam_out)
    return beam_out, grew
