"""`tog_search`: the ToG counterpart of `graphrag.api.local_search`, for notebooks and apps."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from graphrag.config.embeddings import entity_description_embedding, text_unit_text_embedding
from graphrag.config.models.graph_rag_config import GraphRagConfig
from graphrag.logger.standard_logging import init_loggers
from graphrag_vectors import VectorStore

from gtog.tog._factory import get_tog_search_engine
from gtog.tog._settings import ToGSettings, load_tog_settings

__all__ = ["tog_search"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before


def _open_store(config: GraphRagConfig, root: Path | None, name: str) -> VectorStore | None:
    """One of the project's embedding stores (through `Project.vector_store`), or None."""
    from gtog._project import Project

    try:
        return Project(root=Path(root or Path.cwd()), config=config).vector_store(name)
    except Exception:
        logger.warning("ToG: no %s embedding store", name, exc_info=True)
        return None


async def tog_search(
    config: GraphRagConfig,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    text_units: pd.DataFrame | None,
    query: str,
    *,
    description_embedding_store: VectorStore | None = None,
    text_unit_embedding_store: VectorStore | None = None,
    settings: ToGSettings | None = None,
    root: Path | None = None,
    verbose: bool = False,
) -> tuple[str, dict[str, pd.DataFrame]]:
    """Answer `query` with Think-on-Graph; return the response and the context tables.

    Without `description_embedding_store` the project's entity-description store is
    opened from `config.vector_store` (linking then works without it if that fails);
    with `text_guided`, likewise the text-unit store (the variant then falls back as
    documented in `gtog.tog._ranking`). The usage split is in `context_data["usage"]`
    (one row per stage of the variant).
    """
    init_loggers(config=config, verbose=verbose, filename="query.log")
    if settings is None:
        settings = load_tog_settings(root) if root is not None else ToGSettings()
    if description_embedding_store is None:
        description_embedding_store = _open_store(config, root, entity_description_embedding)
    if text_unit_embedding_store is None and settings.text_guided:
        text_unit_embedding_store = _open_store(config, root, text_unit_text_embedding)
    engine = get_tog_search_engine(
        config,
        entities,
        relationships,
        text_units,
        description_embedding_store,
        settings=settings,
        root=root,
        text_unit_embedding_store=text_unit_embedding_store,
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
