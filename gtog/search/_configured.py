"""A project's graphrag config with a method variant's overrides (pure, import-light).

Apart from gtog.search._builders (graphrag's query engines, which import LiteLLM) because a
run's spec needs every method's effective settings before it knows whether any search is
left to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from gtog._project import Project

__all__ = ["configured"]


def configured(project: Project, options: dict[str, Any], block: str) -> GraphRagConfig:
    """The project's graphrag config with `options[block]` overrides on that block (in memory)."""
    overrides = options.get(block) or {}
    config = project.config
    if not overrides:
        return config
    section = getattr(config, block).model_copy(update=overrides)
    return config.model_copy(update={block: section})
