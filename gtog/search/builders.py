"""graphrag's engines (local, basic) and ToG, built from a loaded project and metered.

`BasicSearch.search()` in graphrag 3.3 never awaits its completion and always answers "";
`AnsweringBasicSearch` overrides `search` to await it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from graphrag.query.structured_search.base import SearchResult
from graphrag.query.structured_search.basic_search.search import BasicSearch

from gtog.search.metering import meter_model
from gtog.search.offloop import OffLoopSearch
from gtog.search.outcome import SearchEngine
from gtog.search.vectors import in_memory

if TYPE_CHECKING:
    from graphrag.query.context_builder.conversation_history import ConversationHistory

    from gtog.project import Project

__all__ = ["AnsweringBasicSearch", "build_basic", "build_local", "build_tog"]


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

    level = int(options.get("community_level", 2))
    communities = await project.require("communities")
    reports = await project.require("community_reports")
    covariates = await project.table("covariates", optional=True)
    engine = get_local_search_engine(
        config=project.config,
        reports=read_indexer_reports(reports, communities, level),
        text_units=read_indexer_text_units(await project.require("text_units")),
        entities=read_indexer_entities(await project.require("entities"), communities, level),
        relationships=read_indexer_relationships(await project.require("relationships")),
        covariates={
            "claims": read_indexer_covariates(covariates) if covariates is not None else []
        },
        description_embedding_store=in_memory(project.vector_store(entity_description_embedding)),
        response_type=options.get("response_type", "Single Paragraph"),
        system_prompt=project.prompt(project.config.local_search.prompt),
    )
    meter_model(engine, project.config.local_search.completion_model_id)
    return OffLoopSearch(engine)


async def build_basic(project: Project, options: dict[str, Any]) -> SearchEngine:
    """Vector search over text units, answered by `AnsweringBasicSearch`."""
    from graphrag.config.embeddings import text_unit_text_embedding
    from graphrag.query.factory import get_basic_search_engine
    from graphrag.query.indexer_adapters import read_indexer_text_units

    upstream = get_basic_search_engine(
        text_units=read_indexer_text_units(await project.require("text_units")),
        text_unit_embeddings=in_memory(project.vector_store(text_unit_text_embedding)),
        config=project.config,
        response_type=options.get("response_type", "Single Paragraph"),
        system_prompt=project.prompt(project.config.basic_search.prompt),
    )
    engine = AnsweringBasicSearch(
        model=upstream.model,
        context_builder=upstream.context_builder,
        tokenizer=upstream.tokenizer,
        system_prompt=upstream.system_prompt,
        response_type=upstream.response_type,
        model_params=upstream.model_params,
        context_builder_params=upstream.context_builder_params,
    )
    meter_model(engine, project.config.basic_search.completion_model_id)
    return OffLoopSearch(engine)


async def build_tog(project: Project, options: dict[str, Any]) -> SearchEngine:
    """Think-on-Graph beam search over the entity/relationship graph."""
    from graphrag.config.embeddings import entity_description_embedding

    from gtog.tog.factory import get_tog_search_engine
    from gtog.tog.settings import load_tog_settings

    overrides = dict(options.get("tog_search") or {})
    if options.get("response_type"):
        overrides.setdefault("response_type", options["response_type"])
    settings = load_tog_settings(project.root, overrides or None)
    try:
        store = in_memory(project.vector_store(entity_description_embedding))
    except Exception:  # linking works without it (titles, then no embedding fallback)
        logging.getLogger(__name__).warning(
            "%s: no entity-description embedding store; ToG links by titles only",
            project.root,
            exc_info=True,
        )
        store = None
    return get_tog_search_engine(
        config=project.config,
        entities=await project.require("entities"),
        relationships=await project.require("relationships"),
        text_units=await project.table("text_units", optional=True),
        description_embedding_store=store,
        settings=settings,
        root=project.root,
    )
