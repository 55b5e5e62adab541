"""Search methods: built once per index from a loaded project, each call metered.

graphrag's engines come from `graphrag.query.factory`. Three upstream behaviours are
corrected here, without copying graphrag code:

- Usage: graphrag streams the final answer and then *estimates* tokens with a tokenizer
  (prompt = system prompt only). `MeteredCompletion` wraps the engine's model, turns each
  streamed call into one non-streamed call, and counts the server-reported usage of every
  call in the current question's `UsageMeter` (a context variable, so one engine can
  serve many questions concurrently).
- Errors: `LocalSearch.search()` logs and swallows every exception (an LLM error, or a
  prompt with an unknown `{placeholder}` before any call) and answers "". `run_search`
  turns a recorded LLM error, an exception graphrag logged while swallowing it, or an
  empty answer without a successful completion into `SearchFailed`, which carries what
  the search spent before it failed.
- `BasicSearch.search()` in graphrag 3.3 never awaits its completion and always answers
  "". `AnsweringBasicSearch` overrides `search` to await it.
- Blocking: graphrag's context builders are synchronous (the query embedding, the vector
  search, the tables) and run inside the async `search`, stalling every other question on
  the event loop. `OffLoopSearch` fetches the query's embedding asynchronously (the same
  graphrag_llm model, through its `embedding_async`; `QueryEmbedder` hands it to the
  builder), builds the rest of the context (CPU only) in a worker thread, and hands it to
  the engine's own `search` through `PrebuiltContext` (keyed by a context variable).
- Shared state: graphrag's local context builder writes `attributes["links"]` into the
  shared relationship objects, so one question's context showed values left by earlier
  questions (and, built in threads, could race). `QuestionAttributes` keeps those writes
  per question, so a context depends on its question only.

Add a method by adding one entry to `METHODS`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd
from graphrag.query.structured_search.base import SearchResult
from graphrag.query.structured_search.basic_search.search import BasicSearch

from gtog.errors import InputError, describe_exception
from gtog.llm import ChatModel, UsageMeter, UsageTally, current_meter, fatal_reason, metering
from gtog.search.vectors import in_memory

if TYPE_CHECKING:
    from graphrag.query.context_builder.conversation_history import ConversationHistory
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.config import ModelConfig

    from gtog.project import Project

__all__ = [
    "METHODS",
    "AnsweringBasicSearch",
    "MeteredCompletion",
    "OffLoopSearch",
    "PrebuiltContext",
    "QueryEmbedder",
    "QuestionAttributes",
    "SearchEngine",
    "SearchFailed",
    "SearchOutcome",
    "build_engine",
    "context_threads",
    "retrieved_sources",
    "run_search",
]


class SearchEngine(Protocol):
    """Anything with graphrag's `search(query) -> SearchResult`."""

    async def search(self, query: str) -> SearchResult: ...


class SearchFailed(Exception):
    """A search raised, timed out, or its engine swallowed an error; `usage` is what it spent."""

    def __init__(self, message: str, usage: UsageTally, seconds: float) -> None:
        super().__init__(message)
        self.usage = usage
        self.seconds = seconds


@dataclass
class SearchOutcome:
    """A successful search: graphrag's result, the metered usage and the wall time."""

    result: SearchResult
    usage: UsageTally
    seconds: float


class _SwallowedErrors(logging.Handler):
    """Hands exceptions that graphrag's engines log (and swallow) to the current meter."""

    def emit(self, record: logging.LogRecord) -> None:
        meter = current_meter()
        if meter is not None and record.exc_info and record.exc_info[1] is not None:
            meter.errors.append(record.exc_info[1])


_SWALLOW_LOGGER = "graphrag.query.structured_search"


def _watch_swallowed_errors() -> None:
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
        self._model_config = config

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
        response, reply = await self._chat.complete(messages, category=self._category, **kwargs)
        return _replay(reply.text) if stream else response

    def completion(self, **kwargs: Any) -> Any:
        """Synchronous calls are not metered; engines here only call `completion_async`."""
        return self._inner.completion(**kwargs)


_prebuilt: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "gtog_prebuilt_context", default=None
)
_executor: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "gtog_context_executor", default=None
)


_embedded: contextvars.ContextVar[tuple[str, Any] | None] = contextvars.ContextVar(
    "gtog_query_embedding", default=None
)


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


class PrebuiltContext:
    """A context builder that returns the context prebuilt for the current question.

    Wraps graphrag's builder; without a prebuilt context it builds one as usual.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def build_context(self, *args: Any, **kwargs: Any) -> Any:
        """The prebuilt context, else the wrapped builder's."""
        ready = _prebuilt.get()
        return ready if ready is not None else self.inner.build_context(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class QueryEmbedder:
    """A context builder's embedding model that answers the current question's query
    with the embedding fetched for it beforehand (other texts: the model itself)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def embedding(self, **kwargs: Any) -> Any:
        """The prefetched response for `input=[query]`, else the model's own call."""
        ready = _embedded.get()
        if ready is not None and kwargs == {"input": [ready[0]]}:
            return ready[1]
        return self.inner.embedding(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class OffLoopSearch:
    """An engine whose synchronous context building stays off the event loop.

    `search` fetches the query's embedding asynchronously (when the builder has a
    `text_embedder`), builds the context in a worker thread (`context_threads`' pool, else
    the loop's default executor), then runs the engine's own `search`, whose builder hands
    that context back.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._builder = engine.context_builder
        engine.context_builder = PrebuiltContext(self._builder)
        embedder = getattr(self._builder, "text_embedder", None)
        self._embedder = QueryEmbedder(embedder) if embedder is not None else None
        if self._embedder is not None:
            self._builder.text_embedder = self._embedder
        relationships = getattr(self._builder, "relationships", None)
        if isinstance(relationships, dict):
            for rel in relationships.values():
                rel.attributes = QuestionAttributes(rel.attributes)

    async def search(self, query: str) -> SearchResult:
        """Build the context in a thread, then search with it."""
        build = functools.partial(
            self._builder.build_context,
            query=query,
            conversation_history=None,
            **self.engine.context_builder_params,
        )
        loop = asyncio.get_running_loop()
        question = contextvars.copy_context()
        question.run(_overlay.set, {})
        if self._embedder is not None and query:
            response = await self._embedder.inner.embedding_async(input=[query])
            question.run(_embedded.set, (query, response))
        context = await loop.run_in_executor(_executor.get(), question.run, build)
        token = _prebuilt.set(context)
        try:
            return await self.engine.search(query)
        finally:
            _prebuilt.reset(token)


async def _replay(text: str) -> AsyncIterator[Any]:
    yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=text))])


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


def _meter_model(engine: Any, model_id: str) -> None:
    model_config = engine.model._model_config if hasattr(engine.model, "_model_config") else None
    if model_config is None:
        raise RuntimeError("cannot meter a model without its ModelConfig")
    engine.model = MeteredCompletion(engine.model, model_config, model_id)


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
    _meter_model(engine, project.config.local_search.completion_model_id)
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
    _meter_model(engine, project.config.basic_search.completion_model_id)
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


Builder = Callable[["Project", dict[str, Any]], Awaitable[SearchEngine]]

METHODS: dict[str, Builder] = {
    "local": build_local,
    "basic": build_basic,
    "tog": build_tog,
}
"""Method name -> async builder(project, options). One line adds a method."""


async def build_engine(method: str, project: Project, options: dict[str, Any]) -> SearchEngine:
    """Build `method`'s engine for one project."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} (choose from {', '.join(METHODS)})")
    return await METHODS[method](project, options)


def _failure(meter: UsageMeter, result: SearchResult | None) -> BaseException | str | None:
    """Why a search that returned `result` (None: it raised) failed, or None if it did not."""
    fatal = [e for e in meter.errors if fatal_reason(e) is not None]
    if fatal:
        return fatal[0]
    if meter.errors:
        return meter.errors[0]
    empty = result is not None and not str(result.response or "").strip()
    if empty and meter.tally.total_calls == 0:
        return "the engine returned an empty answer without a successful LLM call"
    return None


async def run_search(
    engine: SearchEngine, query: str, *, timeout: float | None = None
) -> SearchOutcome:
    """Run one search with the server's usage; any failure raises `SearchFailed`.

    A fatal provider error (see `gtog.llm.fatal_reason`) is raised as itself, so the
    caller can stop the run. `timeout` bounds the whole search.
    """
    _watch_swallowed_errors()
    start = time.perf_counter()
    result: SearchResult | None = None
    with metering() as meter:
        try:
            result = await asyncio.wait_for(engine.search(query), timeout)
        except TimeoutError:
            raise SearchFailed(
                f"timed out after {timeout:g} s", meter.tally, time.perf_counter() - start
            ) from None
        except SearchFailed:
            raise
        except Exception as exc:
            meter.errors.insert(0, exc)
    seconds = time.perf_counter() - start
    why = _failure(meter, result)
    if isinstance(why, BaseException):
        if fatal_reason(why) is not None:
            raise why
        raise SearchFailed(describe_exception(why), meter.tally, seconds) from why
    if why is not None or result is None:
        raise SearchFailed(why or "no result", meter.tally, seconds)
    tally = meter.tally
    result.completion_time = seconds
    result.llm_calls = tally.total_calls
    result.prompt_tokens = tally.total_prompt_tokens
    result.output_tokens = tally.total_output_tokens
    stages = list(dict.fromkeys([*(result.llm_calls_categories or {}), *tally.llm_calls]))
    result.llm_calls_categories = {s: tally.llm_calls.get(s, 0) for s in stages}
    result.prompt_tokens_categories = {s: tally.prompt_tokens.get(s, 0) for s in stages}
    result.output_tokens_categories = {s: tally.output_tokens.get(s, 0) for s in stages}
    return SearchOutcome(result, tally, seconds)


def retrieved_sources(result: SearchResult) -> list[dict[str, str]] | None:
    """The text units a result's context used, as `{id, text}` (for retrieval metrics).

    None when the method records no source table at all (e.g. ToG without text units):
    that is "no retrieval to score", not "retrieved nothing".
    """
    data = result.context_data
    if not isinstance(data, dict):
        return None
    for key in ("sources", "text_units"):
        df = data.get(key)
        if isinstance(df, pd.DataFrame) and "text" in df.columns:
            id_col = "id" if "id" in df.columns else df.columns[0]
            return [{"id": str(row[id_col]), "text": str(row["text"])} for _, row in df.iterrows()]
    return None
