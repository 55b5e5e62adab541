"""`ToGSearch`: Think-on-Graph (Sun et al., ICLR 2024) as a graphrag search engine.

The graph walk is the context builder (`ToGContextBuilder`, a graphrag
`GlobalContextBuilder`: its `build_context` is async because it calls the LLM), and
`ToGSearch` is a graphrag `BaseSearch`: `search()` returns graphrag's `SearchResult`,
`stream_search()` yields the answer, and the `QueryCallbacks` graphrag's engines take get
`on_context` and `on_llm_new_token`.

Calls per question (entity linking included), by variant (`ToGSettings.max_llm_calls`):
- `pruning: paper` (the paper's bound), at most 2·N·D + D + 1: 1 entity linking; per depth
  at most one relation-pruning and one entity-pruning call per beam path (≤ N paths; a
  stage with a single candidate needs no call) and one reasoning call, except after
  depth D, where the check is skipped because the search answers either way; 1 answer.
- `pruning: edges`, at most N·D + D + 1: one edge-pruning call per beam path instead of
  the two (`gtog.tog._beam`, `gtog.tog._edges`).
- `text_guided: true` (either pruning), at most 2·D + 1: one edge-pruning call per depth
  for all beam paths; entities are pruned by their text units without a call.
Embedding look-ups (linking, the question's vector) are not LLM calls.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import pandas as pd
from graphrag.callbacks.query_callbacks import QueryCallbacks
from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship
from graphrag.data_model.text_unit import TextUnit
from graphrag.query.context_builder.builders import ContextBuilderResult, GlobalContextBuilder
from graphrag.query.structured_search.base import BaseSearch, SearchResult
from graphrag_vectors import VectorStore

from gtog.llm._models import ChatModel, EmbeddingModel
from gtog.tog._beam import explore_graded
from gtog.tog._exploration import explore_depth
from gtog.tog._free import FreeScorer
from gtog.tog._graph import KnowledgeGraph
from gtog.tog._linking import link_topic_entities
from gtog.tog._paths import ReasoningPath, evidence_tables, evidence_text
from gtog.tog._ranking import QuestionRanker
from gtog.tog._reasoning import NO_EVIDENCE, answer, is_sufficient
from gtog.tog._run import QueryRun
from gtog.tog._settings import ToGSettings
from gtog.tog._similarity import VectorLookup
from gtog.tog._templates import ToGPrompts, load_prompts

if TYPE_CHECKING:
    from graphrag.query.context_builder.conversation_history import ConversationHistory

__all__ = ["ToGContextBuilder", "ToGSearch"]

_EXPLORATION_COLUMNS = [
    "depth",
    "path",
    "entity",
    "candidates",
    "relations_kept",
    "reached",
    "relation_fallback",
    "entity_fallback",
    "ranked_by",
    "text_source",
    "finished",
]


class ToGContextBuilder(GlobalContextBuilder):
    """The graph walk: topic entities, then pruned beam search, as evidence for the answer."""

    def __init__(
        self,
        model: ChatModel,
        graph: KnowledgeGraph,
        settings: ToGSettings,
        prompts: ToGPrompts,
        description_embedding_store: VectorStore | None = None,
        text_embedder: EmbeddingModel | None = None,
        text_unit_embedding_store: VectorStore | None = None,
    ) -> None:
        self.model = model
        self.graph = graph
        self.settings = settings
        self.prompts = prompts
        self.description_embedding_store = description_embedding_store
        self.text_embedder = text_embedder
        # the vectors are read (once, here) only by the variants that rank with them
        ranked = settings.graded or settings.prune_strategy == "semantic"
        descriptions = VectorLookup.from_store(
            "entity_description", description_embedding_store if ranked else None
        )
        self.scorer = (
            None
            if settings.llm_pruning
            else FreeScorer(settings.prune_strategy, graph, descriptions)
        )
        self.ranker = QuestionRanker(
            graph,
            descriptions,
            VectorLookup.from_store(
                "text_unit_text", text_unit_embedding_store if settings.text_guided else None
            ),
        )

    def new_run(self, query: str) -> QueryRun:
        """The per-question state of one search (usage, fallbacks, exploration log)."""
        return QueryRun(
            query,
            self.model,
            self.settings,
            self.prompts,
            embedder=self.text_embedder,
            scorer=self.scorer,
        )

    async def build_context(
        self,
        query: str,
        conversation_history: ConversationHistory | None = None,
        **kwargs: Any,
    ) -> ContextBuilderResult:
        """Walk the graph for `query`; `context_chunks` is exactly the answer's evidence.

        Pass `run=` (a `QueryRun`) to share usage and fallbacks with the caller.
        """
        run: QueryRun = kwargs.get("run") or self.new_run(query)
        s = self.settings
        if s.graded or s.prune_strategy == "semantic":
            run.start_question_vector()
        linking = await link_topic_entities(
            run, self.graph, self.description_embedding_store, self.text_embedder
        )
        beam = [ReasoningPath(t) for t in linking.titles]
        run.trace.topics(beam)
        finished: list[ReasoningPath] = []
        depth_reached, stop = 0, "no_topic_entity"
        if beam:
            stop = "max_depth"
            for depth in range(1, s.depth + 1):
                if s.graded:
                    beam, done = await explore_graded(run, self.graph, self.ranker, depth, beam)
                    finished.extend(done)
                    grew = bool(beam)
                else:
                    beam, grew = await explore_depth(run, self.graph, depth, beam)
                if not grew:
                    stop = "exhausted"
                    run.trace.verdict(depth, "exhausted")
                    break
                depth_reached = depth
                if depth == s.depth:
                    run.trace.verdict(depth, "max_depth")
                    break
                tables, _ = await self._evidence(run, [*beam, *finished], for_answer=False)
                enough = await is_sufficient(run, depth, evidence_text(tables))
                run.trace.verdict(depth, "enough" if enough else "go_deeper")
                if enough:
                    stop = "sufficient"
                    break
        paths = self._ordered(beam, finished)
        tables, units = await self._evidence(run, paths, for_answer=True)
        tables["paths"]["node"] = pd.Series([run.trace.node_of(p) for p in paths], dtype=object)
        records = {
            **tables,
            "status": self.status(run, linking.titles, linking.method, depth_reached, stop),
            "exploration": pd.DataFrame(run.exploration, columns=_EXPLORATION_COLUMNS),
            "tree": run.trace.table(),
            "fallbacks": pd.DataFrame(
                [f.__dict__ for f in run.fallbacks], columns=["depth", "stage", "entity", "reason"]
            ),
        }
        if units is not None:
            records["text_units"] = units
        tally = run.tally
        return ContextBuilderResult(
            context_chunks=evidence_text(tables) if paths else NO_EVIDENCE,
            context_records=records,
            llm_calls=tally.total_calls,
            prompt_tokens=tally.total_prompt_tokens,
            output_tokens=tally.total_output_tokens,
        )

    def _ordered(
        self, beam: list[ReasoningPath], finished: list[ReasoningPath]
    ) -> list[ReasoningPath]:
        """The evidence paths: the paper's final beam; in the graphrag-fitted variants the
        beam and the finished paths, longest first (ties: higher score, then beam first)."""
        if not self.settings.graded:
            return beam
        paths = [*beam, *finished]
        order = sorted(range(len(paths)), key=lambda i: (-len(paths[i].hops), -paths[i].score, i))
        return [paths[i] for i in order]

    async def _evidence(
        self, run: QueryRun, paths: list[ReasoningPath], for_answer: bool
    ) -> tuple[dict[str, pd.DataFrame], pd.DataFrame | None]:
        """The evidence tables of `paths` and, with `text_guided`, the text units considered.

        `text_guided`: the path entities' best-matching text units, for the sufficiency
        check and the answer alike; else, with `use_text_units`, the text units the path
        relationships cite, for the answer only.
        """
        s = self.settings
        if s.text_guided:
            titles = list(dict.fromkeys(t for p in paths for t in p.entities))
            used, considered = await self.ranker.text_units(run, titles)
            return evidence_tables(self.graph, paths, sources=used), considered
        units = s.max_text_units if for_answer and s.use_text_units else 0
        return evidence_tables(self.graph, paths, text_units=units), None

    def status(
        self, run: QueryRun, topics: list[str], method: str, depth: int, stop: str
    ) -> pd.DataFrame:
        """One row: topic entities, depth reached, stop reason, fallbacks, calls and bound."""
        s = self.settings
        stages = [c for c in s.stages if c != "answer"] + (["ranking"] if s.graded else [])
        row = {
            "variant": s.variant,
            "topic_entities": ", ".join(topics),
            "linked_by": method,
            "depth_reached": depth,
            "stop_reason": stop,
            "note": (
                "no topic entity found: answered without graph paths"
                if stop == "no_topic_entity"
                else ""
            ),
            **{f"{c}_fallbacks": run.fallback_count(c) for c in stages},
            "llm_calls": run.tally.total_calls,
            "llm_call_bound": s.max_llm_calls,
            "llm_call_bound_rule": s.call_bound_rule,
            **run.trace.status(),
        }
        return pd.DataFrame([row])


class ToGSearch(BaseSearch[ToGContextBuilder]):
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
        callbacks: list[QueryCallbacks] | None = None,
        text_unit_embedding_store: VectorStore | None = None,
    ) -> None:
        settings = settings or ToGSettings()
        builder = ToGContextBuilder(
            model,
            KnowledgeGraph(entities, relationships, text_units),
            settings,
            prompts or load_prompts(settings),
            description_embedding_store,
            text_embedder,
            text_unit_embedding_store,
        )
        super().__init__(model=model, context_builder=builder, tokenizer=model.tokenizer)  # type: ignore[arg-type]
        self.chat = model
        self.settings = settings
        self.callbacks = callbacks or []

    async def search(
        self,
        query: str,
        conversation_history: ConversationHistory | None = None,
        **kwargs: Any,
    ) -> SearchResult:
        """Answer `query` by walking the graph; usage is split by ToG stage."""
        start = time.perf_counter()
        run = self.context_builder.new_run(query)
        context = await self.context_builder.build_context(query, conversation_history, run=run)
        for callback in self.callbacks:
            callback.on_context(context.context_records)
        response = await answer(run, str(context.context_chunks))
        for callback in self.callbacks:
            callback.on_llm_new_token(response)
        context.context_records["status"]["llm_calls"] = run.tally.total_calls
        tally = run.tally
        stages = self.settings.stages
        return SearchResult(
            response=response,
            context_data=context.context_records,
            context_text=context.context_chunks,
            completion_time=time.perf_counter() - start,
            llm_calls=tally.total_calls,
            prompt_tokens=tally.total_prompt_tokens,
            output_tokens=tally.total_output_tokens,
            llm_calls_categories={c: tally.llm_calls.get(c, 0) for c in stages},
            prompt_tokens_categories={c: tally.prompt_tokens.get(c, 0) for c in stages},
            output_tokens_categories={c: tally.output_tokens.get(c, 0) for c in stages},
        )

    async def stream_search(
        self,
        query: str,
        conversation_history: ConversationHistory | None = None,
    ) -> AsyncGenerator[str, None]:
        """The answer as a stream (one piece: ToG's answer call is not streamed)."""
        result = await self.search(query, conversation_history)
        yield str(result.response)
