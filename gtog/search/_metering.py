"""Metered models: each call's real usage counted in the current question's meter.

graphrag streams the final answer and then *estimates* tokens with a tokenizer (prompt =
system prompt only). `MeteredCompletion` wraps an engine's model, turns each streamed call
into one non-streamed call, and counts the server-reported usage of every call in the
current question's `UsageMeter` (a context variable, so one engine serves many questions
concurrently). `LocalSearch.search()` logs and swallows every exception: `watch_swallowed_errors`
hands those logged exceptions to the current meter, so `run_search` can fail the search.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from gtog._internals import model_config_of
from gtog.llm._models import ChatModel
from gtog.llm._usage import current_meter
from gtog.search._offloop import QueryEmbedder, prefetched_embedding

if TYPE_CHECKING:
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.config import ModelConfig

__all__ = [
    "MeteredCompletion",
    "PrefetchingCompletion",
    "meter_model",
    "stage",
    "watch_swallowed_errors",
]

_stage: contextvars.ContextVar[str | None] = contextvars.ContextVar("gtog_stage", default=None)


class _SwallowedErrors(logging.Handler):
    """Hands exceptions that graphrag's engines log (and swallow) to the current meter."""

    def emit(self, record: logging.LogRecord) -> None:
        meter = current_meter()
        if meter is not None and record.exc_info and record.exc_info[1] is not None:
            meter.errors.append(record.exc_info[1])


_SWALLOW_LOGGER = "graphrag.query.structured_search"


def watch_swallowed_errors() -> None:
    logger = logging.getLogger(_SWALLOW_LOGGER)
    if not any(isinstance(h, _SwallowedErrors) for h in logger.handlers):
        logger.addHandler(_SwallowedErrors(level=logging.ERROR))


class MeteredCompletion:
    """An `LLMCompletion` stand-in that counts each call's real usage in the current meter."""

    def __init__(
        self,
        inner: LLMCompletion,
        config: ModelConfig,
        model_id: str,
        category: str = "response",
    ) -> None:
        self._chat = ChatModel(inner, config, model_id=model_id)
        self._inner = inner
        self._category = category
        self.model_config = config
        """The `ModelConfig` of the wrapped model (graphrag_llm keeps its own private)."""

    @property
    def tokenizer(self) -> Any:
        """The wrapped model's tokenizer."""
        return self._inner.tokenizer

    @property
    def metrics_store(self) -> Any:
        """The wrapped model's metrics store."""
        return self._inner.metrics_store

    async def completion_async(self, **kwargs: Any) -> Any:
        """One non-streamed call; a stream is replayed from its full text."""
        stream = bool(kwargs.pop("stream", False))
        kwargs.pop("stream_options", None)
        messages = kwargs.pop("messages")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        category = _stage.get() or self._category
        response, reply = await self._chat.complete(messages, category=category, **kwargs)
        await self._after(reply.text)
        return _replay(reply.text) if stream else response

    async def _after(self, text: str) -> None:
        """Hook run after each reply (nothing here)."""

    def completion(self, **kwargs: Any) -> Any:
        """Synchronous calls are not metered; engines here only call `completion_async`."""
        return self._inner.completion(**kwargs)


class PrefetchingCompletion(MeteredCompletion):
    """A metered model whose reply is embedded at once, asynchronously, for the code after it.

    graphrag's DRIFT primer embeds the model's expanded query with a synchronous call;
    with the embedding fetched here, its `QueryEmbedder` answers that call at once.
    """

    def __init__(
        self,
        inner: LLMCompletion,
        config: ModelConfig,
        model_id: str,
        category: str,
        embedder: QueryEmbedder,
    ) -> None:
        super().__init__(inner, config, model_id, category)
        self._embedder = embedder

    async def _after(self, text: str) -> None:
        if text:
            response = await self._embedder.embed_async(text)
            prefetched_embedding(text, response)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the model calls made inside the block (in this task) under `name`."""
    token = _stage.set(name)
    try:
        yield
    finally:
        _stage.reset(token)


async def _replay(text: str) -> AsyncIterator[Any]:
    yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=text))])


def meter_model(engine: Any, model_id: str) -> None:
    """Replace `engine.model` with its metered stand-in."""
    model_config = model_config_of(engine.model)
    if model_config is None:
        raise RuntimeError("cannot meter a model without its ModelConfig")
    engine.model = MeteredCompletion(engine.model, model_config, model_id)
