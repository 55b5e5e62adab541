"""Context building off the event loop, and per-question graph attributes.

graphrag's context builders are synchronous (the query embedding, the vector search, the
tables) and run inside the async `search`, stalling every other question on the event
loop. `OffLoopSearch` fetches the query's embedding asynchronously (the same graphrag_llm
model, through its `embedding_async`; `QueryEmbedder` hands it to the builder), builds the
rest of the context (CPU only) in a worker thread, and hands it to the engine's own
`search` through `PrebuiltContext` (keyed by a context variable).

graphrag's local context builder writes `attributes["links"]` into the shared relationship
objects; `QuestionAttributes` keeps those writes per question, so a context depends on its
question only.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import time
from array import array
from collections.abc import Iterator, MutableMapping
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from graphrag.query.structured_search.base import SearchResult
from graphrag_llm.tokenizer import Tokenizer

from gtog._internals import model_config_of
from gtog.llm._ahead import take_ahead
from gtog.llm._usage import current_meter, meter_embedding

__all__ = [
    "OffLoopSearch",
    "PrebuiltContext",
    "PrefetchedOnly",
    "QueryEmbedder",
    "QuestionAttributes",
    "RememberedCounts",
    "UncountedUnderMeter",
    "build_prefetched",
    "context_threads",
    "count_embedding",
    "portable_builder",
    "prefetched_embedding",
    "use_context_process",
]


_prebuilt: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "gtog_prebuilt_context", default=None
)
_executor: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "gtog_context_executor", default=None
)


_embedded: contextvars.ContextVar[tuple[str, Any] | None] = contextvars.ContextVar(
    "gtog_query_embedding", default=None
)
_process: contextvars.ContextVar[Any] = contextvars.ContextVar("gtog_context_process", default=None)


@contextmanager
def context_threads(size: int = 1) -> Iterator[Executor]:
    """Build search contexts in `size` worker threads (for tasks started inside the block).

    Building a context is CPU work under Python's interpreter lock once the query's
    embedding is fetched: one thread builds them in turn, each at full speed, where many
    would share the lock and all finish late.
    """
    pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="gtog-context")
    token = _executor.set(pool)
    try:
        yield pool
    finally:
        _executor.reset(token)
        pool.shutdown(wait=False, cancel_futures=True)


@contextmanager
def use_context_process(process: Any) -> Iterator[None]:
    """Build search contexts in `process` (a `ContextProcess`) for tasks started inside
    the block, where it can (else in the context threads, as without it)."""
    token = _process.set(process)
    try:
        yield
    finally:
        _process.reset(token)


_overlay: contextvars.ContextVar[dict[int, dict[str, Any]] | None] = contextvars.ContextVar(
    "gtog_question_attributes", default=None
)


class QuestionAttributes(MutableMapping[str, Any]):
    """A graph object's `attributes` whose writes during a question stay with that question.

    Reads see the indexed attributes plus the current question's writes; outside a
    question (no overlay set) it is a plain shared dict.
    """

    def __init__(self, base: dict[str, Any] | None) -> None:
        self._base = dict(base or {})

    def _mine(self, create: bool = False) -> dict[str, Any] | None:
        overlay = _overlay.get()
        if overlay is None:
            return None
        if create:
            return overlay.setdefault(id(self), {})
        return overlay.get(id(self))

    def __getitem__(self, key: str) -> Any:
        mine = self._mine()
        if mine is not None and key in mine:
            return mine[key]
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        mine = self._mine(create=True)
        (self._base if mine is None else mine)[key] = value

    def __delitem__(self, key: str) -> None:
        mine = self._mine()
        if mine is not None and key in mine:
            del mine[key]
        else:
            del self._base[key]

    def __iter__(self) -> Iterator[str]:
        mine = self._mine() or {}
        yield from self._base
        yield from (k for k in mine if k not in self._base)

    def __len__(self) -> int:
        mine = self._mine() or {}
        return len(self._base) + sum(1 for k in mine if k not in self._base)


class RememberedCounts(Tokenizer):
    """A context builder's tokenizer that encodes and counts each text once.

    graphrag's local context builder adds entities one at a time and, for each, counts the
    tokens of every row of its tables again (55 encodings a question on the example index,
    a fifth of its CPU); basic search's builder counts each text unit it retrieves, and
    builds on the event loop once all of a question's are counted (`counted`). A
    text's tokens do not change, so they are kept: counts for up to `limit` texts, tokens
    (as a compact array) for up to `limit // 10`; past a limit, what was kept is dropped
    and kept anew. (tiktoken holds Python's lock while it encodes: a text encoded again in
    the context thread is that much less lock time taken from the event loop.)
    """

    def __init__(self, inner: Tokenizer, limit: int = 50_000) -> None:
        self.inner = inner
        self._limit = limit
        self._counts: dict[str, int] = {}
        self._tokens: dict[str, array[int]] = {}

    def encode(self, text: str) -> list[int]:
        """The wrapped tokenizer's tokens of `text` (encoded by it the first time)."""
        kept = self._tokens.get(text)
        if kept is not None:
            return kept.tolist()
        tokens = self.inner.encode(text)
        if len(self._tokens) >= max(1, self._limit // 10):
            self._tokens = {}
        self._tokens[text] = array("q", tokens)
        return tokens

    def decode(self, tokens: list[int]) -> str:
        """The wrapped tokenizer's text of `tokens`."""
        return self.inner.decode(tokens)

    def counted(self, text: str) -> int | None:
        """The tokens in `text` if counted before (`num_tokens`), else None (no counting)."""
        return self._counts.get(text)

    def num_tokens(self, text: str) -> int:
        """The tokens in `text` (counted by the wrapped tokenizer the first time)."""
        count = self._counts.get(text)
        if count is None:
            count = self.inner.num_tokens(text)
            if len(self._counts) >= self._limit:
                self._counts = {}
            self._counts[text] = count
        return count


class UncountedUnderMeter(Tokenizer):
    """A local or basic search engine's own tokenizer, which it uses only to estimate its
    result's tokens once the answer is in (`len(tokenizer.encode(prompt))`, tiktoken over
    the whole prompt on the event loop: 1-2 ms a question on the example index, more for
    a full context window).

    Under a meter (`run_search`) those estimates are replaced by the calls' counted usage,
    so they are not made: `encode` gives no tokens. Outside one, it is the wrapped
    tokenizer. (The context builder has a tokenizer of its own, which always counts.)
    """

    def __init__(self, inner: Tokenizer) -> None:
        self.inner = inner

    def encode(self, text: str) -> list[int]:
        """No tokens under a meter; else the wrapped tokenizer's tokens of `text`."""
        return [] if current_meter() is not None else self.inner.encode(text)

    def decode(self, tokens: list[int]) -> str:
        """The wrapped tokenizer's text of `tokens`."""
        return self.inner.decode(tokens)


class PrebuiltContext:
    """A context builder that returns the context prebuilt for the current question.

    Wraps graphrag's builder; without a prebuilt context it builds one as usual.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def build_context(self, *args: Any, **kwargs: Any) -> Any:
        """The prebuilt context, else the wrapped builder's (awaitable if the builder's is)."""
        ready = _prebuilt.get()
        if ready is None:
            return self.inner.build_context(*args, **kwargs)
        if inspect.iscoroutinefunction(self.inner.build_context):
            return _ready(ready)
        return ready

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _ready(value: Any) -> Any:
    return value


def prefetched_embedding(text: str, response: Any) -> None:
    """Hand `response` to a `QueryEmbedder` asked for `input=[text]` in this task."""
    _embedded.set((text, response))


class QueryEmbedder:
    """A context builder's embedding model that answers the current question's query
    with the embedding fetched for it beforehand (other texts: the model itself)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def embedding(self, **kwargs: Any) -> Any:
        """The prefetched response for `input=[query]`, else the model's own call."""
        ready = _prefetched(kwargs)
        if ready is not None:
            return ready
        response = None
        if set(kwargs) == {"input"}:
            response = take_ahead(model_config_of(self.inner), kwargs["input"])
        if response is None:
            response = self.inner.embedding(**kwargs)
        count_embedding(self.inner, response, kwargs.get("input"))
        return response

    async def embed_async(self, text: str) -> Any:
        """Embed one text with the model's async call (or take the run's preflight
        embedding of it), counted in the current meter."""
        response = take_ahead(model_config_of(self.inner), [text])
        if response is None:
            response = await self.inner.embedding_async(input=[text])
        count_embedding(self.inner, response, [text])
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class OffLoopSearch:
    """An engine whose synchronous context building stays off the event loop.

    `search` fetches the query's embedding asynchronously (when the builder has a
    `text_embedder`), builds the context in the run's context process
    (`use_context_process`) or else a worker thread (`context_threads`' pool, else the
    loop's default executor), then runs the engine's own `search`, whose builder hands
    that context back.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._builder = engine.context_builder
        engine.context_builder = PrebuiltContext(self._builder)
        tokenizer = getattr(self._builder, "tokenizer", None)
        if isinstance(tokenizer, Tokenizer) and not isinstance(tokenizer, RememberedCounts):
            self._builder.tokenizer = RememberedCounts(tokenizer)
        own = getattr(engine, "tokenizer", None)
        if _estimates_only(engine) and isinstance(own, Tokenizer):
            engine.tokenizer = UncountedUnderMeter(own)
        embedder = getattr(self._builder, "text_embedder", None)
        self._embedder = QueryEmbedder(embedder) if embedder is not None else None
        if self._embedder is not None:
            self._builder.text_embedder = self._embedder
        relationships = getattr(self._builder, "relationships", None)
        if isinstance(relationships, dict):
            for rel in relationships.values():
                rel.attributes = QuestionAttributes(rel.attributes)

    async def search(self, query: str, **kwargs: Any) -> SearchResult:
        """Build the context (on the loop when the builder's `quick_context` can, which
        waits on nothing; else in the context process where it can, else in a thread), then
        search with it.

        A builder whose `build_context` is a coroutine (and calls no model) is run to its
        end in the thread.
        """
        params = {**kwargs, **self.engine.context_builder_params}
        response = None
        if self._embedder is not None and query:
            response = await self._embedder.embed_async(query)
        quick = getattr(self._builder, "quick_context", None)
        context = None
        if quick is not None and response is not None:  # (None: it would wait on something)
            context = quick(query, response, params)
        process = _process.get()
        if context is None and process is not None:  # (None when it cannot: then as without)
            context = await process.build(self._builder, query, response, params)
        if context is None:
            loop = asyncio.get_running_loop()
            question = contextvars.copy_context()
            context, cpu = await loop.run_in_executor(
                _executor.get(), question.run, _timed, self._builder, query, response, params
            )
            if process is not None:  # (how long its builds take decides where they go)
                process.observe(self._builder, cpu)
        token = _prebuilt.set(context)
        try:
            return await self.engine.search(query, **kwargs)
        finally:
            _prebuilt.reset(token)


def _estimates_only(engine: Any) -> bool:
    """Whether `engine` uses its own tokenizer only for its result's token estimates
    (graphrag's local and basic search; global search also trims its reduce step's data
    with it)."""
    from graphrag.query.structured_search.basic_search.search import BasicSearch
    from graphrag.query.structured_search.local_search.search import LocalSearch

    return isinstance(engine, LocalSearch | BasicSearch) and not isinstance(
        engine.tokenizer, UncountedUnderMeter
    )


def build_prefetched(builder: Any, query: str, response: Any, params: dict[str, Any]) -> Any:
    """`builder`'s context of `query` (blocking), its embedding `response` fetched already
    (None: not needed), with this question's own graph attributes; run it in a copy of the
    question's context (`contextvars.copy_context().run`), in a worker thread or the
    context process."""
    _overlay.set({})
    if response is not None:
        _embedded.set((query, response))
    build = functools.partial(
        builder.build_context, query=query, conversation_history=None, **params
    )
    if inspect.iscoroutinefunction(builder.build_context):
        return _run_to_end(build)
    return build()


def _timed(builder: Any, query: str, response: Any, params: dict[str, Any]) -> tuple[Any, float]:
    """`build_prefetched`'s context, and the CPU seconds this thread spent on it."""
    began = time.thread_time()
    context = build_prefetched(builder, query, response, params)
    return context, time.thread_time() - began


class PrefetchedOnly:
    """A context builder's embedding model where no model is (the context process): the
    query's embedding, fetched beforehand, and nothing else."""

    def embedding(self, **kwargs: Any) -> Any:
        """The prefetched response for `input=[query]`."""
        ready = _prefetched(kwargs)
        if ready is not None:
            return ready
        raise RuntimeError("the context process embeds no text but the question's")


def _prefetched(kwargs: dict[str, Any]) -> Any:
    """The response fetched for this question's query, when `kwargs` ask for exactly it."""
    ready = _embedded.get()
    return ready[1] if ready is not None and kwargs == {"input": [ready[0]]} else None


def portable_builder(builder: Any) -> bytes:
    """`builder` pickled for the context process, its embedding model a `PrefetchedOnly`
    (raises when it holds what cannot be pickled: a vector store's connection, say)."""
    import copy
    import pickle

    portable = copy.copy(builder)
    if getattr(portable, "text_embedder", None) is not None:
        portable.text_embedder = PrefetchedOnly()
    return pickle.dumps(portable, protocol=pickle.HIGHEST_PROTOCOL)


def count_embedding(model: Any, response: Any, texts: Any) -> None:
    """Count a graphrag_llm embedding request in the current question's meter."""
    config = model_config_of(model)
    if config is None:
        return
    listed = [texts] if isinstance(texts, str) else [str(t) for t in texts or []]
    meter_embedding(response, config, listed, getattr(model, "tokenizer", None))


def _run_to_end(build: Any) -> Any:
    """Run an async context build that makes no model call, in this (worker) thread."""
    return asyncio.run(build())
