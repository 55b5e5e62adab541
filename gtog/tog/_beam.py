"""One depth of the graphrag-fitted ToG variants (`pruning: edges`, `text_guided`).

Against the paper's step (`exploration.explore_depth`):
- each path's candidate edges are pre-ranked by the question before the
  `max_candidates` cut (`ranking.QuestionRanker.prerank`);
- one `edge_pruning` call per beam path (`pruning: edges`), or one for all beam paths
  (`text_guided`), scores the candidates absolutely, with the `min_relevance` floor;
- with `text_guided`, a reached entity's hop score is the edge's score times its text
  relevance (`ranking.QuestionRanker.entity_relevance`): entities are pruned without an
  LLM call;
- a path that cannot grow (no unused edge, or none scored at least `min_relevance`) is
  **finished**: it leaves the beam, so it holds no slot, and stays in the evidence;
- the next beam holds at most one path per end entity (the best; ties: earlier), so no
  entity is expanded twice at one depth.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gtog.tog._edges import Frontier, score_edges
from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._ranking import QuestionRanker
from gtog.tog._run import QueryRun
from gtog.tog._trace import Candidate

__all__ = ["explore_graded"]


async def _frontiers(
    run: QueryRun,
    graph: KnowledgeGraph,
    ranker: QuestionRanker,
    depth: int,
    beam: list[ReasoningPath],
) -> tuple[list[Frontier], dict[int, str]]:
    used = {rid for p in beam for rid in p.relationship_ids}
    frontiers, ranked_by = [], {}
    for index, path in enumerate(beam, start=1):
        edges = graph.candidate_edges(path.end, used, set(path.entities), None)
        shown, how = await ranker.prerank(run, depth, path.end, edges, run.settings.max_candidates)
        frontiers.append(Frontier(index, path, shown))
        ranked_by[index] = how
    return frontiers, ranked_by


async def _scored(
    run: QueryRun, graph: KnowledgeGraph, depth: int, frontiers: list[Frontier]
) -> dict[int, list[tuple[Edge, float]]]:
    todo = [f for f in frontiers if f.edges]
    with_entity = run.settings.pruning == "edges"
    if run.settings.text_guided:
        kept = await score_edges(run, graph, depth, todo, with_entity)
    else:
        each = await asyncio.gather(
            *(score_edges(run, graph, depth, [f], with_entity) for f in todo)
        )
        kept = [k[0] for k in each]
    return {f.index: k for f, k in zip(todo, kept, strict=True)}


async def explore_graded(
    run: QueryRun,
    graph: KnowledgeGraph,
    ranker: QuestionRanker,
    depth: int,
    beam: list[ReasoningPath],
) -> tuple[list[ReasoningPath], list[ReasoningPath]]:
    """The next beam (possibly empty) and the paths that finished at this depth."""
    s = run.settings
    before = len(run.fallbacks)
    frontiers, ranked_by = await _frontiers(run, graph, ranker, depth, beam)
    kept = await _scored(run, graph, depth, frontiers)
    text_source = ""
    factor: dict[str, float] = {}
    if s.text_guided:
        reached = [e.end for edges in kept.values() for e, _ in edges]
        relevance = await ranker.entity_relevance(run, depth, reached)
        text_source, factor = relevance.source, relevance.scores
    pool: list[ReasoningPath] = []
    finished: list[ReasoningPath] = []
    fell_back = {f.entity for f in run.fallbacks[before:] if f.stage == "edge_pruning"}
    for f in frontiers:
        edges = kept.get(f.index, [])
        grown = [f.path.extend(e, score, factor.get(e.end, 1.0)) for e, score in edges]
        run.trace.frontier(depth, f.path, _candidates(f.edges, grown))
        pool.extend(grown)
        if not grown:
            finished.append(f.path)
        run.exploration.append(
            _row(f, depth, grown, f.path.end in fell_back, ranked_by[f.index], text_source)
        )
    order = sorted(range(len(pool)), key=lambda i: (-pool[i].score, i))
    nxt: list[ReasoningPath] = []
    for i in order:
        if len(nxt) == s.width:
            break
        if all(p.end != pool[i].end for p in nxt):
            nxt.append(pool[i])
    run.trace.beam(depth, nxt)
    return nxt, finished


def _candidates(shown: list[Edge], grown: list[ReasoningPath]) -> list[Candidate]:
    """Each edge shown to the LLM: the path it grew into, or pruned by edge pruning (scored
    below `min_relevance`, left out of the reply, or past the width)."""
    by_edge = {id(p.hops[-1].edge): p for p in grown}
    out = []
    for edge in shown:
        path = by_edge.get(id(edge))
        if path is None:
            out.append(Candidate(edge, None, None, "edge_pruning"))
        else:
            hop = path.hops[-1]
            out.append(Candidate(edge, hop.relation_score * hop.entity_score, path, None))
    return out


def _row(
    f: Frontier,
    depth: int,
    grown: list[ReasoningPath],
    fallback: bool,
    ranked_by: str,
    text_source: str,
) -> dict[str, Any]:
    return {
        "depth": depth,
        "path": f.index,
        "entity": f.path.end,
        "candidates": len(f.edges),
        "relations_kept": len(grown),
        "reached": ", ".join(p.end for p in grown),
        "relation_fallback": fallback,
        "entity_fallback": False,
        "ranked_by": ranked_by,
        "text_source": text_source,
        "finished": not grown,
    }
