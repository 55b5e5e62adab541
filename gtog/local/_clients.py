"""gtog's graphrag_llm-based models pointed at a running local server."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gtog.llm._models import ChatModel, EmbeddingModel
    from gtog.local._lifecycle import LocalServerInfo

__all__ = ["local_chat_model", "local_embedding_model"]


def _config(info: LocalServerInfo, model: str):
    from graphrag_llm.config import ModelConfig

    return ModelConfig(
        model_provider="openai", model=model, api_base=info.base_url, api_key=info.api_key
    )


def local_chat_model(info: LocalServerInfo) -> ChatModel:
    """A `gtog.llm._models.ChatModel` for the local chat model."""
    from graphrag_llm.completion import create_completion

    from gtog.llm._models import ChatModel

    config = _config(info, info.chat_model)
    return ChatModel(create_completion(config), config, "local_chat_model")


def local_embedding_model(info: LocalServerInfo) -> EmbeddingModel:
    """A `gtog.llm._models.EmbeddingModel` for the local embedding model."""
    from graphrag_llm.embedding import create_embedding

    from gtog.llm._models import EmbeddingModel

    config = _config(info, info.embedding_model)
    return EmbeddingModel(create_embedding(config), config, "local_embedding_model")
