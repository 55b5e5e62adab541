"""`tog_search`: the ToG counterpart of `graphrag.api.local_search`, for notebooks and apps."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from graphrag.config.embeddings import entity_description_embedding
from graphrag.config.models.graph_rag_config import GraphRagConfig
from graphrag.logger.standard_logging import init_loggers
from graphrag.utils.api import get_embedding_store
from graphrag_vectors import VectorStore

from gtog.tog.factory import get_tog_search_engine
from gtog.tog.settings import ToGSettings

__all__ = ["tog_search"]

logger = logging.getLogger(__name__)


async def tog_search(
    config: GraphRagConfig,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    text_units: pd.DataFrame | None,
    query: str,
    *,
    description_embedding_store: VectorStore | None = None,
    settings: ToGSettings | None = None,
    root: Path | None = None,
    verbose: bool = False,
) -> tuple[str, dict[str, pd.DataFrame]]:
    """Answer `query` with Think-on-Graph; return the response and the context tables.

    Without `description_embedding_store` the project's entity-description store is
    opened from `config.vector_store` (linking then works without it if that fails).
    The usage split is in `context_data["usage"]` (one row per stage).
    """
    init_loggers(config=config, verbose=verbose, filename="query.log")
    if description_embedding_store is None:
        try:
            description_embedding_store = get_embedding_store(
                config.vector_store, entity_description_embedding
            )
        except Exception:
            logger.warning("ToG: no entity-description embedding store", exc_info=True)
    engine = get_tog_search_engine(
        config,
        entities,
        relationships,
        text_units,
        description_embedding_store,
        settings=settings,
        root=root,
    )
    result = await engine.search(query)
    context = dict(result.context_data) if isinstance(result.context_data, dict) else {}
    context["usage"] = pd.DataFrame(
        [
            {
                "stage": stage,
                "llm_calls": calls,
                "prompt_tokens": (result.prompt_tokens_categories or {}).get(stage, 0),
                "output_tokens": (result.output_tokens_categories or {}).get(stage, 0),
            }
            for stage, calls in (result.llm_calls_categories or {}).items()
        ],
        columns=["stage", "llm_calls", "prompt_tokens", "output_tokens"],
    )
    return str(result.response), context
