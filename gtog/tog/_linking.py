"""Topic entities: LLM-extracted mentions matched to titles, else title scan, else embeddings."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from graphrag_vectors import VectorStore
from pydantic import BaseModel, model_validator

from gtog.llm._models import EmbeddingModel
from gtog.llm._replies import parse_json_reply
from gtog.tog._graph import KnowledgeGraph
from gtog.tog._run import QueryRun

__all__ = ["Linking", "Mentions", "link_topic_entities", "parse_mentions"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


@dataclass(frozen=True)
class Linking:
    """The topic entities found and how (`llm`, `title_scan`, `embedding` or `none`)."""

    titles: list[str]
    method: str
    mentions: list[str]


class Mentions(BaseModel):
    """The linking reply: `{"entities": [...]}` (a bare list is accepted)."""

    entities: list[str | int]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        return {"entities": data} if isinstance(data, list) else data

    def names(self) -> list[str] | None:
        """The non-empty names, or None when there are none."""
        names = [str(v).strip() for v in self.entities if str(v).strip()]
        return names or None


def parse_mentions(text: str) -> list[str] | None:
    """Names from an `{"entities": [...]}` reply (a bare list is accepted); None if unusable."""
    value, _ = parse_json_reply(text, Mentions)
    return value.names() if value is not None else None


async def link_topic_entities(
    run: QueryRun,
    graph: KnowledgeGraph,
    store: VectorStore | None,
    embedder: EmbeddingModel | None,
) -> Linking:
    """At most `width` topic entities for the question (one LLM call).

    Order of resort: the LLM's mentions matched to titles (exact, normalised, unique word
    match, fuzzy); titles written in the question; nearest entity descriptions in the
    embedding store (to the mentions' embedding; in the graphrag-fitted variants to the
    question's, which they fetch anyway). A reply that cannot be parsed counts as an
    `entity_linking` fallback.
    """
    width = run.settings.width
    reply = await run.ask("entity_linking", Mentions)
    mentions = reply.value.names() if reply.value is not None else None
    if mentions is None:
        run.fallback(0, "entity_linking", "", "unparsable reply: no mentions used")
        mentions = []
    titles = list(dict.fromkeys(t for m in mentions if (t := graph.match_title(m))))
    if titles:
        return Linking(titles[:width], "llm", mentions)
    titles = graph.titles_in_text(run.question)
    if titles:
        return Linking(titles[:width], "title_scan", mentions)
    if store is not None and embedder is not None:
        try:
            if run.settings.graded:  # the question's own vector, fetched once for ranking too
                vector = await run.question_vector()
                results = (
                    store.similarity_search_by_vector(
                        vector.tolist(), k=width, include_vectors=False
                    )
                    if vector is not None
                    else []
                )
            else:
                [vector] = await embedder.embed(["; ".join(mentions) or run.question])
                results = store.similarity_search_by_vector(vector, k=width, include_vectors=False)
        except Exception:
            logger.warning("ToG entity linking: embedding search failed", exc_info=True)
            results = []
        titles = [
            graph.entity_ids[str(r.document.id)]
            for r in results
            if str(r.document.id) in graph.entity_ids
        ]
        titles = list(dict.fromkeys(titles))
        if titles:
            return Linking(titles[:width], "embedding", mentions)
    return Linking([], "none", mentions)
