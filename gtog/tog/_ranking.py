"""Ranking by the question's embedding (the graphrag-fitted variants; no LLM call).

Three uses, each with a documented fallback that never invents a score:
- **pre-ranking** of an entity's candidate edges by the question's similarity to the
  description of the entity each edge reaches, before the `max_candidates` cut: a hub's
  relevant low-weight edges are shown. Without the question's vector, or when some
  reached entity has no description vector, the candidates stay in weight order.
- **text relevance** of the entities a depth reached (`text_guided`): the best cosine
  similarity of the question to one of the entity's text units. Entities are compared like
  with like: if some entity has no text unit with a vector, every entity of that depth is
  measured by its description vector instead; if that fails too, no text factor is used
  and the LLM's edge scores alone rank the depth.
- **evidence text units** (`text_guided`): the text units of the path entities, most
  similar first; units without a vector (or all of them, without the question's vector)
  follow in path order; at most `max_text_units` and `text_unit_max_tokens` tokens.
Each fallback is recorded on the run as a `ranking` fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from graphrag.data_model.text_unit import TextUnit

from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._run import QueryRun
from gtog.tog._similarity import VectorLookup, cosine

__all__ = ["TEXT_UNIT_COLUMNS", "QuestionRanker", "Relevance", "unit_tokens"]

TEXT_UNIT_COLUMNS = ["id", "entities", "similarity", "tokens", "used", "reason"]
"""Columns of `context_data["text_units"]`: the text units considered for the evidence."""


@dataclass(frozen=True)
class Relevance:
    """How well each reached entity's text matches the question, and what was measured."""

    scores: dict[str, float]
    """Entity title -> similarity in [0, 1] (empty when `source` is `none`)."""
    source: str
    """`text_units`, `entity_description` or `none`."""


def unit_tokens(unit: TextUnit) -> int:
    """The unit's token count from the index (`n_tokens`), else about 4 characters a token."""
    if unit.n_tokens:
        return int(unit.n_tokens)
    return max(1, len(unit.text or "") // 4)


class QuestionRanker:
    """Ranks candidates and text units by the question's vector (see the module docstring)."""

    def __init__(
        self, graph: KnowledgeGraph, descriptions: VectorLookup, units: VectorLookup
    ) -> None:
        self.graph = graph
        self.descriptions = descriptions
        self.units = units

    def _unit_ids(self, title: str) -> list[str]:
        entity = self.graph.entities[title]
        return [u for u in entity.text_unit_ids or [] if u in self.graph.text_units]

    async def _description_similarity(
        self, run: QueryRun, titles: list[str]
    ) -> dict[str, float] | None:
        """Title -> similarity of its description, or None unless every title has one."""
        question = await run.question_vector()
        if question is None:
            return None
        ids = {t: self.graph.entities[t].id for t in titles}
        sims = cosine(question, await self.descriptions.vectors(ids.values()))
        if not all(ids[t] in sims for t in titles):
            return None
        return {t: sims[ids[t]] for t in titles}

    async def prerank(
        self, run: QueryRun, depth: int, entity: str, edges: list[Edge], cap: int
    ) -> tuple[list[Edge], str]:
        """The `cap` candidates to show, most question-like reached entity first; and how
        they were ranked (`question` or `weight`). `edges` arrive in weight order."""
        if not edges:
            return [], "question"
        ends = list(dict.fromkeys(e.end for e in edges))
        sims = await self._description_similarity(run, ends)
        if sims is None:
            why = self._missing(run, "entity descriptions", self.descriptions)
            run.fallback(depth, "ranking", entity, f"{why}: candidates in weight order")
            return edges[:cap], "weight"
        order = sorted(range(len(edges)), key=lambda i: (-sims[edges[i].end], i))
        return [edges[i] for i in order[:cap]], "question"

    async def entity_relevance(self, run: QueryRun, depth: int, titles: list[str]) -> Relevance:
        """The text relevance of `titles` (the entities one depth reached), like with like."""
        titles = list(dict.fromkeys(titles))
        question = await run.question_vector()
        if not titles:
            return Relevance({}, "text_units")
        if question is None:
            reason = self._missing(run, "text units", self.units)
        else:
            best = await self._best_unit_similarity(question, titles)
            if len(best) == len(titles):
                return Relevance(best, "text_units")
            lacking = [t for t in titles if t not in best]
            reason = self.units.reason or f"no text-unit vector for {len(lacking)} entities"
            described = await self._description_similarity(run, titles)
            if described is not None:
                why = f"{reason}: entities ranked by their description vectors"
                run.fallback(depth, "ranking", ", ".join(lacking[:3]), why)
                clipped = {t: max(0.0, v) for t, v in described.items()}
                return Relevance(clipped, "entity_description")
            reason += "; no description vector for some"
        run.fallback(depth, "ranking", "", f"{reason}: entities ranked by edge scores alone")
        return Relevance({}, "none")

    async def _best_unit_similarity(
        self, question: np.ndarray, titles: list[str]
    ) -> dict[str, float]:
        """Title -> best similarity of one of its text units (titles without one left out)."""
        unit_ids = {t: self._unit_ids(t) for t in titles}
        vectors = await self.units.vectors(u for ids in unit_ids.values() for u in ids)
        sims = cosine(question, vectors)
        best = {}
        for title, ids in unit_ids.items():
            found = [sims[u] for u in ids if u in sims]
            if found:
                best[title] = max(0.0, max(found))
        return best

    def _missing(self, run: QueryRun, what: str, lookup: VectorLookup) -> str:
        if run.question_error:
            return f"question not embedded ({run.question_error})"
        return lookup.reason or f"no vector for some {what}"

    async def text_units(
        self, run: QueryRun, titles: list[str]
    ) -> tuple[list[TextUnit], pd.DataFrame]:
        """The evidence text units of the path entities `titles`, and why each was used."""
        s = run.settings
        cited: dict[str, list[str]] = {}
        for title in titles:
            for uid in self._unit_ids(title):
                cited.setdefault(uid, []).append(title)
        question = await run.question_vector()
        sims = cosine(question, await self.units.vectors(cited)) if question is not None else {}
        ranked = sorted((u for u in cited if u in sims), key=lambda u: -sims[u])  # ties: path
        order = ranked + [u for u in cited if u not in sims]
        unranked = (
            "question not embedded: path order"
            if question is None
            else "no vector for this unit: after the ranked ones, in path order"
        )
        used: list[TextUnit] = []
        rows = []
        budget = s.text_unit_max_tokens
        for uid in order:
            if len(used) >= s.max_text_units:
                break
            unit = self.graph.text_units[uid]
            tokens = unit_tokens(unit)
            similarity = round(sims[uid], 4) if uid in sims else None
            if tokens > budget:
                ok, reason = False, f"over the token budget ({budget} tokens left)"
            else:
                ok, budget = True, budget - tokens
                reason = "most similar to the question" if similarity is not None else unranked
            if ok:
                used.append(unit)
            rows.append(
                {
                    "id": unit.short_id or uid,
                    "entities": ", ".join(cited[uid]),
                    "similarity": similarity,
                    "tokens": tokens,
                    "used": ok,
                    "reason": reason,
                }
            )
        return used, pd.DataFrame(rows, columns=TEXT_UNIT_COLUMNS)
