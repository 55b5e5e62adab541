"""`ToGSearch`: Think-on-Graph (Sun et al., ICLR 2024) over a graphrag index.

Calls per question, at most 2·N·D + D + 1 (the paper's bound, entity linking included):
1 entity linking; per depth at most one relation-pruning and one entity-pruning call per
beam path (≤ N paths; a stage with a single candidate needs no call) and one reasoning
call, except after depth D, where the check is skipped because the search answers
either way; 1 answer. Embedding look-ups for linking are not LLM calls.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship
from graphrag.data_model.text_unit import TextUnit
from graphrag.query.structured_search.base import SearchResult
from graphrag_vectors import VectorStore

from gtog.llm import ChatModel, EmbeddingModel
from gtog.tog.exploration import explore_depth
from gtog.tog.graph import KnowledgeGraph
from gtog.tog.linking import link_topic_entities
from gtog.tog.paths import ReasoningPath, evidence_tables, evidence_text
from gtog.tog.reasoning import NO_EVIDENCE, answer, is_sufficient
from gtog.tog.run import CATEGORIES, QueryRun
from gtog.tog.settings import ToGSettings
from gtog.tog.templates import ToGPrompts, load_prompts

__all__ = ["ToGSearch"]

_EXPLORATION_COLUMNS = [
    "depth",
    "path",
    "entity",
    "candidates",
    "relations_kept",
    "reached",
    "relation_fallback",
    "entity_fallback",
]


class ToGSearch:
    """Think-on-Graph search; build once per index, call `search` concurrently."""

    def __init__(
        self,
        model: ChatModel,
        entities: list[Entity],
        relationships: list[Relationship],
        text_units: list[TextUnit] | None = None,
        description_embedding_store: VectorStore | None = None,
        text_embedder: EmbeddingModel | None = None,
        settings: ToGSettings | None = None,
        prompts: ToGPrompts | None = None,
    ) -> None:
        self.model = model
        self.settings = settings or ToGSettings()
        self.prompts = prompts or load_prompts(self.settings)
        self.graph = KnowledgeGraph(entities, relationships, text_units)
        self.description_embedding_store = description_embedding_store
        self.text_embedder = text_embedder

    async def search(self, query: str, **kwargs: Any) -> SearchResult:
        """Answer `query` by walking the graph; usage is split by ToG stage."""
        start = time.perf_counter()
        run = QueryRun(query, self.model, self.settings, self.prompts)
        linking = await link_topic_entities(
            run, self.graph, self.description_embedding_store, self.text_embedder
        )
        beam = [ReasoningPath(t) for t in linking.titles]
        depth_reached, stop = 0, "no_topic_entity"
        if beam:
            stop = "max_depth"
            for depth in range(1, self.settings.depth + 1):
                beam, grew = await explore_depth(run, self.graph, depth, beam)
                if not grew:
                    stop = "exhausted"
                    break
                depth_reached = depth
                if depth == self.settings.depth:
                    break
                if await is_sufficient(run, depth, evidence_text(self._tables(beam, False))):
                    stop = "sufficient"
                    break
        tables = self._tables(beam, self.settings.use_text_units)
        context_text = evidence_text(tables) if beam else NO_EVIDENCE
        response = await answer(run, context_text)
        context_data = {
            **tables,
            "status": self._status(run, linking.titles, linking.method, depth_reached, stop),
            "exploration": pd.DataFrame(run.exploration, columns=_EXPLORATION_COLUMNS),
            "fallbacks": pd.DataFrame(
                [f.__dict__ for f in run.fallbacks], columns=["depth", "stage", "entity", "reason"]
            ),
        }
        tally = run.tally
        return SearchResult(
            response=response,
            context_data=context_data,
            context_text=context_text,
            completion_time=time.perf_counter() - start,
            llm_calls=tally.total_calls,
            prompt_tokens=tally.total_prompt_tokens,
            output_tokens=tally.total_output_tokens,
            llm_calls_categories={c: tally.llm_calls.get(c, 0) for c in CATEGORIES},
            prompt_tokens_categories={c: tally.prompt_tokens.get(c, 0) for c in CATEGORIES},
            output_tokens_categories={c: tally.output_tokens.get(c, 0) for c in CATEGORIES},
        )

    def _tables(self, beam: list[ReasoningPath], with_sources: bool) -> dict[str, pd.DataFrame]:
        units = self.settings.max_text_units if with_sources else 0
        return evidence_tables(self.graph, beam, text_units=units)

    def _status(
        self, run: QueryRun, topics: list[str], method: str, depth: int, stop: str
    ) -> pd.DataFrame:
        row = {
            "topic_entities": ", ".join(topics),
            "linked_by": method,
            "depth_reached": depth,
            "stop_reason": stop,
            "note": (
                "no topic entity found: answered without graph paths"
                if stop == "no_topic_entity"
                else ""
            ),
            **{f"{c}_fallbacks": run.fallback_count(c) for c in CATEGORIES if c != "answer"},
            "llm_calls": run.tally.total_calls,
            "cost_usd": run.tally.cost_usd,
            "llm_call_bound": self.settings.max_llm_calls,
        }
        return pd.DataFrame([row])
