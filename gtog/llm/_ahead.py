"""Embeddings fetched ahead of a run, each handed once to the search that asks for it.

`gtog eval`'s vector-size check embeds, before any question, the first question the run
will search with each embedding model. The search that then embeds that question with that
model gets this response instead of making the call again, so the check adds no call to the
run, and the call's usage is counted where it would have been: in that search's meter
(whoever takes the response counts it, as for a call of its own).

The responses live in a context variable the run sets (`embeddings_ahead`), so they never
outlive the run or reach another one in the same process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from gtog._hashing import stable_hash

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = ["EmbeddingsAhead", "embeddings_ahead", "model_identity", "take_ahead"]

_IDENTITY = ("type", "model_provider", "model", "api_base", "api_version")
_IDENTITY += ("azure_deployment_name", "call_args")


def model_identity(config: ModelConfig) -> str:
    """What decides an embedding model's vectors: provider, model, endpoint and call args
    (not its key, retries or rate limits)."""
    return stable_hash(config.model_dump(mode="json", include=set(_IDENTITY)))


class EmbeddingsAhead:
    """Embedding responses by (model identity, text), each taken at most once."""

    def __init__(self) -> None:
        self._responses: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()  # taken from the loop and from context threads

    def keep(self, config: ModelConfig, text: str, response: Any) -> None:
        """Keep `response`, the embedding of `[text]` by the model of `config`."""
        with self._lock:
            self._responses[(model_identity(config), text)] = response

    def take(self, config: ModelConfig, text: str) -> Any | None:
        """The kept response for `[text]` by this model, removed; None if there is none."""
        with self._lock:
            return self._responses.pop((model_identity(config), text), None)

    def __len__(self) -> int:
        return len(self._responses)


_ahead: ContextVar[EmbeddingsAhead | None] = ContextVar("gtog_embeddings_ahead", default=None)


@contextmanager
def embeddings_ahead(responses: EmbeddingsAhead | None) -> Iterator[None]:
    """Let the calls made inside the block (and the tasks they start) take `responses`."""
    token = _ahead.set(responses)
    try:
        yield
    finally:
        _ahead.reset(token)


def take_ahead(config: ModelConfig | None, texts: Any) -> Any | None:
    """The response fetched ahead for embedding `texts` (one text) with `config`'s model,
    if there is one; None otherwise (then make the call)."""
    ahead = _ahead.get()
    if ahead is None or config is None:
        return None
    listed = [texts] if isinstance(texts, str) else list(texts or [])
    if len(listed) != 1 or not isinstance(listed[0], str):
        return None
    return ahead.take(config, listed[0])
