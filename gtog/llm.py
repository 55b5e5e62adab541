"""Chat and embedding models from a project's settings, through graphrag_llm.

Every LLM call gtog makes goes through here, so the caller gets the model's retries,
rate limits and cache from `settings.yaml`, plus the usage of that one call
(server-reported tokens where the server sends them, tokenizer counts otherwise).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphrag_llm.completion import create_completion
from graphrag_llm.embedding import create_embedding

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import LLMEmbedding

__all__ = [
    "ChatModel",
    "ChatReply",
    "EmbeddingModel",
    "UsageTally",
    "chat_model_from_config",
    "embedding_model_from_config",
    "model_cost_usd",
    "reply_of",
]

Messages = str | list[dict[str, Any]]

_OPENAI_WIRE = {"openai", "azure", "hosted_vllm", "lm_studio", "openai_like", "custom_openai"}
"""Providers whose requests are OpenAI chat-completions bodies (extra_body is merged in)."""


@dataclass(frozen=True)
class ChatReply:
    """One completion: its text and what it cost."""

    text: str
    prompt_tokens: int
    output_tokens: int
    usage_reported: bool
    """True when the token counts came from the server, False when estimated locally."""
    cost_usd: float | None


@dataclass
class UsageTally:
    """Calls and tokens split by category (e.g. a search stage or a judge metric)."""

    llm_calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    prompt_tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    output_tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cost_usd: float | None = 0.0

    def add(self, category: str, reply: ChatReply) -> None:
        """Count one reply under `category`."""
        self.llm_calls[category] += 1
        self.prompt_tokens[category] += reply.prompt_tokens
        self.output_tokens[category] += reply.output_tokens
        if reply.cost_usd is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += reply.cost_usd

    @property
    def total_calls(self) -> int:
        """All calls over every category."""
        return sum(self.llm_calls.values())

    @property
    def total_prompt_tokens(self) -> int:
        """All prompt tokens over every category."""
        return sum(self.prompt_tokens.values())

    @property
    def total_output_tokens(self) -> int:
        """All output tokens over every category."""
        return sum(self.output_tokens.values())


def model_cost_usd(config: ModelConfig, prompt_tokens: int, output_tokens: int) -> float | None:
    """Price of one call from LiteLLM's cost map; None when the model has no known price."""
    from graphrag_llm.model_cost_registry import model_cost_registry

    costs = model_cost_registry.get_model_costs(f"{config.model_provider}/{config.model}")
    if costs is None and config.model_provider in ("openai", "azure"):
        costs = model_cost_registry.get_model_costs(config.model)
    if not costs:
        return None
    try:
        return prompt_tokens * float(costs["input_cost_per_token"]) + output_tokens * float(
            costs["output_cost_per_token"]
        )
    except (KeyError, TypeError, ValueError):
        return None


class ChatModel:
    """A graphrag_llm completion model that reports the usage of every call."""

    def __init__(self, completion: LLMCompletion, config: ModelConfig, model_id: str) -> None:
        self.completion = completion
        self.config = config
        self.model_id = model_id

    @property
    def name(self) -> str:
        """`provider/model`, safe to log (never includes credentials)."""
        return f"{self.config.model_provider}/{self.config.model}"

    async def chat(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        **kwargs: Any,
    ) -> ChatReply:
        """Send one non-streamed completion and return its text and usage.

        `json_mode` asks for `{"type": "json_object"}` output where the provider supports it.
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        args: dict[str, Any] = {**self.config.call_args, **kwargs}
        if temperature is not None:
            args["temperature"] = temperature
        if max_tokens is not None:
            args["max_completion_tokens"] = max_tokens
        if json_mode:
            if self.config.model_provider in _OPENAI_WIRE:
                # graphrag_llm's `response_format_json_object` flag is lost on the async path
                # (it only applies when no `response_format` key is present, and one always
                # is), so send the OpenAI field in the request body ourselves.
                extra = dict(args.get("extra_body") or {})
                extra.setdefault("response_format", {"type": "json_object"})
                args["extra_body"] = extra
            else:
                args["response_format_json_object"] = True
        response = await self.completion.completion_async(messages=messages, **args)
        return reply_of(response, messages, self)

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` by the model's tokenizer."""
        return len(self.completion.tokenizer.encode(text))


def reply_of(response: Any, messages: list[dict[str, Any]], model: ChatModel) -> ChatReply:
    """Text and usage of a non-streamed response (tokenizer counts when the server sent none)."""
    text = response.content
    usage = getattr(response, "usage", None)
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        prompt_tokens = int(usage.prompt_tokens or 0)
        output_tokens = int(usage.completion_tokens or 0)
        reported = True
    else:
        prompt_text = "\n".join(str(m.get("content", "")) for m in messages)
        prompt_tokens = model.count_tokens(prompt_text)
        output_tokens = model.count_tokens(text)
        reported = False
    return ChatReply(
        text=text,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        usage_reported=reported,
        cost_usd=model_cost_usd(model.config, prompt_tokens, output_tokens),
    )


class EmbeddingModel:
    """A graphrag_llm embedding model with an async batch call."""

    def __init__(self, embedding: LLMEmbedding, config: ModelConfig, model_id: str) -> None:
        self.embedding = embedding
        self.config = config
        self.model_id = model_id

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed `texts` in one request (order preserved)."""
        if not texts:
            return []
        response = await self.embedding.embedding_async(input=texts)
        data = sorted(response.data, key=lambda d: d.index)
        return [list(d.embedding) for d in data]

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Blocking variant of `embed`."""
        return asyncio.run(self.embed(texts))


def chat_model_from_config(config: GraphRagConfig, model_id: str) -> ChatModel:
    """The completion model `model_id` of a loaded graphrag config."""
    model_config = config.get_completion_model_config(model_id)
    return ChatModel(create_completion(model_config), model_config, model_id)


def embedding_model_from_config(config: GraphRagConfig, model_id: str) -> EmbeddingModel:
    """The embedding model `model_id` of a loaded graphrag config."""
    model_config = config.get_embedding_model_config(model_id)
    return EmbeddingModel(create_embedding(model_config), model_config, model_id)
