"""graphrag's engines (local, basic) and ToG, built from a loaded project and metered.

`BasicSearch.search()` in graphrag 3.3 never awaits its completion and always answers "";
`AnsweringBasicSearch` overrides `search` to await it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from graphrag.query.structured_search.base import SearchResult
from graphrag.query.structured_search.basic_search.search import BasicSearch

from gtog._errors import InputError
from gtog._internals import model_config_of, wrap_global_map_batches
from gtog.search._basic_context import TextUnitContext
from gtog.search._configured import configured
from gtog.search._drift import FreshDrift
from gtog.search._metering import MeteredCompletion, meter_model, stage
from gtog.search._offloop import OffLoopSearch
from gtog.search._outcome import SearchEngine
from gtog.search._vectors import in_memory

if TYPE_CHECKING:
    from graphrag.query.context_builder.conversation_history import ConversationHistory

    from gtog._project import Project

__all__ = [
    "AnsweringBasicSearch",
    "build_basic",
    "build_drift",
    "build_global",
    "build_local",
    "build_tog",
]


def _gated(engine: Any, block: Any = None) -> Any:
    """`engine` with the models graphrag's factory gave it (its completion model, its
    context builder's embedding model) made again through gtog's call gate (the run's
    cache and limits); `block` (the method's settings section) names their model ids."""
    from gtog.llm._models import gated_completion, gated_embedding

    config = model_config_of(engine.model)
    if config is not None:
        engine.model = gated_completion(config, getattr(block, "completion_model_id", None))
    builder = getattr(engine, "context_builder", None)
    embedder = getattr(builder, "text_embedder", None)
    embedding_config = model_config_of(embedder)
    if embedding_config is not None:
        gated = gated_embedding(embedding_config, getattr(block, "embedding_model_id", None))
        builder.text_embedder = gated
        inner = getattr(builder, "local_mixed_context", None)  # DRIFT's local actions
        if getattr(inner, "text_embedder", None) is embedder:
            inner.text_embedder = gated
    return engine


class AnsweringBasicSearch(BasicSearch):
    """graphrag's BasicSearch with a `search()` that awaits its completion."""

    async def search(
        self,
        query: str,
        conversation_history: ConversationHistory | None = None,
        **kwargs: Any,
    ) -> SearchResult:
        """Retrieve text units, answer from them (the streamed path, which is correct)."""
        start = time.time()
        context = self.context_builder.build_context(
            query=query,
            conversation_history=conversation_history,
            **kwargs,
            **self.context_builder_params,
        )
        prompt = self.system_prompt.format(
            context_data=context.context_chunks, response_type=self.response_type
        )
        messages = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": query},
        ]
        stream = await self.model.completion_async(
            messages=messages, stream=True, **self.model_params
        )
        answer = ""
        async for chunk in stream:  # type: ignore[union-attr]
            answer += chunk.choices[0].delta.content or ""
        prompt_tokens = len(self.tokenizer.encode(prompt + query))
        output_tokens = len(self.tokenizer.encode(answer))
        return SearchResult(
            response=answer,
            context_data=context.context_records,
            context_text=context.context_chunks,
            completion_time=time.time() - start,
            llm_calls=1,
            prompt_tokens=prompt_tokens,
            output_tokens=output_tokens,
            llm_calls_categories={"response": 1},
            prompt_tokens_categories={"response": prompt_tokens},
            output_tokens_categories={"response": output_tokens},
        )


async def build_local(project: Project, options: dict[str, Any]) -> SearchEngine:
    """graphrag local search over entities, relationships, reports and text units."""
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.query.factory import get_local_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_covariates,
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )

    config = configured(project, options, "local_search")
    level = int(options.get("community_level", 2))
    communities = await project.require("communities")
    reports = await project.require("community_reports")
    covariates = await project.table("covariates", optional=True)
    engine = get_local_search_engine(
        config=config,
        reports=read_indexer_reports(reports, communities, level),
        text_units=read_indexer_text_units(await project.require("text_units")),
        entities=read_indexer_entities(await project.require("entities"), communities, level),
        relationships=read_indexer_relationships(await project.require("relationships")),
        covariates={
            "claims": read_indexer_covariates(covariates) if covariates is not None else []
        },
        description_embedding_store=in_memory(project.vector_store(entity_description_embedding)),
        response_type=options.get("response_type", "Single Paragraph"),
        system_prompt=project.prompt(config.local_search.prompt, "local_search.prompt"),
    )
    _gated(engine, config.local_search)
    meter_model(engine, config.local_search.completion_model_id)
    return OffLoopSearch(engine)


async def build_basic(project: Project, options: dict[str, Any]) -> SearchEngine:
    """Vector search over text units, answered by `AnsweringBasicSearch`."""
    from graphrag.config.embeddings import text_unit_text_embedding
    from graphrag.query.factory import get_basic_search_engine
    from graphrag.query.indexer_adapters import read_indexer_text_units

    config = configured(project, options, "basic_search")
    upstream = _gated(
        get_basic_search_engine(
            text_units=read_indexer_text_units(await project.require("text_units")),
            text_unit_embeddings=in_memory(project.vector_store(text_unit_text_embedding)),
            config=config,
            response_type=options.get("response_type", "Single Paragraph"),
            system_prompt=project.prompt(config.basic_search.prompt, "basic_search.prompt"),
        ),
        config.basic_search,
    )
    engine = AnsweringBasicSearch(
        model=upstream.model,
        context_builder=TextUnitContext(upstream.context_builder),
        tokenizer=upstream.tokenizer,
        system_prompt=upstream.system_prompt,
        response_type=upstream.response_type,
        model_params=upstream.model_params,
        context_builder_params=upstream.context_builder_params,
    )
    meter_model(engine, config.basic_search.completion_model_id)
    return OffLoopSearch(engine)


async def build_tog(project: Project, options: dict[str, Any]) -> SearchEngine:
    """Think-on-Graph beam search over the entity/relationship graph."""
    from graphrag.config.embeddings import entity_description_embedding

    from gtog.tog._factory import get_tog_search_engine
    from gtog.tog._settings import load_tog_settings

    overrides = dict(options.get("tog_search") or {})
    if options.get("response_type"):
        overrides.setdefault("response_type", options["response_type"])
    settings = load_tog_settings(project.root, overrides or None)
    try:
        store = in_memory(project.vector_store(entity_description_embedding))
    except Exception:  # linking works without it (titles, then no embedding fallback)
        logging.getLogger(__name__.replace("._", ".")).warning(
            "%s: no entity-description embedding store; ToG links by titles only",
            project.root,
            exc_info=True,
        )
        store = None
    units = None
    if settings.text_guided:  # read in a worker thread: the event loop never waits on disk
        units = await asyncio.to_thread(_text_unit_store, project)
    return get_tog_search_engine(
        config=project.config,
        entities=await project.require("entities"),
        relationships=await project.require("relationships"),
        text_units=await project.table("text_units", optional=True),
        description_embedding_store=store,
        settings=settings,
        root=project.root,
        text_unit_embedding_store=units,
    )


def _text_unit_store(project: Project) -> Any:
    """The index's text-unit vectors (in memory when small), or None: ToG's `text_guided`
    then ranks by entity descriptions (see `gtog.tog._ranking`)."""
    from graphrag.config.embeddings import text_unit_text_embedding

    try:
        return in_memory(project.vector_store(text_unit_text_embedding))
    except Exception as exc:
        logging.getLogger(__name__.replace("._", ".")).warning(
            "%s: no text-unit embedding store (%s); text-guided ToG ranks by entity descriptions",
            project.root,
            exc,
            exc_info=not isinstance(exc, InputError),
        )
        return None


async def build_global(project: Project, options: dict[str, Any]) -> SearchEngine:
    """graphrag global search: map over community reports, then reduce (stages metered apart).

    `options["dynamic_community_selection"]` rates communities with the model first
    (stage `selection`) instead of taking every report at `community_level`.
    """
    from graphrag.query.factory import get_global_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_communities,
        read_indexer_entities,
        read_indexer_reports,
    )

    config = configured(project, options, "global_search")
    level = options.get("community_level", 2)
    dynamic = bool(options.get("dynamic_community_selection", False))
    communities = await project.require("communities")
    reports = await project.require("community_reports")
    gs = config.global_search
    engine = get_global_search_engine(
        config,
        reports=read_indexer_reports(
            reports, communities, level, dynamic_community_selection=dynamic
        ),
        entities=read_indexer_entities(await project.require("entities"), communities, level),
        communities=read_indexer_communities(communities, reports),
        response_type=options.get("response_type", "Single Paragraph"),
        dynamic_community_selection=dynamic,
        map_system_prompt=project.prompt(gs.map_prompt, "global_search.map_prompt"),
        reduce_system_prompt=project.prompt(gs.reduce_prompt, "global_search.reduce_prompt"),
        general_knowledge_inclusion_prompt=project.prompt(
            gs.knowledge_prompt, "global_search.knowledge_prompt"
        ),
    )
    _gated(engine, gs)
    model_id = gs.completion_model_id
    inner, model_config = engine.model, model_config_of(engine.model)
    engine.model = MeteredCompletion(inner, model_config, model_id, "reduce")

    def in_map_stage(batch: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def map_batch(*args: Any, **kwargs: Any) -> Any:
            with stage("map"):  # each batch runs in a task of its own
                return await batch(*args, **kwargs)

        return map_batch

    wrap_global_map_batches(engine, in_map_stage)
    selection = getattr(engine.context_builder, "dynamic_community_selection", None)
    if selection is not None:
        selection.model = MeteredCompletion(inner, model_config, model_id, "selection")
        return engine  # rating communities calls the model: the context stays on the loop
    return OffLoopSearch(engine)


async def build_drift(project: Project, options: dict[str, Any]) -> SearchEngine:
    """graphrag DRIFT search: primer, local actions, reduce (stages metered apart).

    Its synchronous embedding calls stay off the event loop: the primer's expanded query
    is embedded asynchronously as soon as the model returns it, and each local action's
    context is built in a worker thread.
    """
    from graphrag.config.embeddings import (
        community_full_content_embedding,
        entity_description_embedding,
    )
    from graphrag.query.factory import get_drift_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_report_embeddings,
        read_indexer_reports,
        read_indexer_text_units,
    )

    config = configured(project, options, "drift_search")
    level = int(options.get("community_level", 2))
    communities = await project.require("communities")
    reports = read_indexer_reports(await project.require("community_reports"), communities, level)
    read_indexer_report_embeddings(
        reports, in_memory(project.vector_store(community_full_content_embedding))
    )
    ds = config.drift_search
    engine = get_drift_search_engine(
        config=config,
        reports=reports,
        text_units=read_indexer_text_units(await project.require("text_units")),
        entities=read_indexer_entities(await project.require("entities"), communities, level),
        relationships=read_indexer_relationships(await project.require("relationships")),
        description_embedding_store=in_memory(project.vector_store(entity_description_embedding)),
        local_system_prompt=project.prompt(ds.prompt, "drift_search.prompt"),
        reduce_system_prompt=project.prompt(ds.reduce_prompt, "drift_search.reduce_prompt"),
        response_type=options.get("response_type", "Single Paragraph"),
    )
    return FreshDrift(_gated(engine, ds), ds.completion_model_id)
