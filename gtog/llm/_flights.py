"""Identical requests in flight share one reply: the second waits for the first's.

The model-call cache (`gtog.llm._gate`) answers a request whose reply is stored. A request
identical to one still in flight (two methods embedding the same question at once, two
judges reading the same answer) would find nothing stored and be sent again: paid twice.
`SharedModel` wraps a graphrag_llm model so that, during a run with the cache on, such a
request waits for the first one's reply instead; the reply it gets is marked as replayed
(`gtog_cached`), so the meter counts it as a cached call, its usage recorded, not paid.

Requests are the same when their cache keys are (`gtog.llm._cache.call_key`: model,
request, repeat number, draw). Sharing is per event loop and for asynchronous calls only.
When the first request fails (an error, a limit of its own pair, a cancellation) or its
reply is one gtog rejects (`gtog.llm._cache.rejection`: cut, empty, refused by the
caller's check) the waiting ones are sent themselves: a failure is never shared. Streamed
requests, and every request outside a run or with `--no-cache`, go straight through.
Every request sent takes one of the run's call slots (`gtog.llm._slots`); one waiting for
an identical request's reply takes none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gtog.llm._cache import call_key, rejection
from gtog.llm._runcalls import CACHED_MARK, current_calls
from gtog.llm._slots import slotted

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = ["SharedModel", "shared_call"]

_flights: dict[tuple[int, str], asyncio.Future[Any]] = {}
"""The requests in flight, by (event loop, cache key): each resolves to its reply, or to
None when it failed."""


def _replayed(response: Any) -> Any:
    """A copy of `response` marked as replayed (its usage is counted as cached).

    A shallow copy: a structured reply's parsed model stays as it is (graphrag_llm's
    responses allow extra fields, so the mark is one more)."""
    shared = response.model_copy()
    setattr(shared, CACHED_MARK, True)
    return shared


async def shared_call(
    kind: str, config: ModelConfig, request: dict[str, Any], send: Callable[[], Awaitable[Any]]
) -> Any:
    """`await send()` in a call slot (`gtog.llm._slots`), unless an identical request is in
    flight: then its reply (replayed), which takes none."""
    calls = current_calls()
    shareable = calls is not None and calls.store is not None
    if not shareable or request.get("stream") or request.get("mock_response"):
        return await slotted(send, stream=bool(request.get("stream")))
    loop = asyncio.get_running_loop()
    slot = (id(loop), call_key(kind, config, request))
    while (first := _flights.get(slot)) is not None:
        response = await asyncio.shield(first)
        if response is None:
            continue
        if rejection(response.model_dump(mode="json")) is None:
            return _replayed(response)
        break  # a rejected reply: this request is sent itself
    flight: asyncio.Future[Any] = loop.create_future()
    _flights[slot] = flight
    response = None
    try:
        response = await slotted(send)
        return response
    finally:
        if _flights.get(slot) is flight:
            del _flights[slot]
        flight.set_result(response)


class SharedModel:
    """A graphrag_llm completion or embedding model whose identical asynchronous requests
    in flight share one reply; everything else is the wrapped model's.

    Every call's error passes `as_fatal`: a refused key, permission or model (whatever the
    provider's way of saying it) is a `ModelFatalError` naming the model, in one line.
    """

    def __init__(self, inner: Any, config: ModelConfig, model_id: str | None = None) -> None:
        self._inner = inner
        self.model_config = config
        """The `ModelConfig` of the wrapped model (graphrag_llm keeps its own private)."""
        self.model_id = model_id

    def _fatal(self, exc: Exception) -> BaseException:
        from gtog.llm._errors import as_fatal

        return as_fatal(exc, self.model_id, self.model_config)

    async def completion_async(self, **kwargs: Any) -> Any:
        """The wrapped model's `completion_async`, shared with an identical one in flight."""
        try:
            return await shared_call(
                "chat", self.model_config, kwargs, lambda: self._inner.completion_async(**kwargs)
            )
        except Exception as exc:
            if (error := self._fatal(exc)) is exc:
                raise
            raise error from exc

    async def embedding_async(self, **kwargs: Any) -> Any:
        """The wrapped model's `embedding_async`, shared with an identical one in flight."""
        try:
            return await shared_call(
                "embedding",
                self.model_config,
                kwargs,
                lambda: self._inner.embedding_async(**kwargs),
            )
        except Exception as exc:
            if (error := self._fatal(exc)) is exc:
                raise
            raise error from exc

    def completion(self, **kwargs: Any) -> Any:
        """The wrapped model's synchronous `completion` (not shared)."""
        try:
            return self._inner.completion(**kwargs)
        except Exception as exc:
            if (error := self._fatal(exc)) is exc:
                raise
            raise error from exc

    def embedding(self, **kwargs: Any) -> Any:
        """The wrapped model's synchronous `embedding` (not shared)."""
        try:
            return self._inner.embedding(**kwargs)
        except Exception as exc:
            if (error := self._fatal(exc)) is exc:
                raise
            raise error from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
