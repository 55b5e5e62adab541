"""LLM-free pruning (`prune_strategy: semantic | bm25`): the paper's two pruning stages
scored without asking the LLM, so a study can compare llm / semantic / bm25 pruning.

- **semantic**: a candidate's score is the cosine similarity of its text's embedding to
  the question's, mapped from [-1, 1] to [0, 1]. Relations (`source -> target:
  description`) are embedded in one request per beam path; reached entities use the
  index's stored `entity_description` vectors, and only those without one are embedded
  (`title: description`, one request). Vectors are kept for the engine's life.
- **bm25**: Okapi BM25 (k1 = 1.5, b = 0.75) of the question's words against each
  candidate's text, the document frequencies taken over every relationship (relations) or
  every entity (entities) of the index, scaled by the best candidate's score.

Relation pruning keeps the `width` best (ties: candidate order, which is weight order) with
scores summing to 1; entity pruning's scores are normalised as the LLM's are. A stage with a
single candidate is not scored (as with the LLM). When nothing can be scored (the question
has no vector; no word of the question in any candidate) the paper's fallback rules apply
(weight order; uniform entity scores) and are recorded as the stage's fallback.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np

from gtog.tog._graph import Edge, KnowledgeGraph
from gtog.tog._paths import ReasoningPath
from gtog.tog._run import QueryRun
from gtog.tog._similarity import VectorLookup, cosine, unit_vector

__all__ = ["BM25", "FreeScorer", "words"]

_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "him",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "she",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "you",
    ]
)


def words(text: str | None) -> list[str]:
    """Lower-case word tokens of `text` without common English function words."""
    return [w for w in re.findall(r"\w+", (text or "").lower()) if w not in _STOP]


class BM25:
    """Okapi BM25 over a fixed corpus of documents (id -> text)."""

    def __init__(self, documents: dict[str, str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._terms = {key: Counter(words(text)) for key, text in documents.items()}
        self._length = {key: sum(c.values()) for key, c in self._terms.items()}
        n = len(self._terms)
        self._avg = (sum(self._length.values()) / n) if n else 0.0
        df: Counter[str] = Counter()
        for counts in self._terms.values():
            df.update(counts.keys())
        self._idf = {t: math.log((n - f + 0.5) / (f + 0.5) + 1.0) for t, f in df.items()}

    def score(self, query: Iterable[str], key: str) -> float:
        """The BM25 score of document `key` for the query words (0 for an unknown key)."""
        counts = self._terms.get(key)
        if not counts or self._avg == 0:
            return 0.0
        norm = self.k1 * (1 - self.b + self.b * self._length[key] / self._avg)
        total = 0.0
        for term in set(query):
            tf = counts.get(term, 0)
            if tf:
                total += self._idf.get(term, 0.0) * tf * (self.k1 + 1) / (tf + norm)
        return total


def _relation_text(edge: Edge) -> str:
    rel = edge.relationship
    return f"{rel.source} -> {rel.target}: {edge.description}"


class FreeScorer:
    """Scores a path's candidates for `prune_strategy` semantic or bm25 (one per engine)."""

    def __init__(self, strategy: str, graph: KnowledgeGraph, descriptions: VectorLookup) -> None:
        self.strategy = strategy
        self.graph = graph
        self.descriptions = descriptions
        self._vectors: dict[str, np.ndarray] = {}
        self._relations: BM25 | None = None
        self._entities: BM25 | None = None

    # -- scores in [0, 1] (None: cannot be scored) -------------------------------------
    async def _semantic(
        self, run: QueryRun, texts: dict[str, str], stored: dict[str, str]
    ) -> dict[str, float] | None:
        """key -> similarity; `stored`: key -> the id of its stored description vector."""
        question = await run.question_vector()
        if question is None:
            return None
        found = await self.descriptions.vectors(stored.values()) if stored else {}
        for key, vector_id in stored.items():
            if vector_id in found:
                self._vectors.setdefault(key, found[vector_id])
        todo = [k for k in texts if k not in self._vectors]
        if todo:
            assert run.embedder is not None  # question_vector() was not None
            vectors = await run.embedder.embed([texts[k] for k in todo])
            for key, vector in zip(todo, vectors, strict=True):
                unit = unit_vector(vector)
                if unit is not None:
                    self._vectors[key] = unit
        sims = cosine(question, {k: self._vectors[k] for k in texts if k in self._vectors})
        return {k: (sims[k] + 1) / 2 for k in texts if k in sims}

    def _lexical(self, run: QueryRun, index: BM25, keys: list[str]) -> dict[str, float] | None:
        query = words(run.question)
        raw = {k: index.score(query, k) for k in keys}
        best = max(raw.values(), default=0.0)
        return {k: v / best for k, v in raw.items()} if best > 0 else None

    def _relation_index(self) -> BM25:
        if self._relations is None:
            self._relations = BM25(
                {
                    f"r:{r.id}": f"{r.source} -> {r.target}: {r.description or ''}"
                    for r in self.graph.relationships.values()
                }
            )
        return self._relations

    def _entity_index(self) -> BM25:
        if self._entities is None:
            entities = self.graph.entities.items()
            self._entities = BM25(
                {f"e:{t}": f"{t} {e.type or ''} {e.description or ''}" for t, e in entities}
            )
        return self._entities

    async def _scores(self, run: QueryRun, stage: str, edges: list[Edge]) -> list[float] | None:
        if stage == "relation_pruning":
            keys = [f"r:{e.relationship.id}" for e in edges]
            if self.strategy == "bm25":
                found = self._lexical(run, self._relation_index(), keys)
            else:
                texts = {k: _relation_text(e) for k, e in zip(keys, edges, strict=True)}
                found = await self._semantic(run, texts, {})
        else:
            keys = [f"e:{e.end}" for e in edges]
            if self.strategy == "bm25":
                found = self._lexical(run, self._entity_index(), keys)
            else:
                entities = {k: self.graph.entities[e.end] for k, e in zip(keys, edges, strict=True)}
                texts = {k: f"{x.title}: {x.description or ''}" for k, x in entities.items()}
                stored = {k: str(x.id) for k, x in entities.items() if x.id}
                found = await self._semantic(run, texts, stored)
        if not found or not any(found.get(k, 0) > 0 for k in keys):
            return None
        return [found.get(k, 0.0) for k in keys]

    def _why(self, run: QueryRun) -> str:
        if self.strategy == "semantic":
            return run.question_error or "no candidate could be embedded"
        return "no word of the question in any candidate"

    # -- the two stages ----------------------------------------------------------------
    async def relations(
        self, run: QueryRun, depth: int, path: ReasoningPath, edges: list[Edge]
    ) -> list[tuple[Edge, float]]:
        """Up to `width` of `edges` with scores summing to 1 (see the module docstring)."""
        from gtog.tog._pruning import weight_order

        width = run.settings.width
        if len(edges) <= 1:
            return [(e, 1.0) for e in edges]
        scores = await self._scores(run, "relation_pruning", edges)
        if scores is None:
            why = f"{self.strategy}: {self._why(run)}: weight order"
            run.fallback(depth, "relation_pruning", path.end, why)
            return weight_order(edges, width)
        top = sorted(range(len(edges)), key=lambda i: (-scores[i], i))[:width]
        total = sum(scores[i] for i in top)
        return [(edges[i], scores[i] / total) for i in top]

    async def entities(
        self, run: QueryRun, depth: int, path: ReasoningPath, relations: list[tuple[Edge, float]]
    ) -> list[ReasoningPath]:
        """`path` extended by each kept relation, scored by its reached entity."""
        if len(relations) <= 1:
            return [path.extend(e, r, 1.0) for e, r in relations]
        scores = await self._scores(run, "entity_pruning", [e for e, _ in relations])
        if scores is None:
            why = f"{self.strategy}: {self._why(run)}: uniform scores"
            run.fallback(depth, "entity_pruning", path.end, why)
            scores = [1.0] * len(relations)
        total = sum(scores)
        return [
            path.extend(edge, rel_score, scores[i] / total)
            for i, (edge, rel_score) in enumerate(relations)
            if scores[i] > 0
        ]
