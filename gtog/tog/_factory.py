"""Build a `ToGSearch` from a loaded graphrag config and index tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from graphrag.config.models.graph_rag_config import GraphRagConfig
from graphrag.query.indexer_adapters import (
    read_indexer_relationships,
    read_indexer_text_units,
)
from graphrag.query.input.loaders.dfs import read_entities
from graphrag_vectors import VectorStore

from gtog.llm._models import chat_model_from_config, embedding_model_from_config
from gtog.tog._search import ToGSearch
from gtog.tog._settings import ToGSettings, load_tog_settings
from gtog.tog._templates import load_prompts

__all__ = ["get_tog_search_engine"]


def get_tog_search_engine(
    config: GraphRagConfig,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    text_units: pd.DataFrame | None,
    description_embedding_store: VectorStore | None,
    settings: ToGSettings | None = None,
    root: Path | None = None,
    text_unit_embedding_store: VectorStore | None = None,
) -> ToGSearch:
    """A ToG engine for one index (reusable across concurrent queries).

    `settings` default to the `tog_search` block of `root`'s settings.yaml (or the
    built-in defaults without `root`); prompt paths are relative to `root`. The models
    default to `local_search`'s completion and embedding models. The text-unit store
    (graphrag's `text_unit_text` embeddings) is used by `text_guided` only.
    """
    if settings is None:
        settings = load_tog_settings(root) if root is not None else ToGSettings()
    model = chat_model_from_config(
        config, settings.completion_model_id or config.local_search.completion_model_id
    )
    embedder = None
    if (
        description_embedding_store is not None
        or (settings.graded and text_unit_embedding_store is not None)
        or settings.prune_strategy == "semantic"
    ):
        embedder = embedding_model_from_config(
            config, settings.embedding_model_id or config.local_search.embedding_model_id
        )
    return ToGSearch(
        model=model,
        entities=read_entities(
            entities, community_col=None, name_embedding_col=None, description_embedding_col=None
        ),
        relationships=read_indexer_relationships(relationships),
        text_units=read_indexer_text_units(text_units) if text_units is not None else None,
        description_embedding_store=description_embedding_store,
        text_embedder=embedder,
        settings=settings,
        prompts=load_prompts(settings, root),
        text_unit_embedding_store=text_unit_embedding_store,
    )
